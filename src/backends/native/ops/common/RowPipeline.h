// Building blocks of the row-strip pipelines of inverted-residual blocks (expand 1x1 ->
// depthwise): a 1x1 convolution of a run of contiguous pixels whose input channels are read in
// place (no packing of the activations), and a depthwise convolution of output rows whose input
// rows are given by pointers (rows of a ring buffer of expanded rows). AVX-512 only: the caller
// checks rowPipelineAvx512Supported first.
#pragma once

#include <cstdint>
#include <vector>

#include "backends/native/ops/common/PlaneWindow.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

/// Output channels per packed weight panel of pointwiseRunAvx512.
constexpr int64_t kRowPipelineMR = 12;

/// Whether this CPU runs the AVX-512 kernels below.
bool rowPipelineAvx512Supported();

/// Weights W [M, K] (row-major) packed into panels of kRowPipelineMR rows, k-major, zero-padded
/// past M: panel p starts at p * K * kRowPipelineMR.
std::vector<float> packPointwiseWeights(const float *W, int64_t M, int64_t K);

/// Out[i][j] = clamp(Bias[i] + sum over k of W[i][k] * X[k * Ldx + j]) for the Rows (<=
/// kRowPipelineMR) channels of one packed panel and pixels j in [0, N); row i of Out at Out + i *
/// Ldo. Bias may be null; the clamp applies when Clamp.
void pointwiseRunAvx512(const float *Panel, int64_t Rows, int64_t K, const float *X, int64_t Ldx, int64_t N,
                        const float *Bias, bool Clamp, float Lo, float Hi, float *Out, int64_t Ldo);

/// R consecutive output rows of a depthwise plane of geometry G (G.DH == G.DW == 1, G.SW 1 or 2):
/// Out[r][ow] = clamp(Bias + sum over taps of K[kh][kw] * Rows[r * SH + kh][ow * SW - PW + kw]),
/// clamped when G.HasAct; Out rows are G.OW apart. Rows[i] is the input row i of the first output
/// row's window (oh0 * SH - PH + i), never null: a row outside the plane points at zeros (at least
/// G.W + 32 of them). Columns outside the plane are masked off (Masks: planDepthwise(G).Masks).
void depthwiseRowsAvx512(const DepthwiseGeometry &G, const uint16_t *Masks, const float *const *Rows, int64_t R,
                         const float *K, float Bias, float *Out);

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
