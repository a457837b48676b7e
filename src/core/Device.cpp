// Device kinds, capabilities (detected from the real CPU) and the local host's device registry.
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#if defined(__linux__) && (defined(__aarch64__) || defined(__arm__) || defined(__riscv))
#include <sys/auxv.h>
#endif

#include "Optimium/Runtime/Device.h"
#include "Optimium/Runtime/DeviceProperties.h"
#include "Optimium/Runtime/Exceptions.h"
#include "core/CpuFeatures.h"
#include "core/DeviceRegistry.h"

namespace optimium {
namespace runtime {

bool isDeviceCPU(DeviceKind Kind) {
  switch (Kind) {
  case DeviceKind::x86: case DeviceKind::x64: case DeviceKind::ARM: case DeviceKind::ARM64:
  case DeviceKind::RISCV32: case DeviceKind::RISCV64: case DeviceKind::AnyCPU:
    return true;
  default:
    return false;
  }
}

bool isDeviceGPU(DeviceKind Kind) {
  switch (Kind) {
  case DeviceKind::NVIDIA: case DeviceKind::AMDGPU: case DeviceKind::IntelGPU: case DeviceKind::Mali:
  case DeviceKind::Adreno: case DeviceKind::AnyGPU:
    return true;
  default:
    return false;
  }
}

bool isDeviceNPU(DeviceKind Kind) {
  switch (Kind) {
  case DeviceKind::Hexagon: case DeviceKind::Myriad: case DeviceKind::ARA1: case DeviceKind::GoogleTPU:
  case DeviceKind::CV22: case DeviceKind::SynapNPU: case DeviceKind::AnyNPU:
    return true;
  default:
    return false;
  }
}

bool isDeviceNeutral(DeviceKind Kind) { return Kind == DeviceKind::Neutral; }

const char *toString(PlatformKind Kind) {
  switch (Kind) {
  case PlatformKind::Native: return "Native";
  case PlatformKind::XNNPack: return "XNNPack";
  case PlatformKind::CUDA: return "CUDA";
  case PlatformKind::Vulkan: return "Vulkan";
  case PlatformKind::OpenCL: return "OpenCL";
  case PlatformKind::SNPE: return "SNPE";
  case PlatformKind::QNN: return "QNN";
  case PlatformKind::Synaptics: return "Synaptics";
  case PlatformKind::Hexagon: return "Hexagon";
  }
  return "Unknown";
}

const char *toString(DeviceKind Kind) {
  switch (Kind) {
  case DeviceKind::Unspecified: return "Unspecified";
  case DeviceKind::Neutral: return "Neutral";
  case DeviceKind::x86: return "x86";
  case DeviceKind::x64: return "x64";
  case DeviceKind::ARM: return "ARM";
  case DeviceKind::ARM64: return "ARM64";
  case DeviceKind::RISCV32: return "RISCV32";
  case DeviceKind::RISCV64: return "RISCV64";
  case DeviceKind::AnyCPU: return "AnyCPU";
  case DeviceKind::NVIDIA: return "NVIDIA";
  case DeviceKind::AMDGPU: return "AMDGPU";
  case DeviceKind::IntelGPU: return "IntelGPU";
  case DeviceKind::Mali: return "Mali";
  case DeviceKind::Adreno: return "Adreno";
  case DeviceKind::AnyGPU: return "AnyGPU";
  case DeviceKind::Hexagon: return "Hexagon";
  case DeviceKind::Myriad: return "Myriad";
  case DeviceKind::ARA1: return "ARA1";
  case DeviceKind::GoogleTPU: return "GoogleTPU";
  case DeviceKind::CV22: return "CV22";
  case DeviceKind::SynapNPU: return "SynapNPU";
  case DeviceKind::AnyNPU: return "AnyNPU";
  }
  return "Unknown";
}

const char *toString(OSKind Kind) {
  switch (Kind) {
  case OSKind::Linux: return "Linux";
  case OSKind::Android: return "Android";
  case OSKind::Windows: return "Windows";
  case OSKind::MacOS: return "MacOS";
  case OSKind::IOS: return "IOS";
  }
  return "Unknown";
}

// --- capabilities -----------------------------------------------------------------------------

Capability::~Capability() = default;

namespace {
/// "<prefix>: flag flag ..." or "<prefix>: none".
class FlagList {
public:
  explicit FlagList(const char *Prefix) : Text(Prefix) { Text += ':'; }
  FlagList &add(bool On, const char *Name) {
    if (On) {
      Text += ' ';
      Text += Name;
      Any = true;
    }
    return *this;
  }
  FlagList &add(const std::string &Item) {
    Text += ' ';
    Text += Item;
    Any = true;
    return *this;
  }
  std::string str() const { return Any ? Text : Text + " none"; }

private:
  std::string Text;
  bool Any = false;
};
} // namespace

std::string VoidCapability::toString() const { return "void"; }

std::string X86Capability::toString() const {
  return FlagList("x86")
      .add(SSE2, "sse2").add(SSE3, "sse3").add(SSSE3, "ssse3").add(SSE41, "sse4.1").add(SSE42, "sse4.2")
      .add(AVX, "avx").add(AVX2, "avx2").add(FMA, "fma").add(F16C, "f16c")
      .add(AVX512F, "avx512f").add(AVX512BW, "avx512bw").add(AVX512DQ, "avx512dq").add(AVX512VL, "avx512vl")
      .add(AVX512VNNI, "avx512vnni").add(AVX512BF16, "avx512bf16").add(AVX512FP16, "avx512fp16")
      .add(AVXVNNI, "avxvnni")
      .add(AMXTile, "amx-tile").add(AMXInt8, "amx-int8").add(AMXBF16, "amx-bf16")
      .str();
}

std::string ARMCapability::toString() const {
  return FlagList("arm")
      .add(NEON, "neon").add(FP16, "fp16").add(DotProd, "dotprod").add(I8MM, "i8mm").add(BF16, "bf16")
      .add(SVE, "sve").add(SVE2, "sve2")
      .str();
}

std::string SPIRVCapability::toString() const {
  return FlagList("spirv")
      .add(std::to_string(VersionMajor) + "." + std::to_string(VersionMinor))
      .add(Float16, "float16").add(Int8, "int8")
      .str();
}

std::string CUDACapability::toString() const {
  return FlagList("cuda").add("sm_" + std::to_string(ComputeMajor) + std::to_string(ComputeMinor)).str();
}

std::string RISCVCapability::toString() const {
  FlagList L("riscv");
  L.add(Vector, "v");
  if (Vector && VectorLength)
    L.add("vlen=" + std::to_string(VectorLength));
  return L.add(Float16, "zfh").str();
}

std::string HexagonCapability::toString() const {
  return FlagList("hexagon").add("v" + std::to_string(Version)).add(HVX, "hvx").str();
}

// --- detection of the local CPU ---------------------------------------------------------------

namespace {

#if defined(__x86_64__) || defined(__i386__)
std::unique_ptr<Capability> detectX86() {
  const detail::CpuFeatures &F = detail::cpuFeatures();
  auto C = std::make_unique<X86Capability>();
  C->SSE2 = F.SSE2;
  C->SSE3 = F.SSE3;
  C->SSSE3 = F.SSSE3;
  C->SSE41 = F.SSE41;
  C->SSE42 = F.SSE42;
  C->AVX = F.AVX;
  C->AVX2 = F.AVX2;
  C->FMA = F.FMA;
  C->F16C = F.F16C;
  C->AVX512F = F.AVX512F;
  C->AVX512BW = F.AVX512BW;
  C->AVX512DQ = F.AVX512DQ;
  C->AVX512VL = F.AVX512VL;
  C->AVX512VNNI = F.AVX512VNNI;
  C->AVX512BF16 = F.AVX512BF16;
  C->AVX512FP16 = F.AVX512FP16;
  C->AVXVNNI = F.AVXVNNI;
  C->AMXTile = F.AMXTile;
  C->AMXInt8 = F.AMXInt8;
  C->AMXBF16 = F.AMXBF16;
  return C;
}
#endif

#if defined(__aarch64__) && defined(__linux__)
std::unique_ptr<Capability> detectARM64() {
  auto C = std::make_unique<ARMCapability>();
  const unsigned long HW = getauxval(AT_HWCAP), HW2 = getauxval(AT_HWCAP2);
  // Bit numbers from the kernel's arch/arm64/include/uapi/asm/hwcap.h.
  C->NEON = (HW >> 1) & 1;     // HWCAP_ASIMD
  C->FP16 = (HW >> 10) & 1;    // HWCAP_ASIMDHP
  C->DotProd = (HW >> 20) & 1; // HWCAP_ASIMDDP
  C->SVE = (HW >> 22) & 1;     // HWCAP_SVE
  C->SVE2 = (HW2 >> 1) & 1;    // HWCAP2_SVE2
  C->I8MM = (HW2 >> 13) & 1;   // HWCAP2_I8MM
  C->BF16 = (HW2 >> 14) & 1;   // HWCAP2_BF16
  return C;
}
#endif

#if defined(__arm__) && defined(__linux__)
std::unique_ptr<Capability> detectARM32() {
  auto C = std::make_unique<ARMCapability>();
  const unsigned long HW = getauxval(AT_HWCAP);
  C->NEON = (HW >> 12) & 1; // HWCAP_NEON
  return C;
}
#endif

#if defined(__riscv) && defined(__linux__)
std::unique_ptr<Capability> detectRISCV() {
  auto C = std::make_unique<RISCVCapability>();
  const unsigned long HW = getauxval(AT_HWCAP); // one bit per single-letter extension
  C->Vector = (HW >> ('V' - 'A')) & 1;
  return C;
}
#endif

constexpr DeviceKind hostArchitecture() {
#if defined(__x86_64__) || defined(_M_X64)
  return DeviceKind::x64;
#elif defined(__i386__) || defined(_M_IX86)
  return DeviceKind::x86;
#elif defined(__aarch64__) || defined(_M_ARM64)
  return DeviceKind::ARM64;
#elif defined(__arm__) || defined(_M_ARM)
  return DeviceKind::ARM;
#elif defined(__riscv) && __riscv_xlen == 64
  return DeviceKind::RISCV64;
#elif defined(__riscv)
  return DeviceKind::RISCV32;
#else
  return DeviceKind::Unspecified;
#endif
}

constexpr OSKind hostOS() {
#if defined(__ANDROID__)
  return OSKind::Android;
#elif defined(_WIN32)
  return OSKind::Windows;
#elif defined(__APPLE__)
  return OSKind::MacOS;
#else
  return OSKind::Linux;
#endif
}

std::unique_ptr<Capability> detectNativeCapability() {
#if defined(__x86_64__) || defined(__i386__)
  return detectX86();
#elif defined(__aarch64__) && defined(__linux__)
  return detectARM64();
#elif defined(__arm__) && defined(__linux__)
  return detectARM32();
#elif defined(__riscv) && defined(__linux__)
  return detectRISCV();
#else
  return std::make_unique<VoidCapability>();
#endif
}

// --- registry -----------------------------------------------------------------------------------

/// Leaked on purpose: references handed out (capabilities, device lists) must outlive static
/// destructors that might still look at devices.
struct Registry {
  std::mutex Lock;
  std::map<DeviceID, std::unique_ptr<Capability>> Capabilities;
  std::map<DeviceID, std::map<std::string, std::string>> Properties;
  std::map<DeviceID, detail::LivePropertyFn> LiveProperties;
  /// Every published device list; the last one is current. Never shrinks (see DeviceRegistry.h).
  std::vector<std::unique_ptr<const std::vector<DeviceID>>> Lists;
  /// Capabilities replaced by a re-registration, kept alive for references to them.
  std::vector<std::unique_ptr<Capability>> Retired;
  const std::vector<DeviceID> *Current = nullptr;

