// Erf-GELU chain -> Gelu (see FuseGelu.h).
#include "passes/FuseGelu.h"
#include "passes/EraseNodes.h"

#include <cmath>
#include <vector>

namespace optimium {
namespace runtime {
namespace detail {

namespace {

/// The value of a constant float32 scalar (any rank, one element).
bool scalarConst(const Graph &G, int V, float &Out) {
  if (V < 0 || !G.Values[V].Const)
    return false;
  const ConstData &C = *G.Values[V].Const;
  if (C.Type != ElementType::F32 || C.elementCount() != 1 || !C.Data)
    return false;
  Out = C.as<float>()[0];
  return true;
}

bool near(float A, float B) { return std::fabs(A - B) <= 1e-4f * std::fabs(B); }

/// N is a default-domain op of this type with two inputs and one output.
bool binary(const Node &N, const char *Op) {
  return N.OpType == Op && N.Domain.empty() && N.Inputs.size() == 2 && N.Outputs.size() == 1 && N.Outputs[0] >= 0;
}

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

/// The only consumer of value V (an intermediate: not a graph output), or -1.
int soleConsumer(const Graph &G, int V) {
  const Value &Val = G.Values[V];
  if (Val.IsGraphOutput || Val.Consumers.size() != 1)
    return -1;
  return Val.Consumers[0];
}

} // namespace

size_t fuseGelu(Graph &G) {
  std::vector<char> Remove(G.Nodes.size(), 0);
  size_t Fused = 0;
  for (size_t I = 0; I < G.Nodes.size(); ++I) {
    // Start at the Erf: its input is X / sqrt 2.
    const Node &E = G.Nodes[I];
    if (E.OpType != "Erf" || !E.Domain.empty() || E.Inputs.size() != 1 || E.Outputs.size() != 1 || E.Outputs[0] < 0 ||
        Remove[I])
      continue;
    const int DivOut = E.Inputs[0];
    if (DivOut < 0 || G.Values[DivOut].Producer < 0 || soleConsumer(G, DivOut) != static_cast<int>(I))
      continue;
    const size_t DI = static_cast<size_t>(G.Values[DivOut].Producer);
    const Node &D = G.Nodes[DI];
    int X = -1;
    float S = 0;
    if (binary(D, "Div") && scalarConst(G, D.Inputs[1], S) && near(S, 1.41421356f))
      X = D.Inputs[0];
    else if (binary(D, "Mul") && withScalar(G, D, X, S) && near(S, 0.70710678f)) {
    } else
      continue;
    if (X < 0 || G.Values[X].Type != ElementType::F32)
      continue;
    // Erf -> Add(., 1)
    const int AI = soleConsumer(G, E.Outputs[0]);
    if (AI < 0)
      continue;
    const Node &A = G.Nodes[static_cast<size_t>(AI)];
    int Other;
    if (!binary(A, "Add") || !withScalar(G, A, Other, S) || Other != E.Outputs[0] || !near(S, 1.0f))
      continue;
    // Add -> Mul(X, .) and Mul(., 0.5), in either order: X * (1 + erf) * 0.5
    const int M1I = soleConsumer(G, A.Outputs[0]);
    if (M1I < 0)
      continue;
    const Node &M1 = G.Nodes[static_cast<size_t>(M1I)];
    if (!binary(M1, "Mul"))
      continue;
    int Last = -1; // the node whose output becomes Gelu's
    std::vector<size_t> Chain = {DI, I, static_cast<size_t>(AI), static_cast<size_t>(M1I)};
    if ((M1.Inputs[0] == X && M1.Inputs[1] == A.Outputs[0]) || (M1.Inputs[1] == X && M1.Inputs[0] == A.Outputs[0])) {
      const int M2I = soleConsumer(G, M1.Outputs[0]);
      if (M2I < 0)
        continue;
      const Node &M2 = G.Nodes[static_cast<size_t>(M2I)];
      if (!binary(M2, "Mul") || !withScalar(G, M2, Other, S) || Other != M1.Outputs[0] || !near(S, 0.5f))
        continue;
      Chain.push_back(static_cast<size_t>(M2I));
      Last = M2I;
    } else {
      // (X * 0.5) * (1 + erf): M1 multiplies the Add's output by a Mul(X, 0.5) computed beside it.
      const int Half = M1.Inputs[0] == A.Outputs[0] ? M1.Inputs[1] : M1.Inputs[0];
      if (Half < 0 || G.Values[Half].Producer < 0 || soleConsumer(G, Half) != M1I)
        continue;
      const size_t HI = static_cast<size_t>(G.Values[Half].Producer);
      const Node &H = G.Nodes[HI];
      if (!binary(H, "Mul") || !withScalar(G, H, Other, S) || Other != X || !near(S, 0.5f))
        continue;
      Chain.push_back(HI);
      Last = M1I;
    }
    bool Free = true;
    for (size_t C : Chain)
      Free &= !Remove[C];
    if (!Free || G.Values[G.Nodes[static_cast<size_t>(Last)].Outputs[0]].Type != ElementType::F32)
      continue;
    // The Erf node becomes the Gelu (reading X, writing the chain's output); the rest go.
    Node &Gelu = G.Nodes[I];
    const int Out = G.Nodes[static_cast<size_t>(Last)].Outputs[0];
    Gelu.OpType = "Gelu";
    Gelu.OpsetVersion = 20;
    Gelu.Inputs = {X};
    Gelu.Outputs = {Out};
    Gelu.Attrs.clear();
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
