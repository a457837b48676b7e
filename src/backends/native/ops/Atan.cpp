// Atan: arctangent. The elementwise machinery is shared in common/ElementwiseUnary.h.
#include "backends/native/ops/common/ElementwiseUnary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct AtanOp {
  template <typename C> static C apply(C X, const UnaryParams &P) {
    (void)P;
    return std::atan(X);
  }
};

using AtanTypes = TypeList<float, double, float16, bfloat16>;

UnaryDesc atanDesc() {
  UnaryDesc D;
  D.OpType = "Atan";
  D.Name = "atan";
  D.Low = -10, D.High = 10;
  return D;
}

OpKernels atanKernels() {
  OpKernels K = unaryKernels<AtanOp>(atanDesc(), AtanTypes());
  return K;
}

OPT_REGISTER_SCHEMA(Atan, unarySchema<AtanOp>(atanDesc(), AtanTypes()));
OPT_REGISTER_KERNELS(Atan, atanKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
