// Conv + Relu/Clip fusion (see FuseConvActivation.h).
#include "passes/FuseConvActivation.h"
#include "passes/EraseNodes.h"

#include <cmath>
#include <vector>

namespace optimium {
namespace runtime {
namespace detail {

namespace {

/// The constant float scalar of input I of N, or Default when the input is omitted; false when it
/// is present but not a constant float scalar.
bool constBound(const Graph &G, const Node &N, size_t I, float Default, float &Out) {
  if (I >= N.Inputs.size() || N.Inputs[I] < 0) {
    Out = Default;
    return true;
  }
  const Value &V = G.Values[N.Inputs[I]];
  if (!V.Const || V.Const->Type != ElementType::F32 || V.Const->elementCount() != 1)
    return false;
  Out = V.Const->as<float>()[0];
  return true;
}

/// The clamp of an activation node, when it is one this pass fuses.
bool activationBounds(const Graph &G, const Node &A, float &Lo, float &Hi) {
  if (!A.Domain.empty())
    return false;
  if (A.OpType == "Relu") {
    Lo = 0.0f;
    Hi = INFINITY;
    return true;
  }
  if (A.OpType != "Clip")
    return false;
  if (A.OpsetVersion > 0 && A.OpsetVersion < 11) {
    auto Min = A.getFloat("min", -INFINITY), Max = A.getFloat("max", INFINITY);
    if (!Min.isOk() || !Max.isOk())
      return false;
    Lo = *Min;
    Hi = *Max;
    return true;
  }
  return constBound(G, A, 1, -INFINITY, Lo) && constBound(G, A, 2, INFINITY, Hi);
}

} // namespace

size_t fuseConvActivation(Graph &G) {
  std::vector<char> Remove(G.Nodes.size(), 0);
  size_t Fused = 0;
  for (size_t I = 0; I < G.Nodes.size(); ++I) {
    Node &C = G.Nodes[I];
    if (C.OpType != "Conv" || !C.Domain.empty() || C.Outputs.size() != 1 || C.Outputs[0] < 0 ||
        C.hasAttr(kFusedActMin) || C.hasAttr(kFusedActMax))
      continue;
    const Value &Y = G.Values[C.Outputs[0]];
    if (Y.IsGraphOutput || Y.Type != ElementType::F32 || Y.Consumers.size() != 1)
      continue;
    const int AI = Y.Consumers[0];
    Node &A = G.Nodes[static_cast<size_t>(AI)];
    if (Remove[static_cast<size_t>(AI)] || A.Inputs.empty() || A.Inputs[0] != C.Outputs[0] || A.Outputs.size() != 1 ||
        A.Outputs[0] < 0 || G.Values[A.Outputs[0]].Type != ElementType::F32)
      continue;
    // The activation may read the Conv's output only as its data input.
    bool OnlyData = true;
    for (size_t K = 1; K < A.Inputs.size(); ++K)
      OnlyData &= A.Inputs[K] != C.Outputs[0];
    float Lo = 0, Hi = 0;
    if (!OnlyData || !activationBounds(G, A, Lo, Hi) || std::isnan(Lo) || std::isnan(Hi))
      continue;
    C.Attrs[kFusedActMin] = attrFloat(Lo);
    C.Attrs[kFusedActMax] = attrFloat(Hi);
    C.Outputs[0] = A.Outputs[0];
    Remove[static_cast<size_t>(AI)] = 1;
    ++Fused;
  }
  eraseMarkedNodes(G, Remove);
  return Fused;
}

} // namespace detail
} // namespace runtime
} // namespace optimium
