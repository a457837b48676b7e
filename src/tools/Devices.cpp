// Device selection for optimium-run; see Devices.h.
#include "tools/Devices.h"

#include <algorithm>
#include <cctype>

#include "tools/Npy.h"

namespace optimium {
namespace tools {

namespace rt = optimium::runtime;

namespace {

std::string platformName(rt::PlatformKind P) {
  switch (P) {
  case rt::PlatformKind::Native: return "native";
  case rt::PlatformKind::XNNPack: return "xnnpack";
  case rt::PlatformKind::CUDA: return "cuda";
  case rt::PlatformKind::Vulkan: return "vulkan";
  case rt::PlatformKind::OpenCL: return "opencl";
  case rt::PlatformKind::SNPE: return "snpe";
  case rt::PlatformKind::QNN: return "qnn";
  case rt::PlatformKind::Synaptics: return "npu";
  case rt::PlatformKind::Hexagon: return "hexagon";
  }
  return "unknown";
}

std::string lower(std::string S) {
  for (char &C : S)
    C = static_cast<char>(std::tolower(static_cast<unsigned char>(C)));
  return S;
}

std::vector<rt::DeviceID> localDevices() {
  const rt::HostInfo H = rt::getLocalInfo();
  return std::vector<rt::DeviceID>(H.Devices.begin(), H.Devices.end());
}

std::string availableDeviceNames(const std::vector<rt::DeviceID> &Devices) {
  std::vector<std::string> Names;
  for (const rt::DeviceID &D : Devices) {
    const std::string N = platformName(D.getPlatform());
    if (std::find(Names.begin(), Names.end(), N) == Names.end())
      Names.push_back(N);
  }
  std::string S;
  for (size_t I = 0; I < Names.size(); ++I)
    S += (I ? ", " : "") + Names[I];
  return S.empty() ? "none" : S;
}

} // namespace

const std::vector<HwTypeInfo> &hwTypes() {
  static const std::vector<HwTypeInfo> Types = {
      {"sim", "the simulated NPU, liboptimium-runtime-sim.so"},
      {"astra_machina", "the Synaptics Astra Machina SoC NPU, not built in this runtime"}};
  return Types;
}

std::string knownHwTypes() {
  std::string S;
  for (const HwTypeInfo &T : hwTypes())
    S += (S.empty() ? "" : ", ") + T.Name + " (" + T.Description + ")";
  return S;
}

std::vector<rt::DeviceID> resolveDevice(const std::string &Device, const std::string &HwType,
                                        const std::string &DeviceAllocator) {
  std::string Name = lower(Device);
  if (Name == "local-task" || Name == "local-sync" || Name == "cpu" || Name == "llvm-cpu")
    Name = "native";
  if (Name == "torq" || Name == "synaptics")
    Name = "npu";
  const std::vector<rt::DeviceID> All = localDevices();
  static const rt::PlatformKind Platforms[] = {
      rt::PlatformKind::Native, rt::PlatformKind::XNNPack, rt::PlatformKind::CUDA,
      rt::PlatformKind::Vulkan, rt::PlatformKind::OpenCL,  rt::PlatformKind::SNPE,
      rt::PlatformKind::QNN,    rt::PlatformKind::Synaptics, rt::PlatformKind::Hexagon};
  bool Known = false;
  rt::PlatformKind Platform = rt::PlatformKind::Native;
  for (rt::PlatformKind P : Platforms)
    if (platformName(P) == Name) {
      Known = true;
      Platform = P;
    }
  if (!Known)
    throw ToolError("--device=" + Device + ": unknown device; available devices: " + availableDeviceNames(All) +
                    " (local-task and local-sync are aliases of native)");
  std::vector<rt::DeviceID> Picked;
  for (const rt::DeviceID &D : All)
    if (D.getPlatform() == Platform)
      Picked.push_back(D);
  if (!HwType.empty()) {
    // Hardware types are the backends of the npu driver (docs/devices.md).
    if (Platform != rt::PlatformKind::Synaptics)
      throw ToolError("--hw_type=" + HwType + ": device '" + Name +
                      "' has no selectable hardware backends (hardware types belong to --device=npu: " +
                      knownHwTypes() + ")");
    bool KnownType = false;
    for (const HwTypeInfo &T : hwTypes())
      KnownType |= HwType == T.Name;
    if (!KnownType)
      throw ToolError("--hw_type=" + HwType + ": unknown hardware type of device npu; known: " + knownHwTypes());
    std::vector<rt::DeviceID> OfType;
    for (const rt::DeviceID &D : Picked)
      if (rt::getDeviceProperty(D, "hw_type") == HwType)
        OfType.push_back(D);
    if (OfType.empty())
      throw ToolError("--hw_type=" + HwType + ": no npu backend of that type is loaded (" +
                      (HwType == "sim" ? std::string("liboptimium-runtime-sim.so is neither beside the runtime library "
                                                     "nor in a folder of OPTIMIUM_RT_EXTENSION_PATH")
                                       : std::string("this runtime does not build it")) +
                      "); available devices: " + availableDeviceNames(All));
    Picked = OfType;
  }
  if (Picked.empty())
    throw ToolError("--device=" + Device + ": no such device on this host; available devices: " +
                    availableDeviceNames(All));
  (void)DeviceAllocator; // every device here reads host memory, dma-bufs included (tools/DeviceAllocator.h)
  return Picked;
}

std::vector<rt::DeviceID> withCpuFallback(std::vector<rt::DeviceID> Devices) {
  if (!Devices.empty() && Devices[0].getPlatform() != rt::PlatformKind::Native && rt::isDeviceCPU(Devices[0].getDeviceKind()))
    for (const rt::DeviceID &D : localDevices())
      if (D.getPlatform() == rt::PlatformKind::Native)
        Devices.push_back(D);
  return Devices;
}

void dumpDevices(std::ostream &Out) {
  const rt::HostInfo H = rt::getLocalInfo();
  Out << "host " << H.ID << ": " << H.Name.str() << " (" << rt::toString(H.Architecture) << ", "
      << rt::toString(H.OS) << ")\n";
  size_t I = 0;
  for (const rt::DeviceID &D : H.Devices) {
    Out << "device[" << I++ << "]: --device=" << platformName(D.getPlatform()) << "  " << D.toString()
        << "  platform=" << rt::toString(D.getPlatform()) << " kind=" << rt::toString(D.getDeviceKind())
        << " index=" << D.getIndex() << "  capability: " << D.getCapability().toString();
    for (const char *Key : {"hw_type", "memory", "inference_time_path"}) {
      const std::string V = rt::getDeviceProperty(D, Key);
      if (!V.empty())
        Out << "  " << Key << "=" << V;
    }
    Out << "\n";
  }
  if (I == 0)
    Out << "(no devices)\n";
}

} // namespace tools
} // namespace optimium
