// Fusion of an activation into the Conv that feeds it: Conv -> Relu / Clip (constant bounds) /
// Sigmoid / HardSigmoid / HardSwish / Swish / SiLU (Mul(x, Sigmoid(x))) becomes one Conv whose
// kernels apply the activation to the output while it is still in registers or cache.
#pragma once

#include <cstddef>

#include "ir/FusedOps.h"
#include "ir/Graph.h"

namespace optimium {
namespace runtime {
namespace detail {

/// Folds every Relu, and every Clip whose bounds are attributes or constant scalars, that is the
/// only consumer of a float32 Conv's output (which is not a graph output) into that Conv as
/// kFusedActMin/Max (also of a float16 Conv, with bounds float16 holds exactly); a Sigmoid, HardSigmoid, HardSwish or Swish likewise as kFusedActKind (with
/// kFusedActAlpha/Beta), and a SiLU written as Sigmoid(y) and Mul(y, Sigmoid(y)), the only two
/// readers of y (the Sigmoid's output read by the Mul only), as kFusedActKind "silu". The
/// activation nodes disappear and the Conv writes their output value. Returns the number fused.
/// Callers skip it when every intermediate must stay readable (EnableMemoryOptimization off,
/// IntermediateSavePath set).
size_t fuseConvActivation(Graph &G);

} // namespace detail
} // namespace runtime
} // namespace optimium
