// Sqrt: square root (NaN for negative inputs). The elementwise machinery is shared in common/ElementwiseUnary.h.
#include "backends/native/ops/common/ElementwiseUnary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct SqrtOp {
  template <typename C> static C apply(C X, const UnaryParams &P) {
    (void)P;
    return std::sqrt(X);
  }
};

using SqrtTypes = TypeList<float, double, float16, bfloat16>;

UnaryDesc sqrtDesc() {
  UnaryDesc D;
  D.OpType = "Sqrt";
  D.Name = "sqrt";
  D.Low = 0, D.High = 10;
  return D;
}

OpKernels sqrtKernels() {
  OpKernels K = unaryKernels<SqrtOp>(sqrtDesc(), SqrtTypes());
  return K;
}

OPT_REGISTER_SCHEMA(Sqrt, unarySchema<SqrtOp>(sqrtDesc(), SqrtTypes()));
OPT_REGISTER_KERNELS(Sqrt, sqrtKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
