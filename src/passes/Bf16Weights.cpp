// MatMul weights kept in bfloat16 (see Bf16Weights.h).
#include "passes/Bf16Weights.h"

#include <vector>

#include "passes/EraseNodes.h"
#include "passes/PassMatch.h"

namespace optimium {
namespace runtime {
namespace detail {

namespace {

/// The bfloat16 constant V is Cast from, when V is Cast(to=FLOAT) of a constant 2-D bf16 tensor
/// whose bytes are readable (in memory or in the model file); -1 otherwise.
int bf16Source(const Graph &G, int V) {
  if (V < 0 || G.Values[V].Producer < 0)
    return -1;
  const Node &C = G.Nodes[static_cast<size_t>(G.Values[V].Producer)];
  if (!isCastToFloat(C) || C.Inputs[0] < 0)
    return -1;
  const Value &W = G.Values[C.Inputs[0]];
  if (!W.Const || W.Const->Type != ElementType::BF16 || W.Const->Dims.size() != 2 ||
      (!W.Const->Data && !W.Const->Source))
    return -1;
  return C.Inputs[0];
}

} // namespace

bool constWeightMatrix(const Graph &G, const Node &M) {
  if (M.Inputs.size() < 2 || M.Inputs[1] < 0)
    return false;
  const Value &B = G.Values[M.Inputs[1]];
  if (!B.Const || B.Const->Dims.size() != 2)
    return false;
  return B.Const->Type == (hasBf16Weights(M) ? ElementType::BF16 : ElementType::F32);
}

size_t useBf16Weights(Graph &G) {
  size_t Rewired = 0;
  for (Node &M : G.Nodes) {
    // MatMul with no internal attribute yet; Gemm (with or without its C) with only ONNX ones.
    const bool MatMul = isOp(M, "MatMul", 2) && M.Attrs.empty();
    const bool Gemm = (isOp(M, "Gemm", 2) || isOp(M, "Gemm", 3)) && !M.hasAttr(kBf16Weights);
    if ((!MatMul && !Gemm) || M.Inputs[0] < 0 || G.Values[M.Inputs[0]].Type != ElementType::F32 ||
        G.Values[M.Outputs[0]].Type != ElementType::F32)
      continue;
    const int W = bf16Source(G, M.Inputs[1]);
    if (W < 0)
      continue;
    M.Inputs[1] = W;
    M.Attrs[kBf16Weights] = attrInt(1);
    ++Rewired;
  }
  if (!Rewired)
    return 0;
  G.rebuildUseLists();
  // Casts of bf16 weights nobody reads any more.
  std::vector<char> Remove(G.Nodes.size(), 0);
  for (size_t I = 0; I < G.Nodes.size(); ++I) {
    const Node &C = G.Nodes[I];
    if (isOp(C, "Cast", 1) && bf16Source(G, C.Outputs[0]) >= 0) {
      const Value &Out = G.Values[C.Outputs[0]];
      Remove[I] = Out.Consumers.empty() && !Out.IsGraphOutput;
    }
  }
  eraseMarkedNodes(G, Remove);
  return Rewired;
}

} // namespace detail
} // namespace runtime
} // namespace optimium
