// Asinh: inverse hyperbolic sine. The elementwise machinery is shared in common/ElementwiseUnary.h.
#include "backends/native/ops/common/ElementwiseUnary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct AsinhOp {
  template <typename C> static C apply(C X, const UnaryParams &P) {
    (void)P;
    return std::asinh(X);
  }
};

using AsinhTypes = TypeList<float, double, float16, bfloat16>;

UnaryDesc asinhDesc() {
  UnaryDesc D;
  D.OpType = "Asinh";
  D.Name = "asinh";
  D.Low = -10, D.High = 10;
  return D;
}

OpKernels asinhKernels() {
  OpKernels K = unaryKernels<AsinhOp>(asinhDesc(), AsinhTypes());
  return K;
}

OPT_REGISTER_SCHEMA(Asinh, unarySchema<AsinhOp>(asinhDesc(), AsinhTypes()));
OPT_REGISTER_KERNELS(Asinh, asinhKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
