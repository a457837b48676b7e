// 1x1 Conv on large planes (AVX-512 or AVX2 + FMA, common/RowPipeline): runs of pixels against
// weight panels, the input rows read in place; bias, fused residual and clamp in the write-back.
// Strided 1x1 convolutions (AVX2) run the same kernels on their input subsampled first.
#include <algorithm>
#include <cstring>
#include <limits>
#include <string>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "backends/native/ops/common/ConvResidual.h"
#include "backends/native/ops/common/RowPipeline.h"
#include "backends/native/ops/common/ThreadScratch.h"
#include "backends/native/ops/conv/ConvCommon.h"
#include "ir/FusedOps.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace conv {

namespace {

/// Dst[c][oh * OW + ow] = X[c][oh * SH * W + ow * SW] for channels c in [C0, C1) (planes H x W in,
/// OH x OW out): a strided 1x1 convolution's input subsampled into compact planes, so that the
/// stride-1 kernels below read it in place. Stride 2 on AVX2 keeps the even lanes of two loads
/// (as ConvIm2col's packSegmentAvx2), vectors whose 16 inputs would run past the row are done
/// one by one; any other stride one by one (stride 1: a copy).
#if defined(__x86_64__)
__attribute__((target("avx2")))
#endif
void subsampleChannels(const float *X, int64_t H, int64_t W, int64_t SH, int64_t SW, int64_t OH, int64_t OW,
                       int64_t C0, int64_t C1, float *Dst) {
  const int64_t InPlane = H * W, OutPlane = OH * OW;
  for (int64_t C = C0; C < C1; ++C)
    for (int64_t Oh = 0; Oh < OH; ++Oh) {
      const float *Row = X + C * InPlane + Oh * SH * W;
      float *D = Dst + C * OutPlane + Oh * OW;
      int64_t Ow = 0;
      if (SW == 1) {
        std::memcpy(D, Row, static_cast<size_t>(OW) * sizeof(float));
        continue;
      }
#if defined(__x86_64__)
      if (SW == 2)
        for (; Ow + 8 <= OW && 2 * Ow + 16 <= W; Ow += 8) { // inputs 2Ow .. 2Ow + 15 inside the row
          const float *S = Row + 2 * Ow;
          const __m256 E = _mm256_shuffle_ps(_mm256_loadu_ps(S), _mm256_loadu_ps(S + 8), 0x88);
          _mm256_storeu_ps(D + Ow, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(E), 0xD8)));
        }
#endif
      for (; Ow < OW; ++Ow)
        D[Ow] = Row[Ow * SW];
    }
}

/// A 1x1 convolution with strides and no padding (ResNet's downsample convolutions): true when it
/// is one (Strides > 1 somewhere), the kernels below then run on the subsampled input.
bool isStridedPointwise(const WindowAttrs &W) {
  if (W.AutoPad != "NOTSET" && W.AutoPad != "VALID")
    return false;
  bool Strided = false;
  for (size_t I = 0; I < W.spatialRank(); ++I) {
    if (W.Kernel[I] != 1 || W.Strides[I] < 1)
      return false;
    Strided = Strided || W.Strides[I] > 1;
  }
  for (int64_t P : W.Pads)
    if (P != 0)
      return false;
  return Strided;
}

/// X, or for a strided 1x1 convolution (Strided) its input subsampled into the calling thread's
/// Scratch (image by image, channels spread over Par): the stride-1 input the kernels read. Fails
/// when the geometry is not a padding-free 2-D one.
Result<const float *> pointwiseInput(const char *Name, bool Strided, const ConvAttrs &A, const ConvRun &R,
                                     const float *X, ScratchFrame &Scratch, const Parallel &Par) {
  if (!Strided)
    return X;
  if (R.G.In.size() != 2 || R.G.PadBegin[0] != 0 || R.G.PadBegin[1] != 0)
    return runError(Name, "expected a 2-D 1x1 convolution without padding");
  const int64_t H = R.G.In[0], W = R.G.In[1], OH = R.G.Out[0], OW = R.G.Out[1];
  const int64_t SH = A.W.Strides[0], SW = A.W.Strides[1];
  if ((OH - 1) * SH >= H || (OW - 1) * SW >= W)
    return runError(Name, "output ", OH, "x", OW, " does not fit the ", H, "x", W, " input at strides ", SH, "x", SW);
  float *const Dst = Scratch.take<float>(static_cast<size_t>(R.N * R.C * R.OutPlane));
  const int64_t Channels = R.N * R.C;
  Par.ifWorth(Channels * R.InPlane).forRange(static_cast<size_t>(Channels), 16, [&](size_t Lo, size_t Hi) {
    subsampleChannels(X, H, W, SH, SW, OH, OW, static_cast<int64_t>(Lo), static_cast<int64_t>(Hi), Dst);
  });
  return static_cast<const float *>(Dst);
}

