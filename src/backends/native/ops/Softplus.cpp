// Softplus: log(1 + e^x). The elementwise machinery is shared in common/ElementwiseUnary.h.
#include "backends/native/ops/common/ElementwiseUnary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct SoftplusOp {
  template <typename C> static C apply(C X, const UnaryParams &P) {
    (void)P;
    return X > C(20) ? X : std::log1p(std::exp(X));
  }
};

using SoftplusTypes = TypeList<float, double, float16, bfloat16>;

UnaryDesc softplusDesc() {
  UnaryDesc D;
  D.OpType = "Softplus";
  D.Name = "softplus";
  D.Low = -30, D.High = 30;
  return D;
}

OpKernels softplusKernels() {
  OpKernels K = unaryKernels<SoftplusOp>(softplusDesc(), SoftplusTypes());
  return K;
}

OPT_REGISTER_SCHEMA(Softplus, unarySchema<SoftplusOp>(softplusDesc(), SoftplusTypes()));
OPT_REGISTER_KERNELS(Softplus, softplusKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
