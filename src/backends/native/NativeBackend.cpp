// The built-in CPU backend behind the backend C ABI: kernels come from the native op registry.
// Being in-process, it reads the full node description through NodeHandle.
#include <cstring>

#include "backends/BackendRegistry.h"
#include "backends/NodeHandle.h"
#include "backends/native/Kernel.h"

namespace optimium {
namespace runtime {
namespace detail {

namespace {

const KernelCreateInfo *createInfoOf(const OptRtNode *Node) {
  const auto *H = static_cast<const NodeHandle *>(Node->host_node);
  return H ? H->Info : nullptr;
}

int32_t nativeSupports(void *, const OptRtNode *Node) {
  const KernelCreateInfo *Info = createInfoOf(Node);
  if (!Info)
    return 0;
  const OpKernels *K = findOpKernels(Info->N.Domain, Info->N.OpType);
  return K && selectKernelVariant(*K, *Info) ? 1 : 0;
}

int32_t nativeCreate(void *, const OptRtNode *Node, void **Out, char *Error, size_t ErrorSize) {
  const KernelCreateInfo *Info = createInfoOf(Node);
  if (!Info) {
    writeAbiError("native backend: node without host description", Error, ErrorSize);
    return OPT_RT_ERROR_INVALID_ARGUMENT;
  }
  const OpKernels *K = findOpKernels(Info->N.Domain, Info->N.OpType);
  const KernelVariant *V = K ? selectKernelVariant(*K, *Info) : nullptr;
  if (!V) {
    writeAbiError(Info->N.describe() + ": no native kernel supports this node", Error, ErrorSize);
    return OPT_RT_ERROR_NOT_IMPLEMENTED;
  }
  Result<std::unique_ptr<Kernel>> R = V->Create(*Info);
  if (!R.isOk()) {
    writeAbiError(R.status().message(), Error, ErrorSize);
    return static_cast<int32_t>(R.status().code());
  }
  *Out = std::move(R).value().release();
  return OPT_RT_OK;
}

struct RangeTrampoline {
  const Parallel::RangeFn *Fn;
  static void call(void *User, size_t Begin, size_t End) { (*static_cast<RangeTrampoline *>(User)->Fn)(Begin, End); }
};

int32_t nativeRun(void *, void *KernelPtr, const OptRtTensor *Inputs, uint32_t NumInputs, const OptRtTensor *Outputs,
                  uint32_t NumOutputs, const OptRtExecContext *Ctx, char *Error, size_t ErrorSize) {
  auto toViews = [](const OptRtTensor *T, uint32_t N) {
    std::vector<TensorView> Views(N);
    for (uint32_t I = 0; I < N; ++I) {
      Views[I].Type = static_cast<ElementType>(T[I].type);
      Views[I].Dims.assign(T[I].dims, T[I].dims + T[I].rank);
      Views[I].Data = T[I].data;
    }
    return Views;
  };
  const std::vector<TensorView> In = toViews(Inputs, NumInputs);
  const std::vector<TensorView> Out = toViews(Outputs, NumOutputs);
  Parallel Par;
  if (Ctx && Ctx->parallel_for && Ctx->num_threads > 1) {
    Par = Parallel(
        [Ctx](size_t N, size_t Grain, const Parallel::RangeFn &Fn) {
          RangeTrampoline T{&Fn};
          Ctx->parallel_for(Ctx->pool, N, Grain, &RangeTrampoline::call, &T);
        },
        Ctx->num_threads);
  }
  KernelContext KC{In, Out, Par};
  Status S = static_cast<const Kernel *>(KernelPtr)->run(KC);
  if (!S.isOk()) {
    writeAbiError(S.message(), Error, ErrorSize);
    return static_cast<int32_t>(S.code());
  }
  return OPT_RT_OK;
}

void nativeDestroyKernel(void *, void *KernelPtr) { delete static_cast<Kernel *>(KernelPtr); }
void nativeDestroy(void *) {}

} // namespace

void makeNativeBackend(OptRtBackend &Out) {
  std::memset(&Out, 0, sizeof(Out));
  Out.struct_size = sizeof(OptRtBackend);
  Out.api_version = OPTIMIUM_RT_BACKEND_API_VERSION;
  Out.name = "native";
  Out.platform = static_cast<int32_t>(PlatformKind::Native);
#if defined(__x86_64__) || defined(_M_X64)
  Out.device_kind = static_cast<int32_t>(DeviceKind::x64);
#elif defined(__i386__)
  Out.device_kind = static_cast<int32_t>(DeviceKind::x86);
#elif defined(__aarch64__)
  Out.device_kind = static_cast<int32_t>(DeviceKind::ARM64);
#elif defined(__arm__)
  Out.device_kind = static_cast<int32_t>(DeviceKind::ARM);
#elif defined(__riscv) && __riscv_xlen == 64
  Out.device_kind = static_cast<int32_t>(DeviceKind::RISCV64);
#else
  Out.device_kind = static_cast<int32_t>(DeviceKind::AnyCPU);
#endif
  Out.device_index = 0;
  Out.state = nullptr;
  Out.supports_node = &nativeSupports;
  Out.create_kernel = &nativeCreate;
  Out.run_kernel = &nativeRun;
  Out.destroy_kernel = &nativeDestroyKernel;
  Out.destroy = &nativeDestroy;
}

} // namespace detail
} // namespace runtime
} // namespace optimium
