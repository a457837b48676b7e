// The simulated accelerator (liboptimium-runtime-sim.so): a Torq-style NPU stand-in behind the
// backend C ABI only (it includes nothing of the runtime but Optimium/Runtime/Extension/Backend.h).
// - Device memory: one arena of its own (OPTIMIUM_RT_SIM_ARENA_BYTES); the host copies inputs in
//   and outputs out (OPT_RT_BACKEND_DEVICE_MEMORY), and the buffers it hands out are device
//   addresses (OPT_RT_BACKEND_DEVICE_ADDRESSES: the host plans a run's values inside one), not
//   host pointers, so a host that reads one by mistake fails loudly. get_property reports the
//   bytes in use and their peak live ("arena_bytes_in_use", "peak_bytes_in_use").
// - Numerics: the host's native kernels (OptRtHostApi::native_*), run on the arena's bytes, so the
//   results equal the native backend's bit for bit.
// - Time: a deterministic cycle model per op (docs/devices.md): cycles = overhead
//   + ceil(MACs / MACs-per-cycle) + ceil(output elements / elements-per-cycle), at a clock in MHz;
//   the cumulative time in microseconds is written to a counter file (as the Torq NPU's
//   /sys/class/misc/torq/statistics/torq_inference_time), whose path get_property reports.
// - Claims static-shape nodes of the ops an NPU compiler maps (kSimOps); OPTIMIUM_RT_SIM_FAIL_OP
//   makes it claim and then fail one op type at run time (to test fallback and Strict).
#include <Optimium/Runtime/Extension/Backend.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <vector>

