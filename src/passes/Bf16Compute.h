// The bfloat16 compute mode (ComputePrecision::BFloat16): marks the float32 matrix products whose
// weights are constant with kComputeBf16, so their kernels convert the weights to bfloat16 once
// at load and multiply bf16 operands into float32 accumulators. It rewrites nothing else: the
// graph, its values and every other op stay float32.
#pragma once

#include <cstddef>

#include "ir/FusedOps.h"
#include "ir/Graph.h"

namespace optimium {
namespace runtime {
namespace detail {

/// Sets kComputeBf16 on every default-domain MatMul and Gemm with a float32 A and a constant 2-D
/// float32 B, and every float32 Conv with constant weights (its kernel takes the mark only where
/// it runs as a GEMM: group 1, not depthwise). Runs after the fusions (their patterns match nodes
/// without internal attributes). Returns the number of nodes marked.
size_t useBf16Compute(Graph &G);

} // namespace detail
} // namespace runtime
} // namespace optimium
