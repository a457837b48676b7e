// Softsign: x / (1 + |x|). The elementwise machinery is shared in common/ElementwiseUnary.h.
#include "backends/native/ops/common/ElementwiseUnary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct SoftsignOp {
  template <typename C> static C apply(C X, const UnaryParams &P) {
    (void)P;
    return X / (C(1) + std::fabs(X));
  }
};

using SoftsignTypes = TypeList<float, double, float16, bfloat16>;

UnaryDesc softsignDesc() {
  UnaryDesc D;
  D.OpType = "Softsign";
  D.Name = "softsign";
  return D;
}

OpKernels softsignKernels() {
  OpKernels K = unaryKernels<SoftsignOp>(softsignDesc(), SoftsignTypes());
  return K;
}

OPT_REGISTER_SCHEMA(Softsign, unarySchema<SoftsignOp>(softsignDesc(), SoftsignTypes()));
OPT_REGISTER_KERNELS(Softsign, softsignKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
