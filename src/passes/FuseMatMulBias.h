// Fusion of a bias Add into the MatMul that feeds it: MatMul(A, W) -> Add(., b) with W a constant
// matrix and b a constant vector over the output's last dim (a Linear layer as exporters write
// it) becomes one MatMul whose GEMM adds b while writing its result.
#pragma once

#include <cstddef>

#include "ir/FusedOps.h"
#include "ir/Graph.h"

namespace optimium {
namespace runtime {
namespace detail {

/// Folds every Add of a constant float32 bias [N] (or [1, ..., 1, N]) that is the only consumer
/// of a float32 MatMul's output (not a graph output) whose B is a constant 2-D matrix with N
/// columns (float32, or bfloat16 weights: passes/Bf16Weights) into that MatMul. Returns the number fused. Callers skip it when every intermediate
/// must stay readable.
size_t fuseMatMulBias(Graph &G);

/// Merges float32 MatMuls that read the same A with constant 2-D weights of the same depth (and
/// all or none with a fused bias, none with another internal attribute): attention's Q, K and V
/// projections become one GEMM over the concatenated weights, one pass over A, one fan-out over
/// the pool, writing each projection to its own output (kSplitOutputs). The merged node takes
/// the first member's place in the order. Run after fuseMatMulBias. Returns the number of MatMuls
/// merged away.
size_t fuseSiblingMatMuls(Graph &G);

/// Folds every Gelu (approximate "none": passes/FuseGelu's output) that is the only consumer of a
/// float32 MatMul's output (not a graph output) whose B is a constant 2-D matrix into that MatMul
/// (kFusedGelu): the GEMM applies it to each tile while the tile is in registers. Run after
/// fuseMatMulBias and fuseGelu. Returns the number fused.
size_t fuseMatMulGelu(Graph &G);

} // namespace detail
} // namespace runtime
} // namespace optimium