namespace {

// Device addresses start here, so that 0 is never a buffer and an address is never mistaken for
// a small host pointer that happens to be mapped.
constexpr uint64_t kDeviceBase = 0x5100000000ull;
constexpr uint64_t kAlign = 64;
constexpr uint64_t kPadding = 64; // native kernels may read this far past a tensor's end

const char *const kSimOps[] = {"Conv",      "ConvTranspose",     "Gemm",          "MatMul",        "Relu",
                               "LeakyRelu", "Clip",              "Sigmoid",       "Tanh",          "HardSigmoid",
                               "HardSwish", "Add",               "Sub",           "Mul",           "Div",
                               "MaxPool",   "AveragePool",       "GlobalAveragePool", "GlobalMaxPool", "Softmax",
                               "Flatten",   "Reshape",           "Transpose",     "Concat",        "BatchNormalization",
                               "Squeeze",   "Unsqueeze",         "Identity",      "FusedConvMaxPool",
                               "FusedPointwiseDepthwise", "FusedDepthwisePointwise"};

struct SimConfig {
  uint64_t ArenaBytes = 256ull << 20;
  uint64_t MacsPerCycle = 256;
  uint64_t ElementsPerCycle = 32;
  uint64_t OverheadCycles = 100;
  uint64_t ClockMHz = 800;
  std::string CounterPath;
  bool OwnCounter = false; // the default path: removed when the backend is destroyed
  std::string FailOp;
};

struct SimKernel {
  void *Native = nullptr;
  std::string OpType, Name;
  uint64_t Cycles = 0;
  bool Fail = false;
};

struct SimState {
  const OptRtHostApi *Host = nullptr;
  SimConfig Config;
  std::string MemoryText;
  std::mutex Mu; // the arena's lists and the counter
  unsigned char *Arena = nullptr;
  std::map<uint64_t, uint64_t> Free; // offset -> bytes
  std::map<uint64_t, uint64_t> Used;
  uint64_t InUse = 0;
  uint64_t PeakInUse = 0; // the high-water mark of InUse since the load
  uint64_t TotalCycles = 0;
  int CounterFd = -1;
};

SimState *g_state = nullptr; // one device per process (a second load is refused by the host)

void logMessage(const OptRtHostApi *Host, int32_t Level, const std::string &Message) {
  if (Host && Host->log)
    Host->log(Level, Message.c_str());
  else
    std::fprintf(stderr, "%s\n", Message.c_str());
}

void writeError(char *Error, size_t Size, const std::string &Message) {
  if (!Error || !Size)
    return;
  std::snprintf(Error, Size, "%s", Message.c_str());
}

/// A positive integer from the environment, or Default; false (with Why) when it is malformed.
bool envCount(const char *Name, uint64_t Default, uint64_t &Out, std::string &Why, bool AllowZero = false) {
  Out = Default;
  const char *V = std::getenv(Name);
  if (!V || !*V)
    return true;
  char *End = nullptr;
  errno = 0;
  const unsigned long long N = std::strtoull(V, &End, 10);
  uint64_t Scale = 1;
  if (End && (*End == 'K' || *End == 'k'))
    Scale = 1ull << 10, ++End;
  else if (End && (*End == 'M' || *End == 'm'))
    Scale = 1ull << 20, ++End;
  else if (End && (*End == 'G' || *End == 'g'))
    Scale = 1ull << 30, ++End;
  if (errno || End == V || *End != '\0' || (N == 0 && !AllowZero) || V[0] == '-') {
    Why = std::string(Name) + "='" + V + "': expected a " + (AllowZero ? "non-negative" : "positive") +
          " integer (K, M, G suffixes allowed)";
    return false;
  }
  Out = static_cast<uint64_t>(N) * Scale;
  return true;
}

uint64_t roundUp(uint64_t N) { return (N + kAlign - 1) / kAlign * kAlign; }

bool writeCounter(SimState &S) {
  char Text[32];
  const int Len = std::snprintf(Text, sizeof(Text), "%" PRIu64 "\n", S.TotalCycles / S.Config.ClockMHz);
  return ::pwrite(S.CounterFd, Text, static_cast<size_t>(Len), 0) == Len && ::ftruncate(S.CounterFd, Len) == 0;
}

// --- device memory ------------------------------------------------------------------------------

int32_t simAllocate(void *State, uint64_t Bytes, void **Buffer, char *Error, size_t ErrorSize) {
  SimState &S = *static_cast<SimState *>(State);
  const uint64_t Need = roundUp(Bytes + kPadding);
  std::lock_guard<std::mutex> Lock(S.Mu);
  uint64_t Largest = 0;
  for (auto It = S.Free.begin(); It != S.Free.end(); ++It) {
    if (It->second > Largest)
      Largest = It->second;
    if (It->second < Need)
      continue;
    const uint64_t Offset = It->first, Have = It->second;
    S.Free.erase(It);
    if (Have > Need)
      S.Free[Offset + Need] = Have - Need;
    S.Used[Offset] = Need;
    S.InUse += Need;
    if (S.InUse > S.PeakInUse)
      S.PeakInUse = S.InUse;
    *Buffer = reinterpret_cast<void *>(static_cast<uintptr_t>(kDeviceBase + Offset));
    return OPT_RT_OK;
  }
  writeError(Error, ErrorSize,
             "sim device memory is full: " + std::to_string(Bytes) + " bytes asked, " + std::to_string(S.InUse) +
                 " of " + std::to_string(S.Config.ArenaBytes) + " bytes in use, largest free block " +
                 std::to_string(Largest) + " bytes (OPTIMIUM_RT_SIM_ARENA_BYTES sets the size)");
  return OPT_RT_ERROR_OUT_OF_RESOURCE;
}

void simRelease(void *State, void *Buffer) {
  SimState &S = *static_cast<SimState *>(State);
  const uint64_t Address = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(Buffer));
  std::lock_guard<std::mutex> Lock(S.Mu);
  if (Address < kDeviceBase)
    return;
  auto It = S.Used.find(Address - kDeviceBase);
  if (It == S.Used.end())
    return;
  uint64_t Offset = It->first, Bytes = It->second;
  S.InUse -= Bytes;
  S.Used.erase(It);
  // Coalesce with the free neighbours.
  auto Next = S.Free.lower_bound(Offset);
  if (Next != S.Free.end() && Offset + Bytes == Next->first) {
    Bytes += Next->second;
    Next = S.Free.erase(Next);
  }
  if (Next != S.Free.begin()) {
    auto Prev = std::prev(Next);
    if (Prev->first + Prev->second == Offset) {
      Prev->second += Bytes;
      return;
    }
  }
  S.Free[Offset] = Bytes;
}

