// Run-time sequence and optional values (ONNX sequence(tensor), optional(tensor | sequence)). The
// executor keeps one ContainerValue per such value and run (never in the arena) and hands kernels
// a TensorView whose Data points to it. Elements are immutable once inserted and shared by
// reference count, so SequenceInsert / Identity / If / Loop pass sequences on without copying
// tensors (ONNX Runtime's TensorSeq holds OrtValues the same way).
#pragma once

#include <memory>
#include <vector>

#include "core/Status.h"
#include "ir/TensorView.h"

namespace optimium {
namespace runtime {
namespace detail {

/// A tensor with whatever keeps its bytes alive (null Keep: borrowed, valid for the current run).
struct OwnedTensor {
  TensorView View;
  std::shared_ptr<const void> Keep;
};

struct ContainerValue {
  ValueKind Kind = ValueKind::Sequence;
  ElementType Type = ElementType::Undefined; ///< Element type.
  /// Optionals: whether an element is there. Sequences (and values read as optionals) hold one.
  bool HasValue = true;
  /// Sequence elements (also of an optional sequence), or the optional tensor (one when HasValue).
  /// Every element owns its bytes (Keep is set).
  std::vector<OwnedTensor> Tensors;

  /// Empties the value and gives it kind K and element type T (optionals start without element).
  void reset(ValueKind K, ElementType T) {
    Kind = K;
    Type = T;
    HasValue = !isOptionalKind(K);
    Tensors.clear();
  }
};

/// A heap tensor of Type and Dims (zero-filled). String elements are not supported.
Result<OwnedTensor> allocateOwnedTensor(ElementType Type, const std::vector<int64_t> &Dims);

/// A heap copy of V's bytes (V is a tensor view).
Result<OwnedTensor> copyToOwned(const TensorView &V);

/// A fresh container and the view kernels get for it.
std::shared_ptr<ContainerValue> makeContainer(ValueKind K, ElementType T);
TensorView containerView(const std::shared_ptr<ContainerValue> &C);

/// Whether V holds a value: a present tensor, a sequence, or an optional with its element.
bool holdsValue(const TensorView &V);

/// Makes Dst hold what Src holds (Src a container or a tensor view), sharing element buffers with
/// Src (a tensor view is copied). Dst keeps its kind: an optional Dst takes a plain value as
/// present, a plain Dst refuses an empty optional (InferError naming What).
Status assignContainer(ContainerValue &Dst, const TensorView &Src, const std::string &What);

} // namespace detail
} // namespace runtime
} // namespace optimium
