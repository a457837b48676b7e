// Neg: negation (signed numeric types; the signed minimum wraps). The elementwise machinery is shared in common/ElementwiseUnary.h.
#include "backends/native/ops/common/ElementwiseUnary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct NegOp {
  template <typename C> static C apply(C X, const UnaryParams &P) {
    (void)P;
    return negateValue(X);
  }
};

using NegTypes = TypeList<float, double, float16, bfloat16, int8_t, int16_t, int32_t, int64_t>;

UnaryDesc negDesc() {
  UnaryDesc D;
  D.OpType = "Neg";
  D.Name = "neg";
  return D;
}

OpKernels negKernels() {
  OpKernels K = unaryKernels<NegOp>(negDesc(), NegTypes());
  return K;
}

OPT_REGISTER_SCHEMA(Neg, unarySchema<NegOp>(negDesc(), NegTypes()));
OPT_REGISTER_KERNELS(Neg, negKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
