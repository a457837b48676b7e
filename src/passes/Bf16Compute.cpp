// The bfloat16 compute mode's marking pass (see Bf16Compute.h).
#include "passes/Bf16Compute.h"

namespace optimium {
namespace runtime {
namespace detail {

namespace {

bool constF32Input(const Graph &G, const Node &N, size_t I, size_t Rank) {
  if (N.Inputs.size() <= I || N.Inputs[I] < 0)
    return false;
  const ConstData *C = G.Values[static_cast<size_t>(N.Inputs[I])].Const.get();
  return C && C->Type == ElementType::F32 && C->Dims.size() == Rank;
}

bool f32Value(const Graph &G, int V) { return V >= 0 && G.Values[static_cast<size_t>(V)].Type == ElementType::F32; }

} // namespace

size_t useBf16Compute(Graph &G) {
  size_t Marked = 0;
  for (Node &N : G.Nodes) {
    if (!N.Domain.empty() || N.Inputs.size() < 2 || N.Outputs.empty() || !f32Value(G, N.Inputs[0]) ||
        !f32Value(G, N.Outputs[0]) || N.hasAttr(kComputeBf16))
      continue;
    const bool Product = (N.OpType == "MatMul" || N.OpType == "Gemm") && constF32Input(G, N, 1, 2);
    const bool Conv = N.OpType == "Conv" && constF32Input(G, N, 1, 4);
    if (!Product && !Conv)
      continue;
    N.Attrs[kComputeBf16] = attrInt(1);
    ++Marked;
  }
  return Marked;
}

} // namespace detail
} // namespace runtime
} // namespace optimium
