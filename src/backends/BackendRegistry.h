// Backends known to this process (the native CPU backend plus loaded extensions), all behind the
// C ABI of Optimium/Runtime/Extension/Backend.h.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "Optimium/Runtime/Device.h"
#include "Optimium/Runtime/ElementType.h"
#include "Optimium/Runtime/Extension/Backend.h"
#include "core/Status.h"
#include "core/TensorImpl.h"

namespace optimium {
namespace runtime {
namespace detail {

/// One backend. Kernels hold it (CompiledNode) so its library stays loaded while any of them
/// lives: the last reference calls the backend's destroy and closes the library.
struct RegisteredBackend {
  OptRtBackend Backend{};
  DeviceID Device;
  std::string Library; ///< Path of the extension library ("" for built-in).
  void *Handle = nullptr;
  bool Registered = false; ///< init succeeded with our API version: destroy() is owed.
  /// The backend's OPT_RT_BACKEND_* flags (0 where its struct does not cover them).
  bool explicitOnly() const { return (Backend.flags & OPT_RT_BACKEND_EXPLICIT_ONLY) != 0; }
  bool hasDeviceMemory() const { return (Backend.flags & OPT_RT_BACKEND_DEVICE_MEMORY) != 0; }
  /// Device memory whose buffers are address ranges (OPT_RT_BACKEND_DEVICE_ADDRESSES): a request
  /// plans its device values inside one allocation.
  bool hasDeviceAddresses() const {
    return hasDeviceMemory() && (Backend.flags & OPT_RT_BACKEND_DEVICE_ADDRESSES) != 0;
  }
  RegisteredBackend() = default;
  RegisteredBackend(const RegisteredBackend &) = delete;
  RegisteredBackend &operator=(const RegisteredBackend &) = delete;
  ~RegisteredBackend();
};

/// A buffer of a backend with device memory (allocate / release of Backend.h); holds the backend
/// so its library stays loaded while the buffer lives (a device tensor may outlive the model).
struct DeviceBuffer : DeviceMemory {
  std::shared_ptr<RegisteredBackend> Owner;
  ~DeviceBuffer() override;
  /// Bytes (>= 1) of the backend's memory; OutOfResource naming the device when it is full.
  static Result<std::shared_ptr<DeviceBuffer>> allocate(const std::shared_ptr<RegisteredBackend> &B, uint64_t Bytes);
  /// Bytes at Offset of Whole (a backend with OPT_RT_BACKEND_DEVICE_ADDRESSES): holds Whole, never
  /// released itself.
  static std::shared_ptr<DeviceBuffer> view(const std::shared_ptr<DeviceBuffer> &Whole, uint64_t Offset, uint64_t Bytes);
  std::shared_ptr<DeviceBuffer> Parent; ///< set for a view
  Status copyFromHost(const void *Src, uint64_t N) const;
  Status copyToHost(void *Dst, uint64_t N) const override;
};

/// The host API handed to backends.
const OptRtHostApi *hostApi();
/// Registers the built-in native backend (idempotent).
void registerNativeBackend();
/// Loads an extension library and registers its backend.
Status loadExtensionLibrary(const std::string &Path);
/// finalize(): forgets every backend and removes the extensions' devices. Each backend is
/// destroyed (and its library closed) once no kernel holds it: at once when finalize() has
/// released the live models' kernels first.
void unregisterAllBackends();
/// Every registered backend, native first registered.
std::vector<std::shared_ptr<RegisteredBackend>> registeredBackends();
std::shared_ptr<RegisteredBackend> findBackend(const DeviceID &Device);
/// Fills the native backend's ABI struct (implemented in backends/native/NativeBackend.cpp).
void makeNativeBackend(OptRtBackend &Out);

} // namespace detail
} // namespace runtime
} // namespace optimium
