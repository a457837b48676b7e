// com.optimium FusedDepthwisePointwise (made by passes/FusePointwiseDepthwise): Y = clamp(Conv1x1(
// clamp(depthwise Conv(X, Wd) + Bd), Wp) + Bp), a depthwise-separable convolution. Inputs (X [N, C,
// H, W], Wd [C, 1, KH, KW], Wp [M, C, 1, 1], Bd [C]?, Bp [M]?); the depthwise Conv's window
// attributes (stride 1, dilation 1, output plane = input plane), its clamp in
// kDepthwiseActMin/Max and the 1x1 Conv's in kFusedActMin/Max.
//
// The strip kernel computes a strip of output rows at a time: the depthwise rows of every channel
// (common/DepthwiseFlat) into a per-thread buffer that stays in L1/L2, then the 1x1 GEMM reads it
// in place and writes the strip of Y. The depthwise output (MobileNetV2's first block: 32 x 112 x
// 112, 1.6 MB) is never written to memory and read back. The row variant (3x3, AVX-512) does the
// same with common/RowPipeline's whole-row depthwise and in-place 1x1 kernels.
#include <algorithm>
#include <cmath>

#include "backends/native/ops/common/DepthwiseFlat.h"
#include "backends/native/ops/common/Gemm.h"
#include "backends/native/ops/common/PackedWeights.h"
#include "backends/native/ops/common/Pooling.h"
#include "backends/native/ops/common/RowPipeline.h"
#include "backends/native/ops/common/SeparableConv.h"
#include "ir/FusedOps.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

constexpr bool kPointwiseFirst = false; // inputs (X, Wd, Wp, Bd?, Bp?)

Result<SeparableAttrs> attrsFor(const KernelCreateInfo &I) { return separableAttrsFor(I, kPointwiseFirst); }

/// Sizes of one run (C: X's and the depthwise channels, M: the output channels), checked against the output.
Result<SeparableRun> planRun(const char *Name, const SeparableAttrs &A, const KernelContext &Ctx) {
  return planSeparableRun(Name, A, Ctx, kPointwiseFirst);
}

/// Rows per strip: the strip's pixels a multiple of 16 (whole depthwise vectors) and its
/// depthwise output, all channels, about 64 KiB.
int64_t rowsPerStrip(int64_t C, int64_t OW, int64_t OH) {
  int64_t Align = 1;
  while ((Align * OW) % 16 != 0)
    ++Align;
  const int64_t Target = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, C * OW));
  return std::min(std::max(Align, (Target + Align - 1) / Align * Align), std::max<int64_t>(OH, 1) + Align);
}

class SeparableStripKernel : public Kernel {
public:
  SeparableStripKernel(const GemmMicroKernel &MK, SeparableAttrs A, PackedA Wp,
                       std::shared_ptr<const FlatDepthwisePlan> Plan)
      : MK(MK), A(std::move(A)), Wp(std::move(Wp)), Plan(std::move(Plan)) {}

