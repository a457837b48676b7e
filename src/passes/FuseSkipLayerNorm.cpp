// Add (+ bias Add) -> LayerNormalization -> SkipLayerNormalization (see FuseSkipLayerNorm.h).
#include "passes/FuseSkipLayerNorm.h"
#include "passes/EraseNodes.h"

#include <vector>

namespace optimium {
namespace runtime {
namespace detail {

namespace {

bool f32Tensor(const Value &V) { return V.Type == ElementType::F32 && V.Kind == ValueKind::Tensor && V.ShapeKnown; }

/// V is a float32 1-D tensor of Hidden elements (Const: and a constant).
bool vectorOf(const Graph &G, int V, const Expr &Hidden, bool Const) {
  if (V < 0)
    return false;
  const Value &Val = G.Values[V];
  return f32Tensor(Val) && Val.Shape.getRank() == 1 && Val.Shape[0] == Hidden && (!Const || Val.Const);
}

/// The Add producing V when V is read only by Reader (and is not a graph output); else -1.
int addFeeding(const Graph &G, int V, int Reader, const std::vector<char> &Remove) {
  if (V < 0)
    return -1;
  const Value &Val = G.Values[V];
  if (Val.IsGraphOutput || Val.Producer < 0 || Val.Consumers.size() != 1 || Val.Consumers[0] != Reader ||
      Remove[static_cast<size_t>(Val.Producer)])
    return -1;
  const Node &A = G.Nodes[static_cast<size_t>(Val.Producer)];
  if (A.OpType != "Add" || !A.Domain.empty() || A.Inputs.size() != 2 || A.Outputs.size() != 1 || A.Inputs[0] < 0 ||
      A.Inputs[1] < 0)
    return -1;
  return Val.Producer;
}

/// Both inputs of Add node A have shape S (float32).
bool fullOperands(const Graph &G, const Node &A, const TensorShape &S) {
  for (int In : A.Inputs)
    if (!f32Tensor(G.Values[In]) || G.Values[In].Shape != S)
      return false;
  return true;
}

} // namespace

size_t fuseSkipLayerNorm(Graph &G) {
  std::vector<char> Remove(G.Nodes.size(), 0);
  size_t Fused = 0;
  for (size_t I = 0; I < G.Nodes.size(); ++I) {
    Node &Ln = G.Nodes[I];
    if (Ln.OpType != "LayerNormalization" || !Ln.Domain.empty() || Ln.Inputs.size() < 2 || Ln.Inputs.size() > 3 ||
        Ln.Outputs.empty() || Ln.Outputs[0] < 0 || Ln.Inputs[0] < 0)
      continue;
    bool ExtraOutputs = false;
    for (size_t O = 1; O < Ln.Outputs.size(); ++O)
      ExtraOutputs |= Ln.Outputs[O] >= 0;
    if (ExtraOutputs)
      continue;
    const Value &X = G.Values[Ln.Inputs[0]];
    if (!f32Tensor(X) || X.Shape.getRank() < 2 || !f32Tensor(G.Values[Ln.Outputs[0]]))
      continue;
    const int64_t Rank = static_cast<int64_t>(X.Shape.getRank());
    auto Axis = Ln.getInt("axis", -1);
    auto Stash = Ln.getInt("stash_type", 1);
    auto Eps = Ln.getFloat("epsilon", 1e-5f);
    if (!Axis.isOk() || !Stash.isOk() || !Eps.isOk() || (*Axis != -1 && *Axis != Rank - 1) || *Stash != 1)
      continue;
    const Expr Hidden = X.Shape[static_cast<size_t>(Rank - 1)];
    const int Beta = Ln.Inputs.size() > 2 ? Ln.Inputs[2] : -1;
    if (!vectorOf(G, Ln.Inputs[1], Hidden, false) || (Beta >= 0 && !vectorOf(G, Beta, Hidden, false)))
      continue;
    const int Outer = addFeeding(G, Ln.Inputs[0], static_cast<int>(I), Remove);
    if (Outer < 0)
      continue;
    const Node &O = G.Nodes[static_cast<size_t>(Outer)];
    int In = -1, Skip = -1, Bias = -1, Inner = -1;
    if (fullOperands(G, O, X.Shape)) {
      In = O.Inputs[0], Skip = O.Inputs[1];
    } else {
      // (x + skip) + bias, the bias a 1-D constant on either side.
      for (int Side = 0; Side < 2 && Inner < 0; ++Side) {
        const int B = O.Inputs[static_cast<size_t>(Side)], Sum = O.Inputs[static_cast<size_t>(1 - Side)];
        if (!vectorOf(G, B, Hidden, true))
          continue;
        const int A = addFeeding(G, Sum, Outer, Remove);
        if (A < 0 || !fullOperands(G, G.Nodes[static_cast<size_t>(A)], X.Shape))
          continue;
        Inner = A, Bias = B;
        In = G.Nodes[static_cast<size_t>(A)].Inputs[0], Skip = G.Nodes[static_cast<size_t>(A)].Inputs[1];
      }
      if (Inner < 0)
        continue;
    }
    const int Gamma = Ln.Inputs[1];
    Ln.OpType = "SkipLayerNormalization";
    Ln.Domain = "com.microsoft";
    Ln.OpsetVersion = 1;
    Ln.Inputs = {In, Skip, Gamma};
    if (Beta >= 0 || Bias >= 0)
      Ln.Inputs.push_back(Beta); // -1: omitted, when only the bias follows
    if (Bias >= 0)
      Ln.Inputs.push_back(Bias);
    Ln.Outputs.resize(1);
    Ln.Attrs.clear();
    Ln.Attrs["epsilon"] = attrFloat(*Eps);
    Remove[static_cast<size_t>(Outer)] = 1;
    if (Inner >= 0)
      Remove[static_cast<size_t>(Inner)] = 1;
    ++Fused;
  }
  eraseMarkedNodes(G, Remove);
  return Fused;
}

} // namespace detail
} // namespace runtime
} // namespace optimium
