// The XNNPACK platform extension, liboptimium-runtime-xnnpack.so: registers the XNNPack device
// through the C ABI of Optimium/Runtime/Extension/Backend.h and runs the nodes XNNPACK supports
// (XnnpackOps.h) on Debian's libXNNPACK, on the runtime's pool (PoolBridge.h). The rest of a model
// stays on the native CPU backend.
#include <Optimium/Runtime/Extension/Backend.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "PoolBridge.h"
#include "XnnpackOps.h"

namespace optimium {
namespace xnnpack_ext {
namespace {

struct BackendState {
  const OptRtHostApi *Host = nullptr;
  ScratchPool Scratch;
  bool Initialized = false; ///< xnn_initialize succeeded: xnn_deinitialize is owed
};

void logAt(const OptRtHostApi *Host, int32_t Level, const std::string &Message) {
  if (Host && Host->log)
    Host->log(Level, Message.c_str());
}

void writeError(const std::string &Message, char *Buffer, size_t Size) {
  if (!Buffer || Size == 0)
    return;
  const size_t N = std::min(Message.size(), Size - 1);
  std::memcpy(Buffer, Message.data(), N);
  Buffer[N] = '\0';
}

int32_t supportsNode(void *State, const OptRtNode *Node) {
  const auto *S = static_cast<const BackendState *>(State);
  NodePlan Plan;
  std::string Why;
  if (planNode(*S->Host, *Node, Plan, Why))
    return 1;
  logAt(S->Host, 0, std::string("xnnpack: leaves ") + Node->op_type + " '" + Node->name + "' to another device: " + Why);
  return 0;
}

int32_t createKernelAbi(void *State, const OptRtNode *Node, void **KernelOut, char *Error, size_t ErrorSize) {
  const auto *S = static_cast<const BackendState *>(State);
  std::unique_ptr<Kernel> K;
  std::string Message;
  const int32_t RC = createKernel(*S->Host, *Node, K, Message);
  if (RC != OPT_RT_OK) {
    writeError(Message, Error, ErrorSize);
    return RC;
  }
  *KernelOut = K.release();
  return OPT_RT_OK;
}

int32_t runKernelAbi(void *State, void *KernelPtr, const OptRtTensor *Inputs, uint32_t NumInputs,
                     const OptRtTensor *Outputs, uint32_t NumOutputs, const OptRtExecContext *Ctx, char *Error,
                     size_t ErrorSize) {
  auto *S = static_cast<BackendState *>(State);
  std::string Message;
  const int32_t RC =
      runKernel(*static_cast<Kernel *>(KernelPtr), Inputs, NumInputs, Outputs, NumOutputs, Ctx, S->Scratch, Message);
  if (RC != OPT_RT_OK)
    writeError(Message, Error, ErrorSize);
  return RC;
}

void destroyKernelAbi(void *, void *KernelPtr) { delete static_cast<Kernel *>(KernelPtr); }

void destroyAbi(void *State) {
  auto *S = static_cast<BackendState *>(State);
  if (S->Initialized)
    xnn_deinitialize();
  delete S;
}

/// The host CPU as XNNPACK's kernels see it (the instruction sets it picks microkernels by).
int32_t capabilityAbi(void *, OptRtCapability *Cap) {
  if (Cap->struct_size < sizeof(OptRtCapability))
    return OPT_RT_ERROR_INVALID_ARGUMENT;
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  uint64_t F = 0;
  const struct {
    bool Has;
    uint64_t Bit;
  } Bits[] = {{__builtin_cpu_supports("sse2") != 0, OPT_RT_X86_SSE2},
              {__builtin_cpu_supports("sse3") != 0, OPT_RT_X86_SSE3},
              {__builtin_cpu_supports("ssse3") != 0, OPT_RT_X86_SSSE3},
              {__builtin_cpu_supports("sse4.1") != 0, OPT_RT_X86_SSE41},
              {__builtin_cpu_supports("sse4.2") != 0, OPT_RT_X86_SSE42},
              {__builtin_cpu_supports("avx") != 0, OPT_RT_X86_AVX},
              {__builtin_cpu_supports("avx2") != 0, OPT_RT_X86_AVX2},
              {__builtin_cpu_supports("fma") != 0, OPT_RT_X86_FMA},
              {__builtin_cpu_supports("avx512f") != 0, OPT_RT_X86_AVX512F},
              {__builtin_cpu_supports("avx512bw") != 0, OPT_RT_X86_AVX512BW},
              {__builtin_cpu_supports("avx512dq") != 0, OPT_RT_X86_AVX512DQ},
              {__builtin_cpu_supports("avx512vl") != 0, OPT_RT_X86_AVX512VL},
              {__builtin_cpu_supports("avx512vnni") != 0, OPT_RT_X86_AVX512VNNI}};
  for (const auto &B : Bits)
    if (B.Has)
      F |= B.Bit;
  Cap->kind = OPT_RT_CAPABILITY_X86;
  Cap->features = F;
#elif defined(__aarch64__)
  Cap->kind = OPT_RT_CAPABILITY_ARM;
  Cap->features = OPT_RT_ARM_NEON;
#else
  Cap->kind = OPT_RT_CAPABILITY_VOID;
#endif
  return OPT_RT_OK;
}

} // namespace
} // namespace xnnpack_ext
} // namespace optimium

