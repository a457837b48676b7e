// Element types of tensors and the C++ types that map to them.
//
// Low-precision types (appended after String so existing values stay stable) are stored one
// element per byte inside the runtime, whatever their bit width:
//   F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F8E8M0  the 8-bit code (raw bit pattern)
//   F4E2M1                                            the 4-bit code in the low nibble (0..15)
//   I4, I2                                            the value as a sign-extended int8 (-8..7, -2..1)
//   U4, U2                                            the value as a uint8 (0..15, 0..3)
// so getElementSize() is 1 for all of them. The ONNX importer unpacks ONNX's packed sub-byte
// layout (two 4-bit or four 2-bit elements per byte, lowest bits first). docs/element-types.md
// has the conversion rules (rounding, saturation, NaN encodings).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "Optimium/Runtime/Export.h"
#include "Optimium/Runtime/Types.h"

namespace optimium {
namespace runtime {

enum class ElementType : uint8_t {
  Undefined = 0,
  Bool,
  I8,
  I16,
  I32,
  I64,
  U8,
  U16,
  U32,
  U64,
  F16,
  BF16,
  F32,
  F64,
  String,
  F8E4M3FN,   ///< float8: 1 sign, 4 exponent, 3 mantissa bits; no inf; NaN S.1111.111
  F8E4M3FNUZ, ///< float8: no inf, no -0; NaN 0x80
  F8E5M2,     ///< float8: IEEE-like (inf and NaN)
  F8E5M2FNUZ, ///< float8: no inf, no -0; NaN 0x80
  F4E2M1,     ///< float4: 1 sign, 2 exponent, 1 mantissa bit; no inf/NaN (one code per byte)
  I4,         ///< 4-bit signed integer (sign-extended int8 per byte)
  U4,         ///< 4-bit unsigned integer (uint8 per byte)
  I2,         ///< 2-bit signed integer (sign-extended int8 per byte)
  U2,         ///< 2-bit unsigned integer (uint8 per byte)
  F8E8M0,     ///< float8: 8 exponent bits only (2^(e-127)); no sign, no zero; NaN 0xFF
};

/// Size in bytes of one element (String: sizeof(std::string); Undefined: 0; every low-precision
/// type, sub-byte ones included: 1).
OPTIMIUM_RT_API size_t getElementSize(ElementType Type);
/// Short name: "f32", "i64", "bf16", "bool", "string", "f8e4m3fn", "f4e2m1", "i4", "u2", ...
OPTIMIUM_RT_API const char *toString(ElementType Type);

/// Maps a C++ type to its ElementType. Using a type the runtime does not know is a compile error.
template <typename T> struct ElementTypeOf;
#define OPTIMIUM_RT_ELEMENT_TYPE(CppType, Kind)                                                      \
  template <> struct ElementTypeOf<CppType> {                                                      \
    static constexpr ElementType value = ElementType::Kind;                                        \
  };
OPTIMIUM_RT_ELEMENT_TYPE(bool, Bool)
OPTIMIUM_RT_ELEMENT_TYPE(int8_t, I8)
OPTIMIUM_RT_ELEMENT_TYPE(int16_t, I16)
OPTIMIUM_RT_ELEMENT_TYPE(int32_t, I32)
OPTIMIUM_RT_ELEMENT_TYPE(int64_t, I64)
OPTIMIUM_RT_ELEMENT_TYPE(uint8_t, U8)
OPTIMIUM_RT_ELEMENT_TYPE(uint16_t, U16)
OPTIMIUM_RT_ELEMENT_TYPE(uint32_t, U32)
OPTIMIUM_RT_ELEMENT_TYPE(uint64_t, U64)
OPTIMIUM_RT_ELEMENT_TYPE(float16, F16)
OPTIMIUM_RT_ELEMENT_TYPE(bfloat16, BF16)
OPTIMIUM_RT_ELEMENT_TYPE(float, F32)
OPTIMIUM_RT_ELEMENT_TYPE(double, F64)
OPTIMIUM_RT_ELEMENT_TYPE(std::string, String)
#undef OPTIMIUM_RT_ELEMENT_TYPE

} // namespace runtime
} // namespace optimium
