// Atanh: inverse hyperbolic tangent. The elementwise machinery is shared in common/ElementwiseUnary.h.
#include "backends/native/ops/common/ElementwiseUnary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct AtanhOp {
  template <typename C> static C apply(C X, const UnaryParams &P) {
    (void)P;
    return std::atanh(X);
  }
};

using AtanhTypes = TypeList<float, double, float16, bfloat16>;

UnaryDesc atanhDesc() {
  UnaryDesc D;
  D.OpType = "Atanh";
  D.Name = "atanh";
  D.Low = -0.99, D.High = 0.99;
  return D;
}

OpKernels atanhKernels() {
  OpKernels K = unaryKernels<AtanhOp>(atanhDesc(), AtanhTypes());
  return K;
}

OPT_REGISTER_SCHEMA(Atanh, unarySchema<AtanhOp>(atanhDesc(), AtanhTypes()));
OPT_REGISTER_KERNELS(Atanh, atanhKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
