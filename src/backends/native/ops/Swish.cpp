// Swish (opset 24): x * sigmoid(alpha * x); alpha 1 by default. The elementwise machinery is shared
// in common/ElementwiseUnary.h. Also what passes/FuseSilu makes of a SiLU written as Mul(x,
// Sigmoid(x)) that no Conv takes: the f32 AVX-512 and AVX2 + FMA variants compute it in one pass
// (Act512's / Act256's SiLU).
#include <cmath>

#include "backends/native/ops/common/ElementwiseUnary.h"
#include "backends/native/ops/common/FusedActivation.h"
#include "backends/native/ops/common/SimdDispatch.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct SwishOp {
  template <typename C> static C apply(C X, const UnaryParams &P) {
    return X / (C(1) + std::exp(-C(P.Alpha) * X));
  }
};

using SwishTypes = TypeList<float, double, float16, bfloat16>;

UnaryDesc swishDesc() {
  UnaryDesc D;
  D.OpType = "Swish";
  D.Name = "swish";
  D.Params = floatAttrs("alpha", 1.0f);
  D.ExtraCases = [] {
    return std::vector<OpTestCase>{testCase("alpha", {tensorInput({3, 4})}, floatAttrMap({{"alpha", 0.5f}})),
                                   testCase("large_magnitude", {rangeInput({2, 9}, ElementType::F32, -90, 90)}),
                                   testCase("silu_tail", {rangeInput({3, 37}, ElementType::F32, -8, 8)}),
                                   testCase("threaded", {rangeInput({4, 8, 40, 40}, ElementType::F32, -6, 6)}),
                                   // exp's clamp range on both sides (|alpha x| log2(e) past 126 / 127), a
                                   // NaN, 17 values: a masked tail of 1 after the 16-wide steps.
                                   testCase("clamp_range_nan",
                                            {valuesInput({17},
                                                         {-400.0, -200.0, -130.0, -95.0, -88.5, -87.0, -60.0, -1e-3,
                                                          0.0, 1e-3, 60.0, 87.0, 88.5, 95.0, 130.0, 400.0, NAN},
                                                         ElementType::F32, false)}),
                                   testCase("alpha_odd_tail", {rangeInput({5, 13}, ElementType::F32, -30, 30)},
                                            floatAttrMap({{"alpha", 1.702f}}))};
  };
  return D;
}

/// float32 SiLU in one vectorized pass (FusedAct's SiLU: x / (1 + exp(-alpha x)), exp as vec512 or
/// vec256): Avx2 runs applyFusedActAvx2 (8 lanes) whatever the CPU, else applyFusedAct (AVX-512).
class SwishF32Kernel : public Kernel {
public:
  SwishF32Kernel(FusedAct Act, bool Avx2) : Act(Act), Avx2(Avx2) {}
  Status run(const KernelContext &Ctx) const override {
    const TensorView &X = Ctx.Inputs[0], &Y = Ctx.Outputs[0];
    if (X.elementCount() != Y.elementCount())
      return runError(Avx2 ? "f32_swish__avx2" : "f32_swish__avx512", "input and output element counts differ");
    const float *In = X.data<float>();
    float *Out = Y.data<float>();
    Ctx.Par.forRange(X.elementCount(), 16384, [&](size_t Lo, size_t Hi) {
      if (Avx2)
        applyFusedActAvx2(Act, In + Lo, Out + Lo, Hi - Lo);
      else
        applyFusedAct(Act, In + Lo, Out + Lo, Hi - Lo);
    });
    return Status::ok();
  }

private:
  FusedAct Act;
  bool Avx2;
};

KernelVariant swishF32Variant(const char *Name, int Priority, bool Avx2, bool (*CpuHas)()) {
  return {Name, Priority, [CpuHas](const KernelCreateInfo &I) { return inputIs(I, 0, ElementType::F32) && CpuHas(); },
          [Avx2](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
            FusedAct Act;
            Act.Kind = ActKind::Silu;
            ASSIGN_OR_RETURN(Act.Alpha, I.N.getFloat("alpha", 1.0f));
            return makeKernel<SwishF32Kernel>(Act, Avx2);
          }};
}

OpKernels swishKernels() {
  OpKernels K = unaryKernels<SwishOp>(swishDesc(), SwishTypes());
  K.Variants.push_back(swishF32Variant("f32_swish__avx512", 20, false, simdAvx512));
  K.Variants.push_back(swishF32Variant("f32_swish__avx2", 15, true, simdAvx2));
  return K;
}

OPT_REGISTER_SCHEMA(Swish, unarySchema<SwishOp>(swishDesc(), SwishTypes()));
OPT_REGISTER_KERNELS(Swish, swishKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