/// The pointwise run of one ISA (RowPipeline.h: pointwiseRunAvx512 or pointwiseRunAvx2).
using PointwiseRunFn = void (*)(const float *, int64_t, int64_t, const float *, int64_t, int64_t, const float *,
                                const FusedAct &, float *, int64_t, const float *);

/// 1x1 convolutions (stride 1, no padding, group 1) on large planes (AVX-512, AVX2): runs of pixels
/// against 12-channel weight panels, the input channels' rows read in place (no im2col panel
/// copies), bias, fused residual and clamp in the write-back (no second pass over Y for a
/// residual). Work items are runs of pixels, every output channel of a run while its inputs are
/// in L2.
class ConvPointwiseRowsKernel : public Kernel {
public:
  ConvPointwiseRowsKernel(const char *Name, PointwiseRunFn RunFn, ConvAttrs A, AlignedFloats Packed, int64_t M,
                          int64_t C, bool Strided)
      : Name(Name), RunFn(RunFn), A(std::move(A)), Packed(std::move(Packed)), M(M), C(C), Strided(Strided) {}

  Status run(const KernelContext &Ctx) const override {
    ASSIGN_OR_RETURN(const ConvRun R, planConv(Name, A, Ctx));
    if (R.M != M || R.C != C || (!Strided && R.InPlane != R.OutPlane))
      return runError(Name, "shapes differ from the packed weights");
    const float *B = biasOf(Ctx), *Res = convResidualOf(Ctx);
    ScratchFrame Subsampled;
    ASSIGN_OR_RETURN(const float *X, pointwiseInput(Name, Strided, A, R, Ctx.Inputs[0].data<float>(), Subsampled,
                                                    Ctx.Par));
    float *Y = Ctx.Outputs[0].data<float>();
    if (Res && Ctx.Inputs[kFusedResidualInput].elementCount() != Ctx.Outputs[0].elementCount())
      return runError(Name, "the residual does not match the output");
    const int64_t P = R.OutPlane, Panels = (M + kRowPipelineMR - 1) / kRowPipelineMR;
    if (R.N * M * P == 0)
      return Status::ok();
    const Parallel &Par = Ctx.Par.ifWorth(R.N * M * C * P);
    const int64_t Threads = std::max(1, Par.threads());
    // Pixels per item: at most 256 (8 tiles of 32), as many items as a multiple of the threads
    // (while few), of equal length in 16-pixel steps: 784 pixels on 2 threads are 4 x ~196
    // (3 x 208 + 160), not 3 x 256 + 16 (512 against 272 pixels per thread).
    int64_t Runs = (P + 255) / 256;
    const int64_t Whole = Runs;
    while (Threads > 1 && R.N * Runs < 4 * Threads && (R.N * Runs) % Threads != 0)
      ++Runs;
    int64_t Run = Threads == 1 ? 256 : std::min<int64_t>(256, ((P + Runs - 1) / Runs + 15) / 16 * 16);
    Runs = (P + Run - 1) / Run;
    // Few runs (a 14x14 plane is one): the panels split into groups too, two items per thread.
    int64_t Groups = std::max<int64_t>(1, std::min(Panels, (2 * Threads + R.N * Runs - 1) / (R.N * Runs)));
    // A single image whose plane is one run: split only its panels where the multiply-adds that
    // saves in the largest part (16-pixel tiles x panels: 14x14 is 13 tiles x 43 of 86 panels
    // against 7 x 86 for runs of 112 and 84 pixels) outweigh 8 per float of the rest of X that
    // each part then reads too (from the other core's cache, mostly). Zen 3, 2 threads, minima of
    // alternated runs: ResNet-50's layer3 conv3 (1024 from 256 on 14x14) 635 -> 589 us in the
    // model, MobileNetV2's 384 from 64 on 14x14 64.4 -> 57.7; split, 40 from 240 (MobileNetV3-
    // Small) 28.2 -> 31.4 and 64 from 192 33.8 -> 36.7 (4 and 6 panels), which the rule keeps
    // on runs.
    const auto Tiles = [](int64_t Pixels) { return (Pixels + 15) / 16; };
    const int64_t ChannelGroups = std::min<int64_t>(Panels, Threads);
    if (R.N == 1 && Whole == 1 && Runs > 1 && ChannelGroups > 1) {
      const int64_t Saved = Tiles(Run) * Panels - Tiles(P) * ((Panels + ChannelGroups - 1) / ChannelGroups);
      if (Saved * 16 * kRowPipelineMR > 8 * (P - Run)) // per input channel
        Runs = 1, Run = P, Groups = ChannelGroups;
    }
    // Two whole panels at a time where the AVX2 kernel takes them and it pays.
    const bool Paired = RunFn == pointwiseRunAvx2 && pointwiseAvx2PairsPanels(C, P);
    Par.forRange(static_cast<size_t>(R.N * Runs * Groups), 1, [&](size_t Lo, size_t Hi) {
      for (size_t T = Lo; T < Hi; ++T) {
        const int64_t Gi = static_cast<int64_t>(T) % Groups, Item = static_cast<int64_t>(T) / Groups;
        const int64_t N = Item / Runs, J0 = Item % Runs * Run;
        const int64_t Nj = std::min(Run, P - J0);
        const int64_t PnEnd = (Gi + 1) * Panels / Groups;
        for (int64_t Pn = Gi * Panels / Groups; Pn < PnEnd;) {
          const int64_t M0 = Pn * kRowPipelineMR;
          const int64_t Off = (N * M + M0) * P + J0;
          const int64_t Take = Paired && Pn + 1 < PnEnd && M0 + 2 * kRowPipelineMR <= M ? 2 : 1;
          RunFn(Packed.data() + Pn * C * kRowPipelineMR, std::min(Take * kRowPipelineMR, M - M0), C,
                X + N * C * P + J0, P, Nj, B ? B + M0 : nullptr, A.Act, Y + Off, P, Res ? Res + Off : nullptr);
          Pn += Take;
        }
      }
    });
    return Status::ok();
  }

private:
  const char *Name;
  PointwiseRunFn RunFn;
  ConvAttrs A;
  AlignedFloats Packed; ///< W in panels of kRowPipelineMR channels (packPointwiseWeights)
  int64_t M, C;
  bool Strided; ///< strides over 1: X subsampled first (pointwiseInput)
};
/// Where one ISA's ConvPointwiseRowsKernel runs: output planes of at least MinPlane pixels, at
/// most MaxM output and MaxC input channels.
struct PointwiseRowsLimits {
  int64_t MinPlane, MaxM, MaxC;
};

