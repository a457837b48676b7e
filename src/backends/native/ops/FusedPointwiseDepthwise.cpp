// com.optimium FusedPointwiseDepthwise (made by passes/FusePointwiseDepthwise): Y = depthwise
// Conv(clamp(Conv1x1(X, W1) + B1), W2) + B2, clamped: the expand half of an inverted-residual
// block. Inputs (X [N, K, H, W], W1 [M, K, 1, 1], W2 [M, 1, KH, KW], B1 [M]?, B2 [M]?); the
// depthwise Conv's attributes (strides, pads, dilations, auto_pad, group = M, its clamp in
// kFusedActMin/Max) and the 1x1 Conv's clamp in kExpandActMin/Max.
//
// The blocked kernel works on a block of output channels at a time: the block's expanded planes
// (a GEMM with the weights packed at creation, reading X in place; on AVX2 runs of pixels against
// 12-channel weight panels, RowPipeline's pointwiseRunAvx2) are written to a per-thread
// buffer sized to stay in L2, and the depthwise planes are computed from there. The expanded
// tensor, the largest of the block (MobileNetV2: 96 x 112 x 112), never goes through memory, and
// the two ops are one fan-out. On AVX2 the depthwise planes of a block are computed 8 channels in
// vector lanes (common/DepthwiseLanes8: strips of rows transposed into a padded pixel-major
// buffer), W2 packed for it at creation; the plane kernel only where that window is not taken.
// On AVX-512 two variants rank above it: the row pipeline (a few expanded rows at a time in a ring
// buffer, consumed by the depthwise rows right away; stride-1 planes at least 14 wide and stride-2
// ones) and, for strided 14x14 planes, the channels-in-lanes kernel (pixels as the GEMM's rows,
// one transpose at the end).
#include <algorithm>
#include <cmath>

#include "backends/native/ops/common/DepthwiseFlat.h"
#include "backends/native/ops/common/DepthwiseLanes8.h"
#include "backends/native/ops/common/Gemm.h"
#include "backends/native/ops/common/PackedWeights.h"
#include "backends/native/ops/common/PlaneWindow.h"
#include "backends/native/ops/common/RowPipeline.h"
#include "backends/native/ops/common/SeparableConv.h"
#include "backends/native/ops/common/ThreadScratch.h"
#include "backends/native/ops/common/Pooling.h"
#include "ir/FusedOps.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

constexpr bool kPointwiseFirst = true; // inputs (X, W1, W2, B1?, B2?)

Result<SeparableAttrs> attrsFor(const KernelCreateInfo &I) { return separableAttrsFor(I, kPointwiseFirst); }

/// Sizes of one run (C: X's channels K, M: the expanded and output channels), checked against the output.
Result<SeparableRun> planFused(const char *Name, const SeparableAttrs &A, const KernelContext &Ctx) {
  return planSeparableRun(Name, A, Ctx, kPointwiseFirst);
}

/// Out[OH, OW] = clamp(bias + sum over taps of K[kh, kw] * In[ih, iw]), zero outside the plane:
/// the portable depthwise plane (tap-major: each tap adds a scaled, strided row to the output row).
void depthwisePlanePortable(const DepthwiseGeometry &G, const FusedClamp &Act, const float *In, const float *K,
                            float Bias, float *Out) {
  for (int64_t Oh = 0; Oh < G.OH; ++Oh) {
    float *Row = Out + Oh * G.OW;
    std::fill(Row, Row + G.OW, Bias);
    for (int64_t Kh = 0; Kh < G.KH; ++Kh) {
      const int64_t Ih = Oh * G.SH - G.PH + Kh * G.DH;
      if (Ih < 0 || Ih >= G.H)
        continue;
      const float *InRow = In + Ih * G.W;
      for (int64_t Kw = 0; Kw < G.KW; ++Kw) {
        const float Kv = K[Kh * G.KW + Kw];
        const int64_t Off = Kw * G.DW - G.PW; // iw = ow * SW + Off in [0, W)
        const int64_t Lo = std::min<int64_t>(G.OW, Off >= 0 ? 0 : (-Off + G.SW - 1) / G.SW);
        const int64_t Hi = G.W - 1 - Off < 0 ? 0 : std::min<int64_t>(G.OW, (G.W - 1 - Off) / G.SW + 1);
        for (int64_t Ow = Lo; Ow < Hi; ++Ow)
          Row[Ow] += Kv * InRow[Ow * G.SW + Off];
      }
    }
    for (int64_t Ow = 0; Ow < G.OW; ++Ow)
      Row[Ow] = Act(Row[Ow]);
  }
}

/// Channels per block: a multiple of the GEMM's MR whose expanded planes take at most about 1.25
/// MiB (in this Emerald Rapids' 2 MiB L2 beside the input rows the GEMM streams; MobileNetV2's
/// 112x112 block measured 4-7% faster with 24 channels, 1.2 MiB, than with 12), and at least four
/// blocks where the channels allow it (work for two threads with some balance). A quarter rounded
/// up to MR that leaves only three blocks is rounded down instead: MobileNetV3-Small's 72 channels
/// were 3 blocks of 24 (2 + 1 on two threads, the caller waiting ~27 us of a ~130 us op), now 6 of 12.
int64_t channelsPerBlock(int64_t M, int64_t Plane, int64_t MR) {
  constexpr int64_t BudgetFloats = 1280 * 1024 / sizeof(float);
  const int64_t Fit = std::max<int64_t>(1, BudgetFloats / std::max<int64_t>(1, Plane) / MR) * MR;
  const int64_t QuarterRows = (M + 3) / 4;
  int64_t Quarter = std::max<int64_t>(1, QuarterRows + MR - 1) / MR * MR;
  if ((M + Quarter - 1) / Quarter < 4)
    Quarter = QuarterRows / MR * MR;
  return std::max<int64_t>(MR, std::min(Fit, Quarter));
}

/// Output rows [Oh0, Oh1) of the plane and the input rows [Ih0, Ih1) their windows read, PT rows of
/// zeros above the first (the top pad, on the first band only).
struct RowBand {
  int64_t Oh0, Oh1, Ih0, Ih1, PT;
};

std::vector<RowBand> wholePlane(const DepthwiseGeometry &G) { return {{0, G.OH, 0, G.H, G.PH}}; }

/// Expanded floats a band of a block may take: MobileNetV2's 96 x 112 x 112 block of 24 channels
/// (1.2 MB, past Zen 3's 512 KiB L2) in four bands (1 thread 724 -> 702 us, 2 threads 378 -> 375).
constexpr int64_t kBandBudgetFloats = 96 * 1024;

/// The 8-lane path's bands of output rows for Items blocks (all images): as few as keep a band's
/// expanded rows (Block channels) within kBandBudgetFloats, and at least two work items per
/// thread (MobileNetV3-Small's 72 channels: 3 blocks of 24, 2 bands each on two threads). A band
/// recomputes the input rows its windows share with the one above (stride 2, 3x3: one row). One
/// whole-plane band where a band would read no input row.
std::vector<RowBand> rowBands(const DepthwiseGeometry &G, int64_t Block, int64_t Items, int Threads) {
  const int64_t ForCache = (Block * G.H * G.W + kBandBudgetFloats - 1) / kBandBudgetFloats;
  const int64_t ForThreads = Threads > 1 ? (2 * Threads + Items - 1) / Items : 1;
  const int64_t NBands = std::min(G.OH, std::max(ForCache, ForThreads));
  if (NBands <= 1)
    return wholePlane(G);
  std::vector<RowBand> Bands;
  for (int64_t Bi = 0; Bi < NBands; ++Bi) {
    RowBand Band{Bi * G.OH / NBands, (Bi + 1) * G.OH / NBands, 0, 0, 0};
    const int64_t First = Band.Oh0 * G.SH - G.PH, End = (Band.Oh1 - 1) * G.SH - G.PH + (G.KH - 1) * G.DH + 1;
    Band.Ih0 = std::max<int64_t>(0, First), Band.Ih1 = std::min(G.H, End), Band.PT = Band.Ih0 - First;
    if (First >= G.H || Band.Ih1 <= Band.Ih0)
      return wholePlane(G);
    Bands.push_back(Band);
  }
  return Bands;
}

