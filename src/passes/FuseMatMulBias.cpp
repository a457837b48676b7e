// MatMul + bias Add fusion (see FuseMatMulBias.h).
#include "passes/FuseMatMulBias.h"
#include "passes/Bf16Weights.h"
#include "passes/EraseNodes.h"

#include <algorithm>
#include <cstring>
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
    if (!constWeightMatrix(G, M))
      continue;
    const int64_t N = G.Values[M.Inputs[1]].Const->Dims[1];
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
    M.Attrs[kFusedBias] = attrInt(1);
    M.Inputs.push_back(Bias);
    M.Outputs[0] = A.Outputs[0];
    Remove[AI] = 1;
    ++Fused;
  }
  eraseMarkedNodes(G, Remove);
  return Fused;
}

namespace {

/// A MatMul fuseSiblingMatMuls may merge: float32 A, a constant 2-D float32 B readable in memory,
/// optionally a fused constant bias, no other attribute.
bool mergeableMatMul(const Graph &G, const Node &M) {
  if (M.OpType != "MatMul" || !M.Domain.empty() || M.Outputs.size() != 1 || M.Outputs[0] < 0 || M.Inputs.size() < 2 ||
      M.Inputs[0] < 0 || M.Inputs[1] < 0)
    return false;
  for (const auto &KV : M.Attrs)
    if (KV.first != kFusedBias)
      return false;
  if (M.Inputs.size() != (M.hasAttr(kFusedBias) ? 3u : 2u))
    return false;
  const Value &A = G.Values[M.Inputs[0]], &B = G.Values[M.Inputs[1]];
  if (A.Type != ElementType::F32 || !A.ShapeKnown || A.Shape.getRank() < 2 || !B.Const ||
      B.Const->Type != ElementType::F32 || B.Const->Dims.size() != 2 || (!B.Const->Data && !B.Const->Source) ||
      G.Values[M.Outputs[0]].Type != ElementType::F32)
    return false;
  if (M.Inputs.size() == 3) {
    const Value &Bias = G.Values[M.Inputs[2]];
    if (!Bias.Const || Bias.Const->Type != ElementType::F32 || Bias.Const->elementCount() != static_cast<size_t>(B.Const->Dims[1]) ||
        (!Bias.Const->Data && !Bias.Const->Source))
      return false;
  }
  return true;
}

const void *constBytes(const ConstData &C) { return C.Data ? C.Data : C.Source; }

} // namespace

size_t fuseSiblingMatMuls(Graph &G) {
  std::vector<char> Remove(G.Nodes.size(), 0);
  size_t Merged = 0;
  for (size_t I = 0; I < G.Nodes.size(); ++I) {
    if (Remove[I] || !mergeableMatMul(G, G.Nodes[I]))
      continue;
    const Node &First = G.Nodes[I];
    const int64_t K = G.Values[First.Inputs[1]].Const->Dims[0];
    const bool Bias = First.Inputs.size() == 3;
    std::vector<size_t> Group = {I};
    for (int C : G.Values[First.Inputs[0]].Consumers) {
      const size_t J = static_cast<size_t>(C);
      if (J <= I || Remove[J] || std::find(Group.begin(), Group.end(), J) != Group.end())
        continue;
      const Node &M = G.Nodes[J];
      if (mergeableMatMul(G, M) && M.Inputs[0] == First.Inputs[0] && G.Values[M.Inputs[1]].Const->Dims[0] == K &&
          (M.Inputs.size() == 3) == Bias)
        Group.push_back(J);
    }
    if (Group.size() < 2)
      continue;
    std::sort(Group.begin(), Group.end());
    std::vector<int64_t> Widths;
    int64_t Total = 0;
    for (size_t J : Group) {
      Widths.push_back(G.Values[G.Nodes[J].Inputs[1]].Const->Dims[1]);
      Total += Widths.back();
    }
    // The concatenated weights [K, Total] (and bias [Total]): column block g is member g's.
    const auto concat = [&](size_t Input, int64_t Rows, const std::string &Suffix) {
      Value V;
      V.Name = G.Values[G.Nodes[I].Outputs[0]].Name + Suffix;
      V.Type = ElementType::F32;
      V.Shape = Rows ? TensorShape::fromDims({Rows, Total}) : TensorShape::fromDims({Total});
      V.ShapeKnown = true;
      V.Const = ConstData::allocate(ElementType::F32, Rows ? std::vector<int64_t>{Rows, Total} : std::vector<int64_t>{Total});
      float *Dst = static_cast<float *>(V.Const->mutableData());
      int64_t Col = 0;
      for (size_t G2 = 0; G2 < Group.size(); ++G2) {
        const ConstData &Src = *G.Values[G.Nodes[Group[G2]].Inputs[Input]].Const;
        const char *Bytes = static_cast<const char *>(constBytes(Src));
        for (int64_t R = 0; R < std::max<int64_t>(Rows, 1); ++R)
          std::memcpy(Dst + R * Total + Col, Bytes + static_cast<size_t>(R * Widths[G2]) * sizeof(float),
                      static_cast<size_t>(Widths[G2]) * sizeof(float));
        Col += Widths[G2];
      }
      return G.addValue(std::move(V));
    };
    const int W = concat(1, K, "/merged_weights");
    const int B = Bias ? concat(2, 0, "/merged_bias") : -1;
    Node &M = G.Nodes[I];
    std::vector<int> Outs;
    for (size_t J : Group)
      Outs.push_back(G.Nodes[J].Outputs[0]);
    M.Inputs = {M.Inputs[0], W};
    if (Bias)
      M.Inputs.push_back(B);
    M.Outputs = Outs;
    M.Attrs[kSplitOutputs] = attrInts(Widths);
    for (size_t G2 = 1; G2 < Group.size(); ++G2)
      Remove[Group[G2]] = 1;
    Merged += Group.size() - 1;
  }
  if (!Merged)
    return 0;
  eraseMarkedNodes(G, Remove);
  return Merged;
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
    if (!constWeightMatrix(G, M))
      continue;
    M.Attrs[kFusedGelu] = attrInt(1);
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