/// AVX-512: MobileNetV2's 28x28 and 56x56 projections (against the im2col GEMM, 1 thread: 56x56
/// 228 -> 211 us, 28x28 86 -> 64; 2 threads: 102 -> 79 and equal). The 14x14 ones were 5-12%
/// faster on 1 thread but 10-15% slower on 2 (a plane is one run of pixels, split by channel
/// panels, each item reading all of X), so they stay on im2col. Measured on MobileNetV2's
/// projections (24-32 output channels from 96-192): many input channels (each a row read in place)
/// or output panels (each re-reading the run) are untried.
constexpr PointwiseRowsLimits kAvx512Limits{784, 96, 256};
/// AVX2 + FMA: 13x13 planes and up, at most 768 input channels (pointwiseRowsAvx2Variant).
constexpr PointwiseRowsLimits kAvx2Limits{169, std::numeric_limits<int64_t>::max(), 768};

KernelVariant rowsVariant(const char *Name, int Priority, bool (*Cpu)(), PointwiseRunFn RunFn,
                          PointwiseRowsLimits L, bool Strided = false) {
  const auto Supports = [Cpu, L, Strided](const KernelCreateInfo &I) {
    if (!convTypesOk(I) || !is2D(I) || !inputIsConst(I, 1) || !Cpu())
      return false;
    if (I.Inputs.size() > kFusedResidualInput && I.Inputs[kFusedResidualInput].Present &&
        I.Inputs[kFusedResidualInput].Type != ElementType::F32)
      return false;
    auto A = attrsFor(I);
    if (!A.isOk() || A->Group != 1 || !(Strided ? isStridedPointwise(A->W) : isPlainPointwise(A->W)))
      return false;
    const TensorShape &Y = I.Outputs[0].Shape, &Wt = I.Inputs[1].Shape;
    return Y.getRank() == 4 && Y[2].isConst() && Y[3].isConst() && Y[2].value() * Y[3].value() >= L.MinPlane &&
           Wt[0].isConst() && Wt[1].isConst() && Wt[0].value() <= L.MaxM && Wt[1].value() <= L.MaxC;
  };
  return {Name, Priority, Supports, [Name, RunFn, Strided](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
            ASSIGN_OR_RETURN(ConvAttrs A, attrsFor(I));
            const ConstData &Wt = *I.Inputs[1].Const;
            const int64_t M = Wt.Dims[0], C = Wt.Dims[1];
            // A hit in the host's packed-weights cache borrows the panels (PackedWeights.h).
            AlignedFloats Packed = packPointwiseWeightsCached(I, 1, std::string(Name) + "/mr" +
                                                                        std::to_string(kRowPipelineMR));
            markConstConsumed(I, 1);
            return makeKernel<ConvPointwiseRowsKernel>(Name, RunFn, std::move(A), std::move(Packed), M, C, Strided);
          }};
}

