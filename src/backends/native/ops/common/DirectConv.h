// Direct 2-D convolution for few input channels (a CNN's RGB stem: 3 -> 32, 3x3, stride 2), where
// im2col + GEMM spends more on building its K = 27 panels than on the multiply. Per output row and
// 16-pixel block the C * KH * KW input vectors are gathered once, then every output channel is
// their weighted sum (AVX-512: 16 channels' accumulators at a time; AVX2: 6 channels x 2 pixel
// vectors; weights broadcast from memory).
#pragma once

#include <cstdint>
#include <vector>

#include "backends/native/ops/common/PlaneWindow.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

/// The most input-channel taps (C * KH * KW) the direct kernel gathers per pixel block.
constexpr int64_t kDirectConvMaxTaps = 64;

/// One image's geometry: G holds the plane sizes, window, pads and the fused clamp (as for a
/// depthwise plane); C input and M output channels.
struct DirectConvGeometry {
  DepthwiseGeometry G;
  int64_t C = 0, M = 0;
};

/// Whether directConvRowsAvx512 handles this window on this CPU (horizontal stride 1 or 2, at most
/// kDirectConvMaxTaps taps per output pixel).
bool directConvAvx512Supported(const DepthwiseGeometry &G, int64_t C);

/// The most taps directConvRowsAvx2 gathers per pixel block (ResNet's 7x7 RGB stem has 147).
constexpr int64_t kDirectConvMaxTapsAvx2 = 160;

/// Whether directConvRowsAvx2 handles this window on this CPU (AVX2 and FMA; horizontal stride 1
/// or 2, at most kDirectConvMaxTapsAvx2 taps per output pixel).
bool directConvAvx2Supported(const DepthwiseGeometry &G, int64_t C);

/// W [M, C, KH, KW] as the kernel reads it, into Out (M * C * KH * KW floats): [C * KH * KW][M].
void packDirectConvWeights(const float *W, int64_t M, int64_t Taps, float *Out);

/// W [M, C, KH, KW] as directConvRowsAvx2 reads it, into Out (M * C * KH * KW floats): output channels in the kernel's groups (6 at
/// a time, then 4, 2, 1), each group's weights contiguous as [C * KH * KW][group width] at
/// offset M0 * Taps, so a group streams one block instead of a stride-M column (the [tap][M]
/// layout's 256-byte stride put ResNet's 147 taps into 16 of L1's 64 sets: conflict misses).
void packDirectConvWeightsAvx2(const float *W, int64_t M, int64_t Taps, float *Out);

/// Output rows [Oh0, Oh1) of one image: Y[m] = clamp(Bias[m] + sum over taps of W * X), zero
/// padding. X is [C, H, W], Y [M, OH, OW]; Plan is planDepthwise(D.G) (its column masks);
/// Bias may be null.
void directConvRowsAvx512(const DirectConvGeometry &D, const DepthwisePlan &Plan, const float *X,
                          const float *PackedW, const float *Bias, float *Y, int64_t Oh0, int64_t Oh1);

/// directConvRowsAvx512's AVX2+FMA sibling: 16-pixel blocks as two 8-wide vectors, output
/// channels six at a time (12 accumulators); Plan is planDepthwiseAvx2(D.G), PackedW is
/// packDirectConvWeightsAvx2's layout.
void directConvRowsAvx2(const DirectConvGeometry &D, const DepthwisePlan &Plan, const float *X, const float *PackedW,
                        const float *Bias, float *Y, int64_t Oh0, int64_t Oh1);

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
