// Erf- and tanh-GELU chains -> Gelu (see FuseGelu.h).
#include "passes/FuseGelu.h"
#include "passes/EraseNodes.h"
#include "passes/PassMatch.h"

#include <cmath>
#include <vector>

namespace optimium {
namespace runtime {
namespace detail {

namespace {

bool near(float A, float B) { return std::fabs(A - B) <= 1e-4f * std::fabs(B); }

/// For a commutative binary node with one constant scalar operand: the other operand and the scalar.
bool withScalar(const Graph &G, const Node &N, int &Other, float &Scalar) {
  if (scalarConst(G, N.Inputs[1], Scalar)) {
    Other = N.Inputs[0];
    return true;
  }
  if (scalarConst(G, N.Inputs[0], Scalar)) {
    Other = N.Inputs[1];
    return true;
  }
  return false;
}

/// The GELU tail after the "1 + f(x)" Add (node AI): X * (1 + f) * 0.5 as Mul(Mul(X, .), 0.5) or
/// Mul(., Mul(X, 0.5)), each intermediate read only by the next. Appends its nodes to Chain and
/// returns the node whose output is the GELU's, or -1.
int matchGeluTail(const Graph &G, int X, size_t AI, std::vector<size_t> &Chain) {
  const Node &A = G.Nodes[AI];
  const int M1I = soleConsumer(G, A.Outputs[0]);
  if (M1I < 0)
    return -1;
  const Node &M1 = G.Nodes[static_cast<size_t>(M1I)];
  if (!isOp(M1, "Mul", 2))
    return -1;
  int Other;
  float S = 0;
  Chain.push_back(static_cast<size_t>(M1I));
  if ((M1.Inputs[0] == X && M1.Inputs[1] == A.Outputs[0]) || (M1.Inputs[1] == X && M1.Inputs[0] == A.Outputs[0])) {
    const int M2I = soleConsumer(G, M1.Outputs[0]);
    if (M2I < 0)
      return -1;
    const Node &M2 = G.Nodes[static_cast<size_t>(M2I)];
    if (!isOp(M2, "Mul", 2) || !withScalar(G, M2, Other, S) || Other != M1.Outputs[0] || !near(S, 0.5f))
      return -1;
    Chain.push_back(static_cast<size_t>(M2I));
    return M2I;
  }
  // (X * 0.5) * (1 + f): M1 multiplies the Add's output by a Mul(X, 0.5) computed beside it.
  const int Half = M1.Inputs[0] == A.Outputs[0] ? M1.Inputs[1] : M1.Inputs[0];
  if (Half < 0 || G.Values[Half].Producer < 0 || soleConsumer(G, Half) != M1I)
    return -1;
  const size_t HI = static_cast<size_t>(G.Values[Half].Producer);
  const Node &H = G.Nodes[HI];
  if (!isOp(H, "Mul", 2) || !withScalar(G, H, Other, S) || Other != X || !near(S, 0.5f))
    return -1;
  Chain.push_back(HI);
  return M1I;
}

/// The producer of V when V is read only by node Reader, else -1.
int soleProducer(const Graph &G, int V, size_t Reader) {
  if (V < 0 || G.Values[V].Producer < 0 || soleConsumer(G, V) != static_cast<int>(Reader))
    return -1;
  return G.Values[V].Producer;
}

/// The tanh form's inner part, matched backwards from the Tanh node TI: Tanh(c1 * (X + c2 * X^3))
/// with c1 = sqrt(2 / pi), c2 = 0.044715 and X^3 as Mul(X, Mul(X, X)) (either order) or Pow(X, 3).
/// Appends its nodes to Chain and returns X, or -1.
int matchTanhInner(const Graph &G, size_t TI, std::vector<size_t> &Chain) {
  const int M4 = soleProducer(G, G.Nodes[TI].Inputs[0], TI);
  int Inner = -1, Other = -1, X = -1;
  float S = 0;
  if (M4 < 0 || !isOp(G.Nodes[static_cast<size_t>(M4)], "Mul", 2) ||
      !withScalar(G, G.Nodes[static_cast<size_t>(M4)], Inner, S) || !near(S, 0.7978845608f))
    return -1;
  const int A1 = soleProducer(G, Inner, static_cast<size_t>(M4));
  if (A1 < 0 || !isOp(G.Nodes[static_cast<size_t>(A1)], "Add", 2))
    return -1;
  const Node &Add = G.Nodes[static_cast<size_t>(A1)];
  // One side is X, the other c2 * X^3 (read only here).
  for (int Side = 0; Side < 2 && X < 0; ++Side) {
    const int M3 = soleProducer(G, Add.Inputs[static_cast<size_t>(Side)], static_cast<size_t>(A1));
    if (M3 < 0 || !isOp(G.Nodes[static_cast<size_t>(M3)], "Mul", 2) ||
        !withScalar(G, G.Nodes[static_cast<size_t>(M3)], Other, S) || !near(S, 0.044715f))
      continue;
    const int Cand = Add.Inputs[static_cast<size_t>(1 - Side)];
    const int P = soleProducer(G, Other, static_cast<size_t>(M3));
    if (P < 0)
      continue;
    const Node &Cube = G.Nodes[static_cast<size_t>(P)];
    std::vector<size_t> Nodes = {static_cast<size_t>(M4), static_cast<size_t>(A1), static_cast<size_t>(M3),
                                 static_cast<size_t>(P)};
    float E = 0;
    if (isOp(Cube, "Pow", 2) && Cube.Inputs[0] == Cand && scalarConst(G, Cube.Inputs[1], E) && E == 3.0f) {
      // X^3 directly
    } else if (isOp(Cube, "Mul", 2)) {
      // X * (X * X): one side X, the other a Mul(X, X) read only by the cube.
      const int SqSide = Cube.Inputs[0] == Cand ? 1 : Cube.Inputs[1] == Cand ? 0 : -1;
      if (SqSide < 0)
        continue;
      const int Sq = soleProducer(G, Cube.Inputs[static_cast<size_t>(SqSide)], static_cast<size_t>(P));
      if (Sq < 0 || !isOp(G.Nodes[static_cast<size_t>(Sq)], "Mul", 2) ||
          G.Nodes[static_cast<size_t>(Sq)].Inputs[0] != Cand || G.Nodes[static_cast<size_t>(Sq)].Inputs[1] != Cand)
        continue;
      Nodes.push_back(static_cast<size_t>(Sq));
    } else {
      continue;
    }
    X = Cand;
    Chain.insert(Chain.end(), Nodes.begin(), Nodes.end());
  }
  return X;
}

} // namespace

size_t fuseGelu(Graph &G) {
  std::vector<char> Remove(G.Nodes.size(), 0);
  size_t Fused = 0;
  for (size_t I = 0; I < G.Nodes.size(); ++I) {
    // Start at the Erf (its input is X / sqrt 2) or the Tanh (its input c1 * (X + c2 X^3)).
    const Node &E = G.Nodes[I];
    const bool Tanh = E.OpType == "Tanh";
    if ((E.OpType != "Erf" && !Tanh) || !E.Domain.empty() || E.Inputs.size() != 1 || E.Outputs.size() != 1 ||
        E.Outputs[0] < 0 || E.Inputs[0] < 0 || Remove[I])
      continue;
    std::vector<size_t> Chain = {I};
    int X = -1;
    float S = 0;
    if (Tanh) {
      X = matchTanhInner(G, I, Chain);
    } else {
      const int DI = soleProducer(G, E.Inputs[0], I);
      if (DI < 0)
        continue;
      const Node &D = G.Nodes[static_cast<size_t>(DI)];
      if (isOp(D, "Div", 2) && scalarConst(G, D.Inputs[1], S) && near(S, 1.41421356f))
        X = D.Inputs[0];
      else if (!(isOp(D, "Mul", 2) && withScalar(G, D, X, S) && near(S, 0.70710678f)))
        X = -1;
      Chain.push_back(static_cast<size_t>(DI));
    }
    if (X < 0 || G.Values[X].Type != ElementType::F32)
      continue;
    // Erf / Tanh -> Add(., 1) -> the tail.
    const int AI = soleConsumer(G, E.Outputs[0]);
    if (AI < 0)
      continue;
    const Node &A = G.Nodes[static_cast<size_t>(AI)];
    int Other;
    if (!isOp(A, "Add", 2) || !withScalar(G, A, Other, S) || Other != E.Outputs[0] || !near(S, 1.0f))
      continue;
    Chain.push_back(static_cast<size_t>(AI));
    const int Last = matchGeluTail(G, X, static_cast<size_t>(AI), Chain);
    if (Last < 0)
      continue;
    bool Free = true;
    for (size_t C : Chain)
      Free &= !Remove[C];
    if (!Free || G.Values[G.Nodes[static_cast<size_t>(Last)].Outputs[0]].Type != ElementType::F32)
      continue;
    // The Erf / Tanh node becomes the Gelu (reading X, writing the chain's output); the rest go.
    Node &Gelu = G.Nodes[I];
    const int Out = G.Nodes[static_cast<size_t>(Last)].Outputs[0];
    Gelu.OpType = "Gelu";
    Gelu.OpsetVersion = 20;
    Gelu.Inputs = {X};
    Gelu.Outputs = {Out};
    Gelu.Attrs.clear();
    if (Tanh)
      Gelu.Attrs["approximate"] = attrString("tanh");
    for (size_t C : Chain)
      if (C != I)
        Remove[C] = 1;
    ++Fused;
  }
  eraseMarkedNodes(G, Remove);
  return Fused;
}

} // namespace detail
} // namespace runtime
} // namespace optimium