/// 1x1 convolutions (stride 1, no padding, group 1) on small planes, AVX2 + FMA: channels in
/// lanes (pointwiseTransposedAvx2), X read in place, the weights transposed once at load; each
/// work item a range of 16-channel blocks of one image over all its pixels (or every block over a
/// range of its pixels, where that balances the threads better), its product transposed back into
/// the output planes with the residual and the activation. 49 pixels are 8
/// tiles of 6 and a 1-pixel one, where the pixels-in-lanes kernels fill three 16-pixel tiles and
/// a 1-pixel one.
class ConvPointwiseTransposedKernel : public Kernel {
public:
  ConvPointwiseTransposedKernel(const char *Name, ConvAttrs A, AlignedFloats WT, std::vector<float> Bias, int64_t M,
                                int64_t Mpad, int64_t C, bool Strided)
      : Name(Name), A(std::move(A)), WT(std::move(WT)), Bias(std::move(Bias)), M(M), Mpad(Mpad), C(C),
        Strided(Strided) {}

  Status run(const KernelContext &Ctx) const override {
    ASSIGN_OR_RETURN(const ConvRun R, planConv(Name, A, Ctx));
    if (R.M != M || R.C != C || (!Strided && R.InPlane != R.OutPlane))
      return runError(Name, "shapes differ from the packed weights");
    const float *Res = convResidualOf(Ctx);
    ScratchFrame Subsampled;
    ASSIGN_OR_RETURN(const float *X, pointwiseInput(Name, Strided, A, R, Ctx.Inputs[0].data<float>(), Subsampled,
                                                    Ctx.Par));
    const float *B = biasOf(Ctx) ? Bias.data() : nullptr;
    float *Y = Ctx.Outputs[0].data<float>();
    if (Res && Ctx.Inputs[kFusedResidualInput].elementCount() != Ctx.Outputs[0].elementCount())
      return runError(Name, "the residual does not match the output");
    const int64_t P = R.OutPlane, Blocks = (Mpad + 15) / 16;
    if (R.N * M * P == 0)
      return Status::ok();
    const Parallel &Par = Ctx.Par.ifWorth(R.N * M * C * P);
    const int64_t Threads = std::max(1, Par.threads()), Share = (Threads + R.N - 1) / R.N;
    // Fewer images than threads: each image split in Share parts, by 16-channel blocks (each
    // group reads all of X and its part of W) unless its largest part has more 6-pixel tiles x
    // blocks than the largest of a split by pixels (all blocks, a range of pixels starting at a
    // multiple of 16, so that no cache line of Y is written by two): SqueezeNet's 48 channels
    // from 384 on 13x13, three blocks on 2 threads (2 x 29 tiles against 3 x 15), 48.4 -> 37.5
    // us. Where the blocks divide evenly the pixel split measured slower (64 channels from 512
    // on 13x13 61.2 -> 64.7 us, 96 from 576 on 14x14 118.3 -> 121.1: each part re-reads all of W).
    const auto Tiles = [](int64_t Pixels) { return (Pixels + 5) / 6; };
    const auto PartStart = [P](int64_t Pi, int64_t Parts) { return Pi == Parts ? P : (Pi * P / Parts + 8) / 16 * 16; };
    const int64_t PixelParts = std::min(Share, P / 16), ChannelParts = std::min(Blocks, Share);
    int64_t PixelLoad = 0;
    for (int64_t Pi = 0; Pi < PixelParts; ++Pi)
      PixelLoad = std::max(PixelLoad, Blocks * Tiles(PartStart(Pi + 1, PixelParts) - PartStart(Pi, PixelParts)));
    const bool ByPixels = PixelParts > 1 && PixelLoad < (Blocks + ChannelParts - 1) / ChannelParts * Tiles(P);
    const int64_t Parts = ByPixels ? PixelParts : 1, Groups = ByPixels ? 1 : std::max<int64_t>(1, ChannelParts);
    // The input channels in chunks of at most 128: a chunk's rows of X (25 KB on 7x7) and a
    // 16-channel panel's part (8 KB) stay in L1 across the panels and the pixel tiles. On Zen 3,
    // 1 thread, MobileNetV2's 7x7 projections from 960 channels: 242 -> 203 us with 128, 237
    // with 160, 243 with 256, 217 with 64.
    constexpr int64_t kChunk = 128;
    const int64_t Chunks = (C + kChunk - 1) / kChunk, Step = (C + Chunks - 1) / Chunks;
    Par.forRange(static_cast<size_t>(R.N * Parts * Groups), 1, [&](size_t Lo, size_t Hi) {
      ScratchFrame Scratch; // this worker's product, on its scratch stack (ThreadScratch.h)
      float *const Product = Scratch.take<float>(static_cast<size_t>(P * ((Blocks + Groups - 1) / Groups * 16)));
      for (size_t T = Lo; T < Hi; ++T) {
        const int64_t Gi = static_cast<int64_t>(T) % Groups, Item = static_cast<int64_t>(T) / Groups;
        const int64_t N = Item / Parts, J0 = PartStart(Item % Parts, Parts);
        const int64_t Pixels = PartStart(Item % Parts + 1, Parts) - J0;
        const int64_t C0 = Gi * Blocks / Groups * 16, C1 = std::min(Mpad, (Gi + 1) * Blocks / Groups * 16);
        const int64_t Cols = C1 - C0;
        if (Cols <= 0)
          continue;
        const float *Xn = X + N * C * P + J0;
        for (int64_t K0 = 0; K0 < C; K0 += Step)
          pointwiseTransposedAvx2(Xn + K0 * P, P, Pixels, K0, std::min(Step, C - K0), WT.data() + C0 * C, C, Cols,
                                  B ? B + C0 : nullptr, K0 > 0, Product);
        for (int64_t Cb = C0; Cb < std::min(M, C1); Cb += 16) { // the product's blocks into planes
          const int64_t Width = std::min<int64_t>(16, C1 - Cb), Off = (N * M + Cb) * P + J0;
          transposeToPlanesActAvx2(Product + (Cb - C0) * Pixels, Width, Pixels, std::min<int64_t>(Width, M - Cb),
                                   A.Act, Res ? Res + Off : nullptr, Y + Off, P);
        }
      }
    });
    return Status::ok();
  }

private:
  const char *Name;
  ConvAttrs A;
  AlignedFloats WT;        ///< W in packTransposedWeightsAvx2's panels
  std::vector<float> Bias; ///< the bias padded with zeros to Mpad (empty without one)
  int64_t M, Mpad, C;
  bool Strided; ///< strides over 1: X subsampled first (pointwiseInput)
};

} // namespace

