// Fusion of the expand half of an inverted-residual block (MobileNetV2/V3, EfficientNet, PaddleOCR
// backbones): a 1x1 Conv (bias, Relu/Clip already folded in) whose only reader is a depthwise Conv
// becomes one com.optimium FusedPointwiseDepthwise node, so the expanded tensor between them is
// computed a block of channels at a time in cache instead of going through memory.
#pragma once

#include <cstddef>
#include <cstdint>

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

/// The AVX2 tier's pairs that run faster unfused (the 1x1 Conv on a pixels-in-lanes or
/// channels-in-lanes kernel, the depthwise one on its own): a 1x1 Conv reading at least
/// kAvx2UnfusedMinInputs channels on a plane of at most kAvx2UnfusedMaxPlane pixels, or of at most
/// kAvx2UnfusedMaxPlaneStride1 before a stride-1 depthwise Conv. Measured on MobileNetV2 (AMD Zen 3,
/// 1 thread, per-op minima of the pair, fused -> unfused): 7x7 from 160 channels 945-960 -> 724-744
/// us for three blocks, 14x14 from 64 / 96 1574-1587 -> 1283-1298 for six, 14x14 -> 7x7 stride 2
/// 310 -> 291-294, 28x28 from 32 504-508 -> 443-446 for two; 28x28 -> 14x14 stride 2 169-171 ->
/// 181-184 and the 56x56 and 112x112 planes stay fused. Fewer input channels (MobileNetV3-Small's
/// 16 / 24, not measured unfused) keep the fusion: the expanded tensor the fusion keeps in cache is
/// then a larger share of the 1x1 Conv's traffic.
constexpr int64_t kAvx2UnfusedMinInputs = 32, kAvx2UnfusedMaxPlane = 196, kAvx2UnfusedMaxPlaneStride1 = 784;

/// fusePointwiseDepthwise except the pairs above (the pipeline's row for AVX2 + FMA CPUs without
/// AVX-512, whose fused kernel is the blocked one). Returns the number of pairs fused.
size_t fusePointwiseDepthwiseAvx2(Graph &G);

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
