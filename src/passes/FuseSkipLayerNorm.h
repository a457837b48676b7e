// Fusion of a transformer block's residual Add into the LayerNormalization that reads it:
//   LayerNormalization(Add(x, skip), gamma, beta)               (post-norm residual)
//   LayerNormalization(Add(Add(x, skip), bias), gamma, beta)     (BERT's embeddings + a bias row)
// becomes one com.microsoft SkipLayerNormalization (ONNX Runtime's contrib op): the sum is formed
// in the row pass that normalizes it, instead of a separate Add streaming the tensor once more.
#pragma once

#include <cstddef>

#include "ir/Graph.h"

namespace optimium {
namespace runtime {
namespace detail {

/// Rewrites every such float32 pattern where the LayerNormalization normalizes the last axis only
/// (stash_type 1, no Mean / InvStdDev outputs), gamma and beta are 1-D over that axis, x and skip
/// have the LayerNormalization's input shape exactly (no broadcasting), the bias is a 1-D constant
/// over the last axis, and the Adds' outputs are read by nothing else (not graph outputs). The
/// sum keeps the Adds' order ((x + skip) + bias), so it is bit-identical. Returns the number fused.
/// Callers skip it when every intermediate must stay readable.
size_t fuseSkipLayerNorm(Graph &G);

} // namespace detail
} // namespace runtime
} // namespace optimium
