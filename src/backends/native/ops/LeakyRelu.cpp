// LeakyRelu: x < 0 ? alpha * x : x; alpha 0.01 by default. The elementwise machinery is shared in common/ElementwiseUnary.h.
#include "backends/native/ops/common/ElementwiseUnary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct LeakyReluOp {
  template <typename C> static C apply(C X, const UnaryParams &P) {
    (void)P;
    return X < C(0) ? C(P.Alpha) * X : X;
  }
};

using LeakyReluTypes = TypeList<float, double, float16, bfloat16>;

UnaryDesc leakyreluDesc() {
  UnaryDesc D;
  D.OpType = "LeakyRelu";
  D.Name = "leakyrelu";
  D.Params = floatAttrs("alpha", 0.01f);
  D.ExtraCases = [] { return std::vector<OpTestCase>{testCase("alpha", {tensorInput({3, 4})}, floatAttrMap({{"alpha", 0.1f}}))}; };
  return D;
}

OpKernels leakyreluKernels() {
  OpKernels K = unaryKernels<LeakyReluOp>(leakyreluDesc(), LeakyReluTypes());
  return K;
}

OPT_REGISTER_SCHEMA(LeakyRelu, unarySchema<LeakyReluOp>(leakyreluDesc(), LeakyReluTypes()));
OPT_REGISTER_KERNELS(LeakyRelu, leakyreluKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
