// Fusion of a bias Add into the MatMul that feeds it: MatMul(A, W) -> Add(., b) with W a constant
// matrix and b a constant vector over the output's last dim (a Linear layer as exporters write
// it) becomes one MatMul whose GEMM adds b while writing its result.
#pragma once

#include <cstddef>

#include "ir/Graph.h"

namespace optimium {
namespace runtime {
namespace detail {

/// Internal MatMul attribute: 1 when input 2 is a fused bias of the output's last dim.
constexpr const char *kFusedBias = "optimium.fused_bias";

/// Folds every Add of a constant float32 bias [N] (or [1, ..., 1, N]) that is the only consumer
/// of a float32 MatMul's output (not a graph output) whose B is a constant 2-D matrix with N
/// columns into that MatMul. Returns the number fused. Callers skip it when every intermediate
/// must stay readable.
size_t fuseMatMulBias(Graph &G);

} // namespace detail
} // namespace runtime
} // namespace optimium
