// Op-by-op multi-head attention -> one Attention node (see FuseAttention.h).
#include "passes/FuseAttention.h"
#include "passes/EraseNodes.h"
#include "passes/PassMatch.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace optimium {
namespace runtime {
namespace detail {

namespace {

bool f32Known(const Value &V) { return V.Type == ElementType::F32 && V.Kind == ValueKind::Tensor && V.ShapeKnown; }

/// Walks a chain backwards: the producer of value V when V is an intermediate read only by node
/// Reader (not a graph output) and the producer is still free; else -1.
int producerFor(const Graph &G, int V, int Reader, const std::vector<char> &Taken) {
  if (V < 0)
    return -1;
  const Value &Val = G.Values[V];
  if (Val.IsGraphOutput || Val.IsGraphInput || Val.Const || Val.Producer < 0 || Val.Consumers.size() != 1 ||
      Val.Consumers[0] != Reader || Taken[static_cast<size_t>(Val.Producer)])
    return -1;
  return Val.Producer;
}

bool isTranspose(const Node &N, std::initializer_list<int64_t> Perm) {
  if (!isOp(N, "Transpose", 1))
    return false;
  auto It = N.Attrs.find("perm");
  return It != N.Attrs.end() && It->second.K == AttrValue::Kind::Ints &&
         It->second.Ints == std::vector<int64_t>(Perm);
}

/// A MatMul as exported: two inputs, no internal attributes (fused bias, transposed B).
bool plainMatMul(const Node &N) { return isOp(N, "MatMul", 2) && N.Attrs.empty(); }

/// Heads split by Reshape node R: input X [B, S, E] (float32) -> [B, S, H, D] with a constant target
/// shape, E == H * D. Returns X, or -1.
int headSplit(const Graph &G, const Node &R, Expr &B, Expr &S, int64_t &H, int64_t &D) {
  if (!isOp(R, "Reshape", 2) || R.Inputs[0] < 0 || R.Inputs[1] < 0 || !G.Values[R.Inputs[1]].Const)
    return -1;
  const Value &X = G.Values[R.Inputs[0]], &Y = G.Values[R.Outputs[0]];
  if (!f32Known(X) || !f32Known(Y) || X.Shape.getRank() != 3 || Y.Shape.getRank() != 4)
    return -1;
  if (!(Y.Shape[0] == X.Shape[0]) || !(Y.Shape[1] == X.Shape[1]) || !Y.Shape[2].isConst() || !Y.Shape[3].isConst() ||
      !X.Shape[2].isConst() || Y.Shape[2].value() <= 0 || Y.Shape[3].value() <= 0 ||
      X.Shape[2].value() != Y.Shape[2].value() * Y.Shape[3].value())
    return -1;
  B = Y.Shape[0], S = Y.Shape[1], H = Y.Shape[2].value(), D = Y.Shape[3].value();
  return R.Inputs[0];
}

/// A decoder's cache append: the producer of V when it is Concat(past, new, axis 2) of rank 4 whose
/// output (present_key / present_value, usually a graph output) only Reader reads; Past gets the
/// past input. Else -1.
int cacheConcat(const Graph &G, int V, int Reader, const std::vector<char> &Taken, int &Past) {
  if (V < 0)
    return -1;
  const Value &Val = G.Values[V];
  if (Val.IsGraphInput || Val.Const || Val.Producer < 0 || Val.Consumers.size() != 1 || Val.Consumers[0] != Reader ||
      Taken[static_cast<size_t>(Val.Producer)] || !f32Known(Val) || Val.Shape.getRank() != 4)
    return -1;
  const Node &C = G.Nodes[static_cast<size_t>(Val.Producer)];
  if (!isOp(C, "Concat", 2) || C.Inputs[0] < 0 || C.Inputs[1] < 0 || C.Inputs[0] == C.Inputs[1])
    return -1;
  auto Axis = C.getInt("axis", 0);
  if (!Axis.isOk() || (*Axis != 2 && *Axis != -2) || !f32Known(G.Values[C.Inputs[0]]) ||
      G.Values[C.Inputs[0]].Shape.getRank() != 4)
    return -1;
  Past = C.Inputs[0];
  return Val.Producer;
}

struct Chain {
  std::vector<size_t> Nodes; ///< every node the Attention node replaces
  int Q = -1, K = -1, V = -1, Mask = -1;
  int PastK = -1, PastV = -1, PresentK = -1, PresentV = -1; ///< a decoder step's KV cache
  float Scale = 1;
  int64_t Heads = 0;
};

/// Matches the chain around Softmax node SI; fills C on success.
bool matchAttention(const Graph &G, size_t SI, const std::vector<char> &Taken, Chain &C) {
  const Node &Sm = G.Nodes[SI];
  const int SIdx = static_cast<int>(SI);
  if (!isOp(Sm, "Softmax", 1) || Sm.Inputs[0] < 0)
    return false;
  const Value &X = G.Values[Sm.Inputs[0]];
  if (!f32Known(X) || X.Shape.getRank() != 4)
    return false;
  // The last axis: opset >= 13 softmaxes along it; older opsets flatten from 'axis' on, which is
  // the same lines when 'axis' is the last one.
  const bool Legacy = Sm.OpsetVersion > 0 && Sm.OpsetVersion < 13;
  auto Axis = Sm.getInt("axis", Legacy ? 1 : -1);
  if (!Axis.isOk() || (*Axis != -1 && *Axis != 3))
    return false;
  C.Nodes = {SI};

  // Softmax <- [Add(., mask)] <- [Div(., c) | Mul(., c)] <- MatMul(Qh, Kt)
  const auto scores = [&](int V, int Reader, float &Scale, std::vector<size_t> &Nodes) -> int {
    int P = producerFor(G, V, Reader, Taken);
    if (P < 0)
      return -1;
    Scale = 1;
    const Node &N = G.Nodes[static_cast<size_t>(P)];
    float Cst = 0;
    int Next = -1;
    if (isOp(N, "Div", 2) && scalarConst(G, N.Inputs[1], Cst)) {
      Scale = 1.0f / Cst;
      Next = N.Inputs[0];
    } else if (isOp(N, "Mul", 2) && scalarConst(G, N.Inputs[1], Cst)) {
      Scale = Cst, Next = N.Inputs[0];
    } else if (isOp(N, "Mul", 2) && scalarConst(G, N.Inputs[0], Cst)) {
      Scale = Cst, Next = N.Inputs[1];
    } else if (plainMatMul(N)) {
      Nodes.push_back(static_cast<size_t>(P));
      return P;
    } else {
      return -1;
    }
    if (!(Scale > 0) || !std::isfinite(Scale))
      return -1;
    const int M = producerFor(G, Next, P, Taken);
    if (M < 0 || !plainMatMul(G.Nodes[static_cast<size_t>(M)]) || !f32Known(G.Values[Next]))
      return -1;
    Nodes.push_back(static_cast<size_t>(P));
    Nodes.push_back(static_cast<size_t>(M));
    return M;
  };
  int QK = -1;
  const int XP = producerFor(G, Sm.Inputs[0], SIdx, Taken);
  if (XP < 0)
    return false;
  const Node &XN = G.Nodes[static_cast<size_t>(XP)];
  if (isOp(XN, "Add", 2)) {
    for (int Side = 0; Side < 2 && QK < 0; ++Side) {
      std::vector<size_t> Nodes;
      float Scale = 1;
      const int M = scores(XN.Inputs[static_cast<size_t>(Side)], XP, Scale, Nodes);
      if (M < 0)
        continue;
      QK = M;
      C.Scale = Scale;
      C.Mask = XN.Inputs[static_cast<size_t>(1 - Side)];
      C.Nodes.push_back(static_cast<size_t>(XP));
      C.Nodes.insert(C.Nodes.end(), Nodes.begin(), Nodes.end());
    }
  } else {
    std::vector<size_t> Nodes;
    QK = scores(Sm.Inputs[0], SIdx, C.Scale, Nodes);
    C.Nodes.insert(C.Nodes.end(), Nodes.begin(), Nodes.end());
  }
  if (QK < 0)
    return false;
  const Node &QKN = G.Nodes[static_cast<size_t>(QK)];
  const Value &Scores = G.Values[QKN.Outputs[0]];
  if (!f32Known(Scores) || Scores.Shape.getRank() != 4)
    return false;
  // Every step between the scores and the Softmax keeps their shape (the mask must not broadcast
  // them to a larger one).
  for (size_t N : C.Nodes) {
    const Value &Out = G.Values[G.Nodes[N].Outputs[0]];
    if (!f32Known(Out) || Out.Shape.getRank() != 4)
      return false;
    for (size_t D = 0; D < 4; ++D)
      if (!(Out.Shape[D] == Scores.Shape[D]))
        return false;
  }

  // Q: Transpose(Reshape(q), [0, 2, 1, 3]).
  Expr QB, QS, KB, KT, VB, VT;
  int64_t H = 0, D = 0, KH = 0, KD = 0, VH = 0, Dv = 0;
  const int QT = producerFor(G, QKN.Inputs[0], QK, Taken);
  if (QT < 0 || !isTranspose(G.Nodes[static_cast<size_t>(QT)], {0, 2, 1, 3}))
    return false;
  const int QR = producerFor(G, G.Nodes[static_cast<size_t>(QT)].Inputs[0], QT, Taken);
  if (QR < 0 || (C.Q = headSplit(G, G.Nodes[static_cast<size_t>(QR)], QB, QS, H, D)) < 0)
    return false;
  // K: Transpose(Reshape(k), [0, 2, 3, 1]), or [0, 1, 3, 2] after [0, 2, 1, 3]; in a decoder step
  // with a KV cache, [0, 1, 3, 2] after present_key = Concat(past_key, Transpose(Reshape(k),
  // [0, 2, 1, 3])) along the sequence.
  const int KT1 = producerFor(G, QKN.Inputs[1], QK, Taken);
  if (KT1 < 0)
    return false;
  int KR = -1;
  std::vector<size_t> KNodes = {static_cast<size_t>(KT1)};
  if (isTranspose(G.Nodes[static_cast<size_t>(KT1)], {0, 2, 3, 1})) {
    KR = producerFor(G, G.Nodes[static_cast<size_t>(KT1)].Inputs[0], KT1, Taken);
  } else if (isTranspose(G.Nodes[static_cast<size_t>(KT1)], {0, 1, 3, 2})) {
    int KIn = G.Nodes[static_cast<size_t>(KT1)].Inputs[0], KReader = KT1;
    const int KC = cacheConcat(G, KIn, KT1, Taken, C.PastK);
    if (KC >= 0) {
      C.PresentK = KIn;
      KNodes.push_back(static_cast<size_t>(KC));
      KIn = G.Nodes[static_cast<size_t>(KC)].Inputs[1], KReader = KC;
    }
    const int KT0 = producerFor(G, KIn, KReader, Taken);
    if (KT0 < 0 || !isTranspose(G.Nodes[static_cast<size_t>(KT0)], {0, 2, 1, 3}))
      return false;
    KNodes.push_back(static_cast<size_t>(KT0));
    KR = producerFor(G, G.Nodes[static_cast<size_t>(KT0)].Inputs[0], KT0, Taken);
  }
  if (KR < 0 || (C.K = headSplit(G, G.Nodes[static_cast<size_t>(KR)], KB, KT, KH, KD)) < 0)
    return false;
  // The keys: the new ones, or the cache's past + new ones: present_key [B, H, past + T, D] (its
  // shape, not the past's: a resizable cache input has symbolic dims the Concat resolves; the
  // Attention node checks them at run time).
  Expr Keys = KT;
  if (C.PastK >= 0) {
    const TensorShape &PK = G.Values[C.PresentK].Shape;
    if (!(PK[0] == QB) || !(PK[1] == Expr(H)) || !(PK[3] == Expr(D)))
      return false;
    Keys = PK[2];
  }
  if (KH != H || KD != D || !(KB == QB) || !(Scores.Shape[0] == QB) || !(Scores.Shape[1] == Expr(H)) ||
      !(Scores.Shape[2] == QS) || !(Scores.Shape[3] == Keys))
    return false;

  // P V: MatMul(Softmax, Transpose(Reshape(v), [0, 2, 1, 3])).
  const int PV = soleConsumer(G, Sm.Outputs[0]);
  if (PV < 0 || Taken[static_cast<size_t>(PV)] || !plainMatMul(G.Nodes[static_cast<size_t>(PV)]))
    return false;
  const Node &PVN = G.Nodes[static_cast<size_t>(PV)];
  if (PVN.Inputs[0] != Sm.Outputs[0] || PVN.Inputs[1] == Sm.Outputs[0])
    return false;
  // With a cache, present_value = Concat(past_value, Transpose(Reshape(v), [0, 2, 1, 3])) too.
  int VIn = PVN.Inputs[1], VReader = PV, VC = -1;
  if (C.PastK >= 0) {
    VC = cacheConcat(G, VIn, PV, Taken, C.PastV);
    if (VC < 0 || C.PastV == C.PastK)
      return false;
    C.PresentV = VIn;
    VIn = G.Nodes[static_cast<size_t>(VC)].Inputs[1], VReader = VC;
  }
  const int VTr = producerFor(G, VIn, VReader, Taken);
  if (VTr < 0 || !isTranspose(G.Nodes[static_cast<size_t>(VTr)], {0, 2, 1, 3}))
    return false;
  const int VR = producerFor(G, G.Nodes[static_cast<size_t>(VTr)].Inputs[0], VTr, Taken);
  if (VR < 0 || (C.V = headSplit(G, G.Nodes[static_cast<size_t>(VR)], VB, VT, VH, Dv)) < 0)
    return false;
  if (VH != H || !(VB == QB) || !(VT == KT))
    return false;
  if (VC >= 0) {
    const TensorShape &PV = G.Values[C.PresentV].Shape;
    if (!(PV[0] == QB) || !(PV[1] == Expr(H)) || !(PV[2] == Keys) || !(PV[3] == Expr(Dv)))
      return false;
    KNodes.push_back(static_cast<size_t>(VC));
  }
  // y = Reshape(Transpose(O, [0, 2, 1, 3]), [B, S, H * Dv]).
  const Value &O = G.Values[PVN.Outputs[0]];
  const int OT = soleConsumer(G, PVN.Outputs[0]);
  if (!f32Known(O) || O.Shape.getRank() != 4 || OT < 0 || Taken[static_cast<size_t>(OT)] ||
      !isTranspose(G.Nodes[static_cast<size_t>(OT)], {0, 2, 1, 3}))
    return false;
  const int Ot = G.Nodes[static_cast<size_t>(OT)].Outputs[0];
  const int OR = soleConsumer(G, Ot);
  if (OR < 0 || Taken[static_cast<size_t>(OR)])
    return false;
  const Node &ORN = G.Nodes[static_cast<size_t>(OR)];
  if (!isOp(ORN, "Reshape", 2) || ORN.Inputs[0] != Ot || ORN.Inputs[1] < 0 || !G.Values[ORN.Inputs[1]].Const)
    return false;
  const Value &Y = G.Values[ORN.Outputs[0]];
  if (!f32Known(Y) || Y.Shape.getRank() != 3 || !(Y.Shape[0] == QB) || !(Y.Shape[1] == QS) || !Y.Shape[2].isConst() ||
      Y.Shape[2].value() != H * Dv)
    return false;
  // The mask: float32, right-aligned against the scores [B, H, S, T] with the keys' dim in full.
  if (C.Mask >= 0) {
    const Value &M = G.Values[C.Mask];
    if (M.Type != ElementType::F32 || M.Kind != ValueKind::Tensor || !M.ShapeKnown || M.Shape.getRank() < 1 ||
        M.Shape.getRank() > 4)
      return false;
    const size_t R = M.Shape.getRank();
    if (!(M.Shape[R - 1] == Scores.Shape[3]))
      return false;
    for (size_t I = 1; I < R; ++I) {
      const Expr &Dm = M.Shape[R - 1 - I];
      if (!(Dm == Expr(1)) && !(Dm == Scores.Shape[3 - I]))
        return false;
    }
  }
  C.Heads = H;
  C.Nodes.insert(C.Nodes.end(), {static_cast<size_t>(QT), static_cast<size_t>(QR), static_cast<size_t>(KR),
                                 static_cast<size_t>(PV), static_cast<size_t>(VTr), static_cast<size_t>(VR),
                                 static_cast<size_t>(OT), static_cast<size_t>(OR)});
  C.Nodes.insert(C.Nodes.end(), KNodes.begin(), KNodes.end());
  return true;
}

} // namespace

size_t fuseAttention(Graph &G) {
  for (const Node &N : G.Nodes)
    for (const auto &KV : N.Attrs)
      if (KV.second.K == AttrValue::Kind::Graph)
        return 0; // subgraphs read outer values by name: leave such graphs as they are
  std::vector<char> Taken(G.Nodes.size(), 0);
  size_t Fused = 0;
  for (size_t I = 0; I < G.Nodes.size(); ++I) {
    Chain C;
    if (Taken[I] || !matchAttention(G, I, Taken, C))
      continue;
    // The chain's last node (the output Reshape, after every producer of q, k, v and the mask)
    // becomes the Attention node.
    size_t At = 0;
    for (size_t N : C.Nodes)
      At = std::max(At, N);
    const int Y = G.Nodes[At].Outputs[0];
    const std::string Name = G.Nodes[I].Name;
    for (size_t N : C.Nodes)
      Taken[N] = 1;
    Node &A = G.Nodes[At];
    A.Name = Name;
    A.OpType = "Attention";
    A.Domain.clear();
    A.OpsetVersion = 23;
    A.Inputs = {C.Q, C.K, C.V};
    if (C.Mask >= 0 || C.PastK >= 0)
      A.Inputs.push_back(C.Mask);
    A.Outputs = {Y};
    if (C.PastK >= 0) { // the cache: past inputs in, present outputs (the Concats' values) out
      A.Inputs.insert(A.Inputs.end(), {C.PastK, C.PastV});
      A.Outputs.insert(A.Outputs.end(), {C.PresentK, C.PresentV});
    }
    A.Attrs.clear();
    A.Attrs["q_num_heads"] = attrInt(C.Heads);
    A.Attrs["kv_num_heads"] = attrInt(C.Heads);
    A.Attrs["scale"] = attrFloat(C.Scale);
    A.Attrs[kAttentionMaskedRowsNaN] = attrInt(1);
    Taken[At] = 2; // kept
    ++Fused;
  }
  if (!Fused)
    return 0;
  std::vector<char> Remove(G.Nodes.size(), 0);
  for (size_t I = 0; I < G.Nodes.size(); ++I)
    Remove[I] = Taken[I] == 1;
  eraseMarkedNodes(G, Remove);
  return Fused;
}

} // namespace detail
} // namespace runtime
} // namespace optimium
