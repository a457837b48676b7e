// HardSigmoid: max(0, min(1, alpha * x + beta)); alpha 0.2, beta 0.5 by default. The elementwise machinery is shared in common/ElementwiseUnary.h.
#include "backends/native/ops/common/ElementwiseUnary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct HardSigmoidOp {
  template <typename C> static C apply(C X, const UnaryParams &P) {
    (void)P;
    const C V = C(P.Alpha) * X + C(P.Beta);
    return V != V ? V : std::max(C(0), std::min(C(1), V)); // NaN propagates, as in ONNX's max(0, min(1, .))
  }
};

using HardSigmoidTypes = TypeList<float, double, float16, bfloat16>;

UnaryDesc hardsigmoidDesc() {
  UnaryDesc D;
  D.OpType = "HardSigmoid";
  D.Name = "hardsigmoid";
  D.Params = floatAttrs("alpha", 0.2f, "beta", 0.5f);
  D.ExtraCases = [] { return std::vector<OpTestCase>{testCase("alpha_beta", {rangeInput({3, 4}, ElementType::F32, -5, 5)}, floatAttrMap({{"alpha", 0.5f}, {"beta", 0.6f}}))}; };
  return D;
}

OpKernels hardsigmoidKernels() {
  OpKernels K = unaryKernels<HardSigmoidOp>(hardsigmoidDesc(), HardSigmoidTypes());
  return K;
}

OPT_REGISTER_SCHEMA(HardSigmoid, unarySchema<HardSigmoidOp>(hardsigmoidDesc(), HardSigmoidTypes()));
OPT_REGISTER_KERNELS(HardSigmoid, hardsigmoidKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
