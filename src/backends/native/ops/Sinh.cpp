// Sinh: hyperbolic sine. The elementwise machinery is shared in common/ElementwiseUnary.h.
#include "backends/native/ops/common/ElementwiseUnary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct SinhOp {
  template <typename C> static C apply(C X, const UnaryParams &P) {
    (void)P;
    return std::sinh(X);
  }
};

using SinhTypes = TypeList<float, double, float16, bfloat16>;

UnaryDesc sinhDesc() {
  UnaryDesc D;
  D.OpType = "Sinh";
  D.Name = "sinh";
  return D;
}

OpKernels sinhKernels() {
  OpKernels K = unaryKernels<SinhOp>(sinhDesc(), SinhTypes());
  return K;
}

OPT_REGISTER_SCHEMA(Sinh, unarySchema<SinhOp>(sinhDesc(), SinhTypes()));
OPT_REGISTER_KERNELS(Sinh, sinhKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
