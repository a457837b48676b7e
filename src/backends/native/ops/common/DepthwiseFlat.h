// Stride-1 "same" depthwise convolution on the flattened plane: when the output plane has the
// input's size, output pixel p reads input pixel p + (kh - PH) * W + (kw - PW) for every tap, so a
// 16-lane vector covers 16 consecutive pixels whatever the row width (two rows and a bit of a 7x7
// plane, where a row-per-vector kernel fills 7 of 16 lanes) and there is no per-row work: one
// masked load and one FMA per tap and vector, the masks (plane and row borders) computed once per
// geometry.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "backends/native/ops/common/PlaneWindow.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

/// Masks and tap offsets of one geometry, shared by all planes of a run.
struct FlatDepthwisePlan {
  DepthwiseGeometry G;
  int64_t Blocks = 0;                ///< 16-pixel vectors per output plane
  std::vector<uint16_t> Masks;       ///< [Blocks][KH * KW]: lanes whose tap input is inside the plane
  std::vector<int64_t> TapOffsets;   ///< [KH * KW]: input offset of each tap from the output pixel
};

/// Whether depthwiseFlatAvx512 handles G on this CPU: strides and dilations 1, output plane the
/// size of the input plane, at most 25 taps.
bool depthwiseFlatSupported(const DepthwiseGeometry &G);
FlatDepthwisePlan planDepthwiseFlat(const DepthwiseGeometry &G);
/// Whether two geometries (clamp included) are the same.
bool sameGeometry(const DepthwiseGeometry &A, const DepthwiseGeometry &B);
/// The plan of G made once (at kernel creation, when the shapes are known), or null when the flat
/// kernel does not take G. A run whose geometry is sameGeometry as the plan's reuses it.
std::shared_ptr<const FlatDepthwisePlan> cachedFlatPlan(const DepthwiseGeometry &G);

/// Out[OH, OW] = bias + sum over taps of K[kh, kw] * In[ih, iw] (zero outside), clamped when
/// G.Act.
void depthwiseFlatAvx512(const FlatDepthwisePlan &P, const float *In, const float *K, float Bias, float *Out);
/// The 16-pixel vectors [Begin, End) of the output plane only (a strip of rows when the row width
/// times the strip's rows is a multiple of 16); output pixel Begin * 16 is written to Out[0].
void depthwiseFlatRangeAvx512(const FlatDepthwisePlan &P, const float *In, const float *K, float Bias, float *Out,
                              int64_t Begin, int64_t End);

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
