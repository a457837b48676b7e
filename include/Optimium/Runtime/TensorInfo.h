// Metadata of a model's tensors and operations.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "Optimium/Runtime/Attribute.h"
#include "Optimium/Runtime/Device.h"
#include "Optimium/Runtime/ElementType.h"
#include "Optimium/Runtime/Export.h"
#include "Optimium/Runtime/Shape.h"

namespace optimium {
namespace runtime {

struct QuantParam {
  float Scale = 1.0f;
  int64_t ZeroPoint = 0;
};

/// Linear quantization: real = (q - ZeroPoint) * Scale, per tensor or per channel along Axis.
class OPTIMIUM_RT_API QuantScheme {
public:
  QuantScheme() {}
  QuantScheme(ElementType StorageType, std::vector<QuantParam> Params, int Axis = -1)
      : StorageType(StorageType), Params(std::move(Params)), Axis(Axis) {}

  bool isPerChannel() const { return Params.size() > 1 || Axis >= 0; }
  int getAxis() const { return Axis; }
  size_t size() const { return Params.size(); }
  const QuantParam &getParam(size_t Index = 0) const { return Params.at(Index); }
  const QuantParam &operator[](size_t Index) const { return Params.at(Index); }
  ElementType getStorageType() const { return StorageType; }
  std::string toString() const;

private:
  ElementType StorageType = ElementType::Undefined;
  std::vector<QuantParam> Params;
  int Axis = -1;
};

struct OPTIMIUM_RT_API TensorInfo {
  std::string Name;
  TensorShape Shape;
  ElementType Type = ElementType::Undefined;
  /// Byte alignment of the buffer the runtime allocates for this tensor.
  uint32_t Alignment = 64;
  /// Bytes of readable tail padding the runtime keeps after the data.
  uint32_t Padding = 0;
  /// The tensor may change shape at run time within a capacity (spec section 10).
  bool Resizable = false;
  /// The tensor is excluded from memory sharing (kept readable after the run).
  bool OptOut = false;
  /// The tensor is a constant (a weight).
  bool Constant = false;
  /// Quantization scheme, null for non-quantized tensors.
  std::shared_ptr<const QuantScheme> Scheme;

  /// Bytes of data; throws ShapeError for a symbolic shape.
  size_t getTensorSize() const;
  std::string toString() const;
};

struct OPTIMIUM_RT_API OpInfo {
  std::string Name;
  /// Operator type, e.g. "Conv" (domain-qualified for non-default domains: "com.microsoft.Gelu").
  std::string Type;
  /// Device the operation was placed on.
  DeviceID Device;
  std::vector<std::string> Inputs;
  std::vector<std::string> Outputs;
  std::map<std::string, Attribute> Attributes;

  bool hasAttribute(const std::string &Key) const { return Attributes.count(Key) != 0; }
  /// Empty Attribute when the key does not exist.
  Attribute getAttribute(const std::string &Key) const {
    auto It = Attributes.find(Key);
    return It == Attributes.end() ? Attribute() : It->second;
  }
  std::vector<std::string> getAttributeKeys() const {
    std::vector<std::string> Keys;
    for (const auto &KV : Attributes)
      Keys.push_back(KV.first);
    return Keys;
  }
};

} // namespace runtime
} // namespace optimium
