// Direct (no im2col) group-1 Conv for small problems: a stencil over output-channel blocks for
// small stride-1 convolutions (common/SmallConv) and a row kernel for few-input-channel stems
// (common/DirectConv).
#include <algorithm>

#include "backends/native/ops/common/DirectConv.h"
#include "backends/native/ops/common/PackedWeights.h"
#include "backends/native/ops/common/PlaneWindow.h"
#include "backends/native/ops/common/SmallConv.h"
#include "backends/native/ops/conv/ConvCommon.h"
#include "core/CpuFeatures.h"
#include "ir/FusedOps.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace conv {

namespace {

/// Small group-1 stride-1 convolutions as a direct stencil (common/SmallConv.h): weights packed
/// in output-channel blocks at creation, the image zero-padded once per run, no im2col panels.
class ConvSmallKernel : public Kernel {
public:
  ConvSmallKernel(ConvAttrs A, SmallConvWeights Packed, bool Avx512)
      : A(std::move(A)), Packed(std::move(Packed)), Avx512(Avx512) {}

  Status run(const KernelContext &Ctx) const override {
    ASSIGN_OR_RETURN(const ConvRun R, planConv(Avx512 ? "f32_conv__small_avx512" : "f32_conv__small_avx2", A, Ctx));
    const float *X = Ctx.Inputs[0].data<float>(), *B = biasOf(Ctx);
    float *Y = Ctx.Outputs[0].data<float>();
    SmallConvGeometry G;
    G.C = R.C, G.H = R.G.In[0], G.W = R.G.In[1], G.M = R.M, G.OH = R.G.Out[0], G.OW = R.G.Out[1];
    G.KH = A.W.Kernel[0], G.KW = A.W.Kernel[1], G.PH = R.G.PadBegin[0], G.PW = R.G.PadBegin[1];
    G.Act = A.Act;
    if (G.OH <= 0 || G.OW <= 0 || G.M == 0)
      return Status::ok();
    for (int64_t N = 0; N < R.N; ++N)
      if (Avx512)
        smallConv(G, Packed, B, X + N * R.C * R.InPlane, Y + N * R.M * R.OutPlane, Ctx.Par);
      else
        smallConvAvx2(G, Packed, B, X + N * R.C * R.InPlane, Y + N * R.M * R.OutPlane, Ctx.Par);
    return Status::ok();
  }

private:
  ConvAttrs A;
  SmallConvWeights Packed;
  bool Avx512;
};

/// Group-1 convolution with few input channels (an RGB stem) by the direct kernel of
/// common/DirectConv (AVX-512 or its AVX2+FMA sibling): output rows split over the pool, bias and
/// activation in registers.
class ConvDirectKernel : public Kernel {
public:
  ConvDirectKernel(ConvAttrs A, AlignedFloats PackedW, bool Avx512)
      : A(std::move(A)), PackedW(std::move(PackedW)), Avx512(Avx512) {}

  Status run(const KernelContext &Ctx) const override {
    const char *Name = Avx512 ? "f32_conv__direct_avx512" : "f32_conv__direct_avx2";
    ASSIGN_OR_RETURN(const ConvRun R, planConv(Name, A, Ctx));
    if (R.OutPlane == 0 || R.N * R.M == 0)
      return Status::ok();
    DirectConvGeometry D;
    D.G = planeGeometryOf(A.W, &R.G);
    D.G.Act = A.Act;
    D.C = R.C, D.M = R.M;
    const bool Supported = Avx512 ? directConvAvx512Supported(D.G, R.C) : directConvAvx2Supported(D.G, R.C);
    if (A.Group != 1 || !Supported || PackedW.size() != static_cast<size_t>(R.M * R.C * R.Taps))
      return runError(Name, "geometry or weights not supported");
    const DepthwisePlan Plan = Avx512 ? planDepthwise(D.G) : planDepthwiseAvx2(D.G);
    const float *X = Ctx.Inputs[0].data<float>(), *B = biasOf(Ctx);
    float *Y = Ctx.Outputs[0].data<float>();
    const int64_t OH = D.G.OH, RowWork = D.G.OW * R.M * R.C * R.Taps;
    // Rows of about 64K multiply-adds per task; under ~1M in all, the calling thread alone.
    const Parallel &Par = Ctx.Par.ifWorth(R.N * OH * RowWork);
    const size_t Grain = static_cast<size_t>(std::max<int64_t>(1, 65536 / std::max<int64_t>(1, RowWork)));
    Par.forRange(static_cast<size_t>(R.N * OH), Grain, [&](size_t Lo, size_t Hi) {
      for (int64_t T = static_cast<int64_t>(Lo); T < static_cast<int64_t>(Hi);) {
        const int64_t N = T / OH, Oh0 = T % OH, Oh1 = std::min(OH, Oh0 + static_cast<int64_t>(Hi) - T);
        const float *Xn = X + N * R.C * R.InPlane;
        float *Yn = Y + N * R.M * R.OutPlane;
        if (Avx512)
          directConvRowsAvx512(D, Plan, Xn, PackedW.data(), B, Yn, Oh0, Oh1);
        else
          directConvRowsAvx2(D, Plan, Xn, PackedW.data(), B, Yn, Oh0, Oh1);
        T += Oh1 - Oh0;
      }
    });
    return Status::ok();
  }

private:
  ConvAttrs A;
  AlignedFloats PackedW; ///< AVX-512: [C * KH * KW][M]; AVX2: packDirectConvWeightsAvx2's groups
  bool Avx512;
};

/// Input channels up to which a group-1 convolution takes the direct kernel (3: RGB stems).
constexpr int64_t kDirectMaxChannels = 4;

} // namespace

