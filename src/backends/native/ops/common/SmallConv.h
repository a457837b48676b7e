// Direct 2-D convolution for small layers (Conv's "small" variant): stride 1, dilation 1, group 1,
// NCHW in and out, no im2col and no GEMM packing per run. A register tile holds CB output channels
// x V vectors of 16 consecutive output pixels of a row; each (input channel, kh, kw) step loads V
// input vectors from a zero-padded copy of the image and broadcasts CB packed weights into them.
// Where the GEMM path pays a B-panel copy per K block and partial 12 x 32 tiles (MNIST's 5x5
// convs: K = 25 or 400 with 16-32 output channels on 28x28 / 14x14 planes), this is FMA-bound.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/native/Kernel.h"
#include "backends/native/ops/common/Gemm.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

/// Output channels per weight block of the row tiles (the broadcast side: 8 channels x 3 vectors
/// of 16 output pixels of a row) and of the pixel tiles (the vector side: up to 14 pixels of a row
/// x 32 channels, every lane used when a row is narrower than a vector).
constexpr int64_t SmallConvRowCB = 8, SmallConvPixelCB = 32;

struct SmallConvGeometry {
  int64_t C = 0, H = 0, W = 0;   ///< input channels and plane
  int64_t M = 0, OH = 0, OW = 0; ///< output channels and plane
  int64_t KH = 0, KW = 0;        ///< kernel
  int64_t PH = 0, PW = 0;        ///< leading pads
  FusedAct Act;           ///< the fused activation, after the bias
};

/// Weights [M, C, KH, KW] in blocks of CB output channels: block b holds, for each (c, kh, kw) in
/// order, the CB weights of channels b * CB .. b * CB + CB - 1 (zeros past M). Rows: CB =
/// SmallConvRowCB; Pixels: SmallConvPixelCB (empty when never used).
struct SmallConvWeights {
  AlignedFloats Rows, Pixels;
};

/// Whether this CPU and build run smallConv (AVX-512F).
bool smallConvAvailable();

/// Whether this CPU and build run smallConvAvx2 (AVX2 + FMA).
bool smallConvAvx2Available();

/// Whether a run of geometry G takes the pixel tiles: output rows narrower than a vector (14x14,
/// 7x7 planes) and at least 32 output channels.
inline bool smallConvPixelTiles(int64_t OW, int64_t M) { return OW < 16 && M >= SmallConvPixelCB; }

/// Packs the layouts runs may need of constant input Input ([M, C, KH, KW]): Rows when ForRows,
/// Pixels when ForPixels; each borrowed from the packed-weights cache (a compiled folder's
/// packed.bin) under Layout when it holds it, else packed and offered to it.
void packSmallConvWeights(const KernelCreateInfo &I, size_t Input, const std::string &Layout, bool ForRows,
                          bool ForPixels, SmallConvWeights &Out);

/// Y[M, OH, OW] = bias + conv(X[C, H, W]) for one image, then the activation G.Act. Bias may be null.
/// W must hold the layout smallConvPixelTiles(G.OW, G.M) selects.
void smallConv(const SmallConvGeometry &G, const SmallConvWeights &W, const float *Bias, const float *X, float *Y,
                const Parallel &Par);

/// smallConv's AVX2 + FMA sibling (f32_conv__small_avx2): row tiles of 4 output channels x 3
/// vectors of 8 output pixels, or where smallConvPixelTiles(G.OW, G.M) pixel tiles of 16 output
/// channels x 6 output pixels in row-major order (no idle lanes on rows narrower than 16). W must
/// hold the layout smallConvPixelTiles selects, as for smallConv.
void smallConvAvx2(const SmallConvGeometry &G, const SmallConvWeights &W, const float *Bias, const float *X, float *Y,
                   const Parallel &Par);

/// Y[M, OH / 2, OW / 2] = the 2x2 stride-2 max pool (no padding, rounding down) of smallConv's
/// output for one image (com.optimium FusedConvMaxPool): two output rows of a channel block at a
/// time into a band in L1, pooled from there. A NaN wins the pool, as in MaxPool.
void smallConvMaxPool2x2(const SmallConvGeometry &G, const SmallConvWeights &W, const float *Bias, const float *X,
                         float *Y, const Parallel &Par);

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
