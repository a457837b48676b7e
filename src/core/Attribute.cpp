// Attribute storage, factories and printing. An Attribute is an immutable shared node; the typed
// views (I32Attr, ListAttr, ...) read it through the protected accessors after a kind check.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <sstream>

#include "Optimium/Runtime/Attribute.h"
#include "Optimium/Runtime/Exceptions.h"

namespace optimium {
namespace runtime {

struct AttributeStorage {
  AttributeKind Kind = AttributeKind::None;
  int64_t Int = 0;    ///< signed integers, Bool, and the stored value of quantized kinds
  uint64_t UInt = 0;  ///< unsigned integers
  double Float = 0.0; ///< floating-point kinds
  float Scale = 1.0f; ///< quantized kinds
  int64_t ZeroPoint = 0;
  std::string String;
  std::vector<Attribute> List;
  std::map<std::string, Attribute> Map;
};

const char *toString(AttributeKind Kind) {
  switch (Kind) {
  case AttributeKind::None: return "none";
  case AttributeKind::I8: return "i8";
  case AttributeKind::I16: return "i16";
  case AttributeKind::I32: return "i32";
  case AttributeKind::I64: return "i64";
  case AttributeKind::U8: return "u8";
  case AttributeKind::U16: return "u16";
  case AttributeKind::U32: return "u32";
  case AttributeKind::U64: return "u64";
  case AttributeKind::F16: return "f16";
  case AttributeKind::F32: return "f32";
  case AttributeKind::F64: return "f64";
  case AttributeKind::BF16: return "bf16";
  case AttributeKind::TF32: return "tf32";
  case AttributeKind::QS8: return "qs8";
  case AttributeKind::QS16: return "qs16";
  case AttributeKind::QS32: return "qs32";
  case AttributeKind::Bool: return "bool";
  case AttributeKind::String: return "string";
  case AttributeKind::List: return "list";
  case AttributeKind::Map: return "map";
  }
  return "unknown";
}

namespace {

bool isSignedKind(AttributeKind K) {
  return K == AttributeKind::I8 || K == AttributeKind::I16 || K == AttributeKind::I32 || K == AttributeKind::I64;
}
bool isUnsignedKind(AttributeKind K) {
  return K == AttributeKind::U8 || K == AttributeKind::U16 || K == AttributeKind::U32 || K == AttributeKind::U64;
}
bool isFloatKind(AttributeKind K) {
  return K == AttributeKind::F16 || K == AttributeKind::F32 || K == AttributeKind::F64 ||
         K == AttributeKind::BF16 || K == AttributeKind::TF32;
}
bool isQuantKind(AttributeKind K) {
  return K == AttributeKind::QS8 || K == AttributeKind::QS16 || K == AttributeKind::QS32;
}

/// Bits of the integer kinds (signed, unsigned and quantized).
int intBits(AttributeKind K) {
  switch (K) {
  case AttributeKind::I8: case AttributeKind::U8: case AttributeKind::QS8: return 8;
  case AttributeKind::I16: case AttributeKind::U16: case AttributeKind::QS16: return 16;
  case AttributeKind::I32: case AttributeKind::U32: case AttributeKind::QS32: return 32;
  default: return 64;
  }
}

void checkSignedRange(AttributeKind Kind, int64_t V) {
  const int Bits = intBits(Kind);
  if (Bits >= 64)
    return;
  const int64_t Max = (int64_t(1) << (Bits - 1)) - 1, Min = -Max - 1;
  if (V < Min || V > Max) {
    std::ostringstream OS;
    OS << "attribute value " << V << " is out of range of " << toString(Kind) << " [" << Min << ", " << Max << "]";
    throw InvalidArgumentError(OS.str());
  }
}

/// Shortest decimal that reads back as the same value (as a float for 32-bit-or-narrower kinds).
std::string formatFloat(double V, bool Single) {
  if (std::isnan(V))
    return "nan";
  if (std::isinf(V))
    return V < 0 ? "-inf" : "inf";
  char Buf[64];
  for (int Precision = 1; Precision <= 17; ++Precision) {
    std::snprintf(Buf, sizeof(Buf), "%.*g", Precision, V);
    const double Back = std::strtod(Buf, nullptr);
    if (Single ? static_cast<float>(Back) == static_cast<float>(V) : Back == V)
      break;
  }
  std::string S = Buf;
  // Keep floats recognizable: "1" -> "1.0".
  if (S.find_first_of(".eE") == std::string::npos)
    S += ".0";
  return S;
}

std::string quote(const std::string &S) {
  std::string R = "\"";
  for (char C : S) {
    switch (C) {
    case '"': R += "\\\""; break;
    case '\\': R += "\\\\"; break;
    case '\n': R += "\\n"; break;
    case '\t': R += "\\t"; break;
    case '\r': R += "\\r"; break;
    default: R += C;
    }
  }
  return R + "\"";
}

/// The value alone ("5", "\"x\"", "[1, 2]", "{a: 1}"); toString() adds the kind of scalars.
/// Goes through the public views, so it needs no access to the storage.
std::string formatValue(const Attribute &A) {
  const AttributeKind K = A.getKind();
  switch (K) {
  case AttributeKind::None: return "none";
  case AttributeKind::I8: return std::to_string(A.cast<I8Attr>().value());
  case AttributeKind::I16: return std::to_string(A.cast<I16Attr>().value());
  case AttributeKind::I32: return std::to_string(A.cast<I32Attr>().value());
  case AttributeKind::I64: return std::to_string(A.cast<I64Attr>().value());
  case AttributeKind::U8: return std::to_string(A.cast<U8Attr>().value());
  case AttributeKind::U16: return std::to_string(A.cast<U16Attr>().value());
  case AttributeKind::U32: return std::to_string(A.cast<U32Attr>().value());
  case AttributeKind::U64: return std::to_string(A.cast<U64Attr>().value());
  case AttributeKind::F16: return formatFloat(static_cast<float>(A.cast<F16Attr>().value()), true);
  case AttributeKind::F32: return formatFloat(A.cast<F32Attr>().value(), true);
  case AttributeKind::F64: return formatFloat(A.cast<F64Attr>().value(), false);
  case AttributeKind::BF16: return formatFloat(static_cast<float>(A.cast<BF16Attr>().value()), true);
  case AttributeKind::TF32: return formatFloat(A.cast<TF32Attr>().value(), true);
  case AttributeKind::QS8: return std::to_string(A.cast<QS8Attr>().value());
  case AttributeKind::QS16: return std::to_string(A.cast<QS16Attr>().value());
  case AttributeKind::QS32: return std::to_string(A.cast<QS32Attr>().value());
  case AttributeKind::Bool: return A.cast<BoolAttr>().value() ? "true" : "false";
  case AttributeKind::String: return quote(A.cast<StringAttr>().value());
  case AttributeKind::List: {
    std::string R = "[";
    bool First = true;
    for (const Attribute &E : A.cast<ListAttr>()) {
      if (!First)
        R += ", ";
      First = false;
      R += formatValue(E);
    }
    return R + "]";
  }
  case AttributeKind::Map: {
    std::string R = "{";
    bool First = true;
    for (const auto &KV : A.cast<MapAttr>().value()) {
      if (!First)
        R += ", ";
      First = false;
      R += KV.first + ": " + formatValue(KV.second);
    }
    return R + "}";
  }
  }
  return "none";
}

} // namespace

AttributeKind Attribute::getKind() const { return Storage ? Storage->Kind : AttributeKind::None; }

void Attribute::checkKind(bool Ok, const char *Wanted) const {
  if (Ok)
    return;
  if (!Storage)
    throw TypeError(std::string("cannot cast an empty attribute to ") + Wanted);
  throw TypeError(std::string("cannot cast an attribute of kind ") + runtime::toString(Storage->Kind) + " to " +
                  Wanted);
}

namespace {
const AttributeStorage &requireStorage(const std::shared_ptr<const AttributeStorage> &S) {
  if (!S)
    throw InvalidStateError("attribute is empty");
  return *S;
}
} // namespace

int64_t Attribute::intValue() const { return requireStorage(Storage).Int; }
uint64_t Attribute::uintValue() const { return requireStorage(Storage).UInt; }
double Attribute::floatValue() const { return requireStorage(Storage).Float; }
float Attribute::quantScale() const { return requireStorage(Storage).Scale; }
int64_t Attribute::quantZeroPoint() const { return requireStorage(Storage).ZeroPoint; }
const std::string &Attribute::stringValue() const { return requireStorage(Storage).String; }
const std::vector<Attribute> &Attribute::listValue() const { return requireStorage(Storage).List; }
const std::map<std::string, Attribute> &Attribute::mapValue() const { return requireStorage(Storage).Map; }

Attribute Attribute::getInt(AttributeKind Kind, int64_t V) {
  if (!isSignedKind(Kind))
    throw InvalidArgumentError(std::string("Attribute::getInt() needs a signed integer kind, not ") +
                               runtime::toString(Kind));
  checkSignedRange(Kind, V);
  auto S = std::make_shared<AttributeStorage>();
  S->Kind = Kind;
  S->Int = V;
  return Attribute(std::move(S));
}

Attribute Attribute::getUInt(AttributeKind Kind, uint64_t V) {
  if (!isUnsignedKind(Kind))
    throw InvalidArgumentError(std::string("Attribute::getUInt() needs an unsigned integer kind, not ") +
                               runtime::toString(Kind));
  const int Bits = intBits(Kind);
  if (Bits < 64 && V > ((uint64_t(1) << Bits) - 1))
    throw InvalidArgumentError("attribute value " + std::to_string(V) + " is out of range of " +
                               runtime::toString(Kind));
  auto S = std::make_shared<AttributeStorage>();
  S->Kind = Kind;
  S->UInt = V;
  return Attribute(std::move(S));
}

Attribute Attribute::getFloat(AttributeKind Kind, double V) {
  if (!isFloatKind(Kind))
    throw InvalidArgumentError(std::string("Attribute::getFloat() needs a floating-point kind, not ") +
                               runtime::toString(Kind));
  auto S = std::make_shared<AttributeStorage>();
  S->Kind = Kind;
  // Store what the kind can hold, so value() and toString() agree.
  switch (Kind) {
  case AttributeKind::F16: S->Float = static_cast<float>(float16(static_cast<float>(V))); break;
  case AttributeKind::BF16: S->Float = static_cast<float>(bfloat16(static_cast<float>(V))); break;
  case AttributeKind::F32: case AttributeKind::TF32: S->Float = static_cast<float>(V); break;
  default: S->Float = V;
  }
  return Attribute(std::move(S));
}

Attribute Attribute::getQuantized(AttributeKind Kind, int64_t V, float Scale, int64_t ZeroPoint) {
  if (!isQuantKind(Kind))
    throw InvalidArgumentError(std::string("Attribute::getQuantized() needs a quantized kind, not ") +
                               runtime::toString(Kind));
  checkSignedRange(Kind, V);
  auto S = std::make_shared<AttributeStorage>();
  S->Kind = Kind;
  S->Int = V;
  S->Scale = Scale;
  S->ZeroPoint = ZeroPoint;
  return Attribute(std::move(S));
}

Attribute Attribute::getBool(bool V) {
  auto S = std::make_shared<AttributeStorage>();
  S->Kind = AttributeKind::Bool;
  S->Int = V ? 1 : 0;
  return Attribute(std::move(S));
}

Attribute Attribute::getString(const std::string &V) {
  auto S = std::make_shared<AttributeStorage>();
  S->Kind = AttributeKind::String;
  S->String = V;
  return Attribute(std::move(S));
}

Attribute Attribute::getList(const std::vector<Attribute> &V) {
  auto S = std::make_shared<AttributeStorage>();
  S->Kind = AttributeKind::List;
  S->List = V;
  return Attribute(std::move(S));
}

Attribute Attribute::getMap(const std::map<std::string, Attribute> &V) {
  auto S = std::make_shared<AttributeStorage>();
  S->Kind = AttributeKind::Map;
  S->Map = V;
  return Attribute(std::move(S));
}

std::string Attribute::toString() const {
  if (!Storage)
    return "none";
  const AttributeKind K = Storage->Kind;
  if (isSignedKind(K) || isUnsignedKind(K) || isFloatKind(K))
    return std::string(runtime::toString(K)) + " " + formatValue(*this);
  if (isQuantKind(K)) {
    std::ostringstream OS;
    OS << runtime::toString(K) << " " << Storage->Int << " (scale " << formatFloat(Storage->Scale, true)
       << ", zero_point " << Storage->ZeroPoint << ")";
    return OS.str();
  }
  return formatValue(*this);
}

} // namespace runtime
} // namespace optimium
