// Binding input shapes to a model's declared input shapes: constants must match, symbols bind to
// one value across every input. Shared by InferRequest::infer() and Model::inferShape().
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "Optimium/Runtime/Shape.h"
#include "core/Status.h"
#include "ir/Graph.h"

namespace optimium {
namespace runtime {
namespace detail {

/// Symbols bound so far: name -> (value, index of the input that bound it).
using SymbolBindings = std::map<std::string, std::pair<int64_t, size_t>>;

/// Checks the shape given for graph input InputIndex against its declared shape and binds its
/// symbols. Dims of Given that are not constants (inferShape with symbolic inputs) bind nothing.
/// Errors are ShapeErrors naming the input, the dim and, for a symbol, the input that bound it.
Status bindInputShape(const Graph &G, size_t InputIndex, const TensorShape &Given, SymbolBindings &Symbols);

/// "2x3x4" ("scalar" for rank 0).
std::string dimsToString(const std::vector<int64_t> &Dims);
/// "[2,3,4]".
std::string dimsText(const std::vector<int64_t> &Dims);
/// Product of the dims (1 for rank 0).
size_t elementCountOf(const std::vector<int64_t> &Dims);

} // namespace detail
} // namespace runtime
} // namespace optimium
