// Cosh: hyperbolic cosine. The elementwise machinery is shared in common/ElementwiseUnary.h.
#include "backends/native/ops/common/ElementwiseUnary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct CoshOp {
  template <typename C> static C apply(C X, const UnaryParams &P) {
    (void)P;
    return std::cosh(X);
  }
};

using CoshTypes = TypeList<float, double, float16, bfloat16>;

UnaryDesc coshDesc() {
  UnaryDesc D;
  D.OpType = "Cosh";
  D.Name = "cosh";
  return D;
}

OpKernels coshKernels() {
  OpKernels K = unaryKernels<CoshOp>(coshDesc(), CoshTypes());
  return K;
}

OPT_REGISTER_SCHEMA(Cosh, unarySchema<CoshOp>(coshDesc(), CoshTypes()));
OPT_REGISTER_KERNELS(Cosh, coshKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
