// The built-in CPU backend behind the backend C ABI: kernels come from the native op registry.
// Being in-process, it reads the full node description through NodeHandle.
#include <cstddef>
#include <cstring>

#include "backends/BackendRegistry.h"
#include "backends/NodeHandle.h"
#include "backends/native/KernelRegistry.h"
#include "backends/native/NativeKernels.h"
#include "backends/native/OutputAllocator.h"
#include "backends/native/ops/common/PackedWeights.h"
#include "core/HalfConvert.h"
#include "core/Log.h"
#include "ir/HalfPromotion.h"

namespace optimium {
namespace runtime {
namespace detail {

namespace {

const KernelCreateInfo *createInfoOf(const OptRtNode *Node) {
  const auto *H = static_cast<const NodeHandle *>(Node->host_node);
  return H ? H->Info : nullptr;
}

/// The float32 view of a node working in float16/bfloat16 (null when it has no half values).
std::unique_ptr<KernelCreateInfo> promotedInfo(const KernelCreateInfo &Info) {
  if (!hasHalfValues(Info.Inputs) && !hasHalfValues(Info.Outputs))
    return nullptr;
  std::unique_ptr<KernelCreateInfo> P(new KernelCreateInfo{Info.N, promoteHalfToFloat(Info.Inputs),
                                                           promoteHalfToFloat(Info.Outputs)});
  return P;
}

/// Runs a float32 kernel on float16/bfloat16 tensors: converts half inputs to float32 scratch,
/// runs, rounds float32 results into the half outputs. Constant inputs are not converted per run:
/// the float32 view (Info) holds them converted once at creation. float16 goes through F16C where
/// the CPU has it (core/HalfConvert.h). The scratch buffers are kept per thread (and per nesting
/// level: a control-flow kernel may run adapted nodes inside an adapted node) and reused, so a run
/// neither allocates nor faults in fresh pages.
class HalfAdapterKernel : public Kernel {
public:
  HalfAdapterKernel(std::unique_ptr<KernelCreateInfo> Info, std::unique_ptr<Kernel> Inner)
      : Info(std::move(Info)), Inner(std::move(Inner)) {}

