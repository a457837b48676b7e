// Cos: cosine. The elementwise machinery is shared in common/ElementwiseUnary.h.
#include "backends/native/ops/common/ElementwiseUnary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct CosOp {
  template <typename C> static C apply(C X, const UnaryParams &P) {
    (void)P;
    return std::cos(X);
  }
};

using CosTypes = TypeList<float, double, float16, bfloat16>;

UnaryDesc cosDesc() {
  UnaryDesc D;
  D.OpType = "Cos";
  D.Name = "cos";
  return D;
}

OpKernels cosKernels() {
  OpKernels K = unaryKernels<CosOp>(cosDesc(), CosTypes());
  return K;
}

OPT_REGISTER_SCHEMA(Cos, unarySchema<CosOp>(cosDesc(), CosTypes()));
OPT_REGISTER_KERNELS(Cos, cosKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
