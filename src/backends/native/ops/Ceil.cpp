// Ceil: round toward +inf. The elementwise machinery is shared in common/ElementwiseUnary.h.
#include "backends/native/ops/common/ElementwiseUnary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct CeilOp {
  template <typename C> static C apply(C X, const UnaryParams &P) {
    (void)P;
    return std::ceil(X);
  }
};

using CeilTypes = TypeList<float, double, float16, bfloat16>;

UnaryDesc ceilDesc() {
  UnaryDesc D;
  D.OpType = "Ceil";
  D.Name = "ceil";
  D.Low = -10, D.High = 10;
  return D;
}

OpKernels ceilKernels() {
  OpKernels K = unaryKernels<CeilOp>(ceilDesc(), CeilTypes());
  return K;
}

OPT_REGISTER_SCHEMA(Ceil, unarySchema<CeilOp>(ceilDesc(), CeilTypes()));
OPT_REGISTER_KERNELS(Ceil, ceilKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
