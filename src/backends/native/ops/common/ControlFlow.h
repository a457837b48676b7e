// Shared pieces of the control-flow ops (If.cpp, Loop.cpp, Scan.cpp): shape helpers, slicing and
// stacking along an axis, and a small graph builder for their harness test cases.
#pragma once

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "backends/native/ops/common/Subgraph.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

/// A and B where they agree, fresh symbols elsewhere. The IR has no unknown rank: when the ranks
/// differ, the larger rank with every dimension a symbol (still dynamic, so the executor leaves
/// the output to the kernel).
inline TensorShape mergeOrSymbols(ShapeContext &Ctx, const TensorShape &A, const TensorShape &B) {
  std::vector<Expr> Dims;
  const bool SameRank = A.getRank() == B.getRank();
  for (size_t I = 0; I < std::max(A.getRank(), B.getRank()); ++I)
    Dims.push_back(SameRank && A[I] == B[I] ? A[I] : Ctx.newSymbol());
  return TensorShape(std::move(Dims));
}

/// Dims with every symbolic dimension as 0 (shape of a result with no elements at all).
inline std::vector<int64_t> dimsOrZero(const TensorShape &S) {
  std::vector<int64_t> Dims;
  for (const Expr &E : S)
    Dims.push_back(E.isConst() ? E.value() : 0);
  return Dims;
}

/// V without dimension Axis, element Index along it (a copy).
inline Result<RunValue> sliceAlong(const TensorView &V, size_t Axis, int64_t Index) {
  std::vector<int64_t> Dims = V.Dims;
  Dims.erase(Dims.begin() + static_cast<std::ptrdiff_t>(Axis));
  ASSIGN_OR_RETURN(RunValue R, allocateRunValue(V.Type, Dims));
  const size_t Elem = getElementSize(V.Type);
  const size_t Outer = static_cast<size_t>(product(V.Dims, 0, Axis));
  const size_t Inner = static_cast<size_t>(product(V.Dims, Axis + 1, V.Dims.size())) * Elem;
  const size_t Len = static_cast<size_t>(V.Dims[Axis]);
  for (size_t O = 0; O < Outer; ++O)
    std::memcpy(static_cast<char *>(R.View.Data) + O * Inner,
                static_cast<const char *>(V.Data) + (O * Len + static_cast<size_t>(Index)) * Inner, Inner);
  return R;
}

/// Stacks Parts (equal type and dims) along a new dimension Axis of Dst (already sized: Parts'
/// dims with Parts.size() inserted at Axis). Part t goes to position t, or size-1-t when Reverse.
inline void stackInto(const std::vector<TensorView> &Parts, size_t Axis, bool Reverse, const TensorView &Dst) {
  if (Parts.empty())
    return;
  const std::vector<int64_t> &D = Parts[0].Dims;
  const size_t Elem = getElementSize(Parts[0].Type);
  const size_t Outer = static_cast<size_t>(product(D, 0, Axis));
  const size_t Inner = static_cast<size_t>(product(D, Axis, D.size())) * Elem;
  const size_t L = Parts.size();
  for (size_t T = 0; T < L; ++T) {
    const size_t Pos = Reverse ? L - 1 - T : T;
    for (size_t O = 0; O < Outer; ++O)
      std::memcpy(static_cast<char *>(Dst.Data) + (O * L + Pos) * Inner,
                  static_cast<const char *>(Parts[T].Data) + O * Inner, Inner);
  }
}

/// Dims of Parts stacked along Axis; ShapeError naming N when the parts disagree.
inline Result<std::vector<int64_t>> stackedDims(const Node &N, const std::vector<TensorView> &Parts, size_t Axis,
                                                const char *What) {
  std::vector<int64_t> D = Parts[0].Dims;
  for (const TensorView &P : Parts)
    if (P.Dims != D || P.Type != Parts[0].Type)
      return makeError(ErrorCode::Shape, N.describe(), ": ", What, " changes shape between iterations (",
                       joinInts(D), " vs ", joinInts(P.Dims), ")");
  if (Axis > D.size())
    return makeError(ErrorCode::Shape, N.describe(), ": ", What, " axis ", Axis, " is out of range for rank ",
                     D.size() + 1);
  D.insert(D.begin() + static_cast<std::ptrdiff_t>(Axis), static_cast<int64_t>(Parts.size()));
  return D;
}

inline std::vector<TensorView> viewsOf(const std::vector<RunValue> &V) {
  std::vector<TensorView> Out;
  for (const RunValue &R : V)
    Out.push_back(R.View);
  return Out;
}

/// Builds small subgraphs for harness test cases.
class TinyGraph {
public:
  TinyGraph() : G(std::make_shared<Graph>()) {}
  int value(const std::string &Name) {
    const int V = G->findValue(Name);
    if (V >= 0)
      return V;
    Value Val;
    Val.Name = Name;
    return G->addValue(Val);
  }
  TinyGraph &input(const std::string &Name, ElementType T, std::vector<int64_t> Dims) {
    const int V = value(Name);
    G->Values[V].IsGraphInput = true;
    G->Values[V].Type = T;
    G->Values[V].Shape = TensorShape::fromDims(Dims);
    G->Values[V].ShapeKnown = true;
    G->Inputs.push_back(V);
    return *this;
  }
  TinyGraph &node(const std::string &Op, const std::vector<std::string> &Ins, const std::vector<std::string> &Outs,
                  std::map<std::string, AttrValue> Attrs = {}) {
    Node N;
    N.OpType = Op;
    N.Name = Op + "_" + std::to_string(G->Nodes.size());
    N.OpsetVersion = 17;
    N.Attrs = std::move(Attrs);
    for (const std::string &I : Ins)
      N.Inputs.push_back(I.empty() ? -1 : value(I));
    for (const std::string &O : Outs)
      N.Outputs.push_back(value(O));
    G->Nodes.push_back(std::move(N));
    return *this;
  }
  TinyGraph &output(const std::string &Name) {
    const int V = value(Name);
    G->Values[V].IsGraphOutput = true;
    G->Outputs.push_back(V);
    return *this;
  }
  AttrValue attr() {
    G->rebuildUseLists();
    AttrValue A;
    A.K = AttrValue::Kind::Graph;
    A.G = G;
    return A;
  }

private:
  std::shared_ptr<Graph> G;
};

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