/// Which depthwise kernel the blocked kernel runs: a plane kernel (common/PlaneWindow.h) or, on
/// AVX2, 8 channels in lanes (common/DepthwiseLanes8.h).
enum class PlaneIsa { Portable, Avx2, Avx512, Lanes8Avx2 };

class FusedBlockedKernel : public Kernel {
public:
  FusedBlockedKernel(std::string Name, const GemmMicroKernel &MK, SeparableAttrs A, int64_t M, int64_t K,
                     int64_t BlockM, std::vector<PackedA> Blocks, AlignedFloats Panels, PlaneIsa Planes,
                     std::shared_ptr<const FlatDepthwisePlan> FlatCache, AlignedFloats Lanes8W)
      : Name(std::move(Name)), MK(MK), A(std::move(A)), M(M), K(K), BlockM(BlockM), Blocks(std::move(Blocks)),
        Panels(std::move(Panels)), Planes(Planes), FlatCache(std::move(FlatCache)), Lanes8W(std::move(Lanes8W)) {}

  Status run(const KernelContext &Ctx) const override {
    ASSIGN_OR_RETURN(const SeparableRun R, planFused(Name.c_str(), A, Ctx));
    if (R.N * R.M * R.OutPlane == 0)
      return Status::ok();
    if (R.M != M || R.C != K)
      return runError(Name.c_str(), "weights do not match the packed ones");
    const float *X = Ctx.Inputs[0].data<float>(), *B1 = inputDataOrNull(Ctx, 3);
    const float *W2 = Ctx.Inputs[2].data<float>(), *B2 = inputDataOrNull(Ctx, 4);
    float *Y = Ctx.Outputs[0].data<float>();
    const DepthwiseGeometry G = separableGeometry(A, R.G);
    const bool Avx512Planes = Planes == PlaneIsa::Avx512, Avx2Planes = Planes == PlaneIsa::Avx2;
    const bool Flat = Avx512Planes && depthwiseFlatSupported(G); // stride-1 "same" planes
    const DepthwisePlan Plan =
        Avx2Planes ? planDepthwiseAvx2(G) : Avx512Planes && !Flat ? planDepthwise(G) : DepthwisePlan{G, {}, {}, {}};
    FlatDepthwisePlan LocalPlan; // when the geometry is not the one planned at creation
    const bool Cached = Flat && FlatCache && sameGeometry(FlatCache->G, G);
    if (Flat && !Cached)
      LocalPlan = planDepthwiseFlat(G);
    const FlatDepthwisePlan &FlatPlan = Cached ? *FlatCache : LocalPlan;
    const int64_t KT = R.KH * R.KW, NB = (M + BlockM - 1) / BlockM;
    const bool Lanes8 = Planes == PlaneIsa::Lanes8Avx2;
    const DwLanes8Geometry LG = dwLanes8Geometry(G.H, G.W, G.OH, G.OW, G.KH, G.KW, G.SH, G.SW, G.PH, G.PW);
    const int64_t StripRows = Lanes8 ? depthwiseLanes8StripRows(LG, 1, 1) : 0;
    // Row k of the GEMM's B (input channel k) starts at k * Plane of the image.
    std::vector<int64_t> RowOffsets(static_cast<size_t>(std::max<int64_t>(R.C, 1)));
    for (int64_t K = 0; K < R.C; ++K)
      RowOffsets[static_cast<size_t>(K)] = K * R.Plane;
    // Under ~1M multiply-adds (a few us) the fan-out costs more than it saves.
    const Parallel Serial;
    const int64_t Work = R.N * R.M * (R.C * R.Plane + KT * R.OutPlane);
    const Parallel &Par = Ctx.Par.ifWorth(Work);
    const std::vector<RowBand> Bands = Lanes8 ? rowBands(G, BlockM, NB * R.N, Par.threads()) : wholePlane(G);
    const int64_t NBands = static_cast<int64_t>(Bands.size());
    // Items: (image, band, block), a band's blocks next to each other (they read the same input rows).
    Par.forRange(static_cast<size_t>(R.N * NBands * NB), 1, [&](size_t Lo, size_t Hi) {
      thread_local AlignedFloats Expanded; // this worker's block of expanded planes (or bands of rows)
      size_t Need = 0;
      for (const RowBand &Band : Bands)
        Need = std::max(Need, static_cast<size_t>(BlockM * (Band.Ih1 - Band.Ih0) * G.W));
      if (Expanded.size() < Need)
        Expanded.resize(Need);
      float *E = Expanded.data();
      ScratchFrame Scratch; // the 8-lane depthwise strips' packed rows and outputs
      const size_t InFloats = Lanes8 ? static_cast<size_t>(dwLanes8InFloats(LG, StripRows)) : 0;
      const size_t OutFloats = Lanes8 ? static_cast<size_t>(dwLanes8OutFloats(LG, StripRows)) : 0;
      float *const LanesIn = Lanes8 ? Scratch.take<float>(InFloats) : nullptr;
      float *const LanesOut = Lanes8 ? Scratch.take<float>(OutFloats) : nullptr;
      for (size_t T = Lo; T < Hi; ++T) {
        const int64_t N = static_cast<int64_t>(T) / (NBands * NB), B = static_cast<int64_t>(T) % NB, M0 = B * BlockM;
        const RowBand &Band = Bands[static_cast<size_t>(static_cast<int64_t>(T) / NB % NBands)];
        const int64_t Rows = std::min(BlockM, M - M0), Pixels = (Band.Ih1 - Band.Ih0) * G.W;
        const float *Xn = X + N * R.C * R.Plane + Band.Ih0 * G.W;
        if (Panels.size() != 0) {
          expandRowsAvx2(Xn, R.Plane, Pixels, M0, Rows, B1, E);
        } else {
          GemmEpilogue Ep;
          Ep.RowBias = B1 ? B1 + M0 : nullptr;
          Ep.Act = A.Pointwise;
          // X is read in place (packing the image once for all blocks measured the same).
          const GemmRowsB RowsB{Xn, RowOffsets.data(), Pixels, nullptr};
          gemmPackedRowsB(MK, Blocks[static_cast<size_t>(B)], RowsB, 1.0f, 0.0f, E, Pixels, Serial, &Ep);
        }
        if (Lanes8) {
          const DwLanes8Geometry BandG = dwLanes8Geometry(Band.Ih1 - Band.Ih0, G.W, Band.Oh1 - Band.Oh0, G.OW, G.KH,
                                                         G.KW, G.SH, G.SW, Band.PT, G.PW);
          depthwiseLanes8Block(BandG, G.Act, StripRows, E, Pixels, B, Rows, B2 ? B2 + M0 : nullptr,
                               Y + (N * R.M + M0) * R.OutPlane + Band.Oh0 * G.OW, R.OutPlane, LanesIn, LanesOut);
          continue;
        }
        for (int64_t J = 0; J < Rows; ++J) {
          const int64_t Mj = M0 + J;
          const float Bias = B2 ? B2[Mj] : 0.0f;
          float *Out = Y + (N * R.M + Mj) * R.OutPlane;
          if (Flat)
            depthwiseFlatAvx512(FlatPlan, E + J * Pixels, W2 + Mj * KT, Bias, Out);
          else if (Avx512Planes)
            depthwisePlaneAvx512(Plan, E + J * Pixels, W2 + Mj * KT, Bias, Out);
          else if (Avx2Planes)
            depthwisePlaneAvx2(Plan, E + J * Pixels, W2 + Mj * KT, Bias, Out);
          else
            depthwisePlanePortable(G, A.Depthwise, E + J * Pixels, W2 + Mj * KT, Bias, Out);
        }
      }
    });
    return Status::ok();
  }

