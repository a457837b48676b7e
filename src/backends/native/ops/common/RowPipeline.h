// Building blocks of the row-strip pipelines of inverted-residual blocks (expand 1x1 ->
// depthwise, depthwise -> 1x1, and large-plane 1x1 Convs): a 1x1 convolution of a run of
// contiguous pixels whose input channels are read in place (no packing of the activations), and a
// depthwise convolution of output rows whose input rows are given by pointers (rows of a ring
// buffer of expanded rows). For small planes, the same two with channels in vector lanes. AVX-512
// only (the caller checks rowPipelineAvx512Supported first), except pointwiseRunAvx2, the AVX2 +
// FMA pointwise run (rowPipelineAvx2Supported).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "backends/native/ops/common/Gemm.h"
#include "backends/native/ops/common/PlaneWindow.h"

namespace optimium {
namespace runtime {
namespace detail {
struct KernelCreateInfo;
namespace ops {

/// Output channels per packed weight panel of pointwiseRunAvx512 and pointwiseRunAvx2.
constexpr int64_t kRowPipelineMR = 12;

/// Whether this CPU runs the AVX-512 kernels below.
bool rowPipelineAvx512Supported();

/// First pixel of tile T of the Tiles = ceil(Pixels / 6) pixel tiles of the AVX2 channels-in-lanes
/// kernels (pointwiseTransposedAvx2, ConvIm2col's runTaps): 6 T, except where the last tile would
/// hold 1 to 3 pixels; then the tiles take balanced sizes (5 and 6 from 25 pixels on). A tile of
/// R < 4 pixels has 2R < 8 FMA chains and waits on their latency as long as a 4-pixel one: 49
/// pixels as 8 x 6 + 1 cost 52 pixels' worth of FMA cycles per k, as 4 x 6 + 5 x 5 they cost 49.
/// A remainder of 4 or 5 stays as it is (196 as 32 x 6 + 4 measured 1-2% faster than 31 x 6 +
/// 2 x 5 on MobileNetV2's 14x14 projections).
inline int64_t pixelTileStart(int64_t T, int64_t Pixels) {
  const int64_t Tiles = (Pixels + 5) / 6, Rem = Pixels % 6;
  return Rem == 0 || Rem >= 4 ? std::min(6 * T, Pixels) : T * Pixels / Tiles;
}

/// Weights W [M, K] (row-major) packed into panels of kRowPipelineMR rows, k-major, zero-padded
/// past M: panel p starts at p * K * kRowPipelineMR.
std::vector<float> packPointwiseWeights(const float *W, int64_t M, int64_t K);
/// packPointwiseWeights of constant input Input ([M, K, ...]) of the kernel being created, through
/// the host's packed-weights cache under Layout (PackedWeights.h: a compiled folder serves it).
AlignedFloats packPointwiseWeightsCached(const KernelCreateInfo &I, size_t Input, const std::string &Layout);

/// Out[i][j] = clamp(Bias[i] + sum over k of W[i][k] * X[k * Ldx + j]) for the Rows (<=
/// kRowPipelineMR) channels of one packed panel and pixels j in [0, N); row i of Out at Out + i *
/// Ldo. Bias may be null; then the activation Act. Res (may be null): a residual laid out as
/// Out, added after the bias and before the clamp (a Conv with passes/FuseConvResidual's input).
void pointwiseRunAvx512(const float *Panel, int64_t Rows, int64_t K, const float *X, int64_t Ldx, int64_t N,
                        const float *Bias, const FusedAct &Act, float *Out, int64_t Ldo,
                        const float *Res = nullptr);

/// Whether this CPU runs pointwiseRunAvx2 (AVX2 and FMA; true on AVX-512 CPUs too, so the kernel
/// harness checks the AVX2 code there as well).
bool rowPipelineAvx2Supported();

/// pointwiseRunAvx512's AVX2 + FMA sibling, same arguments and panels: a panel's 12 channels as
/// two halves of 6 channels x 16 pixels (12 ymm accumulators + 2 pixel vectors + 1 broadcast; 7
/// to 9 channels as 4 + 3, 4 + 4, 5 + 4), each 16-pixel block's input (K rows of 64 bytes) loaded
/// from memory by the first half (which prefetches the next block's) and from L1 by the second;
/// bias, residual, clamp and activation (Act256) in registers, NaN passing the
/// clamp. Over 192 input channels they are taken in chunks whose partial sums go through Out (so
/// Out must not overlap X or Res). Rows 2 * kRowPipelineMR: two whole consecutive panels, each
/// block's rows (of a chunk) fetched into L1 once for the four passes (pointwiseAvx2PairsPanels
/// says where that pays). Only after rowPipelineAvx2Supported().
void pointwiseRunAvx2(const float *Panel, int64_t Rows, int64_t K, const float *X, int64_t Ldx, int64_t N,
                      const float *Bias, const FusedAct &Act, float *Out, int64_t Ldo, const float *Res = nullptr);

/// Whether pointwiseRunAvx2 should take two whole panels at a time over K input channels and
/// Plane pixels: where they come in chunks (over 192), whose rows then serve four 6-channel passes
/// from L1, not two, on planes of 56x56 and up. Zen 3, one-Conv models and per op in the models,
/// minima of alternated runs: ResNet-50's layer1 conv1 (64 from 256 on 56x56) 1.118-1.124 ->
/// 1.103-1.106 ms at 1 thread, 0.575 -> 0.566 at 2; layer2.0 conv1 (128 from 256 on 56x56) in
/// the model 2241 -> 2210 us. Not paired: SqueezeNet's 32 from 256 on 27x27 143 -> 152 us and
/// 48 from 256 on 13x13 49.2 -> 50.9 (1 thread, in the model); 128 from 512 on 28x28 and 1024
/// from 256 on 14x14 1.00x; unchunked inputs (256 from 64 on 56x56 with a residual 1.004x).
bool pointwiseAvx2PairsPanels(int64_t K, int64_t Plane);

/// pointwiseTransposedAvx512's AVX2 + FMA sibling for small planes (7x7, 14x14: 49 pixels fill
/// 16-pixel tiles badly), the pixels as the GEMM's rows and output channels in lanes:
/// Out[p][c] = ColBias[c] + sum over k in [K0, K0 + K) of X[(k - K0) * Ldx + p] * W[c][k] for p <
/// Pixels and c < Cols, a multiple of 8 (ColBias zero-padded up to it, or null), W given as
/// packTransposedWeightsAvx2's panels of Kp input channels. Out is blocked as the panels: the
/// block of columns [c0, c0 + Width) at Out + c0 * Pixels, its rows Width floats apart (rows of
/// all Cols would be kilobytes apart, the tiles' stores then landing in a few L1 sets).
/// Accumulate: add to the values in Out instead (a later chunk of the input channels). Tiles of 6 pixels x 16 channels (12 ymm
/// accumulators + 2 weight vectors + 1 broadcast), a panel's rows of the chunk kept in L1 across
/// the pixel tiles. Only after rowPipelineAvx2Supported().
void pointwiseTransposedAvx2(const float *X, int64_t Ldx, int64_t Pixels, int64_t K0, int64_t K, const float *WT,
                             int64_t Kp, int64_t Cols, const float *ColBias, bool Accumulate, float *Out);
/// W [M, K] (row-major) as pointwiseTransposedAvx2's panels: M rounded up to 8 columns in blocks of
/// 16 (the last one 8 wide where M rounds to an odd multiple of 8), block c0's row k (Width floats,
/// zeros past M) at c0 * K + k * Width: a panel's rows are contiguous, read as one stream.
std::vector<float> packTransposedWeightsAvx2(const float *W, int64_t M, int64_t K);
/// packTransposedWeightsAvx2 of constant input Input ([M, K, 1, 1]) through the host's
/// packed-weights cache under Layout, as packPointwiseWeightsCached.
AlignedFloats packTransposedWeightsAvx2Cached(const KernelCreateInfo &I, size_t Input, const std::string &Layout);

/// Y[c * Ldy + p] = Act(In[p * Ldi + c] + Res[c * Ldy + p]) for c < Cols, p < Pixels (Res may be
/// null): pointwiseTransposedAvx2's product back into output planes, 8 x 8 blocks transposed in
/// registers, residual and activation on the way (NaN passes the clamp). In's rows must hold Cols
/// rounded up to 8 readable floats. Only after rowPipelineAvx2Supported().
void transposeToPlanesActAvx2(const float *In, int64_t Ldi, int64_t Pixels, int64_t Cols, const FusedAct &Act,
                              const float *Res, float *Y, int64_t Ldy);

/// R consecutive output rows of a depthwise plane of geometry G (G.DH == G.DW == 1, G.SW 1 or 2):
/// Out[r][ow] = clamp(Bias + sum over taps of K[kh][kw] * Rows[r * SH + kh][ow * SW - PW + kw]),
/// then G.Act; Out rows are G.OW apart. Rows[i] is the input row i of the first output
/// row's window (oh0 * SH - PH + i), never null: a row outside the plane points at zeros (at least
/// G.W + 32 of them). Columns outside the plane are masked off (Masks: planDepthwise(G).Masks).
void depthwiseRowsAvx512(const DepthwiseGeometry &G, const uint16_t *Masks, const float *const *Rows, int64_t R,
                         const float *K, float Bias, float *Out);

/// The 3x3 depthwise rows whose every tap reads whole vectors: stride 1 (tap kw of output column
/// ow reads column ow + Off[kw] of the row), or stride 2 with one column of padding on each side
/// on rows stored in the split layout of deinterleaveRowsAvx512 (Split2). Ok is false where this
/// kernel does not apply (then depthwiseRowsAvx512 on plain rows).
struct Dw3x3RowPlan {
  bool Ok = false;
  int64_t OW = 0, Blocks = 0, SH = 1;
  int64_t Off[3] = {0, 0, 0};
  std::vector<uint16_t> Masks; ///< [block][kw]: the lanes whose tap reads inside the row
  FusedAct Act;
  /// Stride 1 with one column of padding on each side ("same"): each input row is loaded once per
  /// block and shifted in registers for the side taps (LastLanes: its lanes in the last block).
  bool Shifted = false;
  uint16_t LastLanes = 0;
  /// Stride 2, split rows: block b's even columns at 32b, its odd ones right after them (16
  /// later, LastEven later in the last block, which has LastEven even and LastOdd odd columns).
  bool Split2 = false;
  int64_t LastEven = 0, LastOdd = 0;
};
/// Plans G's rows (3x3, dilation 1); Deinterleaved: the stride-2 layout.
Dw3x3RowPlan planDw3x3Rows(const DepthwiseGeometry &G, bool Deinterleaved);
/// depthwiseRowsAvx512 for a planned geometry (P.Ok): Rows as there, in P's layout.
void depthwise3x3RowsAvx512(const Dw3x3RowPlan &P, const float *const *Rows, int64_t R, const float *K, float Bias,
                            float *Out);

/// Out[k][r] = row r of channel k of X (channel stride Ldx, rows of W) in the split layout, for K
/// channels and Rows rows (Out's channels Rows * W apart): each run of 32 columns (the last one
/// shorter) becomes its even columns followed by its odd ones, so a stride-2 window reads whole
/// vectors and the 1x1 convolution in between, pixel by pixel, keeps the order.
void deinterleaveRowsAvx512(const float *X, int64_t Ldx, int64_t K, int64_t Rows, int64_t W, float *Out);

/// Channels-in-lanes kernels for small planes (14x14, 7x7: too few pixels per row for whole
/// vectors), where the pixels become the GEMM's rows:
///
/// Out[p][c] = clamp(ColBias[c] + sum over k of X[k * Ldx + p] * WT[k * Ldw + c]) for pixels p <
/// Pixels and columns c < Cols (Out's rows Ldo apart; ColBias may be null). Next (may be null):
/// the weights of the caller's next call (64 columns of each of the K rows, Ldw apart), fetched into
/// L1 while this one computes: a layer's weights come from L3 once per run.
void pointwiseTransposedAvx512(const float *X, int64_t Ldx, int64_t Pixels, int64_t K, const float *WT, int64_t Ldw,
                               int64_t Cols, const float *ColBias, const FusedAct &Act, float *Out,
                               int64_t Ldo, const float *Next = nullptr);

/// The taps of each output pixel of a depthwise window that fall inside the input plane:
/// output pixel o has taps [Begin[o], Begin[o + 1]), each a (kernel index, input pixel) pair.
struct DepthwiseTapList {
  std::vector<int32_t> Begin, Tap, Pixel;
};
DepthwiseTapList listDepthwiseTaps(const DepthwiseGeometry &G);

/// Out[o][c] = clamp(Bias[c] + sum over o's taps t of KT[t.Tap * Ldk + c] * In[t.Pixel * Ldi + c])
/// for the Cols (a multiple of 16) channels; Bias may be null; then G.Act.
void depthwiseChannelsAvx512(const DepthwiseGeometry &G, const DepthwiseTapList &Taps, const float *In, int64_t Ldi,
                             const float *KT, int64_t Ldk, const float *Bias, int64_t Cols, float *Out, int64_t Ldo);

/// Y[c][p] = In[p][c] for c < Cols, p < Pixels (In's rows Ldi apart, Y's Ldy).
void transposeToPlanesAvx512(const float *In, int64_t Ldi, int64_t Pixels, int64_t Cols, float *Y, int64_t Ldy);

/// Out[r][i] = Src[r * Lds + i] for i < Valid, 0 for Valid <= i < Width (Width <= 16), Rows rows
/// of Width floats: a GEMM panel gathered from rows of a plane (one masked load and store each).
void copyRowsPaddedAvx512(const float *Src, int64_t Lds, int64_t Rows, int64_t Valid, int64_t Width, float *Out);

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
