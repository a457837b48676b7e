// QDQ Conv -> QLinearConv fusion (see FuseQuantizedConv.h).
#include "passes/FuseQuantizedConv.h"
#include "passes/EraseNodes.h"

#include <cmath>
#include <cstring>
#include <set>
#include <vector>

namespace optimium {
namespace runtime {
namespace detail {

namespace {

bool isInt8(ElementType T) { return T == ElementType::U8 || T == ElementType::I8; }

const ConstData *constOf(const Graph &G, int V) { return V >= 0 ? G.Values[V].Const.get() : nullptr; }

/// The constant's values as doubles, or empty when it is not a readable numeric constant.
std::vector<double> constValues(const Graph &G, int V) {
  const ConstData *C = constOf(G, V);
  if (!C || !C->Data)
    return {};
  auto R = C->toDoubleVector();
  return R.isOk() ? *R : std::vector<double>{};
}

/// A DequantizeLinear (default domain, no block_size) producing float32 V: its quantized input,
/// scale and zero point (-1 when omitted), and its node index.
struct DqMatch {
  int Node = -1, Q = -1, Scale = -1, Zp = -1;
};

bool matchDq(const Graph &G, int V, DqMatch &M) {
  if (V < 0 || G.Values[V].Type != ElementType::F32 || G.Values[V].IsGraphOutput)
    return false;
  const int P = G.Values[V].Producer;
  if (P < 0)
    return false;
  const Node &D = G.Nodes[static_cast<size_t>(P)];
  if (D.OpType != "DequantizeLinear" || !D.Domain.empty() || D.Inputs.size() < 2 || D.Outputs.size() != 1 ||
      D.Inputs[0] < 0 || D.Inputs[1] < 0)
    return false;
  auto Block = D.getInt("block_size", 0);
  if (!Block.isOk() || *Block != 0)
    return false;
  M.Node = P;
  M.Q = D.Inputs[0];
  M.Scale = D.Inputs[1];
  M.Zp = D.Inputs.size() > 2 ? D.Inputs[2] : -1;
  const ConstData *S = constOf(G, M.Scale);
  if (!S || S->Type != ElementType::F32 || !S->Data)
    return false;
  if (M.Zp >= 0) {
    const ConstData *Z = constOf(G, M.Zp);
    if (!Z || Z->Type != G.Values[M.Q].Type || Z->elementCount() != S->elementCount())
      return false;
  }
  return true;
}

bool isScalarParam(const Graph &G, int V) { return constOf(G, V) && constOf(G, V)->elementCount() == 1; }

int zeroConst(Graph &G, ElementType T, const std::string &Name) {
  Value V;
  V.Name = Name;
  V.Type = T;
  V.Shape = TensorShape::fromDims({});
  V.ShapeKnown = true;
  V.Const = ConstData::allocate(T, {});
  std::memset(V.Const->mutableData(), 0, V.Const->Bytes);
  return G.addValue(std::move(V));
}

} // namespace

size_t fuseQuantizedConv(Graph &G) {
  std::vector<char> Remove(G.Nodes.size(), 0);
  std::set<int> Touched; // DequantizeLinear nodes whose output a fused conv no longer reads
  size_t Fused = 0;
  for (size_t I = 0; I < G.Nodes.size(); ++I) {
    Node &C = G.Nodes[I];
    if (C.OpType != "Conv" || !C.Domain.empty() || C.Inputs.size() < 2 || C.Inputs.size() > 3 ||
        C.Outputs.size() != 1 || C.Outputs[0] < 0)
      continue;
    DqMatch X, W, B;
    if (!matchDq(G, C.Inputs[0], X) || !matchDq(G, C.Inputs[1], W))
      continue;
    const bool HasBias = C.Inputs.size() == 3 && C.Inputs[2] >= 0;
    if (HasBias && !matchDq(G, C.Inputs[2], B))
      continue;
    // x: u8/s8, per-tensor scale and zero point.
    if (!isInt8(G.Values[X.Q].Type) || !isScalarParam(G, X.Scale) || (X.Zp >= 0 && !isScalarParam(G, X.Zp)))
      continue;
    // w: constant u8/s8 [M, C/g, k...]; scale per tensor, or per output channel along axis 0.
    const ConstData *Wc = constOf(G, W.Q);
    if (!Wc || !isInt8(Wc->Type) || Wc->Dims.size() < 3 || Wc->Dims.size() != G.Values[X.Q].Shape.getRank())
      continue;
    const int64_t M = Wc->Dims[0];
    const std::vector<double> XS = constValues(G, X.Scale), WS = constValues(G, W.Scale);
    if (XS.size() != 1 || WS.empty())
      continue;
    if (WS.size() != 1) {
      const Node &D = G.Nodes[static_cast<size_t>(W.Node)];
      auto Axis = D.getInt("axis", 1);
      const int64_t Rank = static_cast<int64_t>(Wc->Dims.size());
      if (static_cast<int64_t>(WS.size()) != M || constOf(G, W.Scale)->Dims.size() != 1 || !Axis.isOk() ||
          (*Axis != 0 && *Axis != -Rank))
        continue;
    }
    // bias: constant int32 [M], zero point 0, scale x_scale * w_scale (what makes it an exact
    // int32 addend of the accumulator).
    if (HasBias) {
      const ConstData *Bc = constOf(G, B.Q);
      const std::vector<double> BS = constValues(G, B.Scale);
      if (!Bc || Bc->Type != ElementType::I32 || Bc->Dims.size() != 1 || Bc->Dims[0] != M ||
          (BS.size() != 1 && static_cast<int64_t>(BS.size()) != M))
        continue;
      bool Ok = true;
      for (double Z : B.Zp >= 0 ? constValues(G, B.Zp) : std::vector<double>{})
        Ok &= Z == 0.0;
      for (int64_t Mi = 0; Ok && Mi < M; ++Mi) {
        const float Want = static_cast<float>(XS[0]) * static_cast<float>(WS[WS.size() == 1 ? 0 : Mi]);
        const double Got = BS[BS.size() == 1 ? 0 : Mi];
        Ok = std::fabs(Got - Want) <= 1e-6 * std::fabs(Want);
      }
      if (!Ok)
        continue;
    }
    // y: read only by one QuantizeLinear (per-tensor constant scale and zero point) as its data.
    const Value &Y = G.Values[C.Outputs[0]];
    if (Y.IsGraphOutput || Y.Type != ElementType::F32 || Y.Consumers.size() != 1)
      continue;
    const size_t QI = static_cast<size_t>(Y.Consumers[0]);
    const Node &Q = G.Nodes[QI];
    if (Remove[QI] || Q.OpType != "QuantizeLinear" || !Q.Domain.empty() || Q.Inputs.size() < 2 ||
        Q.Inputs[0] != C.Outputs[0] || Q.Inputs[1] < 0 || Q.Outputs.size() != 1 || Q.Outputs[0] < 0)
      continue;
    const int YScale = Q.Inputs[1], YZp = Q.Inputs.size() > 2 ? Q.Inputs[2] : -1;
    const ElementType YT = G.Values[Q.Outputs[0]].Type;
    auto QBlock = Q.getInt("block_size", 0);
    if (!QBlock.isOk() || *QBlock != 0 || !isInt8(YT) || YScale == C.Outputs[0] || YZp == C.Outputs[0] ||
        !isScalarParam(G, YScale) || constOf(G, YScale)->Type != ElementType::F32 ||
        (YZp >= 0 && (!isScalarParam(G, YZp) || constOf(G, YZp)->Type != YT)))
      continue;
    const std::string Base = C.Name.empty() ? G.Values[C.Outputs[0]].Name : C.Name;
    const int XZp = X.Zp >= 0 ? X.Zp : zeroConst(G, G.Values[X.Q].Type, Base + "/x_zero_point");
    const int WZp = W.Zp >= 0 ? W.Zp : zeroConst(G, Wc->Type, Base + "/w_zero_point");
    const int YZero = YZp >= 0 ? YZp : zeroConst(G, YT, Base + "/y_zero_point");
    std::vector<int> In{X.Q, X.Scale, XZp, W.Q, W.Scale, WZp, YScale, YZero};
    if (HasBias)
      In.push_back(B.Q);
    Node &CN = G.Nodes[I]; // zeroConst grew G.Values only: the node reference is still valid
    Touched.insert(X.Node);
    Touched.insert(W.Node);
    if (HasBias)
      Touched.insert(B.Node);
    CN.OpType = "QLinearConv";
    CN.Inputs = std::move(In);
    CN.Outputs[0] = G.Nodes[QI].Outputs[0];
    Remove[QI] = 1;
    ++Fused;
  }
  if (!Fused)
    return 0;
  G.rebuildUseLists();
  for (int D : Touched) {
    const int Out = G.Nodes[static_cast<size_t>(D)].Outputs[0];
    if (Out >= 0 && G.Values[Out].Consumers.empty() && !G.Values[Out].IsGraphOutput)
      Remove[static_cast<size_t>(D)] = 1;
  }
  eraseMarkedNodes(G, Remove);
  G.rebuildUseLists();
  return Fused;
}

} // namespace detail
} // namespace runtime
} // namespace optimium
