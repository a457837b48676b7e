// Fusion of the erf-form GELU that PyTorch exports op by op,
//   Y = Mul(Mul(X, Add(Erf(Div(X, sqrt 2)), 1)), 0.5)
// (commutative operands in either order, Div by sqrt 2 or Mul by 1 / sqrt 2), into one Gelu
// node: one pass over the activation instead of five; and its tanh approximation as GPT-2
// ("gelu_new") and torch's approximate="tanh" export it,
//   Y = Mul(Mul(X, Add(Tanh(Mul(Add(X, Mul(X^3, 0.044715)), sqrt(2 / pi))), 1)), 0.5)
// (X^3 as Mul(X, Mul(X, X)) or Pow(X, 3)) into Gelu with approximate "tanh": one pass instead of nine.
#pragma once

#include <cstddef>

#include "ir/Graph.h"

namespace optimium {
namespace runtime {
namespace detail {

/// Replaces every such chain whose intermediates have no other readers (and are not graph
/// outputs) by a Gelu node (approximate "none" or "tanh") producing the last Mul's output. float32 only.
/// Returns the number of chains fused. Callers skip it when every intermediate must stay readable.
size_t fuseGelu(Graph &G);

} // namespace detail
} // namespace runtime
} // namespace optimium
