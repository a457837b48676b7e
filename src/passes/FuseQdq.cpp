// QDQ rewrites (see FuseQdq.h).
#include "passes/FuseQdq.h"
#include "passes/EraseNodes.h"
#include "passes/FuseConvActivation.h"

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

/// Whether the integer convolution would run on an exact integer kernel and beat the float path:
/// s8 weights of zero point 0 (or u8 of 128: the VNNI kernel's s8 lanes; the AVX2 kernel, int16
/// weights, would take any zero point, but the pass cannot tell which runs), and not a
/// depthwise-like grouping (both kernels read 4 input channels per step, which 1-3 per group fill
/// in part; under 8 output channels per group leave part of a VNNI tile empty): otherwise
/// QLinearConv would run the scalar reference, slower than dequantize + float Conv.
bool fastIntegerConv(const Graph &G, const Node &C, const ConstData &Wt, const DqMatch &W) {
  auto Group = C.getInt("group", 1);
  if (!Group.isOk() || *Group < 1 || Wt.Dims[0] % *Group != 0)
    return false;
  if (*Group > 1 && (Wt.Dims[1] < 4 || Wt.Dims[0] / *Group < 8))
    return false;
  const double Want = Wt.Type == ElementType::I8 ? 0.0 : 128.0;
  if (W.Zp < 0)
    return Want == 0.0;
  for (double Z : constValues(G, W.Zp))
    if (Z != Want)
      return false;
  return true;
}

/// A DequantizeLinear with per-tensor parameters (a scalar scale, and zero point if any).
bool isPerTensorDq(const Graph &G, const DqMatch &D) {
  return isInt8(G.Values[D.Q].Type) && isScalarParam(G, D.Scale) && (D.Zp < 0 || isScalarParam(G, D.Zp));
}

/// The QuantizeLinear that is the only reader of float32 V (as its data input), with constant
/// per-tensor float scale and zero point; Out is its (u8/s8) output.
struct QMatch {
  int Node = -1, Scale = -1, Zp = -1, Out = -1;
};

bool matchQ(const Graph &G, int V, const std::vector<char> &Removed, QMatch &M) {
  const Value &Y = G.Values[V];
  if (Y.IsGraphOutput || Y.Type != ElementType::F32 || Y.Consumers.size() != 1)
    return false;
  const size_t QI = static_cast<size_t>(Y.Consumers[0]);
  const Node &Q = G.Nodes[QI];
  if (Removed[QI] || Q.OpType != "QuantizeLinear" || !Q.Domain.empty() || Q.Inputs.size() < 2 || Q.Inputs[0] != V ||
      Q.Inputs[1] < 0 || Q.Outputs.size() != 1 || Q.Outputs[0] < 0)
    return false;
  M.Node = static_cast<int>(QI);
  M.Scale = Q.Inputs[1];
  M.Zp = Q.Inputs.size() > 2 ? Q.Inputs[2] : -1;
  M.Out = Q.Outputs[0];
  const ElementType YT = G.Values[M.Out].Type;
  auto Block = Q.getInt("block_size", 0);
  return Block.isOk() && *Block == 0 && isInt8(YT) && M.Scale != V && M.Zp != V && isScalarParam(G, M.Scale) &&
         constOf(G, M.Scale)->Type == ElementType::F32 &&
         (M.Zp < 0 || (isScalarParam(G, M.Zp) && constOf(G, M.Zp)->Type == YT));
}

/// Erases the marked nodes, and the DequantizeLinear nodes in Touched left without readers.
void eraseWithOrphans(Graph &G, std::vector<char> &Remove, const std::set<int> &Touched) {
  G.rebuildUseLists(); // readers as they are after the rewrites (marked nodes still count)
  for (int D : Touched) {
    const int Out = G.Nodes[static_cast<size_t>(D)].Outputs[0];
    bool Used = G.Values[Out].IsGraphOutput;
    for (int C : G.Values[Out].Consumers)
      Used |= !Remove[static_cast<size_t>(C)];
    if (!Used)
      Remove[static_cast<size_t>(D)] = 1;
  }
  eraseMarkedNodes(G, Remove);
  G.rebuildUseLists();
}

} // namespace