  /// Lanes8W's 8-channel groups per block of BlockM channels.
  static int64_t lanes8Groups(int64_t BlockM) { return (BlockM + kDwLanes8 - 1) / kDwLanes8; }

private:
  /// The depthwise planes of block B (Rows channels, expanded in E, planes Plane apart; Bias its
  /// biases or null) into Y (the block's first output plane): 8 channels at a time in strips of
  /// StripRows output rows.
  void depthwiseLanes8Block(const DwLanes8Geometry &LG, const FusedAct &Act, int64_t StripRows, const float *E,
                            int64_t Plane, int64_t B, int64_t Rows, const float *Bias, float *Y, int64_t OutPlane,
                            float *In, float *Out) const {
    const int64_t Taps = LG.KH * LG.KW;
    for (int64_t C0 = 0; C0 < Rows; C0 += kDwLanes8) {
      const int64_t Cv = std::min(kDwLanes8, Rows - C0);
      const float *Wt = Lanes8W.data() + (B * lanes8Groups(BlockM) + C0 / kDwLanes8) * Taps * kDwLanes8;
      alignas(32) float Bv[kDwLanes8] = {};
      if (Bias)
        std::copy(Bias + C0, Bias + C0 + Cv, Bv);
      for (int64_t Oh0 = 0; Oh0 < LG.OH; Oh0 += StripRows)
        depthwiseLanes8Strip(LG, E + C0 * Plane, Plane, Cv, Wt, Bv, Act, Oh0, std::min(LG.OH, Oh0 + StripRows), In,
                             Out, Y + C0 * OutPlane, OutPlane);
    }
  }

  /// The expanded rows of channels [M0, M0 + Rows) over Pixels pixels of one image (Xn: the first
  /// of them; input channels Plane apart) into E (rows Pixels apart): runs of pixels against
  /// Panels' 12-channel panels (pointwiseRunAvx2), the input rows read in place, the expand bias and
  /// clamp in the write-back. A run's input (K rows of up to 256 pixels) stays in L1/L2 while every
  /// panel of the block reads it.
  void expandRowsAvx2(const float *Xn, int64_t Plane, int64_t Pixels, int64_t M0, int64_t Rows, const float *B1,
                      float *E) const {
    constexpr int64_t Run = 256;
    for (int64_t J0 = 0; J0 < Pixels; J0 += Run) {
      const int64_t Nj = std::min(Run, Pixels - J0);
      for (int64_t P0 = 0; P0 < Rows; P0 += kRowPipelineMR)
        pointwiseRunAvx2(Panels.data() + (M0 + P0) * K, std::min(kRowPipelineMR, Rows - P0), K, Xn + J0, Plane, Nj,
                         B1 ? B1 + M0 + P0 : nullptr, A.Pointwise, E + P0 * Pixels + J0, Pixels);
    }
  }

  std::string Name;
  const GemmMicroKernel &MK;
  SeparableAttrs A;
  int64_t M, K; ///< W1's output and input channels
  int64_t BlockM;
  std::vector<PackedA> Blocks; ///< W1's rows [b * BlockM, +BlockM), packed for MK (the GEMM expand)
  /// Or W1 in panels of kRowPipelineMR channels (packPointwiseWeights; BlockM a multiple of it):
  /// the AVX2 expand by pointwise runs (expandRowsAvx2), Blocks empty.
  AlignedFloats Panels;
  PlaneIsa Planes;
  std::shared_ptr<const FlatDepthwisePlan> FlatCache; ///< planned at creation (known shapes), or null
  /// Planes Lanes8Avx2: W2 per block, in lanes8Groups(BlockM) groups of 8 channels ([Taps][8] each,
  /// zeros past the block's channels; packDepthwiseLanes8). Empty otherwise.
  AlignedFloats Lanes8W;
};

/// The row pipeline (AVX-512): the expanded rows live in a small per-worker ring buffer, a few
/// input rows ("steps") at a time, and each step is consumed by the depthwise rows that need it
/// right after it is computed. Work is split by channel panels (each worker keeps every row of
/// its channels): nothing is recomputed, the input is read in place, and a panel's freshly
/// expanded rows are still in L1 when its depthwise rows read them.
class FusedRowsKernel : public Kernel {
public:
  FusedRowsKernel(SeparableAttrs A, AlignedFloats Packed, int64_t M, int64_t K)
      : A(std::move(A)), Packed(std::move(Packed)), M(M), K(K) {}

