// Squeeze-excitation as one node: x -> GlobalAveragePool -> 1x1 Conv (+bias, act1) -> 1x1 Conv
// (+bias, act2) -> Mul(x, s) becomes com.optimium SqueezeExcitation (EfficientNet's and
// MobileNetV3's SE blocks; the activations already folded into the Convs by FuseConvActivation).
#pragma once

#include <cstddef>

#include "ir/FusedOps.h"
#include "ir/Graph.h"

namespace optimium {
namespace runtime {
namespace detail {

/// Rewrites every float32 chain GlobalAveragePool(x) -> Conv(W1 [R, C, 1, 1], B1?) -> Conv(W2 [C,
/// R, 1, 1], B2?) (constant weights, biases of any origin) -> Mul(x, s) or Mul(s, x) (x 4-D; each intermediate read by the next node only and
/// not a graph output; the Convs group 1, unpadded, without a fused residual; any activation each
/// Conv carries goes to kSeReduceActKeys / kSeExpandActKeys) into one SqueezeExcitation node
/// writing the Mul's output. Returns the number fused. Run after FuseConvActivation; skipped when
/// every intermediate must stay readable.
size_t fuseSqueezeExcitation(Graph &G);

} // namespace detail
} // namespace runtime
} // namespace optimium
