// Tensor::toDevice(): a host tensor copied into the memory of a device that has its own (the
// backend ABI's allocate / copy_to_device). In the api layer, not core/Tensor.cpp: it reaches the
// backend registry, which core must not see.
#include <sstream>

#include "Optimium/Runtime.h"
#include "backends/BackendRegistry.h"
#include "core/DeviceRegistry.h"
#include "api/OwnedModelBytes.h"
#include "core/ErrorConversion.h"
#include "core/TensorImpl.h"

namespace optimium {
namespace runtime {

using detail::DeviceBuffer;
using detail::RegisteredBackend;

Tensor Tensor::toDevice(const DeviceID &Device) const {
  detail::requireRuntimeInitialized("Tensor::toDevice");
  if (!Impl)
    throw InvalidStateError("Tensor::toDevice() called on an empty or released tensor");
  const std::shared_ptr<RegisteredBackend> B = detail::findBackend(Device);
  if (!B) {
    std::ostringstream OS;
    OS << "Tensor::toDevice(): " << Device.toString() << " is not a device of this runtime (loaded: ";
    const char *Sep = "";
    for (const DeviceID &D : detail::localDevices()) {
      OS << Sep << D.toString();
      Sep = ", ";
    }
    OS << ")";
    throw DeviceError(OS.str());
  }
  if (Impl->DeviceStorage) {
    const auto *Buf = dynamic_cast<const DeviceBuffer *>(Impl->DeviceStorage.get());
    if (Buf && Buf->Owner == B)
      return *this; // already there
    return toHost().toDevice(Device); // from another device: through the host
  }
  // A device that computes in host memory (the native CPU, XNNPack): the host tensor is its data.
  if (!B->hasDeviceMemory())
    return *this;
  if (Impl->Type == ElementType::String)
    throw TypeError("Tensor::toDevice(): a string tensor cannot be copied into the memory of " + Device.toString() +
                    " (only numeric tensors live in device memory)");
  if (!Impl->Storage || (!Impl->data() && Impl->bytes() != 0))
    throw InvalidStateError("Tensor::toDevice() called on a tensor whose data was released");
  const size_t Bytes = Impl->bytes();
  detail::Result<std::shared_ptr<DeviceBuffer>> R = DeviceBuffer::allocate(B, Bytes);
  if (!R.isOk())
    detail::throwIfError(R.status());
  if (Bytes)
    detail::throwIfError(R.value()->copyFromHost(Impl->data(), Bytes));
  return detail::makeDeviceTensor(Impl->Type, Impl->Dims, std::move(R.value()));
}

} // namespace runtime
} // namespace optimium
