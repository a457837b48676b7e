// Shared tail of the graph rewrites: drop the nodes a pass marked and recompute use lists.
#pragma once

#include <cstddef>
#include <vector>

#include "ir/Graph.h"

namespace optimium {
namespace runtime {
namespace detail {

/// Removes every node I with Remove[I] set (keeping the others' order) and rebuilds the use lists
/// when anything went. Returns the number removed.
inline size_t eraseMarkedNodes(Graph &G, const std::vector<char> &Remove) {
  std::vector<Node> Kept;
  Kept.reserve(G.Nodes.size());
  for (size_t I = 0; I < G.Nodes.size(); ++I)
    if (I >= Remove.size() || !Remove[I])
      Kept.push_back(std::move(G.Nodes[I]));
  const size_t Removed = G.Nodes.size() - Kept.size();
  G.Nodes = std::move(Kept);
  if (Removed)
    G.rebuildUseLists();
  return Removed;
}

} // namespace detail
} // namespace runtime
} // namespace optimium
