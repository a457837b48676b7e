// Transpose -> MatMul(B) fusion (see FuseTransposeMatMul.h).
#include "passes/FuseTransposeMatMul.h"
#include "passes/EraseNodes.h"

#include <vector>

namespace optimium {
namespace runtime {
namespace detail {

namespace {

/// Whether Node T is a Transpose that swaps exactly the last two of its rank >= 2 axes.
bool swapsLastTwo(const Graph &G, const Node &T) {
  if (T.OpType != "Transpose" || !T.Domain.empty() || T.Inputs.size() != 1 || T.Outputs.size() != 1 ||
      T.Inputs[0] < 0 || T.Outputs[0] < 0)
    return false;
  const Value &X = G.Values[T.Inputs[0]];
  const size_t R = X.Shape.getRank();
  if (R < 2 || X.Type != ElementType::F32)
    return false;
  auto It = T.Attrs.find("perm");
  if (It == T.Attrs.end() || It->second.Ints.size() != R)
    return false; // the default perm reverses every axis: only rank 2 would qualify; keep it simple
  const std::vector<int64_t> &P = It->second.Ints;
  for (size_t I = 0; I + 2 < R; ++I)
    if (P[I] != static_cast<int64_t>(I))
      return false;
  return P[R - 2] == static_cast<int64_t>(R - 1) && P[R - 1] == static_cast<int64_t>(R - 2);
}

} // namespace

size_t fuseTransposeMatMul(Graph &G) {
  // Subgraphs (If/Loop/Scan bodies) read outer values by name, outside the use lists: a graph
  // with any keeps its Transposes (the MatMuls still read the untransposed input).
  bool HasSubgraphs = false;
  for (const Node &N : G.Nodes)
    for (const auto &KV : N.Attrs)
      HasSubgraphs |= KV.second.K == AttrValue::Kind::Graph;
  std::vector<char> Remove(G.Nodes.size(), 0);
  size_t Fused = 0;
  for (Node &M : G.Nodes) {
    if (M.OpType != "MatMul" || !M.Domain.empty() || M.Inputs.size() < 2 || M.Inputs[1] < 0 ||
        M.hasAttr(kTransposeB))
      continue;
    const int TI = G.Values[M.Inputs[1]].Producer;
    if (TI < 0 || !swapsLastTwo(G, G.Nodes[static_cast<size_t>(TI)]))
      continue;
    if (M.Inputs[0] < 0 || G.Values[M.Inputs[0]].Type != ElementType::F32)
      continue;
    M.Attrs[kTransposeB] = attrInt(1);
    M.Inputs[1] = G.Nodes[static_cast<size_t>(TI)].Inputs[0];
    ++Fused;
  }
  if (!Fused)
    return 0;
  G.rebuildUseLists();
  if (HasSubgraphs)
    return Fused;
  // Transposes nobody reads any more go.
  for (size_t I = 0; I < G.Nodes.size(); ++I) {
    const Node &T = G.Nodes[I];
    if (T.OpType != "Transpose" || T.Outputs.size() != 1 || T.Outputs[0] < 0)
      continue;
    const Value &Y = G.Values[T.Outputs[0]];
    if (!Y.IsGraphOutput && Y.Consumers.empty() && swapsLastTwo(G, T))
      Remove[I] = 1;
  }
  eraseMarkedNodes(G, Remove);
  return Fused;
}

} // namespace detail
} // namespace runtime
} // namespace optimium
