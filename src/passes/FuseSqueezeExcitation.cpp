// Squeeze-excitation fusion (see FuseSqueezeExcitation.h).
#include "passes/FuseSqueezeExcitation.h"
#include "passes/EraseNodes.h"
#include "passes/PassMatch.h"

#include <map>
#include <string>
#include <vector>

namespace optimium {
namespace runtime {
namespace detail {

namespace {

/// Whether dims D.. of S are constant 1 (a 1x1 plane or kernel), and S has rank 4.
bool unitPlane(const TensorShape &S) {
  return S.getRank() == 4 && S[2].isConst() && S[2].value() == 1 && S[3].isConst() && S[3].value() == 1;
}

/// A 1x1 Conv on a 1x1 plane: group 1, constant 4-D weight [Out, In, 1, 1], output [N, Out, 1, 1],
/// no padding, no residual, at most a bias [Out].
bool squeezeConv(const Graph &G, const Node &N) {
  if (N.OpType != "Conv" || !N.Domain.empty() || N.Inputs.size() < 2 || N.Inputs.size() > 3 || N.Outputs.size() != 1 ||
      N.Outputs[0] < 0 || N.hasAttr(kFusedResidual) || !intsAll(N, "pads", 0))
    return false;
  auto Group = N.getInt("group", 1);
  auto AutoPad = N.getString("auto_pad", "NOTSET");
  if (!Group.isOk() || *Group != 1 || !AutoPad.isOk() || (*AutoPad != "NOTSET" && *AutoPad != "VALID"))
    return false;
  const ConstData *W = constF32(G, N.Inputs[1], 4);
  if (!W || W->Dims[2] != 1 || W->Dims[3] != 1)
    return false;
  if (N.Inputs.size() == 3 && N.Inputs[2] >= 0) { // a constant or not (shared biases come through Identity)
    const Value &B = G.Values[static_cast<size_t>(N.Inputs[2])];
    if (B.Type != ElementType::F32 || B.Shape.getRank() != 1 || !B.Shape[0].isConst() ||
        B.Shape[0].value() != W->Dims[0])
      return false;
  }
  const Value &Y = G.Values[static_cast<size_t>(N.Outputs[0])];
  return Y.Type == ElementType::F32 && unitPlane(Y.Shape) && Y.Shape[1].isConst() && Y.Shape[1].value() == W->Dims[0];
}

} // namespace

size_t fuseSqueezeExcitation(Graph &G) {
  std::vector<char> Remove(G.Nodes.size(), 0);
  size_t Fused = 0;
  for (size_t I = 0; I < G.Nodes.size(); ++I) {
    const Node &Pool = G.Nodes[I];
    if (Remove[I] || !isOp(Pool, "GlobalAveragePool", 1))
      continue;
    const int X = Pool.Inputs[0];
    const Value &XV = G.Values[static_cast<size_t>(X)];
    if (XV.Type != ElementType::F32 || XV.Shape.getRank() != 4 || !XV.Shape[1].isConst())
      continue;
    const int64_t C = XV.Shape[1].value();
    const int C1 = soleConsumer(G, Pool.Outputs[0]);
    if (C1 < 0 || Remove[static_cast<size_t>(C1)] || !squeezeConv(G, G.Nodes[static_cast<size_t>(C1)]))
      continue;
    const Node &Reduce = G.Nodes[static_cast<size_t>(C1)];
    const ConstData &W1 = *G.Values[static_cast<size_t>(Reduce.Inputs[1])].Const;
    if (Reduce.Inputs[0] != Pool.Outputs[0] || W1.Dims[1] != C)
      continue;
    const int C2 = soleConsumer(G, Reduce.Outputs[0]);
    if (C2 < 0 || Remove[static_cast<size_t>(C2)] || !squeezeConv(G, G.Nodes[static_cast<size_t>(C2)]))
      continue;
    const Node &Expand = G.Nodes[static_cast<size_t>(C2)];
    const ConstData &W2 = *G.Values[static_cast<size_t>(Expand.Inputs[1])].Const;
    if (Expand.Inputs[0] != Reduce.Outputs[0] || W2.Dims[0] != C || W2.Dims[1] != W1.Dims[0])
      continue;
    const int MI = soleConsumer(G, Expand.Outputs[0]);
    if (MI < 0 || Remove[static_cast<size_t>(MI)])
      continue;
    const Node &Mul = G.Nodes[static_cast<size_t>(MI)];
    const int S = Expand.Outputs[0];
    if (!isOp(Mul, "Mul", 2) || !((Mul.Inputs[0] == X && Mul.Inputs[1] == S) || (Mul.Inputs[0] == S && Mul.Inputs[1] == X)))
      continue;
    const Value &YV = G.Values[static_cast<size_t>(Mul.Outputs[0])];
    if (YV.Type != ElementType::F32)
      continue;
    std::map<std::string, AttrValue> Attrs;
    copyFusedActivation(Reduce, kConvActKeys, Attrs, kSeReduceActKeys);
    copyFusedActivation(Expand, kConvActKeys, Attrs, kSeExpandActKeys);
    Node F;
    F.Name = Pool.Name + "+" + Mul.Name;
    F.OpType = kSqueezeExcitationOp;
    F.Domain = kSqueezeExcitationDomain;
    F.OpsetVersion = 1;
    F.Attrs = std::move(Attrs);
    const auto input = [](const Node &N, size_t K) { return N.Inputs.size() > K ? N.Inputs[K] : -1; };
    F.Inputs = {X, Reduce.Inputs[1], Expand.Inputs[1], input(Reduce, 2), input(Expand, 2)};
    while (F.Inputs.back() < 0)
      F.Inputs.pop_back();
    F.Outputs = {Mul.Outputs[0]};
    // The Mul (the last of the chain in node order) becomes the fused node; the others go.
    G.Nodes[static_cast<size_t>(MI)] = std::move(F);
    Remove[I] = Remove[static_cast<size_t>(C1)] = Remove[static_cast<size_t>(C2)] = 1;
    ++Fused;
  }
  eraseMarkedNodes(G, Remove);
  return Fused;
}

} // namespace detail
} // namespace runtime
} // namespace optimium