  Registry() {
    const DeviceID Native = DeviceID::from(PlatformKind::Native, hostArchitecture(), 0, 0);
    Capabilities[Native] = detectNativeCapability();
    Lists.push_back(std::make_unique<const std::vector<DeviceID>>(std::vector<DeviceID>{Native}));
    Current = Lists.back().get();
  }
};

Registry &registry() {
  static Registry *R = new Registry();
  return *R;
}

const VoidCapability &voidCapability() {
  static const VoidCapability *V = new VoidCapability();
  return *V;
}

} // namespace

namespace detail {

const std::vector<DeviceID> &localDevices() {
  Registry &R = registry();
  std::lock_guard<std::mutex> G(R.Lock);
  return *R.Current;
}

void registerLocalDevice(DeviceID ID, std::unique_ptr<Capability> Cap, std::map<std::string, std::string> Props,
                         LivePropertyFn Live) {
  if (ID.getHostID() != 0)
    throw InvalidArgumentError("registerLocalDevice(): " + ID.toString() + " is not on the local host");
  if (!Cap)
    Cap = std::make_unique<VoidCapability>();
  Registry &R = registry();
  std::lock_guard<std::mutex> G(R.Lock);
  R.Properties[ID] = std::move(Props);
  if (Live)
    R.LiveProperties[ID] = std::move(Live);
  else
    R.LiveProperties.erase(ID);
  auto It = R.Capabilities.find(ID);
  if (It != R.Capabilities.end()) {
    R.Retired.push_back(std::move(It->second));
    It->second = std::move(Cap);
    return;
  }
  R.Capabilities.emplace(ID, std::move(Cap));
  auto Next = std::make_unique<std::vector<DeviceID>>(*R.Current);
  Next->push_back(ID);
  R.Lists.push_back(std::move(Next));
  R.Current = R.Lists.back().get();
}

void unregisterLocalDevice(DeviceID ID) {
  Registry &R = registry();
  std::lock_guard<std::mutex> G(R.Lock);
  if (ID == R.Current->front())
    return; // the Native CPU stays
  auto It = R.Capabilities.find(ID);
  if (It == R.Capabilities.end())
    return;
  R.Retired.push_back(std::move(It->second));
  R.Capabilities.erase(It);
  R.Properties.erase(ID);
  R.LiveProperties.erase(ID);
  auto Next = std::make_unique<std::vector<DeviceID>>();
  for (const DeviceID &D : *R.Current)
    if (D != ID)
      Next->push_back(D);
  R.Lists.push_back(std::move(Next));
  R.Current = R.Lists.back().get();
}

} // namespace detail

// --- DeviceID and HostInfo --------------------------------------------------------------------

std::string DeviceID::toString() const {
  std::ostringstream OS;
  OS << runtime::toString(Platform) << ':' << runtime::toString(Kind) << ':' << static_cast<unsigned>(Index) << '@'
     << static_cast<unsigned>(Host);
  return OS.str();
}

const Capability &DeviceID::getCapability() const {
  Registry &R = registry();
  std::lock_guard<std::mutex> G(R.Lock);
  auto It = R.Capabilities.find(*this);
  if (It == R.Capabilities.end())
    return voidCapability();
  return *It->second;
}

std::string getDeviceProperty(const DeviceID &Device, const std::string &Key) {
  Registry &R = registry();
  detail::LivePropertyFn Live;
  {
    std::lock_guard<std::mutex> G(R.Lock);
    auto It = R.Properties.find(Device);
    if (It == R.Properties.end())
      return std::string();
    auto P = It->second.find(Key);
    if (P != It->second.end())
      return P->second;
    auto L = R.LiveProperties.find(Device);
    if (L == R.LiveProperties.end())
      return std::string();
    Live = L->second;
  }
  // Outside the lock: the backend takes its own (and may be unloading meanwhile: the function
  // holds it only weakly).
  std::string Value;
  return Live(Key, Value) ? Value : std::string();
}

HostInfo DeviceID::getHostInfo() const {
  if (Host == 0)
    return getLocalInfo();
  throw DeviceError("host " + std::to_string(static_cast<unsigned>(Host)) + " of device " + toString() +
                    " is not known to this process (only the local host 0 is)");
}

std::string HostInfo::toString() const {
  std::ostringstream S;
  S << "HostInfo(id: " << ID << ", name: " << Name << ", arch: " << runtime::toString(Architecture)
    << ", os: " << runtime::toString(OS) << ", devices: [";
  // The local host's devices with their capabilities (those of another host are not known here).
  for (size_t I = 0; I < Devices.size(); ++I) {
    S << (I ? ", " : "") << Devices[I].toString();
    if (ID == 0 && Devices[I].getHostID() == 0)
      S << " (" << Devices[I].getCapability().toString() << ')';
  }
  S << "])";
  return S.str();
}

HostInfo getLocalInfo() {
  // The host name is read once; the device list is the registry's current one.
  static const std::string *Name = [] {
    char Buf[256] = {};
    if (gethostname(Buf, sizeof(Buf) - 1) != 0 || !Buf[0])
      return new std::string("localhost");
    return new std::string(Buf);
  }();
  HostInfo Info;
  Info.ID = 0;
  Info.Name = StringRef(*Name);
  Info.Architecture = hostArchitecture();
  Info.OS = hostOS();
  Info.Devices = ArrayRef<DeviceID>(detail::localDevices());
  return Info;
}

} // namespace runtime
} // namespace optimium
