// A SiLU written as Sigmoid(x) and Mul(x, Sigmoid(x)) that no Conv took (FuseConvActivation runs
// first) becomes one Swish node (ONNX opset 24, alpha 1): one pass over x instead of three.
#pragma once

#include <cstddef>

#include "ir/Graph.h"

namespace optimium {
namespace runtime {
namespace detail {

/// Rewrites every float32 pair s = Sigmoid(x), y = Mul(x, s) or Mul(s, x), s read by that Mul only
/// and not a graph output, into y = Swish(x) with alpha 1. Returns the number fused. Skipped when
/// every intermediate must stay readable.
size_t fuseSilu(Graph &G);

} // namespace detail
} // namespace runtime
} // namespace optimium
