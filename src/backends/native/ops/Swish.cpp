// Swish (opset 24): x * sigmoid(alpha * x); alpha 1 by default. The elementwise machinery is shared
// in common/ElementwiseUnary.h. Also what passes/FuseSilu makes of a SiLU written as Mul(x,
// Sigmoid(x)) that no Conv takes: the f32 AVX-512 variant computes it in one pass (Act512's SiLU).
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
                                   testCase("threaded", {rangeInput({4, 8, 40, 40}, ElementType::F32, -6, 6)})};
  };
  return D;
}

/// float32 SiLU in one vectorized pass (FusedAct's SiLU: x / (1 + exp(-alpha x)), exp as vec512).
class SwishF32Kernel : public Kernel {
public:
  explicit SwishF32Kernel(FusedAct Act) : Act(Act) {}
  Status run(const KernelContext &Ctx) const override {
    const TensorView &X = Ctx.Inputs[0], &Y = Ctx.Outputs[0];
    if (X.elementCount() != Y.elementCount())
      return runError("f32_swish__avx512", "input and output element counts differ");
    const float *In = X.data<float>();
    float *Out = Y.data<float>();
    Ctx.Par.forRange(X.elementCount(), 16384, [&](size_t Lo, size_t Hi) { applyFusedAct(Act, In + Lo, Out + Lo, Hi - Lo); });
    return Status::ok();
  }

private:
  FusedAct Act;
};

OpKernels swishKernels() {
  OpKernels K = unaryKernels<SwishOp>(swishDesc(), SwishTypes());
  K.Variants.push_back({"f32_swish__avx512", 20,
                        [](const KernelCreateInfo &I) { return inputIs(I, 0, ElementType::F32) && simdAvx512(); },
                        [](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
                          FusedAct Act;
                          Act.Kind = ActKind::Silu;
                          ASSIGN_OR_RETURN(Act.Alpha, I.N.getFloat("alpha", 1.0f));
                          return makeKernel<SwishF32Kernel>(Act);
                        }});
  return K;
}

OPT_REGISTER_SCHEMA(Swish, unarySchema<SwishOp>(swishDesc(), SwishTypes()));
OPT_REGISTER_KERNELS(Swish, swishKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
