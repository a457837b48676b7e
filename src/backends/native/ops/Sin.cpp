// Sin: sine. The elementwise machinery is shared in common/ElementwiseUnary.h.
#include "backends/native/ops/common/ElementwiseUnary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct SinOp {
  template <typename C> static C apply(C X, const UnaryParams &P) {
    (void)P;
    return std::sin(X);
  }
};

using SinTypes = TypeList<float, double, float16, bfloat16>;

UnaryDesc sinDesc() {
  UnaryDesc D;
  D.OpType = "Sin";
  D.Name = "sin";
  return D;
}

OpKernels sinKernels() {
  OpKernels K = unaryKernels<SinOp>(sinDesc(), SinTypes());
  return K;
}

OPT_REGISTER_SCHEMA(Sin, unarySchema<SinOp>(sinDesc(), SinTypes()));
OPT_REGISTER_KERNELS(Sin, sinKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
