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

/// The info of a value at run time, for re-inferring a node with the actual shapes (the executor
/// and the control-flow subgraph interpreter): a sequence/optional stays opaque (Kind, Type and the
/// load-time Declared shape); a tensor gets its Dims and, as known value, Static when the value is
/// a constant, else with BorrowData a ConstData that views Data (valid while Data is), else none.
ValueInfo runtimeValueInfo(ValueKind Kind, ElementType Type, const std::vector<int64_t> &Dims, const void *Data,
                           const std::shared_ptr<ConstData> &Static, const TensorShape &Declared, bool BorrowData);

/// Load-time pass: infers every value's type and shape (symbolic where inputs are) and stores
/// them in the graph.
Status inferGraphShapes(Graph &G);

} // namespace detail
} // namespace runtime
} // namespace optimium
