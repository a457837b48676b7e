// Sigmoid + Mul -> Swish (see FuseSilu.h).
#include "passes/FuseSilu.h"
#include "passes/EraseNodes.h"
#include "passes/PassMatch.h"

#include <vector>

namespace optimium {
namespace runtime {
namespace detail {

size_t fuseSilu(Graph &G) {
  std::vector<char> Remove(G.Nodes.size(), 0);
  size_t Fused = 0;
  for (size_t I = 0; I < G.Nodes.size(); ++I) {
    const Node &Sig = G.Nodes[I];
    if (Remove[I] || !isOp(Sig, "Sigmoid", 1))
      continue;
    const int X = Sig.Inputs[0], S = Sig.Outputs[0];
    if (G.Values[static_cast<size_t>(X)].Type != ElementType::F32 || G.Values[static_cast<size_t>(S)].Type != ElementType::F32)
      continue;
    const int MI = soleConsumer(G, S);
    if (MI < 0 || Remove[static_cast<size_t>(MI)])
      continue;
    Node &Mul = G.Nodes[static_cast<size_t>(MI)];
    if (!isOp(Mul, "Mul", 2) || !((Mul.Inputs[0] == X && Mul.Inputs[1] == S) || (Mul.Inputs[0] == S && Mul.Inputs[1] == X)))
      continue;
    // The Mul (after both x and the Sigmoid in node order) becomes the Swish.
    Mul.OpType = "Swish";
    Mul.OpsetVersion = 24;
    Mul.Inputs = {X};
    Mul.Attrs.clear();
    Mul.Attrs["alpha"] = attrFloat(1.0f);
    Mul.Name = Sig.Name + "+" + Mul.Name;
    Remove[I] = 1;
    ++Fused;
  }
  eraseMarkedNodes(G, Remove);
  return Fused;
}

} // namespace detail
} // namespace runtime
} // namespace optimium
