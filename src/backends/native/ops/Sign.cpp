// Sign: -1, 0 or 1 by sign (NaN stays NaN). The elementwise machinery is shared in common/ElementwiseUnary.h.
#include "backends/native/ops/common/ElementwiseUnary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct SignOp {
  template <typename C> static C apply(C X, const UnaryParams &P) {
    (void)P;
    return signValue(X);
  }
};

using SignTypes = TypeList<float, double, float16, bfloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t>;

UnaryDesc signDesc() {
  UnaryDesc D;
  D.OpType = "Sign";
  D.Name = "sign";
  D.ExtraCases = [] { return std::vector<OpTestCase>{testCase("zeros", {valuesInput({5}, {0, -0.0, 3, -3, 0}, ElementType::F32, false)})}; };
  return D;
}

OpKernels signKernels() {
  OpKernels K = unaryKernels<SignOp>(signDesc(), SignTypes());
  return K;
}

OPT_REGISTER_SCHEMA(Sign, unarySchema<SignOp>(signDesc(), SignTypes()));
OPT_REGISTER_KERNELS(Sign, signKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