/// AVX2 + FMA, channels in lanes: planes of 16 to 196 pixels (7x7, 14x14) where the input
/// channels are at least the output ones (projections) or, up to 10x10, at least 256; over 10x10
/// only from at least 384 input channels (SqueezeNet's 13x13 classifier, 1000 from 512: 2.12-2.16
/// -> 1.86-1.90 ms against the GEMM alone, 1 thread, Zen 3). Ranked above the AVX2 GEMM's transposed pointwise path
/// (20) and the pixels-in-lanes rows kernel (25). Measured per op on Zen 3 (minima of alternating
/// runs against main, 1 thread / 2 threads): 7x7 projections 0.72-0.90x / 0.71-0.82x (MobileNetV2
/// 160 / 320 from 576-960 channels, EfficientNet-B0 192 / 320 from 1152, MobileNetV3-Small 96
/// from 288 / 576), 7x7 1280 from 320 0.94x / 0.83-0.87x, ResNet-50's 7x7 1x1s 0.88-0.98x (1
/// thread), 14x14 projections from 384-1024 channels 0.87-0.94x / 0.87-0.93x. Left out:
/// expansions from few channels (EfficientNet-B0's 1152 from 192 on 7x7 1.05x, 480 / 672 from 80
/// / 112 on 14x14 1.04-1.07x: X re-read from L2 for each of 30-72 channel blocks) and 14x14
/// projections from 96-240 channels (MobileNetV3-Small 1.04-1.12x / 1.17-1.31x: the rows
/// kernel's 16-pixel tiles fill 196 pixels well).
constexpr int64_t kTransposedAvx2MinPlane = 16, kTransposedAvx2MaxPlane = 196, kTransposedAvx2SmallPlane = 100;
constexpr int64_t kTransposedAvx2DeepInput = 256, kTransposedAvx2LargePlaneInput = 384;

