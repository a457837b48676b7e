// ONNX TensorProto.DataType codes of the numeric and bool element types: one table for the
// importer and for the ops whose attributes name a type (Cast 'to', EyeLike/SequenceEmpty 'dtype').
#pragma once

#include <cstdint>

#include "Optimium/Runtime/ElementType.h"

namespace optimium {
namespace runtime {
namespace detail {

/// The element type of a numeric or bool ONNX code; Undefined for string, complex, the
/// low-precision codes (lowp::fromOnnxDataType) and unknown ones.
inline ElementType numericTypeOfOnnxCode(int64_t Code) {
  switch (Code) {
  case 1: return ElementType::F32;
  case 2: return ElementType::U8;
  case 3: return ElementType::I8;
  case 4: return ElementType::U16;
  case 5: return ElementType::I16;
  case 6: return ElementType::I32;
  case 7: return ElementType::I64;
  case 9: return ElementType::Bool;
  case 10: return ElementType::F16;
  case 11: return ElementType::F64;
  case 12: return ElementType::U32;
  case 13: return ElementType::U64;
  case 16: return ElementType::BF16;
  default: return ElementType::Undefined;
  }
}

} // namespace detail
} // namespace runtime
} // namespace optimium
