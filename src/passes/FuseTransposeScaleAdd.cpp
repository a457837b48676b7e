// Transpose -> per-channel Mul -> Add fusion (see FuseTransposeScaleAdd.h).
#include "passes/FuseTransposeScaleAdd.h"
#include "ir/FusedOps.h"
#include "passes/EraseNodes.h"
#include "passes/PassMatch.h"

#include <vector>

namespace optimium {
namespace runtime {
namespace detail {

namespace {

/// Whether V is a constant float32 of one value per channel C that broadcasts along axis 1 of a
/// rank-Rank tensor: [C, 1, ..., 1] with Rank - 1 dims, or [1, C, 1, ..., 1] with Rank dims.
bool channelScale(const Graph &G, int V, size_t Rank, int64_t C) {
  if (V < 0)
    return false;
  const ConstData *S = G.Values[static_cast<size_t>(V)].Const.get();
  if (!S || S->Type != ElementType::F32 || !S->Data || S->Dims.size() + 1 < Rank || S->Dims.size() > Rank)
    return false;
  const size_t Lead = Rank - S->Dims.size(); // output axes left of S's first dim
  for (size_t I = 0; I < S->Dims.size(); ++I)
    if (S->Dims[I] != (I + Lead == 1 ? C : 1))
      return false;
  return true;
}

} // namespace

size_t fuseTransposeScaleAdd(Graph &G) {
  std::vector<char> Remove(G.Nodes.size(), 0);
  size_t Fused = 0;
  for (size_t I = 0; I < G.Nodes.size(); ++I) {
    const Node &T = G.Nodes[I];
    if (Remove[I] || !isOp(T, "Transpose", 1) || T.Inputs[0] < 0)
      continue;
    const int X = T.Inputs[0];
    const Value &XV = G.Values[static_cast<size_t>(X)];
    const size_t R = XV.Shape.getRank();
    if (XV.Type != ElementType::F32 || R < 3 || XV.Const || !XV.Shape[R - 1].isConst())
      continue;
    std::vector<int64_t> Back{0, static_cast<int64_t>(R - 1)};
    for (size_t D = 1; D + 1 < R; ++D)
      Back.push_back(static_cast<int64_t>(D));
    auto Perm = T.getInts("perm", {});
    if (!Perm.isOk() || *Perm != Back)
      continue;
    const int Mi = soleConsumer(G, T.Outputs[0]);
    if (Mi < 0 || Remove[static_cast<size_t>(Mi)] || !isOp(G.Nodes[static_cast<size_t>(Mi)], "Mul", 2))
      continue;
    const Node &M = G.Nodes[static_cast<size_t>(Mi)];
    const int Scale = M.Inputs[0] == T.Outputs[0] ? M.Inputs[1] : M.Inputs[0];
    if (Scale == T.Outputs[0] || !channelScale(G, Scale, R, XV.Shape[R - 1].value()))
      continue;
    const int Ai = soleConsumer(G, M.Outputs[0]);
    if (Ai < 0 || Remove[static_cast<size_t>(Ai)] || !isOp(G.Nodes[static_cast<size_t>(Ai)], "Add", 2))
      continue;
    const Node &A = G.Nodes[static_cast<size_t>(Ai)];
    const int Res = A.Inputs[0] == M.Outputs[0] ? A.Inputs[1] : A.Inputs[0];
    if (Res < 0 || Res == M.Outputs[0])
      continue;
    const Value &RV = G.Values[static_cast<size_t>(Res)], &TV = G.Values[static_cast<size_t>(T.Outputs[0])];
    const Value &YV = G.Values[static_cast<size_t>(A.Outputs[0])];
    // The residual has the Transpose's (channels-first) shape: the Add broadcasts nothing.
    if (RV.Type != ElementType::F32 || RV.Const || YV.Type != ElementType::F32 || !sameStaticShape(RV, TV) ||
        !sameStaticShape(YV, TV))
      continue;
    Node F;
    F.Name = T.Name + "+" + M.Name + "+" + A.Name;
    F.OpType = kTransposeScaleAddOp;
    F.Domain = kTransposeScaleAddDomain;
    F.OpsetVersion = 1;
    F.Inputs = {X, Scale, Res};
    F.Outputs = {A.Outputs[0]};
    // The Add (the last of the chain in node order, after the residual's producer) becomes the node.
    G.Nodes[static_cast<size_t>(Ai)] = std::move(F);
    Remove[I] = Remove[static_cast<size_t>(Mi)] = 1;
    ++Fused;
  }
  eraseMarkedNodes(G, Remove);
  return Fused;
}

} // namespace detail
} // namespace runtime
} // namespace optimium
