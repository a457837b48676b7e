// Fusion of the expand half of an inverted-residual block (MobileNetV2/V3, EfficientNet, PaddleOCR
// backbones): a 1x1 Conv (bias, Relu/Clip already folded in) whose only reader is a depthwise Conv
// becomes one com.optimium FusedPointwiseDepthwise node, so the expanded tensor between them is
// computed a block of channels at a time in cache instead of going through memory.
#pragma once

#include <cstddef>

#include "ir/FusedOps.h"
#include "ir/Graph.h"

namespace optimium {
namespace runtime {
namespace detail {

/// Rewrites every float32 pair Conv 1x1 (group 1, stride 1, no padding, constant weight, constant
/// or no bias) -> depthwise Conv (group = channels = output channels, constant weight [C, 1, KH,
/// KW], constant or no bias), where the 1x1 Conv's output has no other reader and is not a graph
/// output, into one node with inputs (X, W1, W2, B1, B2) (omitted biases stay omitted), the
/// depthwise Conv's attributes, and the 1x1 Conv's clamp as kExpandActMin/Max. Run it after
/// fuseConvActivation. Returns the number of pairs fused.
size_t fusePointwiseDepthwise(Graph &G);

/// The reverse pair, depthwise Conv -> 1x1 Conv (MobileNetV2's first block, MobileNetV1's
/// separable convolutions): com.optimium FusedDepthwisePointwise, computed in strips of rows so the
/// depthwise output stays in cache. Only stride-1, dilation-1 depthwise convolutions whose output
/// plane is their input plane ("same"), both weights constant, the depthwise output read by the 1x1
/// Conv alone and no graph output. Inputs (X, Wd, Wp, Bd, Bp); the depthwise Conv's window
/// attributes, its clamp as kDepthwiseActMin/Max and the 1x1 Conv's as kFusedActMin/Max. Run it
/// after fusePointwiseDepthwise (a depthwise Conv fused there stays there). Returns the number fused.
size_t fuseDepthwisePointwise(Graph &G);

} // namespace detail
} // namespace runtime
} // namespace optimium