  Status run(const KernelContext &Ctx) const override {
    static const char *Name = "f32_pointwise_depthwise__rows_avx512";
    ASSIGN_OR_RETURN(const SeparableRun R, planFused(Name, A, Ctx));
    if (R.N * R.M * R.OutPlane == 0)
      return Status::ok();
    if (R.M != M || R.C != K)
      return runError(Name, "weights do not match the packed ones");
    const float *X = Ctx.Inputs[0].data<float>(), *B1 = inputDataOrNull(Ctx, 3);
    const float *W2 = Ctx.Inputs[2].data<float>(), *B2 = inputDataOrNull(Ctx, 4);
    float *Y = Ctx.Outputs[0].data<float>();
    const DepthwiseGeometry G = separableGeometry(A, R.G);
    // 3x3 rows read as runs of 16 floats per tap; stride 2 then needs the input rows
    // deinterleaved (even columns, then odd ones: the 1x1 convolution keeps that order).
    const Dw3x3RowPlan Unit = planDw3x3Rows(G, G.SW == 2);
    const bool Deinterleave = Unit.Ok && G.SW == 2;
    const DepthwisePlan Plan = Unit.Ok ? DepthwisePlan{G, {}, {}, {}} : planDepthwise(G);
    const int64_t H = G.H, W = G.W, KT = G.KH * G.KW;
    // A step: at least 224 pixels (7 tiles of 32) of whole input rows, and at least two output
    // rows' worth (the depthwise rows then have 8 independent vectors in flight). Group g: the
    // output rows whose windows end in step g (the depthwise reads mostly the rows just expanded,
    // still in L1); the last group takes the rest.
    const int64_t SR = std::min<int64_t>(H, std::max<int64_t>(2 * G.SH, (224 + W - 1) / W));
    const int64_t NG = (H + SR - 1) / SR;
    const auto groupEnd = [&](int64_t Gi) -> int64_t {
      if (Gi < 0)
        return 0;
      if (Gi >= NG - 1)
        return G.OH;
      const int64_t Last = (Gi + 1) * SR - 1 + G.PH - (G.KH - 1); // oh * SH <= Last
      return std::min<int64_t>(G.OH, Last < 0 ? 0 : Last / G.SH + 1);
    };
    // Group Gi computes step Gi (steps go in order), then its output rows, which read steps
    // [SLo, Gi]: the ring keeps the last NS steps.
    const auto firstStep = [&](int64_t Gi) -> int64_t {
      const int64_t Oh0 = groupEnd(Gi - 1);
      if (groupEnd(Gi) <= Oh0)
        return std::min(Gi, NG - 1);
      return std::min<int64_t>(H - 1, std::max<int64_t>(0, Oh0 * G.SH - G.PH)) / SR;
    };
    int64_t NS = 1, MaxRows = G.KH;
    for (int64_t Gi = 0; Gi < NG; ++Gi) {
      NS = std::max(NS, Gi - firstStep(Gi) + 1);
      MaxRows = std::max(MaxRows, (groupEnd(Gi) - groupEnd(Gi - 1) - 1) * G.SH + G.KH);
    }
    const int64_t Panels = (M + kRowPipelineMR - 1) / kRowPipelineMR;
    const int64_t Work = R.N * R.M * (R.C * R.Plane + KT * R.OutPlane);
    const Parallel &Par = Ctx.Par.ifWorth(Work);
    // Work items: channel panels (each item every row of its channels: nothing recomputed), or,
    // for deinterleaved input rows, ranges of groups with every channel (each item splits only
    // its own rows, where a channel split splits all of them in every item; an item recomputes
    // the steps before its first group that the group reads).
    const int64_t Threads = Par.threads();
    const bool RowSplit = Deinterleave && Threads > 1 && NG >= 4 * Threads;
    const int64_t Chunks = RowSplit ? Threads : Threads > 1 ? std::min<int64_t>(Panels, 2 * Threads) : 1;
    Par.forRange(static_cast<size_t>(R.N * Chunks), 1, [&](size_t Lo, size_t Hi) {
      const int64_t MaxPanels = RowSplit ? Panels : (Panels + Chunks - 1) / Chunks;
      const int64_t ChannelPlane = SR * W, Slot = MaxPanels * kRowPipelineMR * ChannelPlane;
      thread_local AlignedFloats Ring; // NS slots, then a row of zeros
      const size_t Need = static_cast<size_t>(NS * Slot + W + 64);
      if (Ring.size() < Need)
        Ring.resize(Need);
      float *Zeros = Ring.data() + NS * Slot;
      std::fill(Zeros, Zeros + W + 64, 0.0f);
      thread_local AlignedFloats Split; // the step's input rows, deinterleaved
      if (Deinterleave && Split.size() < static_cast<size_t>(K * SR * W))
        Split.resize(static_cast<size_t>(K * SR * W));
      std::vector<const float *> Rows(static_cast<size_t>(MaxRows)), Base(static_cast<size_t>(MaxRows));
      for (size_t T = Lo; T < Hi; ++T) {
        const int64_t N = static_cast<int64_t>(T) / Chunks, Ch = static_cast<int64_t>(T) % Chunks;
        const int64_t P0 = RowSplit ? 0 : Ch * Panels / Chunks, P1 = RowSplit ? Panels : (Ch + 1) * Panels / Chunks;
        const int64_t G0 = RowSplit ? Ch * NG / Chunks : 0, G1 = RowSplit ? (Ch + 1) * NG / Chunks : NG;
        const float *Xn = X + N * K * R.Plane;
        for (int64_t Gi = G0 > 0 ? firstStep(G0) : 0; Gi < G1; ++Gi) {
          const bool Halo = Gi < G0; // a step of the previous item's rows: expanded, no output
          const int64_t Oh0 = groupEnd(Gi - 1), Oh1 = std::max(Oh0, groupEnd(Gi));
          const int64_t NRows = Oh1 > Oh0 ? (Oh1 - Oh0 - 1) * G.SH + G.KH : 0;
          const int64_t R0 = Gi * SR, R1 = std::min(H, R0 + SR);
          if (Deinterleave)
            deinterleaveRowsAvx512(Xn + R0 * W, R.Plane, K, R1 - R0, W, Split.data());
          const float *Src = Deinterleave ? Split.data() : Xn + R0 * W;
          const int64_t Ldx = Deinterleave ? (R1 - R0) * W : R.Plane;
          for (int64_t P = P0; P < P1; ++P) {
            const int64_t C0 = P * kRowPipelineMR, Cn = std::min(kRowPipelineMR, M - C0);
            const int64_t Local = (P - P0) * kRowPipelineMR * ChannelPlane;
            pointwiseRunAvx512(Packed.data() + P * K * kRowPipelineMR, Cn, K, Src, Ldx, (R1 - R0) * W,
                               B1 ? B1 + C0 : nullptr, A.Pointwise,
                               Ring.data() + (Gi % NS) * Slot + Local, ChannelPlane);
            if (Halo)
              continue;
            for (int64_t I = 0; I < NRows; ++I) { // the window's rows for the panel's first channel
              const int64_t Ih = Oh0 * G.SH - G.PH + I;
              Base[static_cast<size_t>(I)] = Ih < 0 || Ih >= H ? nullptr : Ring.data() + (Ih / SR % NS) * Slot + Local + Ih % SR * W;
            }
            for (int64_t J = 0; J < Cn; ++J) {
              for (int64_t I = 0; I < NRows; ++I) {
                const float *B = Base[static_cast<size_t>(I)];
                Rows[static_cast<size_t>(I)] = B ? B + J * ChannelPlane : Zeros;
              }
              const int64_t C = C0 + J;
              if (Oh1 > Oh0 && Unit.Ok)
                depthwise3x3RowsAvx512(Unit, Rows.data(), Oh1 - Oh0, W2 + C * KT, B2 ? B2[C] : 0.0f,
                                       Y + (N * M + C) * R.OutPlane + Oh0 * G.OW);
              else if (Oh1 > Oh0)
                depthwiseRowsAvx512(G, Plan.Masks.data(), Rows.data(), Oh1 - Oh0, W2 + C * KT, B2 ? B2[C] : 0.0f,
                                    Y + (N * M + C) * R.OutPlane + Oh0 * G.OW);
            }
          }
        }
      }
    });
    return Status::ok();
  }

private:
  SeparableAttrs A;
  AlignedFloats Packed; ///< W1 in panels of kRowPipelineMR channels (packPointwiseWeights)
  int64_t M, K;
};

/// Small planes (AVX-512): channels in vector lanes. The 1x1 convolution as Et[pixel][channel] =
/// X^T W1^T (the pixels the GEMM's rows: 49 pixels fill 49 of 60 rows of 12-row panels, where 32-
/// pixel vectors of a 7x7 plane would fill 49 of 64), the depthwise window per output pixel over
/// the channel vectors of its taps (a tap list per geometry: any window), then one transpose
/// into Y's planes. A block of 64 channels at a time stays in L1/L2.
class FusedTransposedKernel : public Kernel {
public:
  FusedTransposedKernel(SeparableAttrs A, int64_t M, int64_t K, AlignedFloats W1T, AlignedFloats W2T,
                        std::vector<float> B1, std::vector<float> B2, std::shared_ptr<const DepthwiseTapList> Taps)
      : A(std::move(A)), M(M), K(K), Mpad((M + 31) / 32 * 32), W1T(std::move(W1T)), W2T(std::move(W2T)),
        B1(std::move(B1)), B2(std::move(B2)), Taps(std::move(Taps)) {}

