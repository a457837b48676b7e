// Typed attributes of models and operations. An Attribute is a cheap shared handle; concrete
// classes (I32Attr, StringAttr, ListAttr, ...) are views checked with isa<T>() and cast<T>().
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "Optimium/Runtime/Export.h"
#include "Optimium/Runtime/Types.h"

namespace optimium {
namespace runtime {

enum class AttributeKind : uint8_t {
  None = 0,
  I8, I16, I32, I64,
  U8, U16, U32, U64,
  F16, F32, F64, BF16, TF32,
  QS8, QS16, QS32,
  Bool, String, List, Map,
};

OPTIMIUM_RT_API const char *toString(AttributeKind Kind);

struct AttributeStorage;

class OPTIMIUM_RT_API Attribute {
public:
  Attribute() {}
  explicit operator bool() const { return static_cast<bool>(Storage); }
  AttributeKind getKind() const;

  template <typename T> bool isa() const { return Storage && T::classof(getKind()); }
  /// Throws TypeError when the attribute is not a T.
  template <typename T> T cast() const {
    checkKind(isa<T>(), T::name());
    return T(Storage);
  }

  std::string toString() const;

  // Factories (used by importers and tests).
  static Attribute getInt(AttributeKind Kind, int64_t V);
  static Attribute getUInt(AttributeKind Kind, uint64_t V);
  static Attribute getFloat(AttributeKind Kind, double V);
  static Attribute getQuantized(AttributeKind Kind, int64_t V, float Scale, int64_t ZeroPoint);
  static Attribute getBool(bool V);
  static Attribute getString(const std::string &V);
  static Attribute getList(const std::vector<Attribute> &V);
  static Attribute getMap(const std::map<std::string, Attribute> &V);

protected:
  explicit Attribute(std::shared_ptr<const AttributeStorage> S) : Storage(std::move(S)) {}
  void checkKind(bool Ok, const char *Wanted) const;
  int64_t intValue() const;
  uint64_t uintValue() const;
  double floatValue() const;
  float quantScale() const;
  int64_t quantZeroPoint() const;
  const std::string &stringValue() const;
  const std::vector<Attribute> &listValue() const;
  const std::map<std::string, Attribute> &mapValue() const;

  std::shared_ptr<const AttributeStorage> Storage;
};

#define OPTIMIUM_RT_SCALAR_ATTR(Name, Kind, CType, Getter)                                           \
  class Name : public Attribute {                                                                  \
  public:                                                                                          \
    explicit Name(std::shared_ptr<const AttributeStorage> S) : Attribute(std::move(S)) {}          \
    CType value() const { return static_cast<CType>(Getter()); }                                   \
    static bool classof(AttributeKind K) { return K == AttributeKind::Kind; }                      \
    static const char *name() { return #Name; }                                                    \
  };
OPTIMIUM_RT_SCALAR_ATTR(I8Attr, I8, int8_t, intValue)
OPTIMIUM_RT_SCALAR_ATTR(I16Attr, I16, int16_t, intValue)
OPTIMIUM_RT_SCALAR_ATTR(I32Attr, I32, int32_t, intValue)
OPTIMIUM_RT_SCALAR_ATTR(I64Attr, I64, int64_t, intValue)
OPTIMIUM_RT_SCALAR_ATTR(U8Attr, U8, uint8_t, uintValue)
OPTIMIUM_RT_SCALAR_ATTR(U16Attr, U16, uint16_t, uintValue)
OPTIMIUM_RT_SCALAR_ATTR(U32Attr, U32, uint32_t, uintValue)
OPTIMIUM_RT_SCALAR_ATTR(U64Attr, U64, uint64_t, uintValue)
OPTIMIUM_RT_SCALAR_ATTR(F16Attr, F16, float16, floatValue)
OPTIMIUM_RT_SCALAR_ATTR(F32Attr, F32, float, floatValue)
OPTIMIUM_RT_SCALAR_ATTR(F64Attr, F64, double, floatValue)
OPTIMIUM_RT_SCALAR_ATTR(BF16Attr, BF16, bfloat16, floatValue)
OPTIMIUM_RT_SCALAR_ATTR(TF32Attr, TF32, float, floatValue)
OPTIMIUM_RT_SCALAR_ATTR(BoolAttr, Bool, bool, intValue)
#undef OPTIMIUM_RT_SCALAR_ATTR

#define OPTIMIUM_RT_QUANT_ATTR(Name, Kind, CType)                                                    \
  class Name : public Attribute {                                                                  \
  public:                                                                                          \
    explicit Name(std::shared_ptr<const AttributeStorage> S) : Attribute(std::move(S)) {}          \
    CType value() const { return static_cast<CType>(intValue()); }                                 \
    float scale() const { return quantScale(); }                                                   \
    int64_t zeroPoint() const { return quantZeroPoint(); }                                         \
    /** The real value: (value - zeroPoint) * scale. */                                            \
    float dequantize() const { return static_cast<float>(intValue() - quantZeroPoint()) * quantScale(); } \
    static bool classof(AttributeKind K) { return K == AttributeKind::Kind; }                      \
    static const char *name() { return #Name; }                                                    \
  };
OPTIMIUM_RT_QUANT_ATTR(QS8Attr, QS8, int8_t)
OPTIMIUM_RT_QUANT_ATTR(QS16Attr, QS16, int16_t)
OPTIMIUM_RT_QUANT_ATTR(QS32Attr, QS32, int32_t)
#undef OPTIMIUM_RT_QUANT_ATTR

class StringAttr : public Attribute {
public:
  explicit StringAttr(std::shared_ptr<const AttributeStorage> S) : Attribute(std::move(S)) {}
  const std::string &value() const { return stringValue(); }
  static bool classof(AttributeKind K) { return K == AttributeKind::String; }
  static const char *name() { return "StringAttr"; }
};

class ListAttr : public Attribute {
public:
  explicit ListAttr(std::shared_ptr<const AttributeStorage> S) : Attribute(std::move(S)) {}
  const std::vector<Attribute> &value() const { return listValue(); }
  size_t size() const { return listValue().size(); }
  const Attribute &operator[](size_t I) const { return listValue().at(I); }
  std::vector<Attribute>::const_iterator begin() const { return listValue().begin(); }
  std::vector<Attribute>::const_iterator end() const { return listValue().end(); }
  static bool classof(AttributeKind K) { return K == AttributeKind::List; }
  static const char *name() { return "ListAttr"; }
};

class MapAttr : public Attribute {
public:
  explicit MapAttr(std::shared_ptr<const AttributeStorage> S) : Attribute(std::move(S)) {}
  const std::map<std::string, Attribute> &value() const { return mapValue(); }
  size_t size() const { return mapValue().size(); }
  bool contains(const std::string &Key) const { return mapValue().count(Key) != 0; }
  /// Empty Attribute when the key is missing.
  Attribute get(const std::string &Key) const {
    auto It = mapValue().find(Key);
    return It == mapValue().end() ? Attribute() : It->second;
  }
  static bool classof(AttributeKind K) { return K == AttributeKind::Map; }
  static const char *name() { return "MapAttr"; }
};

} // namespace runtime
} // namespace optimium
