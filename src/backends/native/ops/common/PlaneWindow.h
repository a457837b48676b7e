// 2-D sliding-window kernels on one NCHW plane: depthwise convolution (one input channel -> one
// output channel; Conv's depthwise variant) and max pooling (MaxPool). Each output row is computed a vector of output pixels
// at a time with every tap accumulated in a register (one store per output); the plane's borders
// are handled by load masks computed once per geometry, so the input is never copied.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "backends/native/ops/common/FusedActivation.h"
#include "backends/native/ops/common/Pooling.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

struct DepthwiseGeometry {
  int64_t H, W, OH, OW;   ///< input and output plane sizes
  int64_t KH, KW;         ///< kernel
  int64_t SH, SW, DH, DW; ///< strides, dilations
  int64_t PH, PW;         ///< leading pads (trailing pads follow from the sizes)
  FusedAct Act;           ///< the fused activation, after the bias
};

/// The geometry of a 2-D window op (W: kernel, strides, dilations) on planes of G (sizes and
/// leading pads; nullptr leaves them 0, enough for depthwiseAvx512Supported at kernel creation).
inline DepthwiseGeometry planeGeometryOf(const WindowAttrs &W, const WindowGeometry *G) {
  DepthwiseGeometry D{};
  D.KH = W.Kernel[0], D.KW = W.Kernel[1], D.SH = W.Strides[0], D.SW = W.Strides[1];
  D.DH = W.Dilations[0], D.DW = W.Dilations[1];
  if (G)
    D.H = G->In[0], D.W = G->In[1], D.OH = G->Out[0], D.OW = G->Out[1], D.PH = G->PadBegin[0], D.PW = G->PadBegin[1];
  return D;
}

/// Whether depthwisePlaneAvx512 handles this geometry on this CPU (horizontal stride 1 or 2, any
/// kernel size, vertical stride and dilation).
bool depthwiseAvx512Supported(const DepthwiseGeometry &G);

/// Planes per parallel chunk for plane kernels with OutPlane outputs of Taps taps each: enough
/// that a chunk is worth a worker's wake-up (about 64K tap operations), so small layers (MNIST's
/// 14x14 pools) run on the calling thread instead of paying a fan-out.
inline size_t planesPerChunk(int64_t OutPlane, int64_t Taps) {
  const int64_t Work = std::max<int64_t>(1, OutPlane * std::max<int64_t>(1, Taps));
  return static_cast<size_t>(std::max<int64_t>(1, 65536 / Work));
}

/// Per-geometry data shared by all planes of a run: the column masks of each (16-output block, kw)
/// for AVX-512 (planDepthwise), or of each (8-output block, kw) for AVX2 (planDepthwiseAvx2).
struct DepthwisePlan {
  DepthwiseGeometry G;
  std::vector<uint16_t> Masks;
  /// AVX2: [block][kw][2] the lanes (bits) of the block's first and second 8-wide load (stride 2
  /// reads 16 consecutive inputs) that lie inside the plane; Interior8[block]: all of them, so the
  /// block takes plain loads.
  std::vector<uint8_t> Masks8, Interior8;
};
DepthwisePlan planDepthwise(const DepthwiseGeometry &G);
DepthwisePlan planDepthwiseAvx2(const DepthwiseGeometry &G);

/// Whether depthwisePlaneAvx2 / maxPoolPlaneAvx2 handle this geometry on this CPU (AVX2 and FMA;
/// horizontal stride 1 or 2, any kernel size, vertical stride and dilation).
bool depthwiseAvx2Supported(const DepthwiseGeometry &G);

/// Out[OH, OW] = bias + sum over taps of K[kh, kw] * In[ih, iw] (zero outside the plane), clamped
/// when G.Act is on.
void depthwisePlaneAvx512(const DepthwisePlan &P, const float *In, const float *K, float Bias, float *Out);

/// Out[OH, OW] = max over the window's taps inside the plane (-inf when none; NaN propagates).
/// G.Act is ignored.
void maxPoolPlaneAvx512(const DepthwisePlan &P, const float *In, float *Out);

/// The AVX2+FMA sibling (8 outputs per vector; P from planDepthwiseAvx2). The activation (clamp,
/// SiLU, HardSwish, ...) is applied in registers (Act256) before each store. (AVX2 max pooling is
/// separable instead: common/MaxPoolSeparable.h.)
void depthwisePlaneAvx2(const DepthwisePlan &P, const float *In, const float *K, float Bias, float *Out);

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