size_t fuseQuantizedConv(Graph &G) {
  std::vector<char> Remove(G.Nodes.size(), 0);
  std::set<int> Touched; // DequantizeLinear nodes whose output a fused conv no longer reads
  size_t Fused = 0;
  for (size_t I = 0; I < G.Nodes.size(); ++I) {
    Node &C = G.Nodes[I];
    // QLinearConv applies a clamp only: a Conv with another fused activation stays float.
    if (C.OpType != "Conv" || !C.Domain.empty() || C.Inputs.size() < 2 || C.Inputs.size() > 3 ||
        C.Outputs.size() != 1 || C.Outputs[0] < 0 || C.hasAttr(kFusedActKind))
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
    // w: constant u8/s8 [M, C/g, kh, kw]; scale per tensor, or per output channel along axis 0.
    const ConstData *Wc = constOf(G, W.Q);
    if (!Wc || !isInt8(Wc->Type) || Wc->Dims.size() != 4 || Wc->Dims.size() != G.Values[X.Q].Shape.getRank())
      continue;
    const int64_t M = Wc->Dims[0];
    if (!fastIntegerConv(G, C, *Wc, W))
      continue;
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
    QMatch Q;
    if (!matchQ(G, C.Outputs[0], Remove, Q))
      continue;
    const size_t QI = static_cast<size_t>(Q.Node);
    const ElementType YT = G.Values[Q.Out].Type;
    const std::string Base = C.Name.empty() ? G.Values[C.Outputs[0]].Name : C.Name;
    const int XZp = X.Zp >= 0 ? X.Zp : zeroConst(G, G.Values[X.Q].Type, Base + "/x_zero_point");
    const int WZp = W.Zp >= 0 ? W.Zp : zeroConst(G, Wc->Type, Base + "/w_zero_point");
    const int YZero = Q.Zp >= 0 ? Q.Zp : zeroConst(G, YT, Base + "/y_zero_point");
    std::vector<int> In{X.Q, X.Scale, XZp, W.Q, W.Scale, WZp, Q.Scale, YZero};
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
  if (Fused)
    eraseWithOrphans(G, Remove, Touched);
  return Fused;
}

size_t fuseQuantizedAdd(Graph &G) {
  std::vector<char> Remove(G.Nodes.size(), 0);
  std::set<int> Touched;
  size_t Fused = 0;
  for (size_t I = 0; I < G.Nodes.size(); ++I) {
    const Node &A = G.Nodes[I];
    if (A.OpType != "Add" || !A.Domain.empty() || A.Inputs.size() != 2 || A.Outputs.size() != 1 || A.Outputs[0] < 0)
      continue;
    DqMatch L, R;
    if (!matchDq(G, A.Inputs[0], L) || !matchDq(G, A.Inputs[1], R) || !isPerTensorDq(G, L) || !isPerTensorDq(G, R))
      continue;
    const Value &LV = G.Values[L.Q], &RV = G.Values[R.Q];
    if (LV.Type != RV.Type || !LV.ShapeKnown || !RV.ShapeKnown || LV.Shape.isDynamic() ||
        LV.Shape.toString() != RV.Shape.toString())
      continue;
    // A Relu between the Add and the QuantizeLinear folds as a clamp at the output's zero point.
    int Relu = -1, Sum = A.Outputs[0];
    const Value &SV = G.Values[Sum];
    if (!SV.IsGraphOutput && SV.Consumers.size() == 1) {
      const Node &Rn = G.Nodes[static_cast<size_t>(SV.Consumers[0])];
      if (Rn.OpType == "Relu" && Rn.Domain.empty() && Rn.Inputs.size() == 1 && Rn.Outputs.size() == 1 &&
          Rn.Outputs[0] >= 0 && !Remove[static_cast<size_t>(SV.Consumers[0])]) {
        Relu = SV.Consumers[0];
        Sum = Rn.Outputs[0];
      }
    }
    QMatch Q;
    if (!matchQ(G, Sum, Remove, Q) || G.Values[Q.Out].Type != LV.Type)
      continue;
    const std::string Base = A.Name.empty() ? G.Values[A.Outputs[0]].Name : A.Name;
    std::vector<int> In{L.Q, L.Scale, L.Zp >= 0 ? L.Zp : zeroConst(G, LV.Type, Base + "/a_zero_point"),
                        R.Q, R.Scale, R.Zp >= 0 ? R.Zp : zeroConst(G, LV.Type, Base + "/b_zero_point"),
                        Q.Scale, Q.Zp >= 0 ? Q.Zp : zeroConst(G, LV.Type, Base + "/c_zero_point")};
    Node &N = G.Nodes[I];
    N.OpType = "QLinearAdd";
    N.Domain = "com.microsoft";
    N.OpsetVersion = 1;
    N.Inputs = std::move(In);
    N.Outputs[0] = Q.Out;
    if (Relu >= 0) {
      N.Attrs[kFusedActMin] = attrFloat(0.0f);
      Remove[static_cast<size_t>(Relu)] = 1;
    }
    Remove[static_cast<size_t>(Q.Node)] = 1;
    Touched.insert(L.Node);
    Touched.insert(R.Node);
    ++Fused;
  }
  if (Fused)
    eraseWithOrphans(G, Remove, Touched);
  return Fused;
}

size_t fuseQuantizedMaxPool(Graph &G) {
  std::vector<char> Remove(G.Nodes.size(), 0);
  std::set<int> Touched;
  size_t Fused = 0;
  for (size_t I = 0; I < G.Nodes.size(); ++I) {
    const Node &P = G.Nodes[I];
    if (P.OpType != "MaxPool" || !P.Domain.empty() || P.Inputs.size() != 1 || P.Outputs.empty() || P.Outputs[0] < 0 ||
        (P.Outputs.size() > 1 && P.Outputs[1] >= 0))
      continue;
    DqMatch X;
    if (!matchDq(G, P.Inputs[0], X) || !isPerTensorDq(G, X))
      continue;
    QMatch Q;
    if (!matchQ(G, P.Outputs[0], Remove, Q) || G.Values[Q.Out].Type != G.Values[X.Q].Type)
      continue;
    // The same scale (positive and normal: q -> (q - z) * s -> / s -> rint gives q back) and zero point.
    const float S = static_cast<float>(constValues(G, X.Scale)[0]), QS = static_cast<float>(constValues(G, Q.Scale)[0]);
    const double XZ = X.Zp >= 0 ? constValues(G, X.Zp)[0] : 0.0, QZ = Q.Zp >= 0 ? constValues(G, Q.Zp)[0] : 0.0;
    if (S != QS || XZ != QZ || !(S > 1e-30f) || !(S < 1e30f))
      continue;
    Node &N = G.Nodes[I];
    N.Inputs[0] = X.Q;
    N.Outputs[0] = Q.Out;
    Remove[static_cast<size_t>(Q.Node)] = 1;
    Touched.insert(X.Node);
    ++Fused;
  }
  if (Fused)
    eraseWithOrphans(G, Remove, Touched);
  return Fused;
}

size_t foldConstantDequantize(Graph &G) {
  std::vector<char> Remove(G.Nodes.size(), 0);
  size_t Folded = 0;
  for (size_t I = 0; I < G.Nodes.size(); ++I) {
    const Node &D = G.Nodes[I];
    if (D.OpType != "DequantizeLinear" || !D.Domain.empty() || D.Inputs.size() < 2 || D.Outputs.size() != 1 ||
        D.Outputs[0] < 0 || G.Values[D.Outputs[0]].Type != ElementType::F32 || G.Values[D.Outputs[0]].Const)
      continue;
    const ConstData *X = constOf(G, D.Inputs[0]);
    if (!X || !X->Data || G.Values[D.Inputs[0]].IsGraphInput)
      continue;
    const ElementType T = X->Type;
    if (T != ElementType::U8 && T != ElementType::I8 && T != ElementType::I32 && T != ElementType::U16 &&
        T != ElementType::I16)
      continue;
    const std::vector<double> S = constValues(G, D.Inputs[1]);
    const bool HasZp = D.Inputs.size() > 2 && D.Inputs[2] >= 0;
    const std::vector<double> Z = HasZp ? constValues(G, D.Inputs[2]) : std::vector<double>{0.0};
    const std::vector<double> V = constValues(G, D.Inputs[0]);
    auto Block = D.getInt("block_size", 0);
    auto Axis = D.getInt("axis", 1);
    if (S.empty() || Z.size() != S.size() || V.size() != X->elementCount() || !Block.isOk() || *Block != 0 ||
        !Axis.isOk() || constOf(G, D.Inputs[1])->Type != ElementType::F32 ||
        (HasZp && constOf(G, D.Inputs[2])->Type != T))
      continue;
    // Per tensor, or per axis (1-D parameters of x[axis] values).
    int64_t Inner = 1, Len = 1;
    if (S.size() != 1) {
      const int64_t Rank = static_cast<int64_t>(X->Dims.size()), A = *Axis < 0 ? *Axis + Rank : *Axis;
      if (A < 0 || A >= Rank || constOf(G, D.Inputs[1])->Dims.size() != 1 ||
          X->Dims[static_cast<size_t>(A)] != static_cast<int64_t>(S.size()))
        continue;
      Len = X->Dims[static_cast<size_t>(A)];
      for (size_t K = static_cast<size_t>(A) + 1; K < X->Dims.size(); ++K)
        Inner *= X->Dims[K];
    }
    auto Out = ConstData::allocate(ElementType::F32, X->Dims);
    float *O = static_cast<float *>(Out->mutableData());
    for (size_t E = 0; E < V.size(); ++E) {
      const size_t P = S.size() == 1 ? 0 : static_cast<size_t>((static_cast<int64_t>(E) / Inner) % Len);
      // As the DequantizeLinear kernel: float(int64(x) - zp) * float(scale).
      O[E] = static_cast<float>(static_cast<int64_t>(V[E]) - static_cast<int64_t>(Z[P])) * static_cast<float>(S[P]);
    }
    Value &Y = G.Values[D.Outputs[0]];
    Y.Const = Out;
    Y.Shape = TensorShape::fromDims(X->Dims);
    Y.ShapeKnown = true;
    Remove[I] = 1;
    ++Folded;
  }
  eraseMarkedNodes(G, Remove);
  return Folded;
}

} // namespace detail
} // namespace runtime
} // namespace optimium