  Status run(const KernelContext &Ctx) const override {
    // Set while a profiled run calls this kernel: the conversions are recorded as Copy events.
    const KernelProfileHook &Prof = Ctx.Profile;
    thread_local std::vector<std::vector<std::vector<float>>> Pools;
    thread_local size_t Depth = 0;
    if (Pools.size() <= Depth)
      Pools.resize(Depth + 1);
    std::vector<std::vector<float>> &Scratch = Pools[Depth];
    size_t Used = 0;
    auto Buffer = [&](size_t Count) {
      if (Scratch.size() <= Used)
        Scratch.emplace_back();
      std::vector<float> &B = Scratch[Used++];
      if (B.size() < Count)
        B.resize(Count);
      return B.data();
    };
    auto Promote = [&](const TensorView &V, bool Input, size_t Index) {
      TensorView F = V;
      if (!isHalfType(V.Type) || !V.Data || isContainerKind(V.Kind))
        return F;
      F.Type = ElementType::F32;
      const ValueInfo *Known = Input && Index < Info->Inputs.size() ? &Info->Inputs[Index] : nullptr;
      if (Known && Known->Const && Known->Const->Type == ElementType::F32 &&
          Known->Const->elementCount() == V.elementCount()) {
        F.Data = const_cast<void *>(Known->Const->Data); // converted at creation
        return F;
      }
      float *Dst = Buffer(V.elementCount());
      if (Input) {
        if (Prof)
          Prof.copy(true, false, Index);
        const uint16_t *Src = static_cast<const uint16_t *>(V.Data);
        if (V.Type == ElementType::F16)
          halfToFloat(Src, Dst, V.elementCount());
        else
          for (size_t I = 0; I < V.elementCount(); ++I)
            Dst[I] = bfloat16::toFloat(Src[I]);
        if (Prof)
          Prof.copy(false, false, Index);
      }
      F.Data = Dst;
      return F;
    };
    std::vector<TensorView> In, Out;
    for (size_t I = 0; I < Ctx.Inputs.size(); ++I)
      In.push_back(Promote(Ctx.Inputs[I], true, I));
    for (size_t I = 0; I < Ctx.Outputs.size(); ++I)
      Out.push_back(Promote(Ctx.Outputs[I], false, I));
    ++Depth;
    const Status S = Inner->run(KernelContext{In, Out, Ctx.Par, Ctx.Profile});
    --Depth;
    RETURN_IF_ERROR(S);
    for (size_t O = 0; O < Out.size(); ++O) {
      const TensorView &H = Ctx.Outputs[O];
      if (!isHalfType(H.Type) || !H.Data || isContainerKind(H.Kind))
        continue;
      if (Prof)
        Prof.copy(true, true, O);
      const float *Src = static_cast<const float *>(Out[O].Data);
      uint16_t *Dst = static_cast<uint16_t *>(H.Data);
      if (H.Type == ElementType::F16)
        floatToHalf(Src, Dst, H.elementCount());
      else
        for (size_t I = 0; I < H.elementCount(); ++I)
          Dst[I] = bfloat16::fromFloat(Src[I]);
      if (Prof)
        Prof.copy(false, true, O);
    }
    return Status::ok();
  }

private:
  std::unique_ptr<KernelCreateInfo> Info; // the float32 view the inner kernel was created from
  std::unique_ptr<Kernel> Inner;
};

} // namespace

Result<std::unique_ptr<Kernel>> createNativeKernel(const KernelCreateInfo &Info) {
  const OpKernels *K = findOpKernels(Info.N.Domain, Info.N.OpType);
  const KernelVariant *V = K ? selectKernelVariant(*K, Info) : nullptr;
  if (!V && K) {
    if (auto Promoted = promotedInfo(Info)) {
      if (const KernelVariant *PV = selectKernelVariant(*K, *Promoted)) {
        ASSIGN_OR_RETURN(std::unique_ptr<Kernel> Inner, PV->Create(*Promoted));
        return std::unique_ptr<Kernel>(new HalfAdapterKernel(std::move(Promoted), std::move(Inner)));
      }
    }
  }
  if (!V)
    return makeError(ErrorCode::NotImplemented, Info.N.describe(), ": no native kernel supports this node");
  OPT_LOG(Debug, Info.N.describe(), ": native kernel ", V->Name);
  return V->Create(Info);
}

namespace {

int32_t nativeSupports(void *, const OptRtNode *Node) {
  const KernelCreateInfo *Info = createInfoOf(Node);
  if (!Info)
    return 0;
  const OpKernels *K = findOpKernels(Info->N.Domain, Info->N.OpType);
  if (!K)
    return 0;
  if (selectKernelVariant(*K, *Info))
    return 1;
  auto Promoted = promotedInfo(*Info);
  return Promoted && selectKernelVariant(*K, *Promoted) ? 1 : 0;
}

int32_t nativeCreate(void *, const OptRtNode *Node, void **Out, char *Error, size_t ErrorSize) {
  const KernelCreateInfo *Info = createInfoOf(Node);
  if (!Info) {
    writeAbiError("native backend: node without host description", Error, ErrorSize);
    return OPT_RT_ERROR_INVALID_ARGUMENT;
  }
  // Factories that pack a constant ask the host's cache for this node first (PackedWeights.h).
  const bool HasCache = Node->struct_size >= offsetof(OptRtNode, weights_cache) + sizeof(Node->weights_cache);
  ops::ScopedWeightsCache Cache(HasCache ? Node->weights_cache : nullptr);
  const uint64_t LookupsBefore = ops::packedLookupCount();
  Result<std::unique_ptr<Kernel>> R = createNativeKernel(*Info);
  if (!R.isOk()) {
    writeAbiError(R.status().message(), Error, ErrorSize);
    return static_cast<int32_t>(R.status().code());
  }
  // A factory that kept its own copy of a constant (markConstConsumed) without asking the cache
  // packed it outside packed.bin: the host hears of it as a miss (its counters and debug log say
  // "packing at load"), so a compiled folder's loads count every kernel that still packs.
  if (ops::currentWeightsCache() && ops::packedLookupCount() == LookupsBefore)
    for (size_t In = 0; In < Info->ConstConsumed.size(); ++In)
      if (Info->ConstConsumed[In]) {
        ops::lookupPackedWeights(ops::packedWeightsKey(*Info, In, "packed-outside-the-cache"), 1);
        break;
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
      Views[I].Type = static_cast<ElementType>(T[I].type & ((1 << OPT_RT_VALUE_KIND_SHIFT) - 1));
      Views[I].Kind = static_cast<ValueKind>(T[I].type >> OPT_RT_VALUE_KIND_SHIFT);
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
  // Outputs the executor could not size before the run (control flow) are allocated by the kernel
  // through the host's callback.
  OutputAllocator Alloc;
  const bool HasAllocator = Ctx && Ctx->struct_size >= offsetof(OptRtExecContext, request) + sizeof(void *) &&
                            Ctx->allocate_output;
  if (HasAllocator)
    Alloc = [Ctx, &Out](size_t Index, const std::vector<int64_t> &Dims) -> Result<TensorView> {
      void *Data = Ctx->allocate_output(Ctx->request, static_cast<uint32_t>(Index), static_cast<int32_t>(Dims.size()),
                                        Dims.data());
      if (!Data)
        return makeError(ErrorCode::OutOfResource, "cannot allocate output ", Index);
      TensorView V;
      V.Type = Out[Index].Type;
      V.Dims = Dims;
      V.Data = Data;
      return V;
    };
  ScopedOutputAllocator Scope(HasAllocator ? &Alloc : nullptr);
  KernelProfileHook Profile;
  if (Ctx && Ctx->struct_size >= offsetof(OptRtExecContext, profile) + sizeof(void *) && Ctx->record_copy) {
    Profile.RecordCopy = Ctx->record_copy;
    Profile.Profile = Ctx->profile;
  }
  KernelContext KC{In, Out, Par, Profile};
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
