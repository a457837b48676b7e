// Conv + 2x2 MaxPool fusion (see FuseConvMaxPool.h).
#include "passes/FuseConvMaxPool.h"
#include "passes/EraseNodes.h"
#include "passes/FuseConvResidual.h"
#include "passes/PassMatch.h"

#include <string>
#include <vector>

namespace optimium {
namespace runtime {
namespace detail {

namespace {

/// A Conv the small kernel runs: float32 4-D input, constant weight [M, C, KH, KW] within the
/// kernel's limits, group 1, stride 1, dilation 1, no fused residual.
bool isSmallConv(const Graph &G, const Node &N) {
  if (!isOp(N, "Conv", N.Inputs.size()) || N.Inputs.size() < 2 || N.Inputs.size() > 3 || N.hasAttr(kFusedResidual) ||
      N.hasAttr(kFusedActKind)) // the fused node carries a clamp only
    return false;
  auto Group = N.getInt("group", 1);
  if (!Group.isOk() || *Group != 1 || !intsAll(N, "strides", 1) || !intsAll(N, "dilations", 1))
    return false;
  const ConstData *W = constF32(G, N.Inputs[1], 4);
  const Value &X = G.Values[static_cast<size_t>(N.Inputs[0])];
  if (!W || X.Type != ElementType::F32 || !X.ShapeKnown || X.Shape.getRank() != 4)
    return false;
  const int64_t Taps = W->Dims[2] * W->Dims[3];
  return Taps >= 2 && W->Dims[0] <= kSmallConvMaxOutputChannels && W->Dims[1] * Taps <= kSmallConvMaxReduction;
}

/// A float32 MaxPool of a 2x2 window, strides 2, no padding or dilation, rounding down, and only
/// its Y output read.
bool isMaxPool2x2(const Graph &G, const Node &N) {
  if (N.OpType != "MaxPool" || !N.Domain.empty() || N.Inputs.size() != 1 || N.Outputs.empty() ||
      N.Outputs.size() > 2 || N.Outputs[0] < 0 || (N.Outputs.size() == 2 && N.Outputs[1] >= 0))
    return false;
  auto Kernel = N.getInts("kernel_shape", {}), Strides = N.getInts("strides", {});
  auto AutoPad = N.getString("auto_pad", "NOTSET");
  auto Ceil = N.getInt("ceil_mode", 0);
  return Kernel.isOk() && *Kernel == std::vector<int64_t>{2, 2} && Strides.isOk() &&
         *Strides == std::vector<int64_t>{2, 2} && AutoPad.isOk() && (*AutoPad == "NOTSET" || *AutoPad == "VALID") &&
         Ceil.isOk() && *Ceil == 0 && intsAll(N, "pads", 0) && intsAll(N, "dilations", 1) &&
         G.Values[static_cast<size_t>(N.Outputs[0])].Type == ElementType::F32;
}

} // namespace

size_t fuseConvMaxPool(Graph &G) {
  std::vector<char> Remove(G.Nodes.size(), 0);
  size_t Fused = 0;
  for (size_t I = 0; I < G.Nodes.size(); ++I) {
    Node &C = G.Nodes[I];
    if (Remove[I] || !isSmallConv(G, C) || G.Values[static_cast<size_t>(C.Outputs[0])].Type != ElementType::F32)
      continue;
    const int PI = soleConsumer(G, C.Outputs[0]);
    if (PI < 0 || Remove[static_cast<size_t>(PI)])
      continue;
    const Node &P = G.Nodes[static_cast<size_t>(PI)];
    if (!isMaxPool2x2(G, P))
      continue;
    C.Name += "+" + P.Name;
    C.OpType = kFusedConvMaxPoolOp;
    C.Domain = kFusedConvMaxPoolDomain;
    C.OpsetVersion = 1;
    C.Attrs[kFusedPoolKernel] = attrInts({2, 2});
    C.Attrs[kFusedPoolStrides] = attrInts({2, 2});
    C.Outputs[0] = P.Outputs[0];
    Remove[static_cast<size_t>(PI)] = 1;
    ++Fused;
  }
  eraseMarkedNodes(G, Remove);
  return Fused;
}

} // namespace detail
} // namespace runtime
} // namespace optimium
