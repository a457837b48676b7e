// Direct 2-D convolution for small layers (Conv's "direct" variant): stride 1, dilation 1, group 1,
// NCHW in and out, no im2col and no GEMM packing per run. A register tile holds CB output channels
// x V vectors of 16 consecutive output pixels of a row; each (input channel, kh, kw) step loads V
// input vectors from a zero-padded copy of the image and broadcasts CB packed weights into them.
// Where the GEMM path pays a B-panel copy per K block and partial 12 x 32 tiles (MNIST's 5x5
// convs: K = 25 or 400 with 16-32 output channels on 28x28 / 14x14 planes), this is FMA-bound.
#pragma once

#include <cstdint>
#include <vector>

#include "backends/native/Kernel.h"
#include "backends/native/ops/common/Gemm.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

/// Output channels per weight block (the broadcast side of the register tile).
constexpr int64_t DirectConvCB = 8;

struct DirectConvGeometry {
  int64_t C = 0, H = 0, W = 0;   ///< input channels and plane
  int64_t M = 0, OH = 0, OW = 0; ///< output channels and plane
  int64_t KH = 0, KW = 0;        ///< kernel
  int64_t PH = 0, PW = 0;        ///< leading pads
  bool HasAct = false;           ///< clamp to [ActMin, ActMax] after the bias (fused Relu/Clip)
  float ActMin = 0, ActMax = 0;
};

/// Whether this CPU and build run directConv (AVX-512F).
bool directConvAvailable();

/// Floats of the padded image copy one run needs (C x (OH + KH - 1) x padded row).
int64_t directConvScratchFloats(const DirectConvGeometry &G);

/// Weights [M, C, KH, KW] as blocks of DirectConvCB output channels: block b holds, for each
/// (c, kh, kw) in order, the CB weights of channels b * CB .. b * CB + CB - 1 (zeros past M).
void packDirectConvWeights(const float *Wt, int64_t M, int64_t C, int64_t KH, int64_t KW, AlignedFloats &Out);

/// Y[M, OH, OW] = bias + conv(X[C, H, W]) for one image, clamped when G.HasAct. Bias may be null.
void directConv(const DirectConvGeometry &G, const float *Packed, const float *Bias, const float *X, float *Y,
                const Parallel &Par);

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
