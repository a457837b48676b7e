// IREE's text spellings of element types ("f32", "ui8", "i1") and of single elements: what
// --input specs parse and what printed results and mismatch messages show. Shared by the input-spec
// parser (InputSpec.h) and the output formatting (OutputFormat.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "Optimium/Runtime/ElementType.h"
#include "tools/Npy.h"

namespace optimium {
namespace tools {

/// IREE spelling of an element type ("f32", "i8", "ui8", "i1" for bool, ...).
std::string elementTypeName(runtime::ElementType Type);
/// Parses an IREE element type spelling; false when unknown.
bool parseElementTypeName(const std::string &Name, runtime::ElementType &Type);
/// "1x10" ("" for a scalar).
std::string dimsString(const std::vector<int64_t> &Dims);
/// "1x10xf32" (just "f32" for a scalar).
std::string formatShapeAndType(const std::vector<int64_t> &Dims, runtime::ElementType Type);

/// Parses a decimal integer token (S when signed, U when Unsigned); false on junk or overflow
/// (errno is ERANGE then).
bool parseInteger(const std::string &Tok, bool Unsigned, int64_t &S, uint64_t &U);
/// Parses one element of Type from Tok into Dst; returns "" on success, else why not.
std::string parseElement(const std::string &Tok, runtime::ElementType Type, uint8_t *Dst);
/// Element I of A as a double (exact for integers up to 2^53).
double elementAsDouble(const HostArray &A, size_t I);
/// True for the floating-point element types (compared with a tolerance).
bool isFloatType(runtime::ElementType T);
/// Element I of A as IREE prints it (floats with %G).
std::string formatElement(const HostArray &A, size_t I);

} // namespace tools
} // namespace optimium
