// 1x1 Conv -> depthwise Conv fusion (see FusePointwiseDepthwise.h).
#include "passes/FusePointwiseDepthwise.h"
#include "passes/EraseNodes.h"
#include "passes/FuseConvActivation.h"
#include "passes/PassMatch.h"

#include <map>
#include <string>
#include <vector>

namespace optimium {
namespace runtime {
namespace detail {

namespace {

/// Optional bias input I of Conv N: omitted, or a constant [Channels].
bool biasOk(const Graph &G, const Node &N, size_t I, int64_t Channels) {
  if (I >= N.Inputs.size() || N.Inputs[I] < 0)
    return true;
  const ConstData *B = constF32(G, N.Inputs[I], 1);
  return B && B->Dims[0] == Channels;
}

int64_t groupOf(const Node &N) {
  auto R = N.getInt("group", 1);
  return R.isOk() ? *R : 0;
}

/// A Conv the fused pair kernels take: no fused residual, and at most a clamp (kFusedActKind
/// activations are not carried over).
bool isConv(const Node &N) {
  return N.OpType == "Conv" && N.Domain.empty() && N.Inputs.size() >= 2 && N.Inputs.size() <= 3 &&
         N.Outputs.size() == 1 && N.Outputs[0] >= 0 && !N.hasAttr(kFusedActKind);
}

/// A 1x1, stride-1, unpadded, group-1 2-D Conv with a constant weight [M, K, 1, 1]; M in Out.
bool isPointwise(const Graph &G, const Node &N, int64_t &M) {
  if (!isConv(N) || groupOf(N) != 1 || !intsAll(N, "strides", 1) || !intsAll(N, "pads", 0) ||
      !intsAll(N, "kernel_shape", 1))
    return false;
  // With a 1x1 kernel and stride 1 every auto_pad mode pads nothing.
  const ConstData *W = constF32(G, N.Inputs[1], 4);
  if (!W || W->Dims[2] != 1 || W->Dims[3] != 1)
    return false;
  M = W->Dims[0];
  const Value &X = G.Values[static_cast<size_t>(N.Inputs[0])];
  return X.Type == ElementType::F32 && X.ShapeKnown && X.Shape.getRank() == 4 && biasOk(G, N, 2, M);
}

/// A 2-D depthwise Conv of M channels: group M, constant weight [M, 1, KH, KW].
bool isDepthwise(const Graph &G, const Node &N, int64_t M) {
  if (!isConv(N) || groupOf(N) != M)
    return false;
  const ConstData *W = constF32(G, N.Inputs[1], 4);
  return W && W->Dims[0] == M && W->Dims[1] == 1 && biasOk(G, N, 2, M) &&
         G.Values[static_cast<size_t>(N.Outputs[0])].Type == ElementType::F32;
}

/// A stride-1, dilation-1 depthwise Conv (weight [C, 1, KH, KW], C = group) whose known output
/// plane is its input plane.
bool isSameDepthwise(const Graph &G, const Node &N, int64_t &C) {
  if (!isConv(N) || !intsAll(N, "strides", 1) || !intsAll(N, "dilations", 1))
    return false;
  const ConstData *W = constF32(G, N.Inputs[1], 4);
  if (!W || W->Dims[1] != 1 || groupOf(N) != W->Dims[0])
    return false;
  C = W->Dims[0];
  const Value &X = G.Values[static_cast<size_t>(N.Inputs[0])], &Y = G.Values[static_cast<size_t>(N.Outputs[0])];
  if (X.Type != ElementType::F32 || Y.Type != ElementType::F32 || !X.ShapeKnown || !Y.ShapeKnown ||
      X.Shape.getRank() != 4 || Y.Shape.getRank() != 4 || !biasOk(G, N, 2, C))
    return false;
  for (size_t D = 1; D < 4; ++D)
    if (!X.Shape[D].isConst() || !Y.Shape[D].isConst() || X.Shape[D].value() != Y.Shape[D].value())
      return false;
  return X.Shape[1].value() == C;
}

} // namespace

size_t fuseDepthwisePointwise(Graph &G) {
  std::vector<char> Remove(G.Nodes.size(), 0);
  size_t Fused = 0;
  for (size_t I = 0; I < G.Nodes.size(); ++I) {
    const Node &D = G.Nodes[I];
    int64_t C = 0, M = 0;
    if (Remove[I] || !isSameDepthwise(G, D, C))
      continue;
    const Value &E = G.Values[static_cast<size_t>(D.Outputs[0])];
    if (E.IsGraphOutput || E.Consumers.size() != 1)
      continue;
    const size_t PI = static_cast<size_t>(E.Consumers[0]);
    Node &P = G.Nodes[PI];
    if (Remove[PI] || P.Inputs[0] != D.Outputs[0] || P.Inputs[1] == D.Outputs[0] ||
        (P.Inputs.size() > 2 && P.Inputs[2] == D.Outputs[0]) || !isPointwise(G, P, M) ||
        G.Values[static_cast<size_t>(P.Inputs[1])].Const->Dims[1] != C ||
        G.Values[static_cast<size_t>(P.Outputs[0])].Type != ElementType::F32)
      continue;
    const int X = D.Inputs[0], Wd = D.Inputs[1], Bd = D.Inputs.size() > 2 ? D.Inputs[2] : -1;
    const int Wp = P.Inputs[1], Bp = P.Inputs.size() > 2 ? P.Inputs[2] : -1;
    // The 1x1 node becomes the fused one (its readers all come after it); the depthwise one goes.
    // The 1x1 Conv's clamp keeps its attribute names; the depthwise window and clamp are copied.
    std::map<std::string, AttrValue> Attrs;
    for (const auto &KV : D.Attrs) {
      if (KV.first == kFusedActMin)
        Attrs[kDepthwiseActMin] = KV.second;
      else if (KV.first == kFusedActMax)
        Attrs[kDepthwiseActMax] = KV.second;
      else
        Attrs[KV.first] = KV.second;
    }
    for (const char *Key : {kFusedActMin, kFusedActMax}) {
      auto It = P.Attrs.find(Key);
      if (It != P.Attrs.end())
        Attrs[Key] = It->second;
    }
    P.Name = D.Name + "+" + P.Name;
    P.OpType = kFusedDepthwisePointwiseOp;
    P.Domain = kFusedPointwiseDepthwiseDomain;
    P.OpsetVersion = 1;
    P.Attrs = std::move(Attrs);
    P.Inputs = {X, Wd, Wp, Bd, Bp};
    while (P.Inputs.back() < 0) // omitted trailing biases are left off
      P.Inputs.pop_back();
    Remove[I] = 1;
    ++Fused;
  }
  eraseMarkedNodes(G, Remove);
  return Fused;
}

namespace {

/// Whether the AVX2 tier runs pair P (1x1) -> D (depthwise) faster unfused: a 1x1 Conv reading at
/// least kAvx2UnfusedMinInputs channels on a plane of at most kAvx2UnfusedMaxPlane pixels, or at
/// most kAvx2UnfusedMaxPlaneStride1 before a stride-1 depthwise Conv (see FusePointwiseDepthwise.h).
bool unfusedPaysOnAvx2(const Graph &G, const Node &P, const Node &D) {
  const Value &X = G.Values[static_cast<size_t>(P.Inputs[0])];
  if (!X.Shape[1].isConst() || !X.Shape[2].isConst() || !X.Shape[3].isConst() ||
      X.Shape[1].value() < kAvx2UnfusedMinInputs)
    return false;
  const int64_t Plane = X.Shape[2].value() * X.Shape[3].value();
  return Plane <= kAvx2UnfusedMaxPlane || (Plane <= kAvx2UnfusedMaxPlaneStride1 && intsAll(D, "strides", 1));
}

size_t fusePairs(Graph &G, bool KeepAvx2Unfused) {
  std::vector<char> Remove(G.Nodes.size(), 0);
  size_t Fused = 0;
  for (size_t I = 0; I < G.Nodes.size(); ++I) {
    const Node &P = G.Nodes[I];
    int64_t M = 0;
    if (Remove[I] || !isPointwise(G, P, M))
      continue;
    const Value &E = G.Values[static_cast<size_t>(P.Outputs[0])];
    if (E.IsGraphOutput || E.Type != ElementType::F32 || E.Consumers.size() != 1)
      continue;
    const size_t DI = static_cast<size_t>(E.Consumers[0]);
    Node &D = G.Nodes[DI];
    // The depthwise Conv reads the expanded tensor as its data input only.
    if (Remove[DI] || D.Inputs.size() < 2 || D.Inputs[0] != P.Outputs[0] || D.Inputs[1] == P.Outputs[0] ||
        (D.Inputs.size() > 2 && D.Inputs[2] == P.Outputs[0]) || !isDepthwise(G, D, M))
      continue;
    if (KeepAvx2Unfused && unfusedPaysOnAvx2(G, P, D))
      continue;
    const int X = P.Inputs[0], W1 = P.Inputs[1], B1 = P.Inputs.size() > 2 ? P.Inputs[2] : -1;
    const int W2 = D.Inputs[1], B2 = D.Inputs.size() > 2 ? D.Inputs[2] : -1;
    // The depthwise node becomes the fused one (its readers all come after it); the 1x1 Conv goes.
    D.Name = P.Name + "+" + D.Name;
    D.OpType = kFusedPointwiseDepthwiseOp;
    D.Domain = kFusedPointwiseDepthwiseDomain;
    D.OpsetVersion = 1;
    D.Inputs = {X, W1, W2, B1, B2};
    while (D.Inputs.back() < 0) // omitted trailing biases are left off
      D.Inputs.pop_back();
    const auto Copy = [&](const char *From, const char *To) {
      auto It = P.Attrs.find(From);
      if (It != P.Attrs.end())
        D.Attrs[To] = It->second;
    };
    Copy(kFusedActMin, kExpandActMin);
    Copy(kFusedActMax, kExpandActMax);
    Remove[I] = 1;
    ++Fused;
  }
  eraseMarkedNodes(G, Remove);
  return Fused;
}

} // namespace

size_t fusePointwiseDepthwise(Graph &G) { return fusePairs(G, false); }

size_t fusePointwiseDepthwiseAvx2(Graph &G) { return fusePairs(G, true); }

} // namespace detail
} // namespace runtime
} // namespace optimium
