// Conv + residual Add fusion (see FuseConvResidual.h).
#include "passes/FuseConvResidual.h"
#include "passes/EraseNodes.h"
#include "passes/FuseConvActivation.h"
#include "passes/PassMatch.h"

#include <vector>

namespace optimium {
namespace runtime {
namespace detail {

size_t fuseConvResidual(Graph &G) {
  std::vector<char> Remove(G.Nodes.size(), 0);
  size_t Fused = 0;
  for (size_t I = 0; I < G.Nodes.size(); ++I) {
    Node &C = G.Nodes[I];
    if (Remove[I] || C.OpType != "Conv" || !C.Domain.empty() || C.Outputs.size() != 1 || C.Outputs[0] < 0 ||
        C.Inputs.size() < 2 || C.Inputs.size() > 3 || C.hasAttr(kFusedActMin) || C.hasAttr(kFusedActMax) ||
        C.hasAttr(kFusedResidual))
      continue;
    const int YI = C.Outputs[0];
    const Value &Y = G.Values[YI];
    if (Y.IsGraphOutput || Y.Type != ElementType::F32 || Y.Consumers.size() != 1)
      continue;
    const int AI = Y.Consumers[0];
    if (AI <= static_cast<int>(I) || Remove[static_cast<size_t>(AI)])
      continue;
    const Node &A = G.Nodes[static_cast<size_t>(AI)];
    if (A.OpType != "Add" || !A.Domain.empty() || A.Inputs.size() != 2 || A.Outputs.size() != 1 || A.Outputs[0] < 0)
      continue;
    // The Conv output must be exactly one operand (Add(y, y) reads it twice).
    if ((A.Inputs[0] == YI) == (A.Inputs[1] == YI))
      continue;
    const int RI = A.Inputs[0] == YI ? A.Inputs[1] : A.Inputs[0];
    if (RI < 0)
      continue;
    const Value &Res = G.Values[RI], &Out = G.Values[A.Outputs[0]];
    if (Res.Type != ElementType::F32 || Out.Type != ElementType::F32 || !sameStaticShape(Res, Y) ||
        !sameStaticShape(Out, Y))
      continue;
    Node Fused_ = std::move(C);
    Fused_.Inputs.resize(kFusedResidualInput, -1); // bias slot kept (omitted when absent)
    Fused_.Inputs.push_back(RI);
    Fused_.Attrs[kFusedResidual] = attrInt(1);
    Fused_.Outputs[0] = A.Outputs[0];
    // The Add's slot: after the Conv's inputs and the residual's producer alike.
    G.Nodes[static_cast<size_t>(AI)] = std::move(Fused_);
    Remove[I] = 1;
    ++Fused;
  }
  eraseMarkedNodes(G, Remove);
  return Fused;
}

} // namespace detail
} // namespace runtime
} // namespace optimium
