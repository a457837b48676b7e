// Depthwise convolution with 8 channels in vector lanes, AVX2 + FMA (ConvDepthwiseBlockedAvx2's
// kernel, shared with the fused 1x1 + depthwise op's blocked kernel). Along rows, a 7-pixel plane
// fills 7 of 8 lanes and every output row is one dependent chain of KH * KW FMAs (latency-bound);
// here, per 8 channels, the input rows of a strip of output rows are transposed into a zero-padded
// pixel-major buffer ([row][column][8 channels], 32-byte pixels), so each tap of each output pixel
// is one aligned load and one full-width FMA, a run of U output pixels keeps U independent
// accumulators, and the fused activation (clamp, SiLU, HardSwish, ...) is applied in registers
// before the outputs go back to NCHW through the same 8x8 transpose.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/native/ops/common/FusedActivation.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

/// Channels per vector (and per packed weight block).
constexpr int64_t kDwLanes8 = 8;

/// The sizes of one run in the padded layout: padded column of output ow's tap kw is ow * SW + kw.
struct DwLanes8Geometry {
  int64_t H, W, OH, OW, KH, KW, SH, SW, PT, PL;
  int64_t Wp; ///< padded row width in pixels
};

/// The padded layout of a plane: H x W input, OH x OW output, leading pads PT / PL.
DwLanes8Geometry dwLanes8Geometry(int64_t H, int64_t W, int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t SH,
                                  int64_t SW, int64_t PT, int64_t PL);

/// Whether depthwiseLanes8Strip computes a depthwise window of kernel (KH, KW), strides (SH, SW) and
/// dilations (DH, DW) on this CPU.
bool depthwiseLanes8Supported(int64_t KH, int64_t KW, int64_t SH, int64_t SW, int64_t DH, int64_t DW);

/// Output rows per work item: the padded input rows of a strip stay within ~160 KiB (in L2; the
/// KH rows a row reads are in L1), at least 4 rows, and enough items (channel blocks x strips)
/// for the pool.
int64_t depthwiseLanes8StripRows(const DwLanes8Geometry &G, int64_t Items, int Threads);

/// The cost of Rows output rows of one channel, in multiply-adds: the taps, plus 4 per float
/// packed or unpacked (the transposes: a 3x3 stride-2 layer from 14x14 to 7x7 planes, 576
/// channels, is 254K multiply-adds and takes ~30 us on one Zen 3 core, as long as a stride-1
/// 7x7 layer of 960 channels and 423K).
int64_t dwLanes8RowsWork(const DwLanes8Geometry &G, int64_t Rows);

/// Work items per parallel range, of Items items of 8 channels x Rows output rows each: enough
/// that a range carries ~2^16 multiply-adds of work (dwLanes8RowsWork), at most a quarter of one
/// thread's share (so 2+ threads still balance by stealing). Each range costs the pool a claim
/// and a call, and an item of a 7x7 plane is only ~0.2-0.5 us of work (EfficientNet-B0's
/// 1152-channel layers: 144 items).
size_t depthwiseLanes8Grain(const DwLanes8Geometry &G, int64_t Rows, int64_t Items, int Threads);

/// Floats of the two scratch buffers depthwiseLanes8Strip takes for strips of up to Rows output
/// rows: the packed input rows (In) and the outputs before their transpose (Out).
int64_t dwLanes8InFloats(const DwLanes8Geometry &G, int64_t Rows);
int64_t dwLanes8OutFloats(const DwLanes8Geometry &G, int64_t Rows);

/// W ([C][Taps], one filter per channel) as [ceil(C / 8)][Taps][8], zeros past C, into Out.
void packDepthwiseLanes8(const float *W, int64_t C, int64_t Taps, float *Out);

/// Output rows [Oh0, Oh1) of Cv (<= 8) channels: their input rows packed from X (the first channel's
/// plane, channels Plane apart) into In, the rows computed into Out (32-byte aligned, sizes from
/// dwLanes8InFloats / dwLanes8OutFloats), then written to Y (the first channel's output plane,
/// channels OutPlane apart) from row Oh0 on. Wt: the channels' packed weights ([Taps][8]); Bias8:
/// 8 floats, 32-byte aligned. Only after depthwiseLanes8Supported.
void depthwiseLanes8Strip(const DwLanes8Geometry &G, const float *X, int64_t Plane, int64_t Cv, const float *Wt,
                          const float *Bias8, const FusedAct &Act, int64_t Oh0, int64_t Oh1, float *In, float *Out,
                          float *Y, int64_t OutPlane);

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
