// A concrete tensor bound for one run, as the executor hands it to a kernel: the currency between
// exec (which binds arena memory) and the backends' kernels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ir/Graph.h"

namespace optimium {
namespace runtime {
namespace detail {

struct ContainerValue;

/// A concrete tensor bound for one run. A sequence/optional value has Kind != Tensor, Type its
/// element type, no dims, and Data pointing to its ContainerValue (ir/Container.h).
struct TensorView {
  ElementType Type = ElementType::Undefined;
  std::vector<int64_t> Dims;
  void *Data = nullptr;
  ValueKind Kind = ValueKind::Tensor;

  size_t elementCount() const {
    size_t N = 1;
    for (int64_t D : Dims)
      N *= static_cast<size_t>(D);
    return N;
  }
  size_t rank() const { return Dims.size(); }
  template <typename T> T *data() const { return static_cast<T *>(Data); }
  ContainerValue *container() const { return isContainerKind(Kind) ? static_cast<ContainerValue *>(Data) : nullptr; }
};

} // namespace detail
} // namespace runtime
} // namespace optimium