  Status run(const KernelContext &Ctx) const override {
    static const char *Name = "f32_pointwise_depthwise__transposed_avx512";
    ASSIGN_OR_RETURN(const SeparableRun R, planFused(Name, A, Ctx));
    if (R.N * R.M * R.OutPlane == 0)
      return Status::ok();
    if (R.M != M || R.C != K)
      return runError(Name, "weights do not match the packed ones");
    const DepthwiseGeometry G = separableGeometry(A, R.G);
    DepthwiseTapList Local;
    const bool Cached = Taps && static_cast<int64_t>(Taps->Begin.size()) == R.OutPlane + 1 && Planned &&
                        sameGeometry(PlannedG, G);
    if (!Cached)
      Local = listDepthwiseTaps(G);
    const DepthwiseTapList &TL = Cached ? *Taps : Local;
    const float *X = Ctx.Inputs[0].data<float>();
    float *Y = Ctx.Outputs[0].data<float>();
    constexpr int64_t Block = 64;
    const int64_t Blocks = (Mpad + Block - 1) / Block;
    const int64_t Work = R.N * R.M * (R.C * R.Plane + G.KH * G.KW * R.OutPlane);
    const Parallel &Par = Ctx.Par.ifWorth(Work);
    Par.forRange(static_cast<size_t>(R.N * Blocks), 1, [&](size_t Lo, size_t Hi) {
      thread_local AlignedFloats Buf; // the block's expanded pixels, then its depthwise outputs
      const size_t Need = static_cast<size_t>((R.Plane + R.OutPlane) * Block);
      if (Buf.size() < Need)
        Buf.resize(Need);
      float *Et = Buf.data(), *Dt = Buf.data() + R.Plane * Block;
      for (size_t T = Lo; T < Hi; ++T) {
        const int64_t N = static_cast<int64_t>(T) / Blocks, C0 = static_cast<int64_t>(T) % Blocks * Block;
        const int64_t Cols = std::min(Block, Mpad - C0);
        pointwiseTransposedAvx512(X + N * K * R.Plane, R.Plane, R.Plane, K, W1T.data() + C0, Mpad, Cols,
                                  B1.empty() ? nullptr : B1.data() + C0, A.Pointwise, Et, Block,
                                  T + 1 < Hi && C0 + Block < Mpad ? W1T.data() + C0 + Block : nullptr);
        depthwiseChannelsAvx512(G, TL, Et, Block, W2T.data() + C0, Mpad, B2.empty() ? nullptr : B2.data() + C0, Cols,
                                Dt, Block);
        transposeToPlanesAvx512(Dt, Block, R.OutPlane, std::min(Cols, M - C0), Y + (N * M + C0) * R.OutPlane,
                                R.OutPlane);
      }
    });
    return Status::ok();
  }

  void plannedFor(const DepthwiseGeometry &G) { PlannedG = G, Planned = true; }

private:
  SeparableAttrs A;
  int64_t M, K, Mpad;
  AlignedFloats W1T, W2T; ///< [K][Mpad] and [taps][Mpad], zero past M
  std::vector<float> B1, B2;   ///< [Mpad] (zero past M), or empty when the node has none
  std::shared_ptr<const DepthwiseTapList> Taps; ///< for PlannedG (known shapes), or null
  DepthwiseGeometry PlannedG{};
  bool Planned = false;
};

/// Whether the AVX2 blocked kernel expands by pointwise runs (input rows read in place, no B
/// panels packed per block) rather than by the GEMM. Per op against the GEMM expand on AMD EPYC
/// Zen 3, 1 thread (MobileNetV2's blocks): 112x112 0.70x, 56x56 0.81-0.84x, 28x28 0.85-0.89x,
/// 14x14 0.91-0.92x, 7x7 0.99-1.0x; every plane size then. Measured up to 160 input channels
/// (MobileNetV2's largest expand input); past 576 (untried) the GEMM expand stays.
bool expandByRowsAvx2(int64_t K) { return rowPipelineAvx2Supported() && K <= 576; }

KernelVariant blockedVariant(GemmIsa Isa, int Priority) {
  const GemmMicroKernel &MK = gemmMicroKernel(Isa);
  const std::string Name = std::string("f32_pointwise_depthwise__blocked_") + MK.Name;
  const auto Supports = [Isa](const KernelCreateInfo &I) {
    return separableTypesOk(I) && gemmIsaAvailable(Isa) && inputIsConst(I, 1) && attrsFor(I).isOk();
  };
  return {Name, Priority, Supports, [Name, &MK, Isa](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
            ASSIGN_OR_RETURN(SeparableAttrs A, attrsFor(I));
            const ConstData &W1 = *I.Inputs[1].Const;
            const int64_t M = W1.Dims[0], K = W1.Dims[1];
            // The plane size picks the block; an unknown one is taken as 56 x 56.
            const TensorShape &XS = I.Inputs[0].Shape;
            const int64_t Plane = XS[2].isConst() && XS[3].isConst() ? XS[2].value() * XS[3].value() : 56 * 56;
            const bool ExpandRows = Isa == GemmIsa::Avx2 && expandByRowsAvx2(K);
            const DepthwiseGeometry Any = planeGeometryOf(A.W, nullptr);
            PlaneIsa Planes = Isa == GemmIsa::Avx512 && depthwiseAvx512Supported(Any) ? PlaneIsa::Avx512
                              : Isa != GemmIsa::Portable && depthwiseAvx2Supported(Any) ? PlaneIsa::Avx2
                                                                                        : PlaneIsa::Portable;
            if (Planes == PlaneIsa::Avx2 && inputIsConst(I, 2) &&
                depthwiseLanes8Supported(Any.KH, Any.KW, Any.SH, Any.SW, Any.DH, Any.DW))
              Planes = PlaneIsa::Lanes8Avx2;
            int64_t BlockM = channelsPerBlock(M, Plane, ExpandRows ? kRowPipelineMR : MK.MR);
            // 8-lane depthwise groups: blocks of 24 channels (no partial group; the run splits the
            // rows into bands where that leaves too few blocks for the pool). 1 thread, Zen 3:
            // MobileNetV2's 144 channels at 56x56 in blocks of 24 instead of 36, stride 1 453 ->
            // 434 us; MobileNetV3-Small's 72 at 56x56 in 3 blocks of 24 instead of 6 of 12, 145 ->
            // 131 us.
            if (ExpandRows && Planes == PlaneIsa::Lanes8Avx2)
              BlockM = channelsPerBlock(M, Plane, 2 * kRowPipelineMR);
            std::vector<PackedA> Blocks;
            AlignedFloats Panels; // a hit in the packed-weights cache borrows them (PackedWeights.h)
            if (ExpandRows)
              Panels = packPointwiseWeightsCached(I, 1, Name + "/mr" + std::to_string(kRowPipelineMR));
            for (int64_t M0 = 0; !ExpandRows && (M0 < M || M0 == 0); M0 += BlockM) {
              Blocks.emplace_back();
              // A hit in the host's packed-weights cache borrows the block's packing (PackedWeights.h).
              const int64_t Rows = std::min(BlockM, M - M0);
              const std::string Key = packedWeightsKey(I, 1, Name + "/m" + std::to_string(M0) + "+" +
                                                                 std::to_string(Rows) + "/kc" + std::to_string(GemmKC));
              if (!borrowPackedA(Key, MK, Rows, K, GemmKC, Blocks.back())) {
                packA(MK, Rows, K, MatrixRef{W1.as<float>() + M0 * K, K, 1}, Blocks.back());
                storePackedA(Key, Blocks.back());
              }
            }
            markConstConsumed(I, 1);
            AlignedFloats Lanes8W;
            if (Planes == PlaneIsa::Lanes8Avx2) {
              const ConstData &W2 = *I.Inputs[2].Const;
              const int64_t Taps = Any.KH * Any.KW, Group = Taps * kDwLanes8;
              const int64_t PerBlock = FusedBlockedKernel::lanes8Groups(BlockM) * Group;
              const size_t Floats = static_cast<size_t>((M + BlockM - 1) / BlockM * PerBlock);
              const std::string Key = packedWeightsKey(I, 2, Name + "/lanes8/b" + std::to_string(BlockM));
              if (!borrowPackedFloats(Key, Floats, Lanes8W)) {
                Lanes8W.resize(Floats);
                for (int64_t M0 = 0; M0 < M; M0 += BlockM)
                  packDepthwiseLanes8(W2.as<float>() + M0 * Taps, std::min(BlockM, M - M0), Taps,
                                      Lanes8W.data() + M0 / BlockM * PerBlock);
                storePackedFloats(Key, Lanes8W);
              }
              markConstConsumed(I, 2);
            }
            std::shared_ptr<const FlatDepthwisePlan> FlatCache;
            if (Planes == PlaneIsa::Avx512 && XS[2].isConst() && XS[3].isConst()) {
              const WindowGeometry Geo = computeWindowGeometry(A.W, {1, K, XS[2].value(), XS[3].value()});
              FlatCache = cachedFlatPlan(separableGeometry(A, Geo));
            }
            return makeKernel<FusedBlockedKernel>(Name, MK, std::move(A), M, K, BlockM, std::move(Blocks),
                                                  std::move(Panels), Planes, std::move(FlatCache),
                                                  std::move(Lanes8W));
          }};
}

