// Properties a device's backend reports besides its capability (Extension/Backend.h get_property).
#pragma once

#include <string>

#include "Optimium/Runtime/Device.h"
#include "Optimium/Runtime/Export.h"

namespace optimium {
namespace runtime {

/// A property of a local device, "" when its backend reports none. Keys:
///   "hw_type"              the backend within its driver (optimium-run --hw_type), e.g. "sim"
///   "inference_time_path"  a file holding the device's cumulative inference time in microseconds
///                          (as the Torq NPU's sysfs counter; optimium.runtime.profiling reads it)
///   "memory"               the device memory, e.g. "256 MiB arena"
/// Other keys are asked of the backend at each call (live values), e.g. the simulated NPU's
///   "arena_bytes_in_use"   bytes of its memory allocated now
///   "peak_bytes_in_use"    the most that were allocated at once since it was loaded
OPTIMIUM_RT_API std::string getDeviceProperty(const DeviceID &Device, const std::string &Key);

} // namespace runtime
} // namespace optimium
