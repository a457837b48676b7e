// Removal of nodes folded to constants by shape inference.
#include "passes/RemoveFoldedNodes.h"
#include "passes/EraseNodes.h"

namespace optimium {
namespace runtime {
namespace detail {

size_t removeFoldedNodes(Graph &G) {
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
