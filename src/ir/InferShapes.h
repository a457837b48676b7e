// Shape and type propagation over a graph, symbolic (at load) or concrete (per input signature).
#pragma once

#include <vector>

#include "ir/OpSchema.h"

namespace optimium {
namespace runtime {
namespace detail {

/// Infos[v] for every value: inputs and constants must be filled by the caller (or come from
/// the graph when Infos is built with initialValueInfos). Runs every node's schema in order.
/// With CheckDeclared, an inferred shape incompatible with the model's declared shape is a
/// ShapeError naming node, tensor and both shapes.
Status propagateShapes(const Graph &G, std::vector<ValueInfo> &Infos, bool CheckDeclared);

/// ValueInfos of inputs (declared shapes) and constants; everything else not present.
std::vector<ValueInfo> initialValueInfos(const Graph &G);

/// Load-time pass: infers every value's type and shape (symbolic where inputs are) and stores
/// them in the graph.
Status inferGraphShapes(Graph &G);

} // namespace detail
} // namespace runtime
} // namespace optimium