KernelVariant rowsVariant(int Priority) {
  const std::string Name = "f32_pointwise_depthwise__rows_avx512";
  const auto Supports = [](const KernelCreateInfo &I) {
    if (!separableTypesOk(I) || !rowPipelineAvx512Supported() || !inputIsConst(I, 1))
      return false;
    const Result<SeparableAttrs> A = attrsFor(I);
    if (!A.isOk() || A.value().W.Dilations[0] != 1 || A.value().W.Dilations[1] != 1 ||
        (A.value().W.Strides[1] != 1 && A.value().W.Strides[1] != 2))
      return false;
    // Stride-1 planes narrower than 14 (MobileNetV2's 7x7 blocks) measured the same or a few percent
    // faster with the blocked kernel (its whole-plane GEMM fills the tiles of 49 pixels as well).
    // The 28x28 and 14x14 blocks: 1 thread 153 -> 116 us and 120 -> 102 us on this kernel.
    const TensorShape &XS = I.Inputs[0].Shape;
    return A.value().W.Strides[1] == 2 || !XS[3].isConst() || XS[3].value() >= 14;
  };
  return {Name, Priority, Supports, [](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
            ASSIGN_OR_RETURN(SeparableAttrs A, attrsFor(I));
            RowPipelineWeights P = packRowPipelineWeights(I, 1, "f32_pointwise_depthwise__rows_avx512");
            return makeKernel<FusedRowsKernel>(std::move(A), std::move(P.Packed), P.M, P.C);
          }};
}

/// The largest plane (input pixels) the transposed kernel takes: MobileNetV2's 14x14 and 7x7 blocks.
constexpr int64_t kTransposedMaxPlane = 196;

KernelVariant transposedVariant(int Priority) {
  const std::string Name = "f32_pointwise_depthwise__transposed_avx512";
  const auto Supports = [](const KernelCreateInfo &I) {
    if (!separableTypesOk(I) || !rowPipelineAvx512Supported() || !inputIsConst(I, 1) || !inputIsConst(I, 2))
      return false;
    for (size_t In = 3; In < 5 && In < I.Inputs.size(); ++In)
      if (I.Inputs[In].Present && !inputIsConst(I, In))
        return false;
    const TensorShape &XS = I.Inputs[0].Shape;
    const Result<SeparableAttrs> A = attrsFor(I);
    if (!A.isOk() || !XS[2].isConst() || !XS[3].isConst())
      return false;
    // Strided 14x14 planes (MobileNetV2's features.14: 1 thread 228 -> 185 us, 2 threads 119 ->
    // 124). Not the stride-1 14x14 blocks (faster on the row pipeline: 102 vs 136 us for
    // features.8), nor the 7x7 ones: 3-7% faster than the blocked kernel on 1 thread but 17-19%
    // slower on 2 (ABBA runs, features.15-17: 104-109 vs 89-91 us; evening out the blocks over the
    // threads made it worse).
    const int64_t Plane = XS[2].value() * XS[3].value();
    return Plane > 64 && Plane <= kTransposedMaxPlane && A.value().W.Strides[0] * A.value().W.Strides[1] > 1;
  };
  return {Name, Priority, Supports, [](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
            ASSIGN_OR_RETURN(SeparableAttrs A, attrsFor(I));
            const ConstData &W1 = *I.Inputs[1].Const, &W2 = *I.Inputs[2].Const;
            const int64_t M = W1.Dims[0], K = W1.Dims[1], Mpad = (M + 31) / 32 * 32;
            const int64_t Taps = W2.Dims[2] * W2.Dims[3];
            // Both transposes in a compiled folder's packed.bin (the load borrows them).
            AlignedFloats W1T, W2T;
            const float *W1p = W1.as<float>(), *W2p = W2.as<float>();
            packFloatsCached(packedWeightsKey(I, 1, "f32_pointwise_depthwise__transposed_avx512"),
                             static_cast<size_t>(std::max<int64_t>(1, K * Mpad)), W1T, [&](float *Out) {
                               for (int64_t C = 0; C < M; ++C)
                                 for (int64_t Kk = 0; Kk < K; ++Kk)
                                   Out[Kk * Mpad + C] = W1p[C * K + Kk];
                             });
            packFloatsCached(packedWeightsKey(I, 2, "f32_pointwise_depthwise__transposed_avx512"),
                             static_cast<size_t>(std::max<int64_t>(1, Taps * Mpad)), W2T, [&](float *Out) {
                               for (int64_t C = 0; C < M; ++C)
                                 for (int64_t T = 0; T < Taps; ++T)
                                   Out[T * Mpad + C] = W2p[C * Taps + T];
                             });
            const auto padded = [&](size_t In) {
              std::vector<float> B;
              if (I.Inputs.size() > In && I.Inputs[In].Present) {
                B.assign(static_cast<size_t>(Mpad), 0.0f);
                std::copy(I.Inputs[In].Const->as<float>(), I.Inputs[In].Const->as<float>() + M, B.begin());
              }
              return B;
            };
            std::vector<float> B1 = padded(3), B2 = padded(4);
            const TensorShape &XS = I.Inputs[0].Shape;
            const WindowGeometry Geo = computeWindowGeometry(A.W, {1, K, XS[2].value(), XS[3].value()});
            const DepthwiseGeometry G = separableGeometry(A, Geo);
            auto TL = std::make_shared<const DepthwiseTapList>(listDepthwiseTaps(G));
            markConstConsumed(I, 1);
            auto Kn = std::make_unique<FusedTransposedKernel>(std::move(A), M, K, std::move(W1T), std::move(W2T),
                                                              std::move(B1), std::move(B2), std::move(TL));
            Kn->plannedFor(G);
            return std::unique_ptr<Kernel>(std::move(Kn));
          }};
}

