// Fusion of an activation into the Conv that feeds it: Conv -> Relu / Clip (constant bounds)
// becomes one Conv whose kernels clamp the output while it is still in cache.
#pragma once

#include <cstddef>

#include "ir/FusedOps.h"
#include "ir/Graph.h"

namespace optimium {
namespace runtime {
namespace detail {

/// Folds every Relu, and every Clip whose bounds are attributes or constant scalars, that is the
/// only consumer of a float32 Conv's output (which is not a graph output) into that Conv. The
/// activation node disappears and the Conv writes its output value. Returns the number fused.
/// Callers skip it when every intermediate must stay readable (EnableMemoryOptimization off,
/// IntermediateSavePath set).
size_t fuseConvActivation(Graph &G);

} // namespace detail
} // namespace runtime
} // namespace optimium
