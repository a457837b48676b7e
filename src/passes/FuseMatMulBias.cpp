// MatMul + bias Add fusion (see FuseMatMulBias.h).
#include "passes/FuseMatMulBias.h"
#include "passes/EraseNodes.h"

#include <vector>

namespace optimium {
namespace runtime {
namespace detail {

namespace {

/// A constant float32 vector of N values, shaped [N] or [1, ..., 1, N].
bool biasOf(const Graph &G, int V, int64_t N) {
  if (V < 0 || !G.Values[V].Const)
    return false;
  const ConstData &C = *G.Values[V].Const;
  if (C.Type != ElementType::F32 || C.Dims.empty() || C.Dims.back() != N)
    return false;
  for (size_t I = 0; I + 1 < C.Dims.size(); ++I)
    if (C.Dims[I] != 1)
      return false;
  return true;
}

} // namespace

size_t fuseMatMulBias(Graph &G) {
  std::vector<char> Remove(G.Nodes.size(), 0);
  size_t Fused = 0;
  for (size_t I = 0; I < G.Nodes.size(); ++I) {
    Node &M = G.Nodes[I];
    if (M.OpType != "MatMul" || !M.Domain.empty() || M.Inputs.size() != 2 || M.Outputs.size() != 1 ||
        M.Outputs[0] < 0 || M.hasAttr(kFusedBias))
      continue;
    const int B = M.Inputs[1];
    if (B < 0 || !G.Values[B].Const || G.Values[B].Const->Type != ElementType::F32 || G.Values[B].Const->Dims.size() != 2)
      continue;
    const int64_t N = G.Values[B].Const->Dims[1];
    const Value &Y = G.Values[M.Outputs[0]];
    if (Y.IsGraphOutput || Y.Type != ElementType::F32 || Y.Consumers.size() != 1)
      continue;
    const size_t AI = static_cast<size_t>(Y.Consumers[0]);
    const Node &A = G.Nodes[AI];
    if (Remove[AI] || A.OpType != "Add" || !A.Domain.empty() || A.Inputs.size() != 2 || A.Outputs.size() != 1 ||
        A.Outputs[0] < 0)
      continue;
    const int Bias = A.Inputs[0] == M.Outputs[0] ? A.Inputs[1] : A.Inputs[0];
    if ((A.Inputs[0] != M.Outputs[0] && A.Inputs[1] != M.Outputs[0]) || Bias == M.Outputs[0] || !biasOf(G, Bias, N))
      continue;
    // The bias may not broadcast the result to a bigger shape.
    const Value &Out = G.Values[A.Outputs[0]];
    if (Out.Type != ElementType::F32 || G.Values[Bias].Const->Dims.size() > Y.Shape.getRank())
      continue;
    AttrValue One;
    One.K = AttrValue::Kind::Int;
    One.I = 1;
    M.Attrs[kFusedBias] = One;
    M.Inputs.push_back(Bias);
    M.Outputs[0] = A.Outputs[0];
    Remove[AI] = 1;
    ++Fused;
  }
  eraseMarkedNodes(G, Remove);
  return Fused;
}

size_t fuseMatMulGelu(Graph &G) {
  std::vector<char> Remove(G.Nodes.size(), 0);
  size_t Fused = 0;
  for (size_t I = 0; I < G.Nodes.size(); ++I) {
    const Node &Gl = G.Nodes[I];
    if (Gl.OpType != "Gelu" || !Gl.Domain.empty() || Gl.Inputs.size() != 1 || Gl.Outputs.size() != 1 ||
        Gl.Inputs[0] < 0 || Gl.Outputs[0] < 0)
      continue;
    auto Approx = Gl.getString("approximate", "none");
    if (!Approx.isOk() || *Approx != "none")
      continue;
    const Value &X = G.Values[Gl.Inputs[0]];
    if (X.IsGraphOutput || X.Type != ElementType::F32 || X.Consumers.size() != 1 || X.Producer < 0 ||
        G.Values[Gl.Outputs[0]].Type != ElementType::F32)
      continue;
    Node &M = G.Nodes[static_cast<size_t>(X.Producer)];
    if (M.OpType != "MatMul" || !M.Domain.empty() || M.Inputs.size() < 2 || M.Outputs.size() != 1 ||
        M.hasAttr(kFusedGelu) || M.Inputs[1] < 0)
      continue;
    const int B = M.Inputs[1];
    if (!G.Values[B].Const || G.Values[B].Const->Type != ElementType::F32 || G.Values[B].Const->Dims.size() != 2)
      continue;
    AttrValue One;
    One.K = AttrValue::Kind::Int;
    One.I = 1;
    M.Attrs[kFusedGelu] = One;
    M.Outputs[0] = Gl.Outputs[0];
    Remove[I] = 1;
    ++Fused;
  }
  eraseMarkedNodes(G, Remove);
  return Fused;
}

} // namespace detail
} // namespace runtime
} // namespace optimium
