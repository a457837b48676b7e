// Element type and element spellings; see ElementText.h.
#include "tools/ElementText.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

#include "Optimium/Runtime.h"
#include "core/LowPrecision.h"

namespace optimium {
namespace tools {

namespace rt = optimium::runtime;
namespace lowp = optimium::runtime::detail::lowp;
using rt::ElementType;

namespace {

template <typename T> void storeAs(uint8_t *Dst, T V) { std::memcpy(Dst, &V, sizeof(T)); }

} // namespace

std::string dimsString(const std::vector<int64_t> &Dims) {
  std::string S;
  for (size_t I = 0; I < Dims.size(); ++I)
    S += (I ? "x" : "") + std::to_string(Dims[I]);
  return S;
}

bool parseInteger(const std::string &Tok, bool Unsigned, int64_t &S, uint64_t &U) {
  if (Tok.empty())
    return false;
  errno = 0;
  char *End = nullptr;
  if (Unsigned) {
    if (Tok[0] == '-')
      return false;
    U = std::strtoull(Tok.c_str(), &End, 10);
  } else {
    S = std::strtoll(Tok.c_str(), &End, 10);
  }
  return errno == 0 && End && *End == '\0';
}

// Parses one element; returns "" on success, else why not.
std::string parseElement(const std::string &Tok, ElementType Type, uint8_t *Dst) {
  const std::string TypeName = elementTypeName(Type);
  auto Range = [&] { return "value '" + Tok + "' is out of range for " + TypeName; };
  auto Bad = [&] { return "value '" + Tok + "' is not a valid " + TypeName; };
  switch (Type) {
  case ElementType::Bool: {
    if (Tok == "true" || Tok == "True" || Tok == "1") {
      *Dst = 1;
      return "";
    }
    if (Tok == "false" || Tok == "False" || Tok == "0") {
      *Dst = 0;
      return "";
    }
    return Bad() + " (use 0/1 or true/false)";
  }
  case ElementType::I8:
  case ElementType::I16:
  case ElementType::I32:
  case ElementType::I64: {
    int64_t V = 0;
    uint64_t Unused = 0;
    if (!parseInteger(Tok, false, V, Unused))
      return errno == ERANGE ? Range() : Bad();
    const size_t Bits = elementByteSize(Type) * 8;
    if (Bits < 64) {
      const int64_t Lo = -(int64_t(1) << (Bits - 1)), Hi = (int64_t(1) << (Bits - 1)) - 1;
      if (V < Lo || V > Hi)
        return Range();
    }
    if (Type == ElementType::I8)
      storeAs<int8_t>(Dst, static_cast<int8_t>(V));
    else if (Type == ElementType::I16)
      storeAs<int16_t>(Dst, static_cast<int16_t>(V));
    else if (Type == ElementType::I32)
      storeAs<int32_t>(Dst, static_cast<int32_t>(V));
    else
      storeAs<int64_t>(Dst, V);
    return "";
  }
  case ElementType::U8:
  case ElementType::U16:
  case ElementType::U32:
  case ElementType::U64: {
    int64_t Unused = 0;
    uint64_t V = 0;
    if (!parseInteger(Tok, true, Unused, V))
      return errno == ERANGE || (!Tok.empty() && Tok[0] == '-') ? Range() : Bad();
    const size_t Bits = elementByteSize(Type) * 8;
    if (Bits < 64 && V > ((uint64_t(1) << Bits) - 1))
      return Range();
    if (Type == ElementType::U8)
      storeAs<uint8_t>(Dst, static_cast<uint8_t>(V));
    else if (Type == ElementType::U16)
      storeAs<uint16_t>(Dst, static_cast<uint16_t>(V));
    else if (Type == ElementType::U32)
      storeAs<uint32_t>(Dst, static_cast<uint32_t>(V));
    else
      storeAs<uint64_t>(Dst, V);
    return "";
  }
  case ElementType::F16:
  case ElementType::BF16:
  case ElementType::F32:
  case ElementType::F64: {
    errno = 0;
    char *End = nullptr;
    const double V = std::strtod(Tok.c_str(), &End);
    if (!End || *End != '\0' || Tok.empty())
      return Bad();
    if (Type == ElementType::F64)
      storeAs<double>(Dst, V);
    else if (Type == ElementType::F32)
      storeAs<float>(Dst, static_cast<float>(V));
    else if (Type == ElementType::F16)
      storeAs<uint16_t>(Dst, rt::float16::fromFloat(static_cast<float>(V)));
    else
      storeAs<uint16_t>(Dst, rt::bfloat16::fromFloat(static_cast<float>(V)));
    return "";
  }
  default:
    if (lowp::isLowPrecisionFloat(Type)) {
      char *End = nullptr;
      const double V = std::strtod(Tok.c_str(), &End);
      if (!End || *End != '\0' || Tok.empty())
        return Bad();
      storeAs<uint8_t>(Dst, lowp::doubleToLowPrecision(Type, V, true));
      return "";
    }
    if (lowp::isSubByteInt(Type)) {
      int64_t V = 0;
      uint64_t Unused = 0;
      if (!parseInteger(Tok, false, V, Unused))
        return Bad();
      int32_t Lo, Hi;
      lowp::intRange(Type, Lo, Hi);
      if (V < Lo || V > Hi)
        return Range();
      storeAs<uint8_t>(Dst, static_cast<uint8_t>(static_cast<int8_t>(V)));
      return "";
    }
    return "element type is not supported";
  }
}

// Reads element I as double (floats), or exact integers through the two out-params.
double elementAsDouble(const HostArray &A, size_t I) {
  const uint8_t *P = A.Bytes.data() + I * elementByteSize(A.Type);
  switch (A.Type) {
  case ElementType::Bool: return *P ? 1.0 : 0.0;
  case ElementType::I8: { int8_t V; std::memcpy(&V, P, 1); return V; }
  case ElementType::U8: return *P;
  case ElementType::I16: { int16_t V; std::memcpy(&V, P, 2); return V; }
  case ElementType::U16: { uint16_t V; std::memcpy(&V, P, 2); return V; }
  case ElementType::I32: { int32_t V; std::memcpy(&V, P, 4); return V; }
  case ElementType::U32: { uint32_t V; std::memcpy(&V, P, 4); return V; }
  case ElementType::I64: { int64_t V; std::memcpy(&V, P, 8); return static_cast<double>(V); }
  case ElementType::U64: { uint64_t V; std::memcpy(&V, P, 8); return static_cast<double>(V); }
  case ElementType::F16: { uint16_t V; std::memcpy(&V, P, 2); return rt::float16::toFloat(V); }
  case ElementType::BF16: { uint16_t V; std::memcpy(&V, P, 2); return rt::bfloat16::toFloat(V); }
  case ElementType::F32: { float V; std::memcpy(&V, P, 4); return V; }
  case ElementType::F64: { double V; std::memcpy(&V, P, 8); return V; }
  default: return lowp::isLowPrecision(A.Type) ? lowp::lowPrecisionToDouble(A.Type, *P) : 0;
  }
}

bool isFloatType(ElementType T) {
  return T == ElementType::F16 || T == ElementType::BF16 || T == ElementType::F32 || T == ElementType::F64 ||
         lowp::isLowPrecisionFloat(T);
}

std::string formatElement(const HostArray &A, size_t I) {
  const uint8_t *P = A.Bytes.data() + I * elementByteSize(A.Type);
  char Buf[64];
  switch (A.Type) {
  case ElementType::Bool: return *P ? "1" : "0";
  case ElementType::I64: { int64_t V; std::memcpy(&V, P, 8); return std::to_string(V); }
  case ElementType::U64: { uint64_t V; std::memcpy(&V, P, 8); return std::to_string(V); }
  case ElementType::F16:
  case ElementType::BF16:
  case ElementType::F32:
  case ElementType::F64:
    std::snprintf(Buf, sizeof(Buf), "%G", elementAsDouble(A, I));
    return Buf;
  default:
    if (lowp::isLowPrecisionFloat(A.Type)) {
      std::snprintf(Buf, sizeof(Buf), "%G", elementAsDouble(A, I));
      return Buf;
    }
    return std::to_string(static_cast<int64_t>(elementAsDouble(A, I)));
  }
}

// ---- element types -----------------------------------------------------------------------------

std::string elementTypeName(ElementType Type) {
  switch (Type) {
  case ElementType::Bool: return "i1";
  case ElementType::I8: return "i8";
  case ElementType::I16: return "i16";
  case ElementType::I32: return "i32";
  case ElementType::I64: return "i64";
  case ElementType::U8: return "ui8";
  case ElementType::U16: return "ui16";
  case ElementType::U32: return "ui32";
  case ElementType::U64: return "ui64";
  case ElementType::F16: return "f16";
  case ElementType::BF16: return "bf16";
  case ElementType::F32: return "f32";
  case ElementType::F64: return "f64";
  case ElementType::String: return "string";
  // MLIR / IREE spellings of the low-precision types.
  case ElementType::F8E4M3FN: return "f8E4M3FN";
  case ElementType::F8E4M3FNUZ: return "f8E4M3FNUZ";
  case ElementType::F8E5M2: return "f8E5M2";
  case ElementType::F8E5M2FNUZ: return "f8E5M2FNUZ";
  case ElementType::F8E8M0: return "f8E8M0FNU";
  case ElementType::F4E2M1: return "f4E2M1FN";
  case ElementType::I4: return "i4";
  case ElementType::U4: return "ui4";
  case ElementType::I2: return "i2";
  case ElementType::U2: return "ui2";
  default: return "undefined";
  }
}

bool parseElementTypeName(const std::string &Name, ElementType &Type) {
  static const std::map<std::string, ElementType> Names = {
      {"i1", ElementType::Bool},   {"i8", ElementType::I8},     {"si8", ElementType::I8},
      {"ui8", ElementType::U8},    {"i16", ElementType::I16},   {"si16", ElementType::I16},
      {"ui16", ElementType::U16},  {"i32", ElementType::I32},   {"si32", ElementType::I32},
      {"ui32", ElementType::U32},  {"i64", ElementType::I64},   {"si64", ElementType::I64},
      {"ui64", ElementType::U64},  {"f16", ElementType::F16},   {"bf16", ElementType::BF16},
      {"f32", ElementType::F32},   {"f64", ElementType::F64},
      {"f8E4M3FN", ElementType::F8E4M3FN},     {"f8E4M3FNUZ", ElementType::F8E4M3FNUZ},
      {"f8E5M2", ElementType::F8E5M2},         {"f8E5M2FNUZ", ElementType::F8E5M2FNUZ},
      {"f8E8M0FNU", ElementType::F8E8M0},      {"f4E2M1FN", ElementType::F4E2M1},
      {"i4", ElementType::I4},   {"si4", ElementType::I4},   {"ui4", ElementType::U4},
      {"i2", ElementType::I2},   {"si2", ElementType::I2},   {"ui2", ElementType::U2}};
  auto It = Names.find(Name);
  if (It == Names.end())
    return false;
  Type = It->second;
  return true;
}

std::string formatShapeAndType(const std::vector<int64_t> &Dims, ElementType Type) {
  const std::string D = dimsString(Dims);
  return D.empty() ? elementTypeName(Type) : D + "x" + elementTypeName(Type);
}

} // namespace tools
} // namespace optimium
