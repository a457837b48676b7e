// Dispatch on the floating-point element types only (ops whose kernels do float arithmetic and
// would not compile for bool or integer storage).
#pragma once

#include "backends/native/ops/common/Indexing.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

/// Calls Fn(TypeTag<C++ type>) for f32, f64, f16 or bf16; false for the other types.
template <typename F> bool visitFloat(ElementType T, F &&Fn) {
  switch (T) {
  case ElementType::F32: Fn(TypeTag<float>()); return true;
  case ElementType::F64: Fn(TypeTag<double>()); return true;
  case ElementType::F16: Fn(TypeTag<float16>()); return true;
  case ElementType::BF16: Fn(TypeTag<bfloat16>()); return true;
  default: return false;
  }
}

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
