// optimium-run's --device / --hw_type / --device_allocator and --dump_devices: IREE's device
// names mapped onto this host's devices.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "Optimium/Runtime.h"

namespace optimium {
namespace tools {

/// The devices of this host that --device=Device names (native; local-task, local-sync, cpu and
/// llvm-cpu are aliases; npu, alias torq and synaptics, the accelerator driver), of hardware type
/// --hw_type when given (only the npu driver has hardware types; ToolError listing them otherwise) (--device_allocator: every device here
/// takes auto, cpu and dmabuf; tools/DeviceAllocator.h). ToolError naming
/// the available devices otherwise.
std::vector<runtime::DeviceID> resolveDevice(const std::string &Device, const std::string &HwType,
                                             const std::string &DeviceAllocator);
/// The Devices to load with for a --device choice: a CPU-platform extension (xnnpack) shares the
/// host with the native backend, so the native CPU follows it for the ops it lacks.
std::vector<runtime::DeviceID> withCpuFallback(std::vector<runtime::DeviceID> Devices);
/// The hardware types of the npu driver (--hw_type): each names a backend by its "hw_type"
/// device property. Only sim is built in this tree.
struct HwTypeInfo {
  std::string Name, Description;
};
const std::vector<HwTypeInfo> &hwTypes();
/// "sim (...), astra_machina (...)" for error messages.
std::string knownHwTypes();
/// One line per device of this host (--dump_devices), with its capability and properties.
void dumpDevices(std::ostream &Out);

} // namespace tools
} // namespace optimium