  Status run(const KernelContext &Ctx) const override {
    const char *Name = "f32_depthwise_pointwise__strips_avx512";
    ASSIGN_OR_RETURN(const SeparableRun R, planRun(Name, A, Ctx));
    const DepthwiseGeometry G = separableGeometry(A, R.G);
    if (!sameGeometry(Plan->G, G) || R.C != Wp.K || R.M != Wp.M)
      return runError(Name, "shapes differ from the ones planned at creation");
    if (R.N * R.M * R.OutPlane == 0)
      return Status::ok();
    const float *X = Ctx.Inputs[0].data<float>(), *Wd = Ctx.Inputs[1].data<float>();
    const float *Bd = inputDataOrNull(Ctx, 3), *Bp = inputDataOrNull(Ctx, 4);
    float *Y = Ctx.Outputs[0].data<float>();
    const int64_t KT = R.KH * R.KW, OH = G.OH, OW = G.OW;
    const int64_t Rows = rowsPerStrip(R.C, OW, OH), Strips = (OH + Rows - 1) / Rows, StripPixels = Rows * OW;
    // Row c of the GEMM's B (channel c of the strip's depthwise output) starts at c * StripPixels.
    std::vector<int64_t> RowOffsets(static_cast<size_t>(R.C));
    for (int64_t C = 0; C < R.C; ++C)
      RowOffsets[static_cast<size_t>(C)] = C * StripPixels;
    GemmEpilogue Ep;
    Ep.RowBias = Bp;
    Ep.Act = A.Pointwise;
    const Parallel Serial;
    const int64_t Work = R.N * R.OutPlane * R.C * (KT + R.M);
    const Parallel &Par = Ctx.Par.ifWorth(Work);
    Par.forRange(static_cast<size_t>(R.N * Strips), 1, [&](size_t Lo, size_t Hi) {
      thread_local AlignedFloats Strip; // this worker's depthwise rows, all channels
      const size_t Need = static_cast<size_t>(R.C * StripPixels);
      if (Strip.size() < Need)
        Strip.resize(Need);
      float *S = Strip.data();
      for (size_t T = Lo; T < Hi; ++T) {
        const int64_t N = static_cast<int64_t>(T) / Strips, Si = static_cast<int64_t>(T) % Strips;
        const int64_t P0 = Si * StripPixels, P1 = std::min(R.OutPlane, P0 + StripPixels);
        const int64_t B0 = P0 / 16, B1 = (P1 + 15) / 16; // P0 is a multiple of 16
        for (int64_t C = 0; C < R.C; ++C)
          depthwiseFlatRangeAvx512(*Plan, X + (N * R.C + C) * R.Plane, Wd + C * KT, Bd ? Bd[C] : 0.0f,
                                   S + C * StripPixels, B0, B1);
        const GemmRowsB Rows_{S, RowOffsets.data(), P1 - P0, nullptr};
        gemmPackedRowsB(MK, Wp, Rows_, 1.0f, 0.0f, Y + N * R.M * R.OutPlane + P0, R.OutPlane, Serial, &Ep);
      }
    });
    return Status::ok();
  }

private:
  const GemmMicroKernel &MK;
  SeparableAttrs A;
  PackedA Wp;                                   ///< the 1x1 weights, packed
  std::shared_ptr<const FlatDepthwisePlan> Plan; ///< the depthwise geometry, planned at creation
};

/// The 3x3 stride-1 row pipeline (AVX-512): a strip of output rows at a time, the depthwise rows of
/// every channel read straight from the input rows (common/RowPipeline: whole rows, 8 vectors in
/// flight) into a per-worker buffer, then the 1x1 convolution of the strip's pixels reading that
/// buffer in place (no panel copies) and writing Y.
class SeparableRowsKernel : public Kernel {
public:
  SeparableRowsKernel(SeparableAttrs A, AlignedFloats Packed, int64_t M, int64_t C)
      : A(std::move(A)), Packed(std::move(Packed)), M(M), C(C) {}

  Status run(const KernelContext &Ctx) const override {
    const char *Name = "f32_depthwise_pointwise__rows_avx512";
    ASSIGN_OR_RETURN(const SeparableRun R, planRun(Name, A, Ctx));
    if (R.C != C || R.M != M)
      return runError(Name, "weights do not match the packed ones");
    if (R.N * R.M * R.OutPlane == 0)
      return Status::ok();
    const DepthwiseGeometry G = separableGeometry(A, R.G);
    const Dw3x3RowPlan Unit = planDw3x3Rows(G, false);
    if (!Unit.Ok)
      return runError(Name, "window not supported by the row kernel");
    const float *X = Ctx.Inputs[0].data<float>(), *Wd = Ctx.Inputs[1].data<float>();
    const float *Bd = inputDataOrNull(Ctx, 3), *Bp = inputDataOrNull(Ctx, 4);
    float *Y = Ctx.Outputs[0].data<float>();
    const int64_t OH = G.OH, OW = G.OW, KT = 9;
    // Strip: about 64 KiB of depthwise output (all channels), at least 2 rows.
    const int64_t Rows = std::min<int64_t>(OH, std::max<int64_t>(2, 16384 / std::max<int64_t>(1, C * OW)));
    const int64_t Strips = (OH + Rows - 1) / Rows, StripPixels = Rows * OW;
    const int64_t Panels = (M + kRowPipelineMR - 1) / kRowPipelineMR;
    const int64_t Work = R.N * R.OutPlane * R.C * (KT + R.M);
    const Parallel &Par = Ctx.Par.ifWorth(Work);
    Par.forRange(static_cast<size_t>(R.N * Strips), 1, [&](size_t Lo, size_t Hi) {
      thread_local AlignedFloats Strip; // this worker's depthwise rows (all channels), then zeros
      const size_t Need = static_cast<size_t>(C * StripPixels + G.W + 64);
      if (Strip.size() < Need)
        Strip.resize(Need);
      float *S = Strip.data(), *Zeros = S + C * StripPixels;
      std::fill(Zeros, Zeros + G.W + 64, 0.0f);
      std::vector<const float *> In(static_cast<size_t>(Rows + 2));
      for (size_t T = Lo; T < Hi; ++T) {
        const int64_t N = static_cast<int64_t>(T) / Strips, Si = static_cast<int64_t>(T) % Strips;
        const int64_t Oh0 = Si * Rows, Oh1 = std::min(OH, Oh0 + Rows), NRows = (Oh1 - Oh0 - 1) * G.SH + 3;
        for (int64_t Ch = 0; Ch < C; ++Ch) {
          const float *Plane = X + (N * C + Ch) * R.Plane;
          for (int64_t I = 0; I < NRows; ++I) {
            const int64_t Ih = Oh0 * G.SH - G.PH + I;
            In[static_cast<size_t>(I)] = Ih < 0 || Ih >= G.H ? Zeros : Plane + Ih * G.W;
          }
          depthwise3x3RowsAvx512(Unit, In.data(), Oh1 - Oh0, Wd + Ch * KT, Bd ? Bd[Ch] : 0.0f, S + Ch * StripPixels);
        }
        const int64_t Pixels = (Oh1 - Oh0) * OW;
        for (int64_t P = 0; P < Panels; ++P) {
          const int64_t M0 = P * kRowPipelineMR;
          pointwiseRunAvx512(Packed.data() + P * C * kRowPipelineMR, std::min(kRowPipelineMR, M - M0), C, S,
                             StripPixels, Pixels, Bp ? Bp + M0 : nullptr, A.Pointwise, Y + (N * M + M0) * R.OutPlane + Oh0 * OW, R.OutPlane);
        }
      }
    });
    return Status::ok();
  }

private:
  SeparableAttrs A;
  AlignedFloats Packed; ///< the 1x1 weights in panels (packPointwiseWeights)
  int64_t M, C;
};