using namespace optimium::xnnpack_ext;

/// For tests: how many XNNPACK loops were split over the runtime's pool since the library loaded.
extern "C" __attribute__((visibility("default"))) unsigned long optimium_xnnpack_backend_pool_splits(void) {
  return poolSplits();
}

extern "C" __attribute__((visibility("default"))) int32_t optimium_rt_backend_init(const OptRtHostApi *Host,
                                                                                    OptRtBackend *Backend) {
  std::memset(Backend, 0, sizeof(*Backend));
  Backend->struct_size = sizeof(OptRtBackend);
  Backend->api_version = OPTIMIUM_RT_BACKEND_API_VERSION; // first: the host names both versions when refusing
  if (!Host || Host->api_version != OPTIMIUM_RT_BACKEND_API_VERSION)
    return OPT_RT_ERROR_INVALID_ARGUMENT;
  if (Host->struct_size < offsetof(OptRtHostApi, get_attr_name) + sizeof(Host->get_attr_name) || !Host->get_attr_name) {
    logAt(Host, 4, "xnnpack: this runtime cannot list node attributes (OptRtHostApi::get_attr_name); the XNNPack "
                   "device is unavailable");
    return OPT_RT_ERROR_DEVICE;
  }
  const char *Disable = std::getenv("OPTIMIUM_RT_XNNPACK_DISABLE");
  if (Disable && *Disable && std::strcmp(Disable, "0") != 0) {
    logAt(Host, 3, "xnnpack: disabled by OPTIMIUM_RT_XNNPACK_DISABLE; the XNNPack device is unavailable");
    return OPT_RT_ERROR_DEVICE;
  }
  // XNNPACK picks its microkernels from the CPU here; a CPU it cannot run on fails this call.
  const xnn_status St = xnn_initialize(nullptr);
  if (St != xnn_status_success) {
    logAt(Host, 4, std::string("xnnpack: xnn_initialize failed (") + statusText(St) +
                       "); the XNNPack device is unavailable");
    return OPT_RT_ERROR_DEVICE;
  }
  auto *State = new BackendState();
  State->Host = Host;
  State->Initialized = true;
  Backend->name = "xnnpack";
  Backend->platform = OPT_RT_PLATFORM_XNNPACK;
#if defined(__x86_64__)
  Backend->device_kind = OPT_RT_DEVICE_X64;
#elif defined(__aarch64__)
  Backend->device_kind = OPT_RT_DEVICE_ARM64;
#else
  Backend->device_kind = OPT_RT_DEVICE_ANY_CPU;
#endif
  Backend->device_index = 0;
  Backend->state = State;
  Backend->supports_node = &supportsNode;
  Backend->create_kernel = &createKernelAbi;
  Backend->run_kernel = &runKernelAbi;
  Backend->destroy_kernel = &destroyKernelAbi;
  Backend->destroy = &destroyAbi;
  Backend->get_capability = &capabilityAbi;
  logAt(Host, 2, "xnnpack backend registered");
  return OPT_RT_OK;
}
