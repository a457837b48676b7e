// Weights stored as bfloat16: a float32 MatMul or Gemm whose constant B is Cast(to=float) of a bfloat16
// initializer (how a model keeps its weights in bf16 while computing in float32) reads the bf16
// constant directly. Its kernel packs the bf16 bits (half the bytes of float32 panels) and
// multiplies with their exact float32 values, so the results are those of the Cast + MatMul; the
// float32 copy of the weights is never made and the per-run Cast disappears.
#pragma once

#include <cstddef>

#include "ir/FusedOps.h"
#include "ir/Graph.h"

namespace optimium {
namespace runtime {
namespace detail {

/// Rewires every default-domain MatMul (or Gemm) with float32 A whose B is Cast(to=FLOAT) of a
/// constant 2-D bfloat16 tensor to that constant (kBf16Weights); a Cast left without consumers is removed. Run
/// before fuseMatMulBias and fuseMatMulGelu (they take such MatMuls too). Returns the number of
/// MatMuls rewired.
size_t useBf16Weights(Graph &G);

/// B of a MatMul those passes may fold into: a constant 2-D float32 matrix, or (kBf16Weights) a
/// bfloat16 one.
bool constWeightMatrix(const Graph &G, const Node &MatMul);

} // namespace detail
} // namespace runtime
} // namespace optimium