/// The arena bytes of a device address, checked to hold Bytes; null otherwise.
unsigned char *resolve(SimState &S, const void *Buffer, uint64_t Bytes) {
  const uint64_t Address = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(Buffer));
  if (Address < kDeviceBase)
    return nullptr;
  const uint64_t Offset = Address - kDeviceBase;
  std::lock_guard<std::mutex> Lock(S.Mu);
  auto It = S.Used.upper_bound(Offset);
  if (It == S.Used.begin())
    return nullptr;
  --It;
  if (Offset + Bytes > It->first + It->second)
    return nullptr;
  return S.Arena + Offset;
}

int32_t simCopyToDevice(void *State, void *Buffer, const void *Host, uint64_t Bytes, char *Error, size_t ErrorSize) {
  SimState &S = *static_cast<SimState *>(State);
  unsigned char *Dst = resolve(S, Buffer, Bytes);
  if (!Dst) {
    writeError(Error, ErrorSize, "sim device: copy of " + std::to_string(Bytes) + " bytes to an unknown or smaller buffer");
    return OPT_RT_ERROR_INVALID_ARGUMENT;
  }
  std::memcpy(Dst, Host, Bytes);
  return OPT_RT_OK;
}

int32_t simCopyFromDevice(void *State, void *Host, const void *Buffer, uint64_t Bytes, char *Error, size_t ErrorSize) {
  SimState &S = *static_cast<SimState *>(State);
  const unsigned char *Src = resolve(S, Buffer, Bytes);
  if (!Src) {
    writeError(Error, ErrorSize, "sim device: copy of " + std::to_string(Bytes) + " bytes from an unknown or smaller buffer");
    return OPT_RT_ERROR_INVALID_ARGUMENT;
  }
  std::memcpy(Host, Src, Bytes);
  return OPT_RT_OK;
}

// --- kernels ------------------------------------------------------------------------------------

bool isSimOp(const char *Op) {
  for (const char *K : kSimOps)
    if (std::strcmp(K, Op) == 0)
      return true;
  return false;
}

bool typeOk(int32_t Type) {
  switch (Type) {
  case OPT_RT_ELEMENT_F32:
  case OPT_RT_ELEMENT_F16:
  case OPT_RT_ELEMENT_BF16:
  case OPT_RT_ELEMENT_I8:
  case OPT_RT_ELEMENT_U8:
  case OPT_RT_ELEMENT_I32:
  case OPT_RT_ELEMENT_I64: return true;
  default: return false; // strings, bools, sequences/optionals (value kinds above the element bits)
  }
}

uint64_t elements(const OptRtTensorDesc *D) {
  uint64_t N = 1;
  for (int32_t I = 0; I < D->rank; ++I)
    N *= static_cast<uint64_t>(D->dims[I]);
  return N;
}

/// Static shapes only (as an NPU compiler needs them), plain tensors of NPU types.
bool staticPlain(const OptRtTensorDesc *Array, uint32_t N) {
  for (uint32_t I = 0; I < N; ++I) {
    const OptRtTensorDesc *D = OPT_RT_TENSOR_DESC_AT(Array, I);
    if (!D->present)
      continue;
    if (!typeOk(D->type))
      return false;
    for (int32_t K = 0; K < D->rank; ++K)
      if (D->dims[K] < 0)
        return false;
  }
  return true;
}

int32_t simSupports(void *State, const OptRtNode *Node) {
  SimState &S = *static_cast<SimState *>(State);
  if (!isSimOp(Node->op_type) || (Node->domain[0] != '\0' && std::strcmp(Node->domain, "com.optimium") != 0))
    return 0;
  if (Node->num_outputs == 0 || !staticPlain(Node->inputs, Node->num_inputs) ||
      !staticPlain(Node->outputs, Node->num_outputs))
    return 0;
  return S.Host->native_supports_node(Node);
}

