// Out-of-line members of the graph IR: constant data access, typed attribute getters, value
// lookup and use lists.
#include "ir/Graph.h"
#include "ir/Scopes.h"

#include <set>

#include <cstdlib>
#include <cstring>

#include "Optimium/Runtime/Types/BFloat16.h"
#include "Optimium/Runtime/Types/Float16.h"
#include "core/LargeAlloc.h"

namespace optimium {
namespace runtime {
namespace detail {

namespace {

template <typename Out, typename In> void convertAll(const void *Data, size_t N, std::vector<Out> &Dst) {
  const In *Src = static_cast<const In *>(Data);
  Dst.resize(N);
  for (size_t I = 0; I < N; ++I)
    Dst[I] = static_cast<Out>(Src[I]);
}

/// Converts every element to Out; false when the type is not one of the accepted kinds.
template <typename Out> bool convertConst(const ConstData &C, bool AllowFloat, std::vector<Out> &Dst) {
  const size_t N = C.elementCount();
  switch (C.Type) {
  case ElementType::Bool: convertAll<Out, bool>(C.Data, N, Dst); return true;
  case ElementType::I8: convertAll<Out, int8_t>(C.Data, N, Dst); return true;
  case ElementType::I16: convertAll<Out, int16_t>(C.Data, N, Dst); return true;
  case ElementType::I32: convertAll<Out, int32_t>(C.Data, N, Dst); return true;
  case ElementType::I64: convertAll<Out, int64_t>(C.Data, N, Dst); return true;
  case ElementType::U8: convertAll<Out, uint8_t>(C.Data, N, Dst); return true;
  case ElementType::U16: convertAll<Out, uint16_t>(C.Data, N, Dst); return true;
  case ElementType::U32: convertAll<Out, uint32_t>(C.Data, N, Dst); return true;
  case ElementType::U64: convertAll<Out, uint64_t>(C.Data, N, Dst); return true;
  default: break;
  }
  if (!AllowFloat)
    return false;
  switch (C.Type) {
  case ElementType::F16: {
    const float16 *Src = static_cast<const float16 *>(C.Data);
    Dst.resize(N);
    for (size_t I = 0; I < N; ++I)
      Dst[I] = static_cast<Out>(static_cast<float>(Src[I]));
    return true;
  }
  case ElementType::BF16: {
    const bfloat16 *Src = static_cast<const bfloat16 *>(C.Data);
    Dst.resize(N);
    for (size_t I = 0; I < N; ++I)
      Dst[I] = static_cast<Out>(static_cast<float>(Src[I]));
    return true;
  }
  case ElementType::F32: convertAll<Out, float>(C.Data, N, Dst); return true;
  case ElementType::F64: convertAll<Out, double>(C.Data, N, Dst); return true;
  default: return false;
  }
}

const char *kindName(AttrValue::Kind K) {
  switch (K) {
  case AttrValue::Kind::Int: return "int";
  case AttrValue::Kind::Float: return "float";
  case AttrValue::Kind::String: return "string";
  case AttrValue::Kind::Ints: return "ints";
  case AttrValue::Kind::Floats: return "floats";
  case AttrValue::Kind::Strings: return "strings";
  case AttrValue::Kind::Tensor: return "tensor";
  case AttrValue::Kind::Graph: return "graph";
  case AttrValue::Kind::Type: return "type";
  }
  return "?";
}

Status wrongKind(const Node &N, const std::string &Key, AttrValue::Kind Want, AttrValue::Kind Got) {
  return makeError(ErrorCode::Model, N.describe(), ": attribute '", Key, "' must be ", kindName(Want), ", got ",
                   kindName(Got));
}

} // namespace

const char *toString(ValueKind K) {
  switch (K) {
  case ValueKind::Tensor: return "tensor";
  case ValueKind::Sequence: return "sequence(tensor)";
  case ValueKind::OptionalTensor: return "optional(tensor)";
  case ValueKind::OptionalSequence: return "optional(sequence(tensor))";
  }
  return "?";
}

Result<std::vector<int64_t>> ConstData::toInt64Vector() const {
  std::vector<int64_t> Out;
  if (Data == nullptr && elementCount() != 0)
    return makeError(ErrorCode::InvalidState, "constant has no data");
  if (!convertConst(*this, /*AllowFloat=*/false, Out))
    return makeError(ErrorCode::Type, "expected an integer constant, got element type ", toString(Type));
  return Out;
}

Result<std::vector<double>> ConstData::toDoubleVector() const {
  std::vector<double> Out;
  if (Data == nullptr && elementCount() != 0)
    return makeError(ErrorCode::InvalidState, "constant has no data");
  if (!convertConst(*this, /*AllowFloat=*/true, Out))
    return makeError(ErrorCode::Type, "expected a numeric constant, got element type ", toString(Type));
  return Out;
}

std::shared_ptr<ConstData> ConstData::allocate(ElementType Type, std::vector<int64_t> Dims) {
  auto C = std::make_shared<ConstData>();
  C->Type = Type;
  C->Dims = std::move(Dims);
  const size_t N = C->elementCount();
  if (Type == ElementType::String) {
    // Strings live in the owned vector; the object is heap allocated and never moved.
    C->Strings.resize(N);
    C->Data = C->Strings.data();
    C->Bytes = N * sizeof(std::string);
    return C;
  }
  C->Bytes = N * getElementSize(Type);
  // Zero-filled; a large block (weights) comes mapped with huge pages (core/LargeAlloc.h).
  size_t Mapped = 0;
  void *P = allocateBlock(C->Bytes, /*Zero=*/true, Mapped);
  if (!P)
    throw std::bad_alloc();
  C->KeepAlive = std::shared_ptr<const void>(P, [Mapped](const void *Ptr) { freeBlock(const_cast<void *>(Ptr), Mapped); });
  C->Data = P;
  return C;
}

Result<int64_t> Node::getInt(const std::string &Key, int64_t Default) const {
  auto It = Attrs.find(Key);
  if (It == Attrs.end())
    return Default;
  if (It->second.K != AttrValue::Kind::Int)
    return wrongKind(*this, Key, AttrValue::Kind::Int, It->second.K);
  return It->second.I;
}

Result<float> Node::getFloat(const std::string &Key, float Default) const {
  auto It = Attrs.find(Key);
  if (It == Attrs.end())
    return Default;
  // Some exporters write integral floats (alpha=1) as ints; that is unambiguous, accept it.
  if (It->second.K == AttrValue::Kind::Int)
    return static_cast<float>(It->second.I);
  if (It->second.K != AttrValue::Kind::Float)
    return wrongKind(*this, Key, AttrValue::Kind::Float, It->second.K);
  return It->second.F;
}

Result<std::string> Node::getString(const std::string &Key, const std::string &Default) const {
  auto It = Attrs.find(Key);
  if (It == Attrs.end())
    return Default;
  if (It->second.K != AttrValue::Kind::String)
    return wrongKind(*this, Key, AttrValue::Kind::String, It->second.K);
  return It->second.S;
}

Result<std::vector<int64_t>> Node::getInts(const std::string &Key, const std::vector<int64_t> &Default) const {
  auto It = Attrs.find(Key);
  if (It == Attrs.end())
    return Default;
  if (It->second.K != AttrValue::Kind::Ints)
    return wrongKind(*this, Key, AttrValue::Kind::Ints, It->second.K);
  return It->second.Ints;
}

Result<std::vector<float>> Node::getFloats(const std::string &Key, const std::vector<float> &Default) const {
  auto It = Attrs.find(Key);
  if (It == Attrs.end())
    return Default;
  if (It->second.K != AttrValue::Kind::Floats)
    return wrongKind(*this, Key, AttrValue::Kind::Floats, It->second.K);
  return It->second.Floats;
}

std::string Node::describe() const { return "node '" + Name + "' (" + OpType + ")"; }

int Graph::findValue(const std::string &ValueName) const {
  for (size_t I = 0; I < Values.size(); ++I)
    if (Values[I].Name == ValueName)
      return static_cast<int>(I);
  return -1;
}

int Graph::addValue(Value V) {
  Values.push_back(std::move(V));
  return static_cast<int>(Values.size() - 1);
}

void Graph::rebuildUseLists() {
  for (Value &V : Values) {
    V.Producer = -1;
    V.Consumers.clear();
  }
  for (size_t NI = 0; NI < Nodes.size(); ++NI) {
    const int Id = static_cast<int>(NI);
    for (int In : Nodes[NI].Inputs) {
      if (In < 0 || In >= static_cast<int>(Values.size()))
        continue;
      auto &C = Values[In].Consumers;
      // A node that reads a value twice (Mul(x, x)) is one consumer.
      if (C.empty() || C.back() != Id)
        C.push_back(Id);
    }
    for (int Out : Nodes[NI].Outputs)
      if (Out >= 0 && Out < static_cast<int>(Values.size()))
        Values[Out].Producer = Id;
  }
}

std::vector<std::string> outerScopeNames(const Graph &G) {
  std::set<std::string> Names;
  auto Visit = [&](int V) {
    if (V < 0)
      return;
    const Value &Val = G.Values[V];
    if (!Val.Const && !Val.IsGraphInput && Val.Producer < 0)
      Names.insert(Val.Name);
  };
  for (const Node &N : G.Nodes)
    for (int In : N.Inputs)
      Visit(In);
  for (int O : G.Outputs)
    Visit(O);
  return std::vector<std::string>(Names.begin(), Names.end());
}

std::vector<std::string> capturedNames(const Node &N) {
  std::set<std::string> Names;
  for (const auto &KV : N.Attrs)
    if (KV.second.K == AttrValue::Kind::Graph && KV.second.G)
      for (const std::string &Name : outerScopeNames(*KV.second.G))
        Names.insert(Name);
  return std::vector<std::string>(Names.begin(), Names.end());
}

} // namespace detail
} // namespace runtime
} // namespace optimium