/// The flat depthwise plan of the node's known shapes, or null (unknown shapes, not a stride-1
/// "same" window, no AVX-512).
std::shared_ptr<const FlatDepthwisePlan> planFor(const KernelCreateInfo &I, const SeparableAttrs &A) {
  const TensorShape &XS = I.Inputs[0].Shape;
  if (XS.getRank() != 4 || !XS[1].isConst() || !XS[2].isConst() || !XS[3].isConst())
    return nullptr;
  const WindowGeometry Geo = computeWindowGeometry(A.W, {1, XS[1].value(), XS[2].value(), XS[3].value()});
  if (Geo.Out[0] <= 0 || Geo.Out[1] <= 0)
    return nullptr;
  return cachedFlatPlan(separableGeometry(A, Geo));
}

KernelVariant stripVariant() {
  const auto Supports = [](const KernelCreateInfo &I) {
    if (!separableTypesOk(I) || !gemmIsaAvailable(GemmIsa::Avx512) || !inputIsConst(I, 2))
      return false;
    auto A = attrsFor(I);
    return A.isOk() && planFor(I, *A) != nullptr;
  };
  return {"f32_depthwise_pointwise__strips_avx512", 30, Supports,
          [](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
            ASSIGN_OR_RETURN(SeparableAttrs A, attrsFor(I));
            std::shared_ptr<const FlatDepthwisePlan> Plan = planFor(I, A);
            if (!Plan)
              return makeError(ErrorCode::Model, I.N.describe(), ": window not supported by the strip kernel");
            const GemmMicroKernel &MK = gemmMicroKernel(GemmIsa::Avx512);
            const ConstData &Wp = *I.Inputs[2].Const;
            const int64_t M = Wp.Dims[0], C = Wp.Dims[1];
            PackedA Packed; // a compiled folder's packed.bin holds it (the load borrows it)
            const std::string Key =
                packedWeightsKey(I, 2, "f32_depthwise_pointwise__strips_avx512/kc" + std::to_string(GemmKC));
            if (!borrowPackedA(Key, MK, M, C, GemmKC, Packed)) {
              packA(MK, M, C, MatrixRef{Wp.as<float>(), C, 1}, Packed);
              storePackedA(Key, Packed);
            }
            markConstConsumed(I, 2);
            return makeKernel<SeparableStripKernel>(MK, std::move(A), std::move(Packed), std::move(Plan));
          }};
}

KernelVariant rowsVariant() {
  const auto Supports = [](const KernelCreateInfo &I) {
    if (!separableTypesOk(I) || !rowPipelineAvx512Supported() || !inputIsConst(I, 2))
      return false;
    auto A = attrsFor(I);
    if (!A.isOk())
      return false;
    const TensorShape &XS = I.Inputs[0].Shape;
    if (XS.getRank() != 4 || !XS[2].isConst() || !XS[3].isConst())
      return false;
    const WindowGeometry Geo = computeWindowGeometry(A->W, {1, 1, XS[2].value(), XS[3].value()});
    return Geo.Out[0] > 0 && Geo.Out[1] > 0 && planDw3x3Rows(separableGeometry(*A, Geo), false).Ok;
  };
  return {"f32_depthwise_pointwise__rows_avx512", 40, Supports,
          [](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
            ASSIGN_OR_RETURN(SeparableAttrs A, attrsFor(I));
            RowPipelineWeights P = packRowPipelineWeights(I, 2, "f32_depthwise_pointwise__rows_avx512");
            return makeKernel<SeparableRowsKernel>(std::move(A), std::move(P.Packed), P.M, P.C);
          }};
}

