// Removal of nodes folded to constants by shape inference.
#include "passes/RemoveFoldedNodes.h"

namespace optimium {
namespace runtime {
namespace detail {

size_t removeFoldedNodes(Graph &G) {
  std::vector<Node> Kept;
  Kept.reserve(G.Nodes.size());
  for (Node &N : G.Nodes) {
    bool AllConst = !N.Outputs.empty();
    for (int O : N.Outputs)
      AllConst &= O < 0 || static_cast<bool>(G.Values[O].Const);
    if (!AllConst)
      Kept.push_back(std::move(N));
  }
  const size_t Removed = G.Nodes.size() - Kept.size();
  G.Nodes = std::move(Kept);
  if (Removed)
    G.rebuildUseLists();
  return Removed;
}

} // namespace detail
} // namespace runtime
} // namespace optimium
