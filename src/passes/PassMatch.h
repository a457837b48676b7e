// Small graph queries the pattern-matching passes share (FuseAttention, FuseGelu, the Conv fusions).
#pragma once

#include <cstddef>

#include "ir/Graph.h"

namespace optimium {
namespace runtime {
namespace detail {

/// A default-domain node of this type with the given input count and one (present) output.
inline bool isOp(const Node &N, const char *Op, size_t Inputs) {
  return N.OpType == Op && N.Domain.empty() && N.Inputs.size() == Inputs && N.Outputs.size() == 1 &&
         N.Outputs[0] >= 0;
}

/// A default-domain Cast to float32 (TensorProto.FLOAT = 1) with one input.
inline bool isCastToFloat(const Node &N) {
  if (!isOp(N, "Cast", 1))
    return false;
  const auto To = N.getInt("to", 0);
  return To.isOk() && To.value() == 1;
}

/// The value of a constant float32 scalar (any rank, one element).
inline bool scalarConst(const Graph &G, int V, float &Out) {
  if (V < 0 || !G.Values[V].Const)
    return false;
  const ConstData &C = *G.Values[V].Const;
  if (C.Type != ElementType::F32 || C.elementCount() != 1 || !C.Data)
    return false;
  Out = C.as<float>()[0];
  return true;
}

/// The constant float32 value of V with Rank dims, or null.
inline const ConstData *constF32(const Graph &G, int V, size_t Rank) {
  if (V < 0)
    return nullptr;
  const ConstData *C = G.Values[static_cast<size_t>(V)].Const.get();
  return C && C->Type == ElementType::F32 && C->Dims.size() == Rank ? C : nullptr;
}

/// An ints attribute that is absent or has every entry equal to V.
inline bool intsAll(const Node &N, const char *Key, int64_t V) {
  auto R = N.getInts(Key, {});
  if (!R.isOk())
    return false;
  for (int64_t X : *R)
    if (X != V)
      return false;
  return true;
}

/// Whether both values' shapes are fully known and equal (no broadcasting either way).
inline bool sameStaticShape(const Value &A, const Value &B) {
  return A.ShapeKnown && B.ShapeKnown && !A.Shape.isDynamic() && A.Shape == B.Shape;
}

/// The only consumer of value V (an intermediate: not a graph output), or -1.
inline int soleConsumer(const Graph &G, int V) {
  const Value &Val = G.Values[V];
  if (Val.IsGraphOutput || Val.Consumers.size() != 1)
    return -1;
  return Val.Consumers[0];
}

} // namespace detail
} // namespace runtime
} // namespace optimium