/// MACs of the node's multiply-accumulate work (0 for elementwise and data movement).
uint64_t macsOf(const OptRtNode *Node) {
  const std::string Op = Node->op_type;
  const OptRtTensorDesc *Out = OPT_RT_TENSOR_DESC_AT(Node->outputs, 0);
  if (Node->num_inputs < 2)
    return 0;
  const OptRtTensorDesc *A = OPT_RT_TENSOR_DESC_AT(Node->inputs, 0);
  const OptRtTensorDesc *W = OPT_RT_TENSOR_DESC_AT(Node->inputs, 1);
  if (Op.find("Conv") != std::string::npos || Op.find("Depthwise") != std::string::npos) {
    // Conv weights [M, C/group, k...]: each output element takes C/group * prod(k) MACs; a
    // transposed conv's [C, M/group, k...]: each input element spreads over M/group * prod(k).
    uint64_t PerElement = 1;
    for (int32_t I = 1; I < W->rank; ++I)
      PerElement *= static_cast<uint64_t>(W->dims[I]);
    return (Op == "ConvTranspose" ? elements(A) : elements(Out)) * PerElement;
  }
  if (Op == "MatMul" && A->rank >= 1)
    return elements(Out) * static_cast<uint64_t>(A->dims[A->rank - 1]);
  if (Op == "Gemm" && A->rank == 2) {
    const uint64_t K1 = static_cast<uint64_t>(A->dims[0]), K2 = static_cast<uint64_t>(A->dims[1]);
    const OptRtTensorDesc *O = Out;
    // K is A's dimension that the output does not keep (transA moves it).
    const uint64_t M = O->rank == 2 ? static_cast<uint64_t>(O->dims[0]) : 0;
    return elements(Out) * (M == K1 ? K2 : K1);
  }
  return 0;
}

int32_t simCreate(void *State, const OptRtNode *Node, void **Kernel, char *Error, size_t ErrorSize) {
  SimState &S = *static_cast<SimState *>(State);
  SimKernel *K = new (std::nothrow) SimKernel();
  if (!K) {
    writeError(Error, ErrorSize, "sim device: out of memory");
    return OPT_RT_ERROR_OUT_OF_RESOURCE;
  }
  const int32_t RC = S.Host->native_create_kernel(Node, &K->Native, Error, ErrorSize);
  if (RC != OPT_RT_OK) {
    delete K;
    return RC;
  }
  K->OpType = Node->op_type;
  K->Name = Node->name;
  const uint64_t Macs = macsOf(Node);
  uint64_t OutElements = 0;
  for (uint32_t I = 0; I < Node->num_outputs; ++I)
    if (OPT_RT_TENSOR_DESC_AT(Node->outputs, I)->present)
      OutElements += elements(OPT_RT_TENSOR_DESC_AT(Node->outputs, I));
  const SimConfig &C = S.Config;
  K->Cycles = C.OverheadCycles + (Macs + C.MacsPerCycle - 1) / C.MacsPerCycle +
              (OutElements + C.ElementsPerCycle - 1) / C.ElementsPerCycle;
  K->Fail = !C.FailOp.empty() && C.FailOp == K->OpType;
  *Kernel = K;
  return OPT_RT_OK;
}

/// The tensors with device addresses replaced by the arena's bytes (what the native kernels read).
bool translate(SimState &S, const OptRtTensor *In, uint32_t N, std::vector<OptRtTensor> &Out, std::string &Why) {
  Out.resize(N);
  for (uint32_t I = 0; I < N; ++I) {
    const OptRtTensor *T = OPT_RT_TENSOR_AT(In, I);
    OptRtTensor &D = Out[I];
    D.struct_size = sizeof(OptRtTensor);
    D.type = T->type;
    D.rank = T->rank;
    D.dims = T->dims;
    D.data = nullptr;
    if (!T->data)
      continue;
    D.data = resolve(S, T->data, 0);
    if (!D.data) {
      Why = "tensor " + std::to_string(I) + " is not a buffer of the sim device (a host pointer?)";
      return false;
    }
  }
  return true;
}