std::vector<OpTestCase> separableCases() {
  const auto X = [](std::vector<int64_t> D) { return tensorInput(std::move(D)); };
  const auto W = [](std::vector<int64_t> D) { return constInput(std::move(D)); };
  const auto ints = [](std::vector<int64_t> V) { return attrInts(std::move(V)); };
  const auto act = [](std::map<std::string, AttrValue> Attrs, float Lo, float Hi, bool Depthwise) {
    return withSeparableClamp(std::move(Attrs), Lo, Hi, Depthwise, kPointwiseFirst);
  };
  return {
      // MobileNetV2's first block shape, smaller: Relu6 after the depthwise conv, none after the 1x1.
      testCase("mnv2_block1", {X({1, 32, 24, 16}), W({32, 1, 3, 3}), W({16, 32, 1, 1}), W({32}), W({16})},
               act({{"group", attrInt(32)}, {"pads", ints({1, 1, 1, 1})}}, 0.0f, 6.0f, true), 1e-4),
      // Odd row width (strips of 16 rows: 16 * 7 pixels), channels not a multiple of anything,
      // both clamps cutting, no biases, batch 2, rows not a multiple of the strip.
      testCase("odd_width_clamps", {X({2, 13, 37, 7}), W({13, 1, 3, 3}), W({21, 13, 1, 1}), omittedInput(),
                                    omittedInput()},
               act(act({{"group", attrInt(13)}, {"pads", ints({1, 1, 1, 1})}}, -0.2f, 0.3f, true), -0.1f, 0.25f,
                   false)),
      testCase("asym_same_pads_5x5", {X({1, 6, 19, 20}), W({6, 1, 5, 5}), W({40, 6, 1, 1}), W({6}), omittedInput()},
               {{"group", attrInt(6)}, {"pads", ints({0, 4, 4, 0})}}),
      testCase("many_strips", {X({1, 8, 70, 45}), W({8, 1, 3, 3}), W({12, 8, 1, 1}), W({8}), W({12})},
               act({{"group", attrInt(8)}, {"pads", ints({1, 1, 1, 1})}}, 0.0f, INFINITY, true), 1e-4),
      // Whole rows of up to 7 blocks, strips that do not divide the plane, 16 output channels (a
      // full and a 4-row panel), work big enough for the pool.
      testCase("wide_rows", {X({1, 32, 19, 112}), W({32, 1, 3, 3}), W({16, 32, 1, 1}), W({32}), W({16})},
               act({{"group", attrInt(32)}, {"pads", ints({1, 1, 1, 1})}}, 0.0f, 6.0f, true), 1e-4),
      testCase("rows_odd_width", {X({2, 20, 23, 57}), W({20, 1, 3, 3}), W({27, 20, 1, 1}), omittedInput(), W({27})},
               act(act({{"group", attrInt(20)}, {"pads", ints({1, 1, 1, 1})}}, -0.2f, 0.3f, true), -0.1f, 0.25f,
                   false), 1e-4),
      // Not a "same" window (stride 2): the reference alone.
      testCase("strided_reference_only", {X({1, 4, 9, 9}), W({4, 1, 3, 3}), W({5, 4, 1, 1}), W({4}), W({5})},
               {{"group", attrInt(4)}, {"pads", ints({1, 1, 1, 1})}, {"strides", ints({2, 2})}}),
  };
}

OpKernels separableKernels() {
  OpKernels K;
  K.Domain = kFusedPointwiseDepthwiseDomain;
  K.OpType = kFusedDepthwisePointwiseOp;
  K.Variants.push_back(separableReferenceVariant("f32_depthwise_pointwise__ref", kPointwiseFirst));
  K.Variants.push_back(stripVariant());
  K.Variants.push_back(rowsVariant());
  K.TestCases = separableCases;
  return K;
}

OPT_REGISTER_HEAVY_SCHEMA(FusedDepthwisePointwise, separableSchema(kFusedDepthwisePointwiseOp, kPointwiseFirst));
OPT_REGISTER_KERNELS(FusedDepthwisePointwise, separableKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
