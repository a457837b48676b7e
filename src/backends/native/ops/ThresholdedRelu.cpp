// ThresholdedRelu: x > alpha ? x : 0; alpha 1 by default. The elementwise machinery is shared in common/ElementwiseUnary.h.
#include "backends/native/ops/common/ElementwiseUnary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct ThresholdedReluOp {
  template <typename C> static C apply(C X, const UnaryParams &P) {
    (void)P;
    return X > C(P.Alpha) ? X : C(0);
  }
};

using ThresholdedReluTypes = TypeList<float, double, float16, bfloat16>;

UnaryDesc thresholdedreluDesc() {
  UnaryDesc D;
  D.OpType = "ThresholdedRelu";
  D.Name = "thresholdedrelu";
  D.Params = floatAttrs("alpha", 1.0f);
  D.ExtraCases = [] { return std::vector<OpTestCase>{testCase("alpha", {tensorInput({3, 4})}, floatAttrMap({{"alpha", 0.5f}}))}; };
  return D;
}

OpKernels thresholdedreluKernels() {
  OpKernels K = unaryKernels<ThresholdedReluOp>(thresholdedreluDesc(), ThresholdedReluTypes());
  return K;
}

OPT_REGISTER_SCHEMA(ThresholdedRelu, unarySchema<ThresholdedReluOp>(thresholdedreluDesc(), ThresholdedReluTypes()));
OPT_REGISTER_KERNELS(ThresholdedRelu, thresholdedreluKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
