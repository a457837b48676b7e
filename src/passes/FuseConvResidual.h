// Fusion of a residual addition into the Conv that feeds it: Conv -> Add(other tensor of the same
// shape) becomes one Conv with the other tensor as an extra input, added after the bias and before
// a fused clamp (so a following Relu still folds in through fuseConvActivation).
#pragma once

#include <cstddef>

#include "ir/FusedOps.h"
#include "ir/Graph.h"

namespace optimium {
namespace runtime {
namespace detail {

/// Folds every float32 Add that is the only consumer of a Conv's output (not a graph output, no
/// fused clamp yet) and adds to it another tensor of exactly the Conv output's (known, static)
/// shape into that Conv; the Conv moves to the Add's place in the node order (where the other
/// tensor is computed) and writes the Add's output. Run it before fuseConvActivation. Returns the
/// number fused. Callers skip it when every intermediate must stay readable.
size_t fuseConvResidual(Graph &G);

} // namespace detail
} // namespace runtime
} // namespace optimium
