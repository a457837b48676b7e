// Default-domain opsets 1..6: the nodes whose meaning differs from what the op implementations
// follow are either rewritten to their later equivalent (a default that became required) or
// rejected with a ModelError naming the node, op and opset.
#pragma once

#include "ir/Graph.h"

namespace optimium {
namespace runtime {
namespace detail {

/// The first default-domain opset whose semantics every implemented op follows as is.
constexpr int kFirstUnchangedOpset = 7;

/// Checks (and where trivial upgrades) a default-domain node of an opset older than 7.
Status upgradeLegacyNode(Node &N);

} // namespace detail
} // namespace runtime
} // namespace optimium