namespace {
KernelVariant directVariant(bool Avx512) {
  const auto Supports = [Avx512](const KernelCreateInfo &I) {
    if (!convTypesOk(I) || !is2D(I) || !inputIsConst(I, 1))
      return false;
    auto A = attrsFor(I);
    const TensorShape &X = I.Inputs[0].Shape;
    if (!A.isOk() || A->Group != 1 || A->W.Kernel.size() != 2 || !X[1].isConst() || X[1].value() > kDirectMaxChannels)
      return false;
    const DepthwiseGeometry G = planeGeometryOf(A->W, nullptr);
    if (Avx512)
      return directConvAvx512Supported(G, X[1].value());
    // Beyond the AVX-512 kernel's taps (7x7 stems) an AVX-512 CPU keeps its im2col GEMM.
    return directConvAvx2Supported(G, X[1].value()) &&
           (X[1].value() * G.KH * G.KW <= kDirectConvMaxTaps || !cpuFeatures().avx512Fma());
  };
  return {Avx512 ? "f32_conv__direct_avx512" : "f32_conv__direct_avx2", Avx512 ? 40 : 38, Supports,
          [Avx512](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
            ASSIGN_OR_RETURN(ConvAttrs A, attrsFor(I));
            const ConstData &Wt = *I.Inputs[1].Const;
            const int64_t M = Wt.Dims[0], Taps = product(Wt.Dims, 1, 4);
            // A compiled folder's packed.bin holds the layout (the load borrows it).
            AlignedFloats Packed;
            packFloatsCached(packedWeightsKey(I, 1, Avx512 ? "f32_conv__direct_avx512" : "f32_conv__direct_avx2"),
                             static_cast<size_t>(M * Taps), Packed, [&](float *Out) {
                               if (Avx512)
                                 packDirectConvWeights(Wt.as<float>(), M, Taps, Out);
                               else
                                 packDirectConvWeightsAvx2(Wt.as<float>(), M, Taps, Out);
                             });
            markConstConsumed(I, 1);
            return makeKernel<ConvDirectKernel>(std::move(A), std::move(Packed), Avx512);
          }};
}
} // namespace

KernelVariant directAvx512Variant() { return directVariant(true); }

KernelVariant directAvx2Variant() { return directVariant(false); }

/// The small variants take group-1 stride-1 undilated 2-D convolutions with constant weights, a
/// kernel larger than 1x1 and few output channels (at most 64), below Winograd (3x3 shapes where
/// it pays) and above the im2col GEMM: there the im2col GEMM's per-K-block
/// panel copies and partial 12 x 32 tiles cost more than the convolution (MNIST: conv1 1->16 5x5 on
/// 28x28 21 -> 4 us, conv2 16->32 5x5 on 14x14 60 -> 33 us; see the issue note). The AVX2 + FMA
/// one sits below the AVX2 Winograd (25) and the AVX2 stem kernel (38): on MNIST it takes conv2.
namespace {
KernelVariant smallVariant(bool Avx512) {
  const auto Supports = [Avx512](const KernelCreateInfo &I) {
    if (!convTypesOk(I) || !is2D(I) || !(Avx512 ? smallConvAvailable() : smallConvAvx2Available()) ||
        !inputIsConst(I, 1))
      return false;
    auto A = attrsFor(I);
    if (!A.isOk() || A->Group != 1 || A->W.Kernel.size() != 2)
      return false;
    const WindowAttrs &W = A->W;
    if (W.Strides[0] != 1 || W.Strides[1] != 1 || W.Dilations[0] != 1 || W.Dilations[1] != 1 ||
        W.Kernel[0] * W.Kernel[1] < 2)
      return false;
    const std::vector<int64_t> &D = I.Inputs[1].Const->Dims;
    return D[0] <= kSmallConvMaxOutputChannels && D[1] * W.Kernel[0] * W.Kernel[1] <= kSmallConvMaxReduction;
  };
  return {Avx512 ? "f32_conv__small_avx512" : "f32_conv__small_avx2", Avx512 ? 35 : 22, Supports,
          [Avx512](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
            ASSIGN_OR_RETURN(ConvAttrs A, attrsFor(I));
            const ConstData &Wt = *I.Inputs[1].Const;
            // The tile shape (AVX-512 and AVX2 alike) follows the output row width: pack the one
            // layout a static shape needs, both when the width is only known per run.
            const TensorShape &YS = I.Outputs[0].Shape;
            const bool Known = YS.getRank() == 4 && YS[3].isConst();
            const bool Pixels = Known && smallConvPixelTiles(YS[3].value(), Wt.Dims[0]);
            SmallConvWeights Packed;
            packSmallConvWeights(I, 1, Avx512 ? "f32_conv__small_avx512" : "f32_conv__small_avx2", !Known || !Pixels,
                                 !Known || Pixels, Packed);
            markConstConsumed(I, 1); // run() reads the packed copy only
            return makeKernel<ConvSmallKernel>(std::move(A), std::move(Packed), Avx512);
          }};
}
} // namespace

KernelVariant smallConvVariant() { return smallVariant(true); }

KernelVariant smallConvAvx2Variant() { return smallVariant(false); }

} // namespace conv
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
