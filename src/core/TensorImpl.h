// Storage behind a Tensor handle. A Buffer is shared by every tensor viewing it (outputs share the
// request's arena this way); a user buffer is wrapped without ownership.
#pragma once

#include <cstddef>
#include <memory>

#include "Optimium/Runtime/Device.h"
#include "Optimium/Runtime/Shape.h"
#include "Optimium/Runtime/Tensor.h"
#include "core/Status.h"

namespace optimium {
namespace runtime {

namespace detail {
/// A block of memory. Owned blocks are 64-byte aligned and freed with the last reference.
struct Buffer {
  void *Data = nullptr;
  size_t Bytes = 0;
  bool Owned = false;
  ElementType ConstructedStrings = ElementType::Undefined; ///< String when it holds std::strings.
  size_t StringCount = 0;
  size_t MappedBytes = 0; ///< Owned and mapped by core/LargeAlloc (allocateLongLived): its size.
  ~Buffer();
  /// Allocates Bytes (+ padding) aligned to kTensorAlignment; null on allocation failure.
  static std::shared_ptr<Buffer> allocate(size_t Bytes, size_t Padding = kTensorPaddingBytes);
  /// allocate() for a block that lives across runs (a request's arena): a large one is mapped with
  /// huge pages (core/LargeAlloc.h) and zero-filled; no padding.
  static std::shared_ptr<Buffer> allocateLongLived(size_t Bytes);
  static std::shared_ptr<Buffer> wrap(void *Data, size_t Bytes);
};

/// A buffer in the memory of a device that has its own (Extension/Backend.h,
/// OPT_RT_BACKEND_DEVICE_MEMORY): an opaque handle the host never dereferences. Implemented by
/// backends/BackendRegistry (DeviceBuffer); core sees only this face of it. Freed with its last
/// reference.
struct DeviceMemory {
  DeviceID Device;
  void *Handle = nullptr;
  uint64_t Bytes = 0;
  virtual ~DeviceMemory() = default;
  /// Copies the first N bytes to host memory.
  virtual Status copyToHost(void *Dst, uint64_t N) const = 0;
};
} // namespace detail

struct TensorImpl {
  ElementType Type = ElementType::Undefined;
  TensorShape Shape;
  std::vector<int64_t> Dims; ///< Shape as concrete dims.
  size_t ElementCount = 0;
  std::shared_ptr<detail::Buffer> Storage; ///< Null after release().
  size_t Offset = 0;                       ///< Byte offset of the data in Storage.
  bool Padding = true;
  bool UserBuffer = false;
  /// Set for a device tensor (InferRequest::setDeviceOutputs): its data is on the device, Storage
  /// is null and data() returns null.
  std::shared_ptr<detail::DeviceMemory> DeviceStorage;

  void *data() const { return Storage ? static_cast<char *>(Storage->Data) + Offset : nullptr; }
  size_t bytes() const { return ElementCount * getElementSize(Type); }
};

namespace detail {
/// A tensor viewing Bytes at Offset of a shared buffer (used for outputs and intermediates).
Tensor makeTensorView(ElementType Type, const std::vector<int64_t> &Dims, std::shared_ptr<Buffer> Storage,
                      size_t Offset);
/// A tensor whose data is the device buffer Memory (shared, not copied).
Tensor makeDeviceTensor(ElementType Type, const std::vector<int64_t> &Dims, std::shared_ptr<DeviceMemory> Memory);
} // namespace detail

} // namespace runtime
} // namespace optimium