int32_t simRun(void *State, void *KernelPtr, const OptRtTensor *Inputs, uint32_t NumInputs, const OptRtTensor *Outputs,
               uint32_t NumOutputs, const OptRtExecContext *Ctx, char *Error, size_t ErrorSize) {
  SimState &S = *static_cast<SimState *>(State);
  const SimKernel &K = *static_cast<const SimKernel *>(KernelPtr);
  if (K.Fail) {
    writeError(Error, ErrorSize,
               "the simulated NPU failed op " + K.OpType + " (node '" + K.Name + "'): OPTIMIUM_RT_SIM_FAIL_OP=" + K.OpType);
    return OPT_RT_ERROR_DEVICE;
  }
  std::vector<OptRtTensor> In, Out;
  std::string Why;
  if (!translate(S, Inputs, NumInputs, In, Why) || !translate(S, Outputs, NumOutputs, Out, Why)) {
    writeError(Error, ErrorSize, "sim device, node '" + K.Name + "': " + Why);
    return OPT_RT_ERROR_INVALID_ARGUMENT;
  }
  const int32_t RC = S.Host->native_run_kernel(K.Native, In.data(), NumInputs, Out.data(), NumOutputs, Ctx, Error,
                                               ErrorSize);
  if (RC != OPT_RT_OK)
    return RC;
  std::lock_guard<std::mutex> Lock(S.Mu);
  S.TotalCycles += K.Cycles;
  if (!writeCounter(S))
    logMessage(S.Host, 3, "sim device: cannot update the inference-time counter " + S.Config.CounterPath + ": " +
                              std::strerror(errno));
  return OPT_RT_OK;
}

void simDestroyKernel(void *State, void *KernelPtr) {
  SimState &S = *static_cast<SimState *>(State);
  SimKernel *K = static_cast<SimKernel *>(KernelPtr);
  if (K && K->Native)
    S.Host->native_destroy_kernel(K->Native);
  delete K;
}

void simDestroy(void *State) {
  SimState *S = static_cast<SimState *>(State);
  if (!S)
    return;
  if (S->CounterFd >= 0)
    ::close(S->CounterFd);
  if (S->Config.OwnCounter)
    ::unlink(S->Config.CounterPath.c_str());
  std::free(S->Arena);
  if (g_state == S)
    g_state = nullptr;
  delete S;
}

// The Torq NPU pairs its matrix engine with RISC-V vector cores; the simulator reports those.
int32_t simCapability(void *, OptRtCapability *Cap) {
  if (Cap->struct_size < sizeof(OptRtCapability))
    return OPT_RT_ERROR_INVALID_ARGUMENT;
  Cap->kind = OPT_RT_CAPABILITY_RISCV;
  Cap->features = OPT_RT_RISCV_VECTOR | OPT_RT_RISCV_FLOAT16;
  Cap->vector_length = 256;
  return OPT_RT_OK;
}

const char *simProperty(void *State, const char *Key) {
  SimState &S = *static_cast<SimState *>(State);
  if (std::strcmp(Key, "hw_type") == 0)
    return "sim";
  if (std::strcmp(Key, "inference_time_path") == 0)
    return S.Config.CounterPath.c_str();
  if (std::strcmp(Key, "memory") == 0)
    return S.MemoryText.c_str();
  // Live values (asked at each getDeviceProperty()): the host copies the string at once, so one
  // buffer per calling thread keeps it alive long enough.
  const bool InUse = std::strcmp(Key, "arena_bytes_in_use") == 0;
  if (InUse || std::strcmp(Key, "peak_bytes_in_use") == 0) {
    thread_local std::string Text;
    std::lock_guard<std::mutex> Lock(S.Mu);
    Text = std::to_string(InUse ? S.InUse : S.PeakInUse);
    return Text.c_str();
  }
  return nullptr;
}

bool readConfig(SimConfig &C, std::string &Why) {
  if (!envCount("OPTIMIUM_RT_SIM_ARENA_BYTES", C.ArenaBytes, C.ArenaBytes, Why) ||
      !envCount("OPTIMIUM_RT_SIM_MACS_PER_CYCLE", C.MacsPerCycle, C.MacsPerCycle, Why) ||
      !envCount("OPTIMIUM_RT_SIM_ELEMENTS_PER_CYCLE", C.ElementsPerCycle, C.ElementsPerCycle, Why) ||
      !envCount("OPTIMIUM_RT_SIM_OP_OVERHEAD_CYCLES", C.OverheadCycles, C.OverheadCycles, Why, true) ||
      !envCount("OPTIMIUM_RT_SIM_CLOCK_MHZ", C.ClockMHz, C.ClockMHz, Why))
    return false;
  if (const char *Fail = std::getenv("OPTIMIUM_RT_SIM_FAIL_OP"))
    C.FailOp = Fail;
  if (const char *P = std::getenv("OPTIMIUM_RT_SIM_COUNTER_PATH"); P && *P) {
    C.CounterPath = P;
  } else {
    const char *Tmp = std::getenv("TMPDIR");
    static int Instance = 0; // a refused second load must not remove the first one's file
    C.CounterPath = std::string(Tmp && *Tmp ? Tmp : "/tmp") + "/optimium-sim-" + std::to_string(::getpid()) + "-" +
                    std::to_string(++Instance) + ".inference_time";
    C.OwnCounter = true;
  }
  return true;
}

} // namespace

