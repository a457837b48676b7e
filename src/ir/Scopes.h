// Outer-scope names of subgraphs (control flow): what a subgraph reads from the graphs around it.
#pragma once

#include <string>
#include <vector>

#include "ir/Graph.h"

namespace optimium {
namespace runtime {
namespace detail {

/// Names a subgraph reads but does not define (not a node output, graph input or initializer):
/// values of enclosing scopes. Sorted. Reads of nested subgraphs are included, since the importer
/// makes them inputs of the nested nodes.
std::vector<std::string> outerScopeNames(const Graph &G);

/// The outer-scope names all graph attributes of N read, sorted and deduplicated. The importer
/// appends them, in this order, as trailing inputs of N, so the enclosing graph orders, plans and
/// schedules them like any other input.
std::vector<std::string> capturedNames(const Node &N);

} // namespace detail
} // namespace runtime
} // namespace optimium
