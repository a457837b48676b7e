// LayerNorm-over-channels fusion (see FuseLayerNormChannels.h).
#include "passes/FuseLayerNormChannels.h"
#include "ir/FusedOps.h"
#include "passes/EraseNodes.h"
#include "passes/PassMatch.h"

#include <vector>

namespace optimium {
namespace runtime {
namespace detail {

namespace {

/// Whether N is a Transpose with exactly this perm.
bool transposeWithPerm(const Node &N, const std::vector<int64_t> &Perm) {
  if (!isOp(N, "Transpose", 1))
    return false;
  auto P = N.getInts("perm", {});
  return P.isOk() && *P == Perm;
}

/// The LayerNormalization of a chain Transpose (node I: channels to the end) -> LayerNormalization
/// (last axis, one output, [C] float32 scale and bias) that LayerNormChannels computes, or -1; Back
/// is then the perm that brings the channels back to axis 1.
int channelsLayerNorm(const Graph &G, size_t I, const std::vector<char> &Remove, std::vector<int64_t> &Back) {
  const Node &T1 = G.Nodes[I];
  if (Remove[I] || T1.OpType != "Transpose" || !T1.Domain.empty() || T1.Inputs.size() != 1 || T1.Inputs[0] < 0)
    return -1;
  const Value &XV = G.Values[static_cast<size_t>(T1.Inputs[0])];
  const size_t R = XV.Shape.getRank();
  if (XV.Type != ElementType::F32 || R < 3 || XV.Const)
    return -1;
  std::vector<int64_t> ToLast{0};
  Back = {0, static_cast<int64_t>(R - 1)};
  for (size_t D = 2; D < R; ++D)
    ToLast.push_back(static_cast<int64_t>(D));
  ToLast.push_back(1);
  for (size_t D = 1; D + 1 < R; ++D)
    Back.push_back(static_cast<int64_t>(D));
  if (!transposeWithPerm(T1, ToLast))
    return -1;
  const int L = soleConsumer(G, T1.Outputs[0]);
  if (L < 0 || Remove[static_cast<size_t>(L)])
    return -1;
  const Node &Ln = G.Nodes[static_cast<size_t>(L)];
  // One output (Mean and InvStdDev absent), normalizing the last axis, float32 statistics.
  if (Ln.OpType != "LayerNormalization" || !Ln.Domain.empty() || Ln.Inputs.size() < 2 || Ln.Inputs.size() > 3 ||
      Ln.Inputs[0] != T1.Outputs[0] || Ln.Inputs[1] < 0 || Ln.Outputs.empty() || Ln.Outputs[0] < 0)
    return -1;
  bool ExtraOutputs = false;
  for (size_t K = 1; K < Ln.Outputs.size(); ++K)
    ExtraOutputs |= Ln.Outputs[K] >= 0;
  auto Axis = Ln.getInt("axis", -1);
  auto Stash = Ln.getInt("stash_type", 1);
  if (ExtraOutputs || !Axis.isOk() || (*Axis != -1 && *Axis != static_cast<int64_t>(R - 1)) || !Stash.isOk() ||
      *Stash != 1)
    return -1;
  // Scale and bias: [C] float32 (a scale broadcast from fewer dims is left alone).
  const auto channelVector = [&](int V) {
    if (V < 0)
      return true;
    const Value &P = G.Values[static_cast<size_t>(V)];
    return P.Type == ElementType::F32 && P.Shape.getRank() == 1 && P.Shape[0].isConst() && XV.Shape[1].isConst() &&
           P.Shape[0].value() == XV.Shape[1].value();
  };
  if (!channelVector(Ln.Inputs[1]) || !channelVector(Ln.Inputs.size() == 3 ? Ln.Inputs[2] : -1))
    return -1;
  return L;
}

/// The LayerNormChannels node of Transpose T1 -> LayerNormalization Ln, writing Out.
Node channelsNode(const Node &T1, const Node &Ln, int Out, bool Last) {
  Node F;
  F.Name = Ln.Name;
  F.OpType = kLayerNormChannelsOp;
  F.Domain = kLayerNormChannelsDomain;
  F.OpsetVersion = 1;
  auto Eps = Ln.getFloat("epsilon", 1e-5f);
  F.Attrs["epsilon"] = attrFloat(Eps.isOk() ? *Eps : 1e-5f);
  if (Last)
    F.Attrs[kLncChannelsLast] = attrInt(1);
  F.Inputs = {T1.Inputs[0], Ln.Inputs[1]};
  if (Ln.Inputs.size() == 3 && Ln.Inputs[2] >= 0)
    F.Inputs.push_back(Ln.Inputs[2]);
  F.Outputs = {Out};
  return F;
}

} // namespace

namespace {

/// Both passes: Transpose -> LayerNormalization (-> Transpose back, unless Last) as one
/// LayerNormChannels node. Channels-first (Last false): the second Transpose (the last of the chain
/// in node order) becomes the fused node; channels-last: the LayerNormalization does, reading the
/// Transpose's input.
size_t fuseChannels(Graph &G, bool Last) {
  std::vector<char> Remove(G.Nodes.size(), 0);
  size_t Fused = 0;
  std::vector<int64_t> Back;
  for (size_t I = 0; I < G.Nodes.size(); ++I) {
    const int L = channelsLayerNorm(G, I, Remove, Back);
    if (L < 0)
      continue;
    int Target = L;
    if (!Last) {
      Target = soleConsumer(G, G.Nodes[static_cast<size_t>(L)].Outputs[0]);
      if (Target < 0 || Remove[static_cast<size_t>(Target)] ||
          !transposeWithPerm(G.Nodes[static_cast<size_t>(Target)], Back))
        continue;
      Remove[static_cast<size_t>(L)] = 1;
    }
    Node F = channelsNode(G.Nodes[I], G.Nodes[static_cast<size_t>(L)], G.Nodes[static_cast<size_t>(Target)].Outputs[0],
                          Last);
    G.Nodes[static_cast<size_t>(Target)] = std::move(F);
    Remove[I] = 1;
    ++Fused;
  }
  eraseMarkedNodes(G, Remove);
  return Fused;
}

} // namespace

size_t fuseLayerNormChannels(Graph &G) { return fuseChannels(G, /*Last=*/false); }

size_t fuseLayerNormChannelsLast(Graph &G) { return fuseChannels(G, /*Last=*/true); }

} // namespace detail
} // namespace runtime
} // namespace optimium
