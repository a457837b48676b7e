// Asin: arcsine. The elementwise machinery is shared in common/ElementwiseUnary.h.
#include "backends/native/ops/common/ElementwiseUnary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct AsinOp {
  template <typename C> static C apply(C X, const UnaryParams &P) {
    (void)P;
    return std::asin(X);
  }
};

using AsinTypes = TypeList<float, double, float16, bfloat16>;

UnaryDesc asinDesc() {
  UnaryDesc D;
  D.OpType = "Asin";
  D.Name = "asin";
  D.Low = -1, D.High = 1;
  return D;
}

OpKernels asinKernels() {
  OpKernels K = unaryKernels<AsinOp>(asinDesc(), AsinTypes());
  return K;
}

OPT_REGISTER_SCHEMA(Asin, unarySchema<AsinOp>(asinDesc(), AsinTypes()));
OPT_REGISTER_KERNELS(Asin, asinKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