namespace {
KernelVariant transposedAvx2Variant(const char *Name, int Priority, bool Strided) {
  const auto Supports = [Strided](const KernelCreateInfo &I) {
    if (!convTypesOk(I) || !is2D(I) || !inputIsConst(I, 1) || !rowPipelineAvx2Supported())
      return false;
    if (I.Inputs.size() > 2 && I.Inputs[2].Present && !inputIsConst(I, 2))
      return false;
    if (I.Inputs.size() > kFusedResidualInput && I.Inputs[kFusedResidualInput].Present &&
        I.Inputs[kFusedResidualInput].Type != ElementType::F32)
      return false;
    auto A = attrsFor(I);
    if (!A.isOk() || A->Group != 1 || !(Strided ? isStridedPointwise(A->W) : isPlainPointwise(A->W)))
      return false;
    const TensorShape &Y = I.Outputs[0].Shape;
    if (Y.getRank() != 4 || !Y[2].isConst() || !Y[3].isConst())
      return false;
    const TensorShape &Wt = I.Inputs[1].Shape;
    if (!Wt[0].isConst() || !Wt[1].isConst())
      return false;
    const int64_t Plane = Y[2].value() * Y[3].value(), M = Wt[0].value(), C = Wt[1].value();
    if (Plane < kTransposedAvx2MinPlane || Plane > kTransposedAvx2MaxPlane)
      return false;
    if (Plane > kTransposedAvx2SmallPlane)
      return C >= kTransposedAvx2LargePlaneInput;
    return C >= M || C >= kTransposedAvx2DeepInput;
  };
  return {Name, Priority, Supports, [Name, Strided](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
            ASSIGN_OR_RETURN(ConvAttrs A, attrsFor(I));
            const ConstData &Wt = *I.Inputs[1].Const;
            const int64_t M = Wt.Dims[0], C = Wt.Dims[1], Mpad = (M + 7) / 8 * 8;
            // A hit in the host's packed-weights cache borrows the panels (PackedWeights.h).
            AlignedFloats WT = packTransposedWeightsAvx2Cached(I, 1, std::string(Name) + "/panels16");
            std::vector<float> Bias;
            if (I.Inputs.size() > 2 && I.Inputs[2].Present) {
              const float *Bv = I.Inputs[2].Const->as<float>();
              Bias.assign(static_cast<size_t>(Mpad), 0.0f);
              std::copy(Bv, Bv + M, Bias.begin());
            }
            markConstConsumed(I, 1);
            return makeKernel<ConvPointwiseTransposedKernel>(Name, std::move(A), std::move(WT), std::move(Bias), M,
                                                             Mpad, C, Strided);
          }};
}
} // namespace

