// Element types of tensors and the C++ types that map to them.
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
};

/// Size in bytes of one element (String: sizeof(std::string); Undefined: 0).
OPTIMIUM_RT_API size_t getElementSize(ElementType Type);
/// Short name: "f32", "i64", "bf16", "bool", "string", ...
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
