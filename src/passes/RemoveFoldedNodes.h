// Drops nodes whose every output became a constant during shape inference (Constant,
// Shape of a static tensor, ...): they need not run, and running them would write into constants.
#pragma once

#include "ir/Graph.h"

namespace optimium {
namespace runtime {
namespace detail {

/// Returns the number of nodes removed.
size_t removeFoldedNodes(Graph &G);

} // namespace detail
} // namespace runtime
} // namespace optimium