std::vector<OpTestCase> fusedCases() {
  const auto X = [](std::vector<int64_t> D) { return tensorInput(std::move(D)); };
  const auto W = [](std::vector<int64_t> D) { return constInput(std::move(D)); };
  const auto ints = [](std::vector<int64_t> V) { return attrInts(std::move(V)); };
  const auto act = [](std::map<std::string, AttrValue> Attrs, float Lo, float Hi, bool Expand) {
    return withSeparableClamp(std::move(Attrs), Lo, Hi, Expand, kPointwiseFirst);
  };
  const auto relu6 = [&](std::map<std::string, AttrValue> Attrs) { return act(act(Attrs, 0, 6, true), 0, 6, false); };
  return {
      // MobileNetV2-like: 3x3, pads 1, Relu6 on both; M a multiple of 12 and not.
      testCase("mnv2_stride1", {X({1, 16, 9, 11}), W({24, 16, 1, 1}), W({24, 1, 3, 3}), W({24}), W({24})},
               relu6({{"group", attrInt(24)}, {"pads", ints({1, 1, 1, 1})}})),
      testCase("mnv2_stride2_odd", {X({1, 7, 13, 15}), W({20, 7, 1, 1}), W({20, 1, 3, 3}), W({20}), W({20})},
               relu6({{"group", attrInt(20)}, {"pads", ints({1, 1, 1, 1})}, {"strides", ints({2, 2})}})),
      // Tight clip bounds (the clamps really cut), no biases, batch 2.
      testCase("clips_no_bias", {X({2, 5, 8, 7}), W({13, 5, 1, 1}), W({13, 1, 3, 3}), omittedInput(), omittedInput()},
               act(act({{"group", attrInt(13)}, {"pads", ints({1, 1, 1, 1})}}, -0.1f, 0.2f, true), -0.05f, 0.15f, false)),
      testCase("expand_clamp_only", {X({1, 6, 10, 10}), W({18, 6, 1, 1}), W({18, 1, 3, 3}), W({18}), omittedInput()},
               act({{"group", attrInt(18)}, {"pads", ints({1, 1, 1, 1})}}, 0.0f, INFINITY, true)),
      testCase("no_clamps_asym_pads", {X({1, 4, 9, 12}), W({12, 4, 1, 1}), W({12, 1, 3, 3}), omittedInput(), W({12})},
               {{"group", attrInt(12)}, {"pads", ints({0, 1, 2, 0})}}),
      // Stride 2 with enough groups to split the rows over the pool (each item expanding the step
      // before its first group again).
      testCase("rows_split_stride2", {X({1, 8, 67, 112}), W({24, 8, 1, 1}), W({24, 1, 3, 3}), W({24}), W({24})},
               relu6({{"group", attrInt(24)}, {"pads", ints({1, 1, 1, 1})}, {"strides", ints({2, 2})}}), 1e-4),
      // 72 channels: six blocks of 12 (a quarter rounded up to 24 left three), MobileNetV3-Small's
      // features.2 expansion (stride 2) on a smaller plane.
      testCase("six_blocks_of_72", {X({1, 16, 20, 22}), W({72, 16, 1, 1}), W({72, 1, 3, 3}), W({72}), W({72})},
               relu6({{"group", attrInt(72)}, {"pads", ints({1, 1, 1, 1})}, {"strides", ints({2, 2})}})),
      // Several channel blocks (a big plane), the last one partial.
      testCase("many_blocks", {X({1, 8, 61, 59}), W({40, 8, 1, 1}), W({40, 1, 3, 3}), W({40}), W({40})},
               relu6({{"group", attrInt(40)}, {"pads", ints({1, 1, 1, 1})}}), 1e-4),
      testCase("many_blocks_stride2", {X({2, 3, 45, 50}), W({30, 3, 1, 1}), W({30, 1, 3, 3}), W({30}), W({30})},
               relu6({{"group", attrInt(30)}, {"pads", ints({1, 1, 1, 1})}, {"strides", ints({2, 2})}}), 1e-4),
      // Large K (two GEMM K blocks) on a 7x7 plane.
      testCase("large_k_small_plane", {X({1, 200, 7, 7}), W({48, 200, 1, 1}), W({48, 1, 3, 3}), W({48}), W({48})},
               relu6({{"group", attrInt(48)}, {"pads", ints({1, 1, 1, 1})}}), 1e-4),
      // "Same" output planes with asymmetric pads and a 5x5 kernel (the flat-plane kernel).
      testCase("same_asym_pads", {X({1, 4, 9, 12}), W({12, 4, 1, 1}), W({12, 1, 3, 3}), W({12}), W({12})},
               relu6({{"group", attrInt(12)}, {"pads", ints({0, 2, 2, 0})}})),
      testCase("same_5x5", {X({2, 6, 13, 5}), W({17, 6, 1, 1}), W({17, 1, 5, 5}), W({17}), omittedInput()},
               act({{"group", attrInt(17)}, {"pads", ints({2, 2, 2, 2})}}, -0.3f, 0.4f, false)),
      testCase("kernel5_dilated", {X({1, 5, 17, 19}), W({14, 5, 1, 1}), W({14, 1, 5, 5}), W({14}), W({14})},
               {{"group", attrInt(14)}, {"pads", ints({2, 4, 2, 4})}, {"dilations", ints({1, 2})}}),
      // Stride 2 with odd and even widths, 5 rows of taps, vertical stride 1, right pad 0.
      testCase("stride2_even_width", {X({1, 5, 12, 34}), W({12, 5, 1, 1}), W({12, 1, 3, 3}), W({12}), W({12})},
               relu6({{"group", attrInt(12)}, {"pads", ints({1, 1, 1, 1})}, {"strides", ints({2, 2})}})),
      testCase("stride2_tall_kernel", {X({1, 3, 15, 33}), W({12, 3, 1, 1}), W({12, 1, 5, 3}), W({12}), omittedInput()},
               act({{"group", attrInt(12)}, {"pads", ints({2, 1, 2, 0})}, {"strides", ints({1, 2})}}, -0.3f, 0.3f,
                   false)),
      testCase("stride2_narrow", {X({2, 4, 5, 2}), W({12, 4, 1, 1}), W({12, 1, 3, 3}), omittedInput(), W({12})},
               {{"group", attrInt(12)}, {"pads", ints({1, 1, 1, 1})}, {"strides", ints({2, 2})}}),
      // Horizontal stride 3: the AVX-512 plane kernel does not take it (portable planes).
      testCase("stride3", {X({1, 4, 11, 17}), W({12, 4, 1, 1}), W({12, 1, 3, 3}), W({12}), W({12})},
               {{"group", attrInt(12)}, {"strides", ints({2, 3})}, {"pads", ints({1, 1, 1, 1})}}),
      testCase("same_upper", {X({1, 4, 10, 9}), W({12, 4, 1, 1}), W({12, 1, 3, 3}), W({12}), W({12})},
               {{"group", attrInt(12)}, {"auto_pad", attrString("SAME_UPPER")}, {"strides", ints({2, 2})}}),
      // Row-pipeline shapes: whole 3x3 rows of up to 7 column blocks, several rows per call, steps
      // that do not divide the plane, work big enough to split over the pool.
      testCase("rows_wide_stride1", {X({1, 16, 23, 112}), W({26, 16, 1, 1}), W({26, 1, 3, 3}), W({26}), W({26})},
               relu6({{"group", attrInt(26)}, {"pads", ints({1, 1, 1, 1})}}), 1e-4),
      testCase("rows_wide_stride2_odd", {X({1, 9, 31, 111}), W({30, 9, 1, 1}), W({30, 1, 3, 3}), W({30}), W({30})},
               relu6({{"group", attrInt(30)}, {"pads", ints({1, 1, 1, 1})}, {"strides", ints({2, 2})}}), 1e-4),
      testCase("rows_56_stride1", {X({2, 24, 17, 56}), W({37, 24, 1, 1}), W({37, 1, 3, 3}), W({37}), omittedInput()},
               act({{"group", attrInt(37)}, {"pads", ints({1, 1, 1, 1})}}, -0.2f, 0.3f, true), 1e-4),
      testCase("rows_28_stride2", {X({1, 32, 28, 28}), W({40, 32, 1, 1}), W({40, 1, 3, 3}), omittedInput(), W({40})},
               relu6({{"group", attrInt(40)}, {"pads", ints({1, 1, 1, 1})}, {"strides", ints({2, 2})}}), 1e-4),
      testCase("rows_14_big_k", {X({1, 96, 14, 14}), W({100, 96, 1, 1}), W({100, 1, 3, 3}), W({100}), W({100})},
               relu6({{"group", attrInt(100)}, {"pads", ints({1, 1, 1, 1})}}), 1e-4),
      // Small planes (the channels-in-lanes kernel takes the strided 14x14 one): 7x7 (49 pixels),
      // 14x14 stride 2, channel counts not a multiple of 32 (or of 16), no biases, clamps cutting.
      testCase("transposed_7x7", {X({1, 40, 7, 7}), W({120, 40, 1, 1}), W({120, 1, 3, 3}), W({120}), W({120})},
               relu6({{"group", attrInt(120)}, {"pads", ints({1, 1, 1, 1})}}), 1e-4),
      testCase("transposed_14_stride2", {X({2, 24, 14, 14}), W({70, 24, 1, 1}), W({70, 1, 3, 3}), W({70}), W({70})},
               relu6({{"group", attrInt(70)}, {"pads", ints({1, 1, 1, 1})}, {"strides", ints({2, 2})}}), 1e-4),
      testCase("transposed_big", {X({1, 160, 7, 7}), W({200, 160, 1, 1}), W({200, 1, 3, 3}), omittedInput(),
                                  omittedInput()},
               act(act({{"group", attrInt(200)}, {"pads", ints({1, 1, 1, 1})}}, -0.1f, 0.2f, true), -0.05f, 0.1f,
                   false), 1e-4),
      // The AVX2 planes: 7x7 with dilation 2, a plane narrower than 8, vertical stride 3, NaN in
      // the input with both clamps (NaN passes them).
      testCase("avx2_7x7_dilated", {X({1, 4, 19, 29}), W({10, 4, 1, 1}), W({10, 1, 7, 7}), W({10}), W({10})},
               act({{"group", attrInt(10)}, {"pads", ints({6, 6, 6, 6})}, {"dilations", ints({2, 2})}}, -0.5f, 0.5f,
                   false), 1e-4),
      testCase("avx2_narrow_vstride3", {X({1, 5, 13, 6}), W({9, 5, 1, 1}), W({9, 1, 3, 3}), W({9}), W({9})},
               relu6({{"group", attrInt(9)}, {"pads", ints({1, 1, 1, 1})}, {"strides", ints({3, 1})}})),
      testCase("avx2_nan_clamps", {valuesInput({1, 3, 11, 21}, nanSprinkled(3 * 11 * 21, 31), ElementType::F32, false),
                                   W({8, 3, 1, 1}), W({8, 1, 3, 3}), W({8}), W({8})},
               relu6({{"group", attrInt(8)}, {"pads", ints({1, 1, 1, 1})}, {"strides", ints({2, 2})}})),
      // The AVX2 expand by pixel runs in two chunks of 150 input channels (partial sums through
      // the expanded planes, the clamp on the last); past 576 the GEMM expand (packed B panels).
      testCase("avx2_rows_expand_chunked", {X({1, 300, 9, 10}), W({14, 300, 1, 1}), W({14, 1, 3, 3}), W({14}), W({14})},
               act(relu6({{"group", attrInt(14)}, {"pads", ints({1, 1, 1, 1})}}), -0.2f, 0.3f, true), 1e-4),
      testCase("avx2_gemm_expand_deep_k", {X({1, 600, 6, 5}), W({16, 600, 1, 1}), W({16, 1, 3, 3}), W({16}), W({16})},
               relu6({{"group", attrInt(16)}, {"pads", ints({1, 1, 1, 1})}}), 1e-4),
      // The AVX2 8-lane depthwise (common/DepthwiseLanes8): four blocks of 24 channels (three groups
      // of 8 each), a 7x7 stride-2 window over one block of 20 channels (groups of 8, 8 and 4),
      // and a depthwise weight that is not constant (the AVX2 plane kernel instead).
      testCase("lanes8_blocks_of_24", {X({1, 8, 20, 21}), W({96, 8, 1, 1}), W({96, 1, 3, 3}), W({96}), W({96})},
               relu6({{"group", attrInt(96)}, {"pads", ints({1, 1, 1, 1})}}), 1e-4),
      testCase("lanes8_7x7_stride2", {X({1, 6, 23, 19}), W({20, 6, 1, 1}), W({20, 1, 7, 7}), W({20}), W({20})},
               act({{"group", attrInt(20)}, {"pads", ints({3, 2, 3, 4})}, {"strides", ints({2, 2})}}, -0.4f, 0.5f,
                   false), 1e-4),
      // Blocks whose expanded planes pass the band budget (96K floats): two bands of output rows,
      // the second recomputing the input rows the first one's windows also read (5x5 stride 1: 4
      // rows; 3x3 stride 2 with a top pad of 2).
      testCase("lanes8_bands_5x5", {X({1, 4, 70, 60}), W({24, 4, 1, 1}), W({24, 1, 5, 5}), W({24}), W({24})},
               relu6({{"group", attrInt(24)}, {"pads", ints({2, 2, 2, 2})}}), 1e-4),
      testCase("lanes8_bands_stride2", {X({1, 3, 91, 45}), W({48, 3, 1, 1}), W({48, 1, 3, 3}), W({48}), W({48})},
               relu6({{"group", attrInt(48)}, {"pads", ints({2, 1, 1, 1})}, {"strides", ints({2, 2})}}), 1e-4),
      testCase("lanes8_w2_not_const", {X({1, 5, 12, 17}), W({12, 5, 1, 1}), X({12, 1, 3, 3}), W({12}), W({12})},
               relu6({{"group", attrInt(12)}, {"pads", ints({1, 1, 1, 1})}})),
      // Weights not constant: only the reference runs it.
      testCase("weights_not_const", {X({1, 4, 6, 6}), X({12, 4, 1, 1}), X({12, 1, 3, 3}), X({12}), X({12})},
               {{"group", attrInt(12)}, {"pads", ints({1, 1, 1, 1})}}),
  };
}

OpKernels fusedKernels() {
  OpKernels K;
  K.Domain = kFusedPointwiseDepthwiseDomain;
  K.OpType = kFusedPointwiseDepthwiseOp;
  K.Variants.push_back(separableReferenceVariant("f32_pointwise_depthwise__ref", kPointwiseFirst));
  K.Variants.push_back(blockedVariant(GemmIsa::Portable, 10));
  K.Variants.push_back(blockedVariant(GemmIsa::Avx2, 20));
  K.Variants.push_back(blockedVariant(GemmIsa::Avx512, 30));
  K.Variants.push_back(rowsVariant(40));
  K.Variants.push_back(transposedVariant(45));
  K.TestCases = fusedCases;
  return K;
}

OPT_REGISTER_HEAVY_SCHEMA(FusedPointwiseDepthwise, separableSchema(kFusedPointwiseDepthwiseOp, kPointwiseFirst));
OPT_REGISTER_KERNELS(FusedPointwiseDepthwise, fusedKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
