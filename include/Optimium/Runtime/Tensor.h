// Tensors: a shared handle to typed, shaped memory. Copying a Tensor shares the buffer; use
// copyTo() for a deep copy. A tensor over a user buffer never owns or frees that buffer.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "Optimium/Runtime/Device.h"
#include "Optimium/Runtime/ElementType.h"
#include "Optimium/Runtime/Export.h"
#include "Optimium/Runtime/Shape.h"

namespace optimium {
namespace runtime {

struct TensorImpl;

/// Extra bytes allocated after a padded tensor's data so vector kernels may read past the end.
constexpr size_t kTensorPaddingBytes = 64;
/// Alignment of buffers the runtime allocates.
constexpr size_t kTensorAlignment = 64;

class OPTIMIUM_RT_API Tensor {
public:
  Tensor() {}

  explicit operator bool() const { return static_cast<bool>(Impl) && (data() != nullptr || isDeviceTensor()); }
  ElementType getType() const;
  const TensorShape &getShape() const;
  /// Number of elements.
  size_t getElementCount() const;
  /// Size of the data in bytes (without padding).
  size_t getTensorSize() const;
  /// Whether the buffer carries kTensorPaddingBytes of tail padding.
  bool hasPadding() const;
  /// Whether this tensor wraps a buffer the caller owns.
  bool isUserBuffer() const;

  /// Null for a device tensor (its data is not in host memory: use toHost()).
  void *data();
  const void *data() const;

  /// Whether the data lives in the memory of a device that has its own (an output kept there by
  /// InferRequest::setDeviceOutputs(true)); such a tensor can be passed to infer() of a model on
  /// that device without a copy. False for every host tensor, and for an empty one.
  bool isDeviceTensor() const;
  /// The device whose memory holds the data: the native CPU for host tensors.
  DeviceID getDevice() const;
  /// A host tensor with this one's data: this tensor itself when it is in host memory, else a
  /// copy from the device (DeviceError if the device cannot copy).
  Tensor toHost() const;

  /// Deep copy into Dest; shape and element type must match (ShapeError / TypeError otherwise).
  /// A device tensor is copied from the device (Dest must be a host tensor).
  void copyTo(const Tensor &Dest) const;
  /// A new tensor owning a copy of this one's data.
  Tensor clone() const;
  /// Writes the raw bytes (row-major, little-endian) to Path; IOError on failure.
  void save(const std::string &Path) const;
  /// Reads raw bytes written by save(); the file size must equal getTensorSize().
  void load(const std::string &Path);
  /// Drops this handle's reference to the data (the memory is freed with its last reference).
  void release();

  // Internal.
  explicit Tensor(std::shared_ptr<TensorImpl> I) : Impl(std::move(I)) {}
  const std::shared_ptr<TensorImpl> &impl() const { return Impl; }

protected:
  void checkElementType(ElementType Expected) const;
  void fillBytes(const void *Value, size_t ElementSize);

  std::shared_ptr<TensorImpl> Impl;
};

template <typename T> class TypedTensor : public Tensor {
public:
  TypedTensor() {}
  /// Throws TypeError when the tensor's element type is not T.
  explicit TypedTensor(const Tensor &T0) : Tensor(T0) { checkElementType(ElementTypeOf<T>::value); }

  T *data() { return static_cast<T *>(Tensor::data()); }
  const T *data() const { return static_cast<const T *>(Tensor::data()); }
  T &operator[](size_t I) { return data()[I]; }
  const T &operator[](size_t I) const { return data()[I]; }
  T *begin() { return data(); }
  T *end() { return data() + getElementCount(); }

  void fill(const T &Value) {
    T *P = data();
    const size_t N = getElementCount();
    for (size_t I = 0; I < N; ++I)
      P[I] = Value;
  }
};

/// A tensor owning a fresh, aligned, uninitialized buffer (String tensors hold empty strings).
OPTIMIUM_RT_API Tensor tensor(ElementType Type, const TensorShape &Shape, bool Padding = true);
/// A tensor over Data, which the caller keeps alive and frees. With Padding the caller promises
/// kTensorPaddingBytes of readable memory after the data.
OPTIMIUM_RT_API Tensor tensor(ElementType Type, const TensorShape &Shape, void *Data, bool Padding = true);

template <typename T> TypedTensor<T> tensor(const TensorShape &Shape, bool Padding = true) {
  return TypedTensor<T>(tensor(ElementTypeOf<T>::value, Shape, Padding));
}
template <typename T> TypedTensor<T> tensor(const TensorShape &Shape, T *Data, bool Padding = true) {
  return TypedTensor<T>(tensor(ElementTypeOf<T>::value, Shape, static_cast<void *>(Data), Padding));
}

} // namespace runtime
} // namespace optimium
