// Fusion of a last-two-axes Transpose into the MatMul that reads it as B: MatMul(A, Transpose(K,
// perm [.., r-1, r-2])) -> MatMul(A, K) with B read transposed in place. Attention graphs write
// Q x K^T this way (GPT-style decoders transpose the whole key cache every step); the GEMM reads
// K's rows directly instead of a transposed copy.
#pragma once

#include <cstddef>

#include "ir/FusedOps.h"
#include "ir/Graph.h"

namespace optimium {
namespace runtime {
namespace detail {

/// Rewires every float32 MatMul whose B is the output of a Transpose swapping only the last two
/// axes (rank >= 2) to read the Transpose's input with kTransposeB set; a Transpose left without
/// readers (and not a graph output) is removed. Returns the number of MatMuls rewired. Callers skip
/// it when every intermediate must stay readable.
size_t fuseTransposeMatMul(Graph &G);

} // namespace detail
} // namespace runtime
} // namespace optimium