extern "C" __attribute__((visibility("default"))) int32_t optimium_rt_backend_init(const OptRtHostApi *Host,
                                                                                   OptRtBackend *Backend) {
  std::memset(Backend, 0, sizeof(*Backend));
  Backend->struct_size = sizeof(OptRtBackend);
  Backend->api_version = OPTIMIUM_RT_BACKEND_API_VERSION;
  if (!Host || Host->api_version != OPTIMIUM_RT_BACKEND_API_VERSION)
    return OPT_RT_ERROR_INVALID_ARGUMENT;
  if (Host->struct_size < offsetof(OptRtHostApi, native_destroy_kernel) + sizeof(void *) ||
      !Host->native_create_kernel || !Host->native_run_kernel || !Host->native_supports_node ||
      !Host->native_destroy_kernel) {
    logMessage(Host, 4, "sim device: the runtime offers no native kernels (OptRtHostApi::native_*); it is older than "
                        "this simulator");
    return OPT_RT_ERROR_NOT_IMPLEMENTED;
  }
  auto *S = new (std::nothrow) SimState();
  if (!S)
    return OPT_RT_ERROR_OUT_OF_RESOURCE;
  S->Host = Host;
  std::string Why;
  if (!readConfig(S->Config, Why)) {
    logMessage(Host, 4, "sim device: " + Why);
    delete S;
    return OPT_RT_ERROR_INVALID_ARGUMENT;
  }
  S->Config.ArenaBytes = roundUp(S->Config.ArenaBytes);
  S->Arena = static_cast<unsigned char *>(std::aligned_alloc(kAlign, S->Config.ArenaBytes));
  if (!S->Arena) {
    logMessage(Host, 4, "sim device: cannot allocate its " + std::to_string(S->Config.ArenaBytes) + "-byte memory");
    delete S;
    return OPT_RT_ERROR_OUT_OF_RESOURCE;
  }
  S->Free[0] = S->Config.ArenaBytes;
  S->MemoryText = std::to_string(S->Config.ArenaBytes) + "-byte arena";
  S->CounterFd = ::open(S->Config.CounterPath.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (S->CounterFd < 0 || !writeCounter(*S)) {
    logMessage(Host, 4, "sim device: cannot write its inference-time counter " + S->Config.CounterPath + ": " +
                            std::strerror(errno) + " (OPTIMIUM_RT_SIM_COUNTER_PATH sets it)");
    if (S->CounterFd >= 0)
      ::close(S->CounterFd);
    std::free(S->Arena);
    delete S;
    return OPT_RT_ERROR_DEVICE;
  }
  g_state = S;
  Backend->name = "sim";
  Backend->platform = OPT_RT_PLATFORM_SYNAPTICS;
  Backend->device_kind = OPT_RT_DEVICE_SYNAP_NPU;
  Backend->device_index = 0;
  Backend->state = S;
  Backend->supports_node = simSupports;
  Backend->create_kernel = simCreate;
  Backend->run_kernel = simRun;
  Backend->destroy_kernel = simDestroyKernel;
  Backend->destroy = simDestroy;
  Backend->get_capability = simCapability;
  // Device addresses: a buffer's interior bytes are addressable (resolve() finds the allocation
  // holding an address), so the host plans a run's values inside one allocation.
  Backend->flags = OPT_RT_BACKEND_EXPLICIT_ONLY | OPT_RT_BACKEND_DEVICE_MEMORY | OPT_RT_BACKEND_DEVICE_ADDRESSES;
  Backend->allocate = simAllocate;
  Backend->release = simRelease;
  Backend->copy_to_device = simCopyToDevice;
  Backend->copy_from_device = simCopyFromDevice;
  Backend->get_property = simProperty;
  logMessage(Host, 2, "sim device registered: " + S->MemoryText + ", counter " + S->Config.CounterPath);
  return OPT_RT_OK;
}
