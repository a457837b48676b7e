// The devices of the local host and their capabilities. The Native CPU of the build target is
// always present (detected on first use); extension backends register theirs when they are loaded
// at initialize() (or by loadExtension()), through registerLocalDevice(), and finalize() removes
// them again.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "Optimium/Runtime/Device.h"

namespace optimium {
namespace runtime {
namespace detail {

/// The current list of local devices, Native CPU first. The returned vector is never modified or
/// freed: a registration publishes a new list, so ArrayRefs into an older one (e.g. a HostInfo
/// taken earlier) stay valid but do not show devices registered after they were taken.
const std::vector<DeviceID> &localDevices();

/// Adds a local device (host 0) with its capabilities; a null Capability stands for
/// VoidCapability. Registering an ID again replaces its capability (references to the old one
/// stay valid). Props are what DeviceID::getProperty reports (the backend's get_property).
/// Thread-safe; meant to be called from initialize() / extension registration.
/// Live: asked for keys not in Props at each getDeviceProperty() call (outside the registry's
/// lock); returns false when the device has no such property.
using LivePropertyFn = std::function<bool(const std::string &Key, std::string &Value)>;
void registerLocalDevice(DeviceID ID, std::unique_ptr<Capability> Cap, std::map<std::string, std::string> Props = {},
                         LivePropertyFn Live = nullptr);

/// Removes a device registered by registerLocalDevice (an extension unloaded by finalize()); its
/// capability then reads as VoidCapability. References handed out before stay valid. The Native
/// CPU device cannot be removed; unknown IDs are ignored.
void unregisterLocalDevice(DeviceID ID);

} // namespace detail
} // namespace runtime
} // namespace optimium
