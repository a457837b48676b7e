// Element type sizes and names.
#include "Optimium/Runtime/ElementType.h"

namespace optimium {
namespace runtime {

size_t getElementSize(ElementType Type) {
  switch (Type) {
  case ElementType::Bool: case ElementType::I8: case ElementType::U8: return 1;
  // Low-precision types: one element per byte (sub-byte ones unpacked), see ElementType.h.
  case ElementType::F8E4M3FN: case ElementType::F8E4M3FNUZ: case ElementType::F8E5M2:
  case ElementType::F8E5M2FNUZ: case ElementType::F8E8M0: case ElementType::F4E2M1:
  case ElementType::I4: case ElementType::U4: case ElementType::I2: case ElementType::U2: return 1;
  case ElementType::I16: case ElementType::U16: case ElementType::F16: case ElementType::BF16: return 2;
  case ElementType::I32: case ElementType::U32: case ElementType::F32: return 4;
  case ElementType::I64: case ElementType::U64: case ElementType::F64: return 8;
  case ElementType::String: return sizeof(std::string);
  case ElementType::Undefined: return 0;
  }
  return 0;
}

const char *toString(ElementType Type) {
  switch (Type) {
  case ElementType::Undefined: return "undefined";
  case ElementType::Bool: return "bool";
  case ElementType::I8: return "i8";
  case ElementType::I16: return "i16";
  case ElementType::I32: return "i32";
  case ElementType::I64: return "i64";
  case ElementType::U8: return "u8";
  case ElementType::U16: return "u16";
  case ElementType::U32: return "u32";
  case ElementType::U64: return "u64";
  case ElementType::F16: return "f16";
  case ElementType::BF16: return "bf16";
  case ElementType::F32: return "f32";
  case ElementType::F64: return "f64";
  case ElementType::String: return "string";
  case ElementType::F8E4M3FN: return "f8e4m3fn";
  case ElementType::F8E4M3FNUZ: return "f8e4m3fnuz";
  case ElementType::F8E5M2: return "f8e5m2";
  case ElementType::F8E5M2FNUZ: return "f8e5m2fnuz";
  case ElementType::F8E8M0: return "f8e8m0";
  case ElementType::F4E2M1: return "f4e2m1";
  case ElementType::I4: return "i4";
  case ElementType::U4: return "u4";
  case ElementType::I2: return "i2";
  case ElementType::U2: return "u2";
  }
  return "unknown";
}

} // namespace runtime
} // namespace optimium
