// Acosh: inverse hyperbolic cosine. The elementwise machinery is shared in common/ElementwiseUnary.h.
#include "backends/native/ops/common/ElementwiseUnary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct AcoshOp {
  template <typename C> static C apply(C X, const UnaryParams &P) {
    (void)P;
    return std::acosh(X);
  }
};

using AcoshTypes = TypeList<float, double, float16, bfloat16>;

UnaryDesc acoshDesc() {
  UnaryDesc D;
  D.OpType = "Acosh";
  D.Name = "acosh";
  D.Low = 1, D.High = 10;
  return D;
}

OpKernels acoshKernels() {
  OpKernels K = unaryKernels<AcoshOp>(acoshDesc(), AcoshTypes());
  return K;
}

OPT_REGISTER_SCHEMA(Acosh, unarySchema<AcoshOp>(acoshDesc(), AcoshTypes()));
OPT_REGISTER_KERNELS(Acosh, acoshKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