KernelVariant pointwiseTransposedAvx2Variant() {
  return transposedAvx2Variant("f32_conv__pointwise_transposed_avx2", 26, false);
}

/// The channels-in-lanes kernel for strided 1x1 convolutions (no padding), on their input
/// subsampled into compact planes, where the output plane fits the rules above (ResNet-50's
/// layer4.0 downsample, 2048 from 1024 channels, 14x14 -> 7x7). Per op on Zen 3 (minima of
/// alternating runs against main's im2col GEMM, 1 / 2 threads): 0.85x / 0.76x; ResNet-18's layer4.0
/// downsample (512 from 256) 0.83x / 0.66x.
KernelVariant pointwiseTransposedStridedAvx2Variant() {
  return transposedAvx2Variant("f32_conv__pointwise_transposed_strided_avx2", 26, true);
}

KernelVariant pointwiseRowsVariant() {
  return rowsVariant("f32_conv__pointwise_rows_avx512", 35, rowPipelineAvx512Supported, pointwiseRunAvx512,
                     kAvx512Limits);
}

/// The AVX2 kernel ranks above the AVX2 im2col GEMM (20) and below the AVX-512 one (30): an
/// AVX-512 CPU keeps its own kernels. Limits measured per op against the im2col GEMM on AMD EPYC
/// Zen 3 (minima of alternating runs, 1 thread): MobileNetV2's 112x112, 56x56 and 28x28
/// projections 0.60-0.83x, its 14x14 ones (64-96 from 192-576 channels) 0.90-0.95x; EfficientNet-B0's
/// 14x14 1x1s 0.88-0.95x (672 input channels included); ResNet-50's 1x1s with up to 512 input
/// channels 0.78-0.96x on 56x56 to 14x14 planes, whatever the output channels (up to 1024);
/// SqueezeNet's 13x13 ones that the channels-in-lanes kernel leaves (fewer than 384 input
/// channels: 48 from 256, 192 / 256 from 48 / 64) 0.85-0.88x / 0.81-0.85x at 1 / 2 threads in
/// the model. Left
/// on the GEMM: 7x7 planes (MobileNetV2's 320 and 1280 from 960 and 320 channels 1.14x, 160 from
/// 960 1.02-1.04x: 49 pixels are three 16-pixel tiles and a 1-pixel tail) and over 768 input
/// channels (ResNet-50's 14x14 from 1024: 1.00-1.05x with the channel chunks, 1.02-1.08x without).
KernelVariant pointwiseRowsAvx2Variant() {
  return rowsVariant("f32_conv__pointwise_rows_avx2", 25, rowPipelineAvx2Supported, pointwiseRunAvx2, kAvx2Limits);
}

/// The rows kernel for strided 1x1 convolutions (no padding), on their input subsampled into
/// compact planes (pointwiseInput: one fan-out over the channels, then the stride-1 kernel),
/// output planes of 13x13 and up, at most 768 input channels: ResNet's downsample convolutions,
/// which the im2col GEMM ran through a phase plane and B-panel copies. Per op on Zen 3 (minima of
/// alternating runs against main, 1 / 2 threads): ResNet-50's layer2.0 (512 from 256, 56x56 ->
/// 28x28) 0.86x / 0.83x, layer3.0 (1024 from 512, 28x28 -> 14x14) 0.82x / 0.81x; ResNet-18's
/// layer2.0 / layer3.0 0.83-0.94x / 0.77-0.80x.
KernelVariant pointwiseRowsStridedAvx2Variant() {
  return rowsVariant("f32_conv__pointwise_rows_strided_avx2", 25, rowPipelineAvx2Supported, pointwiseRunAvx2,
                     kAvx2Limits, true);
}

} // namespace conv
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
