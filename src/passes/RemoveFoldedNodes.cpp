// Removal of nodes folded to constants by shape inference, and of Identity nodes of constants.
#include "passes/RemoveFoldedNodes.h"
#include "passes/EraseNodes.h"

namespace optimium {
namespace runtime {
namespace detail {

size_t removeFoldedNodes(Graph &G) {
  // Identity of a constant is that constant (shared, not copied): exporters route shared weights
  // through Identity (PyTorch's for equal initializers, such as ConvNeXt's zero biases), and as
  // constants the fusions that need constant operands (a MatMul's bias, then its Gelu) take them.
  // Here, not in Identity's schema: at run time inference sees small integer tensors as known
  // values borrowed from their buffers, and an output folded to a borrowed view would outlive it.
  for (const Node &N : G.Nodes) {
    if (N.OpType != "Identity" || !N.Domain.empty() || N.Inputs.size() != 1 || N.Outputs.size() != 1 ||
        N.Inputs[0] < 0 || N.Outputs[0] < 0)
      continue;
    const Value &In = G.Values[N.Inputs[0]];
    Value &Out = G.Values[N.Outputs[0]];
    if (In.Const && In.Kind == ValueKind::Tensor && Out.Kind == ValueKind::Tensor && !Out.IsGraphOutput && !Out.Const)
      Out.Const = In.Const;
  }
  std::vector<char> Remove(G.Nodes.size(), 0);
  for (size_t I = 0; I < G.Nodes.size(); ++I) {
    const Node &N = G.Nodes[I];
    bool AllConst = !N.Outputs.empty();
    for (int O : N.Outputs)
      AllConst &= O < 0 || static_cast<bool>(G.Values[O].Const);
    Remove[I] = AllConst;
  }
  return eraseMarkedNodes(G, Remove);
}

} // namespace detail
} // namespace runtime
} // namespace optimium
