// 1x1 Conv on large planes (AVX-512, common/RowPipeline): runs of pixels against weight panels,
// the input rows read in place; bias, fused residual and clamp in the write-back.
#include <algorithm>

#include "backends/native/ops/common/ConvResidual.h"
#include "backends/native/ops/common/RowPipeline.h"
#include "backends/native/ops/conv/ConvCommon.h"
#include "ir/FusedOps.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace conv {

namespace {

/// 1x1 convolutions (stride 1, no padding, group 1) on large planes (AVX-512): runs of pixels
/// against 12-channel weight panels, the input channels' rows read in place (no im2col panel
/// copies), bias, fused residual and clamp in the write-back (no second pass over Y for a
/// residual). Work items are runs of pixels, every output channel of a run while its inputs are
/// in L2.
class ConvPointwiseRowsKernel : public Kernel {
public:
  ConvPointwiseRowsKernel(ConvAttrs A, std::vector<float> Packed, int64_t M, int64_t C)
      : A(std::move(A)), Packed(std::move(Packed)), M(M), C(C) {}

  Status run(const KernelContext &Ctx) const override {
    const char *Name = "f32_conv__pointwise_rows_avx512";
    ASSIGN_OR_RETURN(const ConvRun R, planConv(Name, A, Ctx));
    if (R.M != M || R.C != C || R.InPlane != R.OutPlane)
      return runError(Name, "shapes differ from the packed weights");
    const float *X = Ctx.Inputs[0].data<float>(), *B = biasOf(Ctx), *Res = convResidualOf(Ctx);
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
    while (Threads > 1 && R.N * Runs < 4 * Threads && (R.N * Runs) % Threads != 0)
      ++Runs;
    const int64_t Run = Threads == 1 ? 256 : std::min<int64_t>(256, ((P + Runs - 1) / Runs + 15) / 16 * 16);
    Runs = (P + Run - 1) / Run;
    // Few runs (a 14x14 plane is one): the panels split into groups too, two items per thread.
    const int64_t Groups = std::max<int64_t>(1, std::min(Panels, (2 * Threads + R.N * Runs - 1) / (R.N * Runs)));
    Par.forRange(static_cast<size_t>(R.N * Runs * Groups), 1, [&](size_t Lo, size_t Hi) {
      for (size_t T = Lo; T < Hi; ++T) {
        const int64_t Gi = static_cast<int64_t>(T) % Groups, Item = static_cast<int64_t>(T) / Groups;
        const int64_t N = Item / Runs, J0 = Item % Runs * Run;
        const int64_t Nj = std::min(Run, P - J0);
        for (int64_t Pn = Gi * Panels / Groups; Pn < (Gi + 1) * Panels / Groups; ++Pn) {
          const int64_t M0 = Pn * kRowPipelineMR;
          const int64_t Off = (N * M + M0) * P + J0;
          pointwiseRunAvx512(Packed.data() + Pn * C * kRowPipelineMR, std::min(kRowPipelineMR, M - M0), C,
                             X + N * C * P + J0, P, Nj, B ? B + M0 : nullptr, A.Act, Y + Off, P,
                             Res ? Res + Off : nullptr);
        }
      }
    });
    return Status::ok();
  }

private:
  ConvAttrs A;
  std::vector<float> Packed; ///< W in panels of kRowPipelineMR channels (packPointwiseWeights)
  int64_t M, C;
};
/// The smallest plane ConvPointwiseRowsKernel takes: MobileNetV2's 28x28 and 56x56 projections
/// (against the im2col GEMM, 1 thread: 56x56 228 -> 211 us, 28x28 86 -> 64; 2 threads: 102 -> 79
/// and equal). The 14x14 ones were 5-12% faster on 1 thread but 10-15% slower on 2 (a plane is one
/// run of pixels, split by channel panels, each item reading all of X), so they stay on im2col.
constexpr int64_t kPointwiseRowsMinPlane = 784;

} // namespace

KernelVariant pointwiseRowsVariant() {
  const auto Supports = [](const KernelCreateInfo &I) {
    if (!convTypesOk(I) || !is2D(I) || !inputIsConst(I, 1) || !rowPipelineAvx512Supported())
      return false;
    if (I.Inputs.size() > kFusedResidualInput && I.Inputs[kFusedResidualInput].Present &&
        I.Inputs[kFusedResidualInput].Type != ElementType::F32)
      return false;
    auto A = attrsFor(I);
    if (!A.isOk() || A->Group != 1 || !isPlainPointwise(A->W))
      return false;
    const TensorShape &Y = I.Outputs[0].Shape;
    // Measured on MobileNetV2's projections (24-32 output channels from 96-192): many input
    // channels (each a row read in place) or output panels (each re-reading the run) are untried.
    const TensorShape &Wt = I.Inputs[1].Shape;
    return Y.getRank() == 4 && Y[2].isConst() && Y[3].isConst() && Y[2].value() * Y[3].value() >= kPointwiseRowsMinPlane &&
           Wt[0].isConst() && Wt[1].isConst() && Wt[0].value() <= 96 && Wt[1].value() <= 256;
  };
  return {"f32_conv__pointwise_rows_avx512", 35, Supports,
          [](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
            ASSIGN_OR_RETURN(ConvAttrs A, attrsFor(I));
            const ConstData &Wt = *I.Inputs[1].Const;
            const int64_t M = Wt.Dims[0], C = Wt.Dims[1];
            std::vector<float> Packed = packPointwiseWeights(Wt.as<float>(), M, C);
            markConstConsumed(I, 1);
            return makeKernel<ConvPointwiseRowsKernel>(std::move(A), std::move(Packed), M, C);
          }};
}

} // namespace conv
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
