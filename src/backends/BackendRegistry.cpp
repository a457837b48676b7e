// Registry of backends and the loader of extension libraries (dlopen + one C entry symbol).
#include "backends/BackendRegistry.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cstddef>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>

#include "backends/NodeHandle.h"
#include "core/DeviceRegistry.h"
#include "core/Log.h"

namespace optimium {
namespace runtime {
namespace detail {

// The C constants of Backend.h are the public enums' numbering.
#define OPT_RT_SAME(C, E) static_assert(C == static_cast<int>(E), #C " differs from " #E)
OPT_RT_SAME(OPT_RT_ELEMENT_UNDEFINED, ElementType::Undefined);
OPT_RT_SAME(OPT_RT_ELEMENT_BOOL, ElementType::Bool);
OPT_RT_SAME(OPT_RT_ELEMENT_I8, ElementType::I8);
OPT_RT_SAME(OPT_RT_ELEMENT_I16, ElementType::I16);
OPT_RT_SAME(OPT_RT_ELEMENT_I32, ElementType::I32);
OPT_RT_SAME(OPT_RT_ELEMENT_I64, ElementType::I64);
OPT_RT_SAME(OPT_RT_ELEMENT_U8, ElementType::U8);
OPT_RT_SAME(OPT_RT_ELEMENT_U16, ElementType::U16);
OPT_RT_SAME(OPT_RT_ELEMENT_U32, ElementType::U32);
OPT_RT_SAME(OPT_RT_ELEMENT_U64, ElementType::U64);
OPT_RT_SAME(OPT_RT_ELEMENT_F16, ElementType::F16);
OPT_RT_SAME(OPT_RT_ELEMENT_BF16, ElementType::BF16);
OPT_RT_SAME(OPT_RT_ELEMENT_F32, ElementType::F32);
OPT_RT_SAME(OPT_RT_ELEMENT_F64, ElementType::F64);
OPT_RT_SAME(OPT_RT_ELEMENT_STRING, ElementType::String);
OPT_RT_SAME(OPT_RT_ELEMENT_F8E4M3FN, ElementType::F8E4M3FN);
OPT_RT_SAME(OPT_RT_ELEMENT_F8E4M3FNUZ, ElementType::F8E4M3FNUZ);
OPT_RT_SAME(OPT_RT_ELEMENT_F8E5M2, ElementType::F8E5M2);
OPT_RT_SAME(OPT_RT_ELEMENT_F8E5M2FNUZ, ElementType::F8E5M2FNUZ);
OPT_RT_SAME(OPT_RT_ELEMENT_F4E2M1, ElementType::F4E2M1);
OPT_RT_SAME(OPT_RT_ELEMENT_I4, ElementType::I4);
OPT_RT_SAME(OPT_RT_ELEMENT_U4, ElementType::U4);
OPT_RT_SAME(OPT_RT_ELEMENT_I2, ElementType::I2);
OPT_RT_SAME(OPT_RT_ELEMENT_U2, ElementType::U2);
OPT_RT_SAME(OPT_RT_ELEMENT_F8E8M0, ElementType::F8E8M0);
OPT_RT_SAME(OPT_RT_PLATFORM_NATIVE, PlatformKind::Native);
OPT_RT_SAME(OPT_RT_PLATFORM_XNNPACK, PlatformKind::XNNPack);
OPT_RT_SAME(OPT_RT_PLATFORM_CUDA, PlatformKind::CUDA);
OPT_RT_SAME(OPT_RT_PLATFORM_VULKAN, PlatformKind::Vulkan);
OPT_RT_SAME(OPT_RT_PLATFORM_OPENCL, PlatformKind::OpenCL);
OPT_RT_SAME(OPT_RT_PLATFORM_SNPE, PlatformKind::SNPE);
OPT_RT_SAME(OPT_RT_PLATFORM_QNN, PlatformKind::QNN);
OPT_RT_SAME(OPT_RT_PLATFORM_SYNAPTICS, PlatformKind::Synaptics);
OPT_RT_SAME(OPT_RT_PLATFORM_HEXAGON, PlatformKind::Hexagon);
OPT_RT_SAME(OPT_RT_DEVICE_UNSPECIFIED, DeviceKind::Unspecified);
OPT_RT_SAME(OPT_RT_DEVICE_NEUTRAL, DeviceKind::Neutral);
OPT_RT_SAME(OPT_RT_DEVICE_X86, DeviceKind::x86);
OPT_RT_SAME(OPT_RT_DEVICE_X64, DeviceKind::x64);
OPT_RT_SAME(OPT_RT_DEVICE_ARM, DeviceKind::ARM);
OPT_RT_SAME(OPT_RT_DEVICE_ARM64, DeviceKind::ARM64);
OPT_RT_SAME(OPT_RT_DEVICE_RISCV32, DeviceKind::RISCV32);
OPT_RT_SAME(OPT_RT_DEVICE_RISCV64, DeviceKind::RISCV64);
OPT_RT_SAME(OPT_RT_DEVICE_ANY_CPU, DeviceKind::AnyCPU);
OPT_RT_SAME(OPT_RT_DEVICE_NVIDIA, DeviceKind::NVIDIA);
OPT_RT_SAME(OPT_RT_DEVICE_AMDGPU, DeviceKind::AMDGPU);
OPT_RT_SAME(OPT_RT_DEVICE_INTEL_GPU, DeviceKind::IntelGPU);
OPT_RT_SAME(OPT_RT_DEVICE_MALI, DeviceKind::Mali);
OPT_RT_SAME(OPT_RT_DEVICE_ADRENO, DeviceKind::Adreno);
OPT_RT_SAME(OPT_RT_DEVICE_ANY_GPU, DeviceKind::AnyGPU);
OPT_RT_SAME(OPT_RT_DEVICE_HEXAGON, DeviceKind::Hexagon);
OPT_RT_SAME(OPT_RT_DEVICE_MYRIAD, DeviceKind::Myriad);
OPT_RT_SAME(OPT_RT_DEVICE_ARA1, DeviceKind::ARA1);
OPT_RT_SAME(OPT_RT_DEVICE_GOOGLE_TPU, DeviceKind::GoogleTPU);
OPT_RT_SAME(OPT_RT_DEVICE_CV22, DeviceKind::CV22);
OPT_RT_SAME(OPT_RT_DEVICE_SYNAP_NPU, DeviceKind::SynapNPU);
OPT_RT_SAME(OPT_RT_DEVICE_ANY_NPU, DeviceKind::AnyNPU);
OPT_RT_SAME(OPT_RT_CAPABILITY_VOID, CapabilityKind::Void);
OPT_RT_SAME(OPT_RT_CAPABILITY_X86, CapabilityKind::X86);
OPT_RT_SAME(OPT_RT_CAPABILITY_ARM, CapabilityKind::ARM);
OPT_RT_SAME(OPT_RT_CAPABILITY_SPIRV, CapabilityKind::SPIRV);
OPT_RT_SAME(OPT_RT_CAPABILITY_CUDA, CapabilityKind::CUDA);
OPT_RT_SAME(OPT_RT_CAPABILITY_RISCV, CapabilityKind::RISCV);
OPT_RT_SAME(OPT_RT_CAPABILITY_HEXAGON, CapabilityKind::Hexagon);
#undef OPT_RT_SAME
static_assert(static_cast<int>(ElementType::F8E8M0) == 24 && static_cast<int>(DeviceKind::AnyNPU) == 21 &&
                  static_cast<int>(PlatformKind::Hexagon) == 8 && static_cast<int>(CapabilityKind::Hexagon) == 6,
              "a public enum grew: add its C constant to Optimium/Runtime/Extension/Backend.h");
static_assert(sizeof(OptRtBackend) <= OPT_RT_BACKEND_STORAGE_BYTES, "OptRtBackend outgrew its init storage");

RegisteredBackend::~RegisteredBackend() {
  if (Registered && Backend.destroy)
    Backend.destroy(Backend.state);
  if (Handle)
    ::dlclose(Handle);
}

DeviceBuffer::~DeviceBuffer() {
  if (Handle && Owner && Owner->Backend.release && !Parent)
    Owner->Backend.release(Owner->Backend.state, Handle);
}

Result<std::shared_ptr<DeviceBuffer>> DeviceBuffer::allocate(const std::shared_ptr<RegisteredBackend> &B, uint64_t Bytes) {
  auto D = std::make_shared<DeviceBuffer>();
  char Error[512] = {0};
  void *Handle = nullptr;
  const int32_t RC = B->Backend.allocate(B->Backend.state, Bytes ? Bytes : 1, &Handle, Error, sizeof(Error));
  if (RC != OPT_RT_OK || !Handle)
    return makeError(RC == OPT_RT_ERROR_OUT_OF_RESOURCE ? ErrorCode::OutOfResource : ErrorCode::Device,
                     "cannot allocate ", Bytes, " bytes of device memory on ", B->Device.toString(), ": ",
                     Error[0] ? Error : "the backend's allocate failed");
  D->Owner = B;
  D->Device = B->Device;
  D->Handle = Handle;
  D->Bytes = Bytes;
  return D;
}

std::shared_ptr<DeviceBuffer> DeviceBuffer::view(const std::shared_ptr<DeviceBuffer> &Whole, uint64_t Offset,
                                                uint64_t Bytes) {
  auto D = std::make_shared<DeviceBuffer>();
  D->Owner = Whole->Owner;
  D->Device = Whole->Device;
  D->Handle = static_cast<char *>(Whole->Handle) + Offset;
  D->Bytes = Bytes;
  D->Parent = Whole;
  return D;
}

Status DeviceBuffer::copyFromHost(const void *Src, uint64_t N) const {
  if (N > Bytes)
    return makeError(ErrorCode::InvalidArgument, "copy of ", N, " bytes into a device buffer of ", Bytes);
  char Error[512] = {0};
  const int32_t RC = Owner->Backend.copy_to_device(Owner->Backend.state, Handle, Src, N, Error, sizeof(Error));
  if (RC != OPT_RT_OK)
    return makeError(ErrorCode::Device, "copy of ", N, " bytes to ", Device.toString(), " failed: ",
                     Error[0] ? Error : "copy_to_device failed");
  return Status::ok();
}

Status DeviceBuffer::copyToHost(void *Dst, uint64_t N) const {
  if (N > Bytes)
    return makeError(ErrorCode::InvalidArgument, "copy of ", N, " bytes out of a device buffer of ", Bytes);
  char Error[512] = {0};
  const int32_t RC = Owner->Backend.copy_from_device(Owner->Backend.state, Dst, Handle, N, Error, sizeof(Error));
  if (RC != OPT_RT_OK)
    return makeError(ErrorCode::Device, "copy of ", N, " bytes from ", Device.toString(), " failed: ",
                     Error[0] ? Error : "copy_from_device failed");
  return Status::ok();
}

void writeAbiError(const std::string &Message, char *Buffer, size_t Size) {
  if (!Buffer || Size == 0)
    return;
  const size_t N = std::min(Message.size(), Size - 1);
  std::memcpy(Buffer, Message.data(), N);
  Buffer[N] = '\0';
}

namespace {

const AttrValue *findAttr(const void *HostNode, const char *Name) {
  const auto *H = static_cast<const NodeHandle *>(HostNode);
  if (!H || !H->N || !Name)
    return nullptr;
  auto It = H->N->Attrs.find(Name);
  return It == H->N->Attrs.end() ? nullptr : &It->second;
}

int32_t getAttrInt(const void *Node, const char *Name, int64_t *Out) {
  const AttrValue *A = findAttr(Node, Name);
  if (!A || A->K != AttrValue::Kind::Int)
    return 1;
  *Out = A->I;
  return 0;
}
int32_t getAttrFloat(const void *Node, const char *Name, float *Out) {
  const AttrValue *A = findAttr(Node, Name);
  if (!A || A->K != AttrValue::Kind::Float)
    return 1;
  *Out = A->F;
  return 0;
}
int32_t getAttrString(const void *Node, const char *Name, const char **Out, size_t *Len) {
  const AttrValue *A = findAttr(Node, Name);
  if (!A || A->K != AttrValue::Kind::String)
    return 1;
  *Out = A->S.data();
  *Len = A->S.size();
  return 0;
}
int32_t getAttrInts(const void *Node, const char *Name, const int64_t **Out, size_t *Count) {
  const AttrValue *A = findAttr(Node, Name);
  if (!A || A->K != AttrValue::Kind::Ints)
    return 1;
  *Out = A->Ints.data();
  *Count = A->Ints.size();
  return 0;
}
int32_t getAttrFloats(const void *Node, const char *Name, const float **Out, size_t *Count) {
  const AttrValue *A = findAttr(Node, Name);
  if (!A || A->K != AttrValue::Kind::Floats)
    return 1;
  *Out = A->Floats.data();
  *Count = A->Floats.size();
  return 0;
}
int32_t getAttrName(const void *HostNode, size_t Index, const char **Name) {
  const auto *H = static_cast<const NodeHandle *>(HostNode);
  if (!H || !H->N || !Name || Index >= H->N->Attrs.size())
    return 1;
  auto It = H->N->Attrs.begin();
  std::advance(It, static_cast<std::ptrdiff_t>(Index));
  *Name = It->first.c_str();
  return 0;
}
void hostLog(int32_t Level, const char *Message) {
  const LogLevel L = static_cast<LogLevel>(std::max(0, std::min(4, static_cast<int>(Level))));
  if (isLogEnabled(L))
    logMessage(L, Message ? Message : "");
}

std::mutex &registryMutex() {
  static std::mutex M;
  return M;
}
/// Leaked on purpose: no backend is destroyed (nor library closed) by static destructors at exit,
/// where models still alive could hold their kernels; finalize() is what unloads.
std::vector<std::shared_ptr<RegisteredBackend>> &registry() {
  static auto *R = new std::vector<std::shared_ptr<RegisteredBackend>>();
  return *R;
}

/// The Capability an extension reported through OptRtCapability.
Result<std::unique_ptr<Capability>> capabilityFromAbi(const OptRtCapability &C) {
  const uint64_t F = C.features;
  auto Bit = [F](uint64_t Mask) { return (F & Mask) != 0; };
  switch (C.kind) {
  case OPT_RT_CAPABILITY_VOID: return std::unique_ptr<Capability>(new VoidCapability());
  case OPT_RT_CAPABILITY_X86: {
    std::unique_ptr<X86Capability> X(new X86Capability());
    X->SSE2 = Bit(OPT_RT_X86_SSE2);
    X->SSE3 = Bit(OPT_RT_X86_SSE3);
    X->SSSE3 = Bit(OPT_RT_X86_SSSE3);
    X->SSE41 = Bit(OPT_RT_X86_SSE41);
    X->SSE42 = Bit(OPT_RT_X86_SSE42);
    X->AVX = Bit(OPT_RT_X86_AVX);
    X->AVX2 = Bit(OPT_RT_X86_AVX2);
    X->FMA = Bit(OPT_RT_X86_FMA);
    X->F16C = Bit(OPT_RT_X86_F16C);
    X->AVX512F = Bit(OPT_RT_X86_AVX512F);
    X->AVX512BW = Bit(OPT_RT_X86_AVX512BW);
    X->AVX512DQ = Bit(OPT_RT_X86_AVX512DQ);
    X->AVX512VL = Bit(OPT_RT_X86_AVX512VL);
    X->AVX512VNNI = Bit(OPT_RT_X86_AVX512VNNI);
    X->AVX512BF16 = Bit(OPT_RT_X86_AVX512BF16);
    X->AVX512FP16 = Bit(OPT_RT_X86_AVX512FP16);
    X->AVXVNNI = Bit(OPT_RT_X86_AVXVNNI);
    X->AMXTile = Bit(OPT_RT_X86_AMX_TILE);
    X->AMXInt8 = Bit(OPT_RT_X86_AMX_INT8);
    X->AMXBF16 = Bit(OPT_RT_X86_AMX_BF16);
    return std::unique_ptr<Capability>(std::move(X));
  }
  case OPT_RT_CAPABILITY_ARM: {
    std::unique_ptr<ARMCapability> A(new ARMCapability());
    A->NEON = Bit(OPT_RT_ARM_NEON);
    A->FP16 = Bit(OPT_RT_ARM_FP16);
    A->DotProd = Bit(OPT_RT_ARM_DOTPROD);
    A->I8MM = Bit(OPT_RT_ARM_I8MM);
    A->BF16 = Bit(OPT_RT_ARM_BF16);
    A->SVE = Bit(OPT_RT_ARM_SVE);
    A->SVE2 = Bit(OPT_RT_ARM_SVE2);
    return std::unique_ptr<Capability>(std::move(A));
  }
  case OPT_RT_CAPABILITY_SPIRV: {
    std::unique_ptr<SPIRVCapability> S(new SPIRVCapability());
    S->VersionMajor = C.version_major;
    S->VersionMinor = C.version_minor;
    S->Float16 = Bit(OPT_RT_SPIRV_FLOAT16);
    S->Int8 = Bit(OPT_RT_SPIRV_INT8);
    return std::unique_ptr<Capability>(std::move(S));
  }
  case OPT_RT_CAPABILITY_CUDA: {
    std::unique_ptr<CUDACapability> U(new CUDACapability());
    U->ComputeMajor = C.version_major;
    U->ComputeMinor = C.version_minor;
    return std::unique_ptr<Capability>(std::move(U));
  }
  case OPT_RT_CAPABILITY_RISCV: {
    std::unique_ptr<RISCVCapability> R(new RISCVCapability());
    R->Vector = Bit(OPT_RT_RISCV_VECTOR);
    R->Float16 = Bit(OPT_RT_RISCV_FLOAT16);
    R->VectorLength = C.vector_length;
    return std::unique_ptr<Capability>(std::move(R));
  }
  case OPT_RT_CAPABILITY_HEXAGON: {
    std::unique_ptr<HexagonCapability> H(new HexagonCapability());
    H->Version = C.version_major;
    H->HVX = Bit(OPT_RT_HEXAGON_HVX);
    return std::unique_ptr<Capability>(std::move(H));
  }
  default:
    return makeError(ErrorCode::Extension, "reports capability kind ", C.kind, ", which this runtime does not know (",
                     OPT_RT_CAPABILITY_VOID, "..", OPT_RT_CAPABILITY_HEXAGON, ", OPT_RT_CAPABILITY_* in Backend.h)");
  }
}

// The native kernels offered to extensions (OptRtHostApi::native_*): the native backend's own
// callbacks, so an extension computing with them goes through the same code as a native node.
const OptRtBackend &nativeAbi() {
  static const OptRtBackend *B = [] {
    auto *N = new OptRtBackend();
    makeNativeBackend(*N);
    return N;
  }();
  return *B;
}
int32_t hostNativeSupports(const OptRtNode *Node) {
  const OptRtBackend &B = nativeAbi();
  return Node ? B.supports_node(B.state, Node) : 0;
}
int32_t hostNativeCreate(const OptRtNode *Node, void **Kernel, char *Error, size_t ErrorSize) {
  const OptRtBackend &B = nativeAbi();
  if (!Node || !Kernel) {
    writeAbiError("native_create_kernel: null node or kernel pointer", Error, ErrorSize);
    return OPT_RT_ERROR_INVALID_ARGUMENT;
  }
  return B.create_kernel(B.state, Node, Kernel, Error, ErrorSize);
}
int32_t hostNativeRun(void *Kernel, const OptRtTensor *Inputs, uint32_t NumInputs, const OptRtTensor *Outputs,
                      uint32_t NumOutputs, const OptRtExecContext *Ctx, char *Error, size_t ErrorSize) {
  const OptRtBackend &B = nativeAbi();
  return B.run_kernel(B.state, Kernel, Inputs, NumInputs, Outputs, NumOutputs, Ctx, Error, ErrorSize);
}
void hostNativeDestroy(void *Kernel) {
  const OptRtBackend &B = nativeAbi();
  if (Kernel)
    B.destroy_kernel(B.state, Kernel);
}

/// Whether the backend's struct (its struct_size) covers the field ending at End.
bool covers(const OptRtBackend &B, size_t End) { return B.struct_size >= End; }
#define OPT_RT_FIELD_END(F) (offsetof(OptRtBackend, F) + sizeof(OptRtBackend::F))

} // namespace

const OptRtHostApi *hostApi() {
  static const OptRtHostApi Api = {sizeof(OptRtHostApi), OPTIMIUM_RT_BACKEND_API_VERSION,
                                   &getAttrInt,         &getAttrFloat,
                                   &getAttrString,      &getAttrInts,
                                   &getAttrFloats,      &hostLog,
                                   &getAttrName,        &hostNativeSupports, &hostNativeCreate,
                                   &hostNativeRun,      &hostNativeDestroy};
  return &Api;
}

void registerNativeBackend() {
  std::lock_guard<std::mutex> Lock(registryMutex());
  for (const auto &B : registry())
    if (B->Library.empty())
      return;
  auto B = std::make_shared<RegisteredBackend>();
  makeNativeBackend(B->Backend);
  B->Device = DeviceID::from(PlatformKind::Native, static_cast<DeviceKind>(B->Backend.device_kind), 0, 0);
  registry().insert(registry().begin(), B);
}

Status loadExtensionLibrary(const std::string &Path) {
  struct stat St;
  if (::stat(Path.c_str(), &St) != 0 || !S_ISREG(St.st_mode))
    return makeError(ErrorCode::InvalidArgument, "extension path '", Path, "' is not a file");
  auto B = std::make_shared<RegisteredBackend>(); // closes the library on every failure below
  B->Library = Path;
  B->Handle = ::dlopen(Path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!B->Handle)
    return makeError(ErrorCode::Extension, "cannot load extension '", Path, "': ", ::dlerror());
  auto Init = reinterpret_cast<OptRtBackendInitFn>(::dlsym(B->Handle, OPTIMIUM_RT_BACKEND_INIT_SYMBOL));
  if (!Init)
    return makeError(ErrorCode::Extension, "extension '", Path, "' does not export ", OPTIMIUM_RT_BACKEND_INIT_SYMBOL);
  // Room for a larger OptRtBackend of a later header (Backend.h, OPT_RT_BACKEND_STORAGE_BYTES).
  union {
    OptRtBackend Backend;
    unsigned char Bytes[OPT_RT_BACKEND_STORAGE_BYTES];
  } Slot;
  std::memset(&Slot, 0, sizeof(Slot));
  const int32_t RC = Init(hostApi(), &Slot.Backend);
  const OptRtBackend &Got = Slot.Backend;
  // The version first: another version's struct cannot be read (not even its destroy).
  if (Got.api_version != OPTIMIUM_RT_BACKEND_API_VERSION) {
    if (Got.api_version == 0)
      return makeError(ErrorCode::Extension, "extension '", Path, "' failed to register (code ", RC,
                       ") without reporting the backend API version it was built against; this runtime speaks version ",
                       OPTIMIUM_RT_BACKEND_API_VERSION);
    return makeError(ErrorCode::Extension, "extension '", Path, "' was built against backend API version ",
                     Got.api_version, ", this runtime speaks version ", OPTIMIUM_RT_BACKEND_API_VERSION,
                     " (rebuild it against this runtime's Optimium/Runtime/Extension/Backend.h)");
  }
  const size_t Required = offsetof(OptRtBackend, get_capability);
  if (RC != OPT_RT_OK)
    return makeError(ErrorCode::Extension, "extension '", Path, "' failed to register (code ", RC, ")");
  std::memcpy(&B->Backend, &Got, sizeof(OptRtBackend));
  B->Registered = true; // from here on its destroy() runs when B goes
  if (Got.struct_size < Required || !Got.create_kernel || !Got.run_kernel || !Got.supports_node)
    return makeError(ErrorCode::Extension, "extension '", Path, "' registered an incomplete backend (struct_size ",
                     Got.struct_size, ", at least ", Required,
                     " expected; supports_node, create_kernel and run_kernel are required)");
  // Fields an earlier struct of this version does not cover read as absent.
  if (!covers(B->Backend, OPT_RT_FIELD_END(get_capability)))
    B->Backend.get_capability = nullptr;
  if (!covers(B->Backend, OPT_RT_FIELD_END(flags)))
    B->Backend.flags = 0;
  if (!covers(B->Backend, OPT_RT_FIELD_END(copy_from_device))) {
    B->Backend.flags &= ~OPT_RT_BACKEND_DEVICE_MEMORY;
    B->Backend.allocate = nullptr;
    B->Backend.release = nullptr;
    B->Backend.copy_to_device = nullptr;
    B->Backend.copy_from_device = nullptr;
  }
  if (!covers(B->Backend, OPT_RT_FIELD_END(get_property)))
    B->Backend.get_property = nullptr;
  if (B->hasDeviceMemory() && (!B->Backend.allocate || !B->Backend.release || !B->Backend.copy_to_device ||
                               !B->Backend.copy_from_device))
    return makeError(ErrorCode::Extension, "extension '", Path,
                     "' declares device memory (OPT_RT_BACKEND_DEVICE_MEMORY) without allocate, release, "
                     "copy_to_device and copy_from_device");
  if (Got.platform < 0 || Got.platform > OPT_RT_PLATFORM_HEXAGON || Got.device_kind < 0 ||
      Got.device_kind > OPT_RT_DEVICE_ANY_NPU || Got.device_index > 255)
    return makeError(ErrorCode::Extension, "extension '", Path, "' registered an unknown device (platform ",
                     Got.platform, ", device kind ", Got.device_kind, ", index ", Got.device_index, ")");
  B->Device = DeviceID::from(static_cast<PlatformKind>(B->Backend.platform),
                             static_cast<DeviceKind>(B->Backend.device_kind),
                             static_cast<uint8_t>(B->Backend.device_index), 0);
  std::unique_ptr<Capability> Cap;
  if (B->Backend.get_capability) {
    OptRtCapability C;
    std::memset(&C, 0, sizeof(C));
    C.struct_size = sizeof(OptRtCapability);
    const int32_t CapRC = B->Backend.get_capability(B->Backend.state, &C);
    if (CapRC != OPT_RT_OK)
      return makeError(ErrorCode::Extension, "extension '", Path, "' failed to report the capability of ",
                       B->Device.toString(), " (code ", CapRC, ")");
    Result<std::unique_ptr<Capability>> Converted = capabilityFromAbi(C);
    if (!Converted.isOk())
      return makeError(ErrorCode::Extension, "extension '", Path, "' ", Converted.status().message());
    Cap = std::move(Converted.value());
  }
  std::map<std::string, std::string> Props;
  if (B->Backend.get_property)
    for (const char *Key : {"hw_type", "inference_time_path", "memory"})
      if (const char *V = B->Backend.get_property(B->Backend.state, Key))
        Props[Key] = V;
  std::lock_guard<std::mutex> Lock(registryMutex());
  for (const auto &Other : registry()) {
    if (Other->Device.getPlatform() == B->Device.getPlatform())
      return makeError(ErrorCode::Extension, "an extension for platform ", toString(B->Device.getPlatform()),
                       " is already loaded (", Other->Library.empty() ? "built-in" : Other->Library, ")");
  }
  registry().push_back(B);
  LivePropertyFn Live;
  if (B->Backend.get_property) {
    std::weak_ptr<RegisteredBackend> Weak = B; // the registry, not a property query, keeps it loaded
    Live = [Weak](const std::string &Key, std::string &Value) {
      const std::shared_ptr<RegisteredBackend> Held = Weak.lock();
      if (!Held)
        return false;
      const char *V = Held->Backend.get_property(Held->Backend.state, Key.c_str());
      if (!V)
        return false;
      Value = V;
      return true;
    };
  }
  registerLocalDevice(B->Device, std::move(Cap), std::move(Props), std::move(Live));
  OPT_LOG(Info, "loaded extension '", Path, "' (", B->Backend.name ? B->Backend.name : "?", ") for ",
          B->Device.toString(), ", capability ", B->Device.getCapability().toString());
  return Status::ok();
}

void unregisterAllBackends() {
  std::vector<std::shared_ptr<RegisteredBackend>> Old;
  {
    std::lock_guard<std::mutex> Lock(registryMutex());
    Old.swap(registry());
  }
  for (const auto &B : Old)
    if (!B->Library.empty())
      unregisterLocalDevice(B->Device);
  for (const auto &B : Old)
    if (!B->Library.empty() && B.use_count() > 1)
      OPT_LOG(Warning, "extension '", B->Library, "' stays loaded: ", B.use_count() - 1,
              " kernel(s) or device buffer(s) of it are still alive");
  // Old goes here: each backend no kernel holds is destroyed and its library closed.
}

std::vector<std::shared_ptr<RegisteredBackend>> registeredBackends() {
  std::lock_guard<std::mutex> Lock(registryMutex());
  return registry();
}

std::shared_ptr<RegisteredBackend> findBackend(const DeviceID &Device) {
  std::lock_guard<std::mutex> Lock(registryMutex());
  for (const auto &B : registry())
    if (B->Device == Device)
      return B;
  return nullptr;
}

} // namespace detail
} // namespace runtime
} // namespace optimium
