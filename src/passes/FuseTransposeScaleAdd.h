// The end of a ConvNeXt block as one op: Transpose (channels last -> channels first, perm [0, r-1,
// 1, ..., r-2]) -> Mul (a per-channel constant: the layer scale [C, 1, 1]) -> Add (a channels-first
// tensor of the same shape: the residual) becomes com.optimium TransposeScaleAdd (ir/FusedOps.h):
// one pass over the tensor instead of three.
#pragma once

#include <cstddef>

#include "ir/Graph.h"

namespace optimium {
namespace runtime {
namespace detail {

/// Rewrites every such float32 chain whose Transpose and Mul outputs have no other readers (and are
/// not graph outputs). Returns the number rewritten. Callers skip it when every intermediate must
/// stay readable.
size_t fuseTransposeScaleAdd(Graph &G);

} // namespace detail
} // namespace runtime
} // namespace optimium
