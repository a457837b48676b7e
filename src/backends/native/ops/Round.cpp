// Round: round half to even (the default floating-point rounding mode). The elementwise machinery is shared in common/ElementwiseUnary.h.
#include "backends/native/ops/common/ElementwiseUnary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct RoundOp {
  template <typename C> static C apply(C X, const UnaryParams &P) {
    (void)P;
    return std::nearbyint(X);
  }
};

using RoundTypes = TypeList<float, double, float16, bfloat16>;

UnaryDesc roundDesc() {
  UnaryDesc D;
  D.OpType = "Round";
  D.Name = "round";
  D.Low = -10, D.High = 10;
  D.ExtraCases = [] { return std::vector<OpTestCase>{testCase("halves", {valuesInput({10}, {0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4, -2.6, 0.49999997, 3.5}, ElementType::F32, false)})}; };
  return D;
}

OpKernels roundKernels() {
  OpKernels K = unaryKernels<RoundOp>(roundDesc(), RoundTypes());
  return K;
}

OPT_REGISTER_SCHEMA(Round, unarySchema<RoundOp>(roundDesc(), RoundTypes()));
OPT_REGISTER_KERNELS(Round, roundKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
