// Conv by Winograd F(4x4, 3x3) / F(2x2, 3x3) for 3x3 stride-1 group-1 convolutions
// (common/Winograd): the driver, with the im2col GEMM as fallback for shapes the tile does not fit.
#include <memory>
#include <string>

#include "backends/native/ops/common/ConvResidual.h"
#include "backends/native/ops/common/PackedWeights.h"
#include "backends/native/ops/common/Winograd.h"
#include "backends/native/ops/conv/ConvCommon.h"
#include "ir/FusedOps.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace conv {

namespace {

/// 3x3 stride-1 convolution by Winograd F(4x4, 3x3) or F(2x2, 3x3) (common/Winograd.h): weights
/// transformed at creation; bias, a fused residual and the clamp applied in the output transform.
/// With spatial dims unknown at creation, W is F(4x4) and Fallback (the im2col GEMM) runs the shapes
/// tileFor gives another tile (or none).
class ConvWinogradKernel : public Kernel {
public:
  ConvWinogradKernel(std::string Name, ConvAttrs A, GemmIsa Isa, std::unique_ptr<Winograd3x3> W,
                     std::unique_ptr<Kernel> Fallback = nullptr)
      : Name(std::move(Name)), A(std::move(A)), Isa(Isa), W(std::move(W)), Fallback(std::move(Fallback)) {}

  Status run(const KernelContext &Ctx) const override {
    ASSIGN_OR_RETURN(const ConvRun R, planConv(Name.c_str(), A, Ctx));
    if (Fallback && Winograd3x3::tileFor(R.C, R.M, R.G.Out[0], R.G.Out[1], Isa) != W->tile())
      return Fallback->run(Ctx);
    const float *X = Ctx.Inputs[0].data<float>(), *Res = convResidualOf(Ctx);
    float *Y = Ctx.Outputs[0].data<float>();
    if (Res && Ctx.Inputs[kFusedResidualInput].elementCount() != Ctx.Outputs[0].elementCount())
      return runError(Name.c_str(), "the residual does not match the output");
    WinogradGeometry G;
    G.H = R.G.In[0], G.W = R.G.In[1], G.OH = R.G.Out[0], G.OW = R.G.Out[1];
    G.PadTop = R.G.PadBegin[0], G.PadLeft = R.G.PadBegin[1];
    WinogradEpilogue Ep;
    Ep.Bias = biasOf(Ctx);
    Ep.Act = A.Act;
    for (int64_t N = 0; N < R.N; ++N) {
      Ep.Residual = Res ? Res + N * R.M * R.OutPlane : nullptr;
      W->run(X + N * R.C * R.InPlane, G, Y + N * R.M * R.OutPlane, Ep, Ctx.Par);
    }
    return Status::ok();
  }

private:
  std::string Name;
  ConvAttrs A;
  GemmIsa Isa; ///< whose tileFor thresholds pick the tile
  std::unique_ptr<Winograd3x3> W;
  std::unique_ptr<Kernel> Fallback;
};

} // namespace

/// Winograd for 3x3 stride-1 dilation-1 group-1 2-D convolutions with constant weights, with the
/// tile Winograd3x3::tileFor picks for the (known) shape on Isa. AVX-512 and AVX2 use their GEMM
/// and transforms and rank above their im2col GEMM (30, 20) where tileFor (measured per layer shape
/// on each tier's CPU) says Winograd wins; the portable one (the best GEMM this CPU has, scalar
/// transforms) is not measured against im2col and ranks below it.
KernelVariant winogradVariant(GemmIsa Isa) {
  const std::string Name = Isa == GemmIsa::Avx512 ? "f32_conv__winograd_avx512"
                           : Isa == GemmIsa::Avx2 ? "f32_conv__winograd_avx2"
                                                  : "f32_conv__winograd_portable";
  const int Priority = Isa == GemmIsa::Avx512 ? 40 : Isa == GemmIsa::Avx2 ? 25 : 5;
  const auto Supports = [Isa](const KernelCreateInfo &I) {
    if (!convTypesOk(I) || !is2D(I) || !inputIsConst(I, 1) || (Isa != GemmIsa::Portable && !gemmIsaAvailable(Isa)))
      return false;
    if (I.Inputs.size() > kFusedResidualInput && I.Inputs[kFusedResidualInput].Present &&
        I.Inputs[kFusedResidualInput].Type != ElementType::F32)
      return false;
    auto A = attrsFor(I);
    if (!A.isOk() || A->Group != 1 || A->W.Kernel != std::vector<int64_t>{3, 3} ||
        A->W.Strides != std::vector<int64_t>{1, 1} || A->W.Dilations != std::vector<int64_t>{1, 1})
      return false;
    const TensorShape &Wt = I.Inputs[1].Shape, &Y = I.Outputs[0].Shape;
    if (!Wt[0].isConst() || !Wt[1].isConst() || Y.getRank() != 4)
      return false;
    if (!Y[2].isConst() || !Y[3].isConst()) // F(4x4) when the run's plane is large enough (OCR images)
      return Isa != GemmIsa::Portable && Winograd3x3::tileFor(Wt[1].value(), Wt[0].value(), 1024, 1024, Isa) == 4;
    return Winograd3x3::tileFor(Wt[1].value(), Wt[0].value(), Y[2].value(), Y[3].value(), Isa) != 0;
  };
  return {Name, Priority, Supports, [Name, Isa](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
            ASSIGN_OR_RETURN(ConvAttrs A, attrsFor(I));
            const ConstData &Wt = *I.Inputs[1].Const;
            // The portable variant multiplies on the best GEMM this CPU has.
            const GemmIsa GemmOn = Isa != GemmIsa::Portable       ? Isa
                                   : gemmIsaAvailable(GemmIsa::Avx2) ? GemmIsa::Avx2
                                                                    : GemmIsa::Portable;
            const TensorShape &Y = I.Outputs[0].Shape;
            const bool Known = Y[2].isConst() && Y[3].isConst();
            std::unique_ptr<Kernel> Fallback;
            if (!Known) { // packs its own copy of the weights
              ASSIGN_OR_RETURN(Fallback, withConvResidual(im2colVariant(GemmOn, 0)).Create(I));
            }
            const int Tile =
                Known ? Winograd3x3::tileFor(Wt.Dims[1], Wt.Dims[0], Y[2].value(), Y[3].value(), Isa) : 4;
            const GemmMicroKernel &MK = gemmMicroKernel(GemmOn);
            std::unique_ptr<Winograd3x3> W(new Winograd3x3(MK, Isa, Wt.as<float>(), Wt.Dims[0], Wt.Dims[1], Tile,
                                                           packedWeightsKey(I, 1, Name + "/" + MK.Name)));
            markConstConsumed(I, 1);
            return makeKernel<ConvWinogradKernel>(Name, std::move(A), Isa, std::move(W), std::move(Fallback));
          }};
}

} // namespace conv
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
