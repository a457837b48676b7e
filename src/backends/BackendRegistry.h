// Backends known to this process (the native CPU backend plus loaded extensions), all behind the
// C ABI of Optimium/Runtime/Extension/Backend.h.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "Optimium/Runtime/Device.h"
#include "Optimium/Runtime/Extension/Backend.h"
#include "core/Status.h"

namespace optimium {
namespace runtime {
namespace detail {

struct RegisteredBackend {
  OptRtBackend Backend{};
  DeviceID Device;
  std::string Library; ///< Path of the extension library ("" for built-in).
  void *Handle = nullptr;
};

/// The host API handed to backends.
const OptRtHostApi *hostApi();
/// Registers the built-in native backend (idempotent).
void registerNativeBackend();
/// Loads an extension library and registers its backend.
Status loadExtensionLibrary(const std::string &Path);
/// Every registered backend, native first registered.
std::vector<std::shared_ptr<RegisteredBackend>> registeredBackends();
std::shared_ptr<RegisteredBackend> findBackend(const DeviceID &Device);
/// Fills the native backend's ABI struct (implemented in backends/native/NativeBackend.cpp).
void makeNativeBackend(OptRtBackend &Out);

} // namespace detail
} // namespace runtime
} // namespace optimium
