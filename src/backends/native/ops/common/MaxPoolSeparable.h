// Separable 2-D f32 max pooling on one NCHW plane for AVX2: per output row, the column maxima over
// the window's rows are taken first at full vector density (8 input columns per vector, no
// shuffles) into a row buffer with -inf padding, then the row maxima over the window's columns are
// read from that buffer (stride 2: two loads and one in-lane shuffle per tap, one cross-lane
// permute per 8 outputs). KH + KW maxima per output instead of KH * KW strided taps. 3-wide
// stride-2 undilated windows (the common 3x3 / 2 pools) keep the column maxima in registers and
// take the row maxima by in-register shuffles, without the buffer; 3 tall with left pad 0 or 1
// (SqueezeNet's, ResNet's), their inner rows take plain maxima and a plane redoes them with the
// NaN checks only where a NaN was seen.
#pragma once

#include <cstdint>

#include "backends/native/ops/common/PlaneWindow.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

/// Whether maxPoolPlaneSeparableAvx2 handles this geometry on this CPU (AVX2; horizontal stride 1
/// or 2; any kernel size, vertical stride, dilation and pads).
bool maxPoolSeparableAvx2Supported(const DepthwiseGeometry &G);

/// Floats of row buffers maxPoolPlanesSeparableAvx2 needs for geometry G.
int64_t maxPoolSeparableScratch(const DepthwiseGeometry &G);

/// For each of Count planes (In + p * InPlane, Out + p * OutPlane): Out[OH, OW] = max over the
/// window's taps inside the plane (-inf when none; a NaN in the window gives NaN). Scratch holds
/// maxPoolSeparableScratch(G) floats (one per thread).
void maxPoolPlanesSeparableAvx2(const DepthwiseGeometry &G, const float *In, int64_t InPlane, float *Out,
                                int64_t OutPlane, int64_t Count, float *Scratch);

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
