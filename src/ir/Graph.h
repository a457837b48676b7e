// Graph IR: values (tensors) and nodes (operations) in topological order. Importers build it,
// passes rewrite it, the planner and executor read it. Independent of ONNX protobuf types.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "Optimium/Runtime/Attribute.h"
#include "Optimium/Runtime/Device.h"
#include "Optimium/Runtime/ElementType.h"
#include "Optimium/Runtime/Shape.h"
#include "core/Status.h"

namespace optimium {
namespace runtime {
namespace detail {

/// Immutable constant data. Data may point into a mapped file or a caller's buffer; KeepAlive
/// holds whatever owns it.
struct ConstData {
  ElementType Type = ElementType::Undefined;
  std::vector<int64_t> Dims;
  const void *Data = nullptr;
  size_t Bytes = 0;
  std::shared_ptr<const void> KeepAlive;
  /// For a copy made from the model file's bytes (which were not aligned for the type): where
  /// those bytes are (any alignment: read with memcpy). Lets the loader drop the copy once every
  /// kernel that reads it has packed its own (Data is then null; readers fall back to Source).
  const void *Source = nullptr;
  /// Owned storage for strings (String tensors).
  std::vector<std::string> Strings;

  size_t elementCount() const {
    size_t N = 1;
    for (int64_t D : Dims)
      N *= static_cast<size_t>(D);
    return N;
  }
  template <typename T> const T *as() const { return static_cast<const T *>(Data); }
  /// Reads element I converted to int64 (integer and bool types) - used for shape-like inputs.
  Result<std::vector<int64_t>> toInt64Vector() const;
  /// Reads element I converted to double (numeric types).
  Result<std::vector<double>> toDoubleVector() const;
  /// Allocates an owned, 64-byte aligned copy of Bytes.
  static std::shared_ptr<ConstData> allocate(ElementType Type, std::vector<int64_t> Dims);
  void *mutableData() const { return const_cast<void *>(Data); }
};

struct Graph;

/// What a value holds. Besides tensors, ONNX has sequence(tensor) and optional(tensor |
/// sequence(tensor)) values; for those, Value::Type / ValueInfo::Type is the element type of the
/// tensors inside and Shape the shape every element has as far as known (symbols where elements
/// differ). At run time they live in ContainerValue objects (ir/Container.h), never in
/// the arena.
enum class ValueKind : uint8_t { Tensor, Sequence, OptionalTensor, OptionalSequence };

/// "tensor", "sequence(tensor)", "optional(tensor)", "optional(sequence(tensor))".
const char *toString(ValueKind K);
inline bool isContainerKind(ValueKind K) { return K != ValueKind::Tensor; }
inline bool isOptionalKind(ValueKind K) { return K == ValueKind::OptionalTensor || K == ValueKind::OptionalSequence; }
/// The kind inside an optional (the kind itself for the others).
inline ValueKind unwrapOptional(ValueKind K) {
  return K == ValueKind::OptionalTensor ? ValueKind::Tensor : K == ValueKind::OptionalSequence ? ValueKind::Sequence : K;
}

/// A TypeProto attribute (Optional's 'type'): kind, element type and element shape when given.
struct TypeDesc {
  ValueKind Kind = ValueKind::Tensor;
  ElementType Elem = ElementType::Undefined;
  TensorShape Shape;
  bool ShapeKnown = false;
};

/// An ONNX-style node attribute.
struct AttrValue {
  enum class Kind { Int, Float, String, Ints, Floats, Strings, Tensor, Graph, Type };
  Kind K = Kind::Int;
  int64_t I = 0;
  float F = 0;
  std::string S;
  std::vector<int64_t> Ints;
  std::vector<float> Floats;
  std::vector<std::string> Strings;
  std::shared_ptr<ConstData> T;
  std::shared_ptr<Graph> G;
  TypeDesc Ty; ///< Kind::Type
};

/// Attribute values of one kind (graph rewrites set internal attributes with them; test cases too).
inline AttrValue attrInt(int64_t V) {
  AttrValue A;
  A.K = AttrValue::Kind::Int;
  A.I = V;
  return A;
}
inline AttrValue attrFloat(float V) {
  AttrValue A;
  A.K = AttrValue::Kind::Float;
  A.F = V;
  return A;
}
inline AttrValue attrString(std::string V) {
  AttrValue A;
  A.K = AttrValue::Kind::String;
  A.S = std::move(V);
  return A;
}
inline AttrValue attrInts(std::vector<int64_t> V) {
  AttrValue A;
  A.K = AttrValue::Kind::Ints;
  A.Ints = std::move(V);
  return A;
}
inline AttrValue attrFloats(std::vector<float> V) {
  AttrValue A;
  A.K = AttrValue::Kind::Floats;
  A.Floats = std::move(V);
  return A;
}
inline AttrValue attrStrings(std::vector<std::string> V) {
  AttrValue A;
  A.K = AttrValue::Kind::Strings;
  A.Strings = std::move(V);
  return A;
}

struct Value {
  std::string Name;
  ValueKind Kind = ValueKind::Tensor;
  ElementType Type = ElementType::Undefined; ///< For sequences/optionals: the element type.
  TensorShape Shape;
  /// Whether Shape is known (an intermediate whose shape could not be inferred at load is not).
  bool ShapeKnown = false;
  /// Shape is a guess whose rank is known only while running (see ValueInfo::RankUnknown).
  bool RankUnknown = false;
  std::shared_ptr<ConstData> Const; ///< Non-null for initializers and folded constants.
  int Producer = -1;                ///< Index of the producing node, -1 for inputs and constants.
  std::vector<int> Consumers;       ///< Indices of consuming nodes.
  bool IsGraphInput = false;
  bool IsGraphOutput = false;
};

struct Node {
  std::string Name;
  std::string OpType;
  std::string Domain; ///< "" for the default ONNX domain.
  int OpsetVersion = 0;
  std::vector<int> Inputs;  ///< Value indices; -1 for an omitted optional input.
  std::vector<int> Outputs; ///< Value indices; -1 for an omitted optional output.
  std::map<std::string, AttrValue> Attrs;
  DeviceID Device; ///< Set by placement.

  bool hasAttr(const std::string &Key) const { return Attrs.count(Key) != 0; }
  /// Typed attribute getters: a default when absent, ModelError naming the node when the
  /// attribute has the wrong kind.
  Result<int64_t> getInt(const std::string &Key, int64_t Default) const;
  Result<float> getFloat(const std::string &Key, float Default) const;
  Result<std::string> getString(const std::string &Key, const std::string &Default) const;
  Result<std::vector<int64_t>> getInts(const std::string &Key, const std::vector<int64_t> &Default) const;
  Result<std::vector<float>> getFloats(const std::string &Key, const std::vector<float> &Default) const;
  /// "node 'conv1' (Conv)" for error messages.
  std::string describe() const;
};

struct Graph {
  std::string Name;
  std::vector<Value> Values;
  std::vector<Node> Nodes; ///< Topological order.
  std::vector<int> Inputs;  ///< Graph inputs (non-constant), in order.
  std::vector<int> Outputs; ///< Graph outputs, in order.
  std::map<std::string, int> OpsetImports; ///< domain -> version
  std::map<std::string, Attribute> Metadata;  ///< Model-level attributes.

  int findValue(const std::string &Name) const;
  int addValue(Value V);
  /// Recomputes Producer/Consumers from Nodes.
  void rebuildUseLists();
};

} // namespace detail
} // namespace runtime
} // namespace optimium
