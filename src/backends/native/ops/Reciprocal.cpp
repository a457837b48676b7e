// Reciprocal: 1 / x. The elementwise machinery is shared in common/ElementwiseUnary.h.
#include "backends/native/ops/common/ElementwiseUnary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct ReciprocalOp {
  template <typename C> static C apply(C X, const UnaryParams &P) {
    (void)P;
    return C(1) / X;
  }
};

using ReciprocalTypes = TypeList<float, double, float16, bfloat16>;

UnaryDesc reciprocalDesc() {
  UnaryDesc D;
  D.OpType = "Reciprocal";
  D.Name = "reciprocal";
  D.Low = 0.5, D.High = 4;
  return D;
}

OpKernels reciprocalKernels() {
  OpKernels K = unaryKernels<ReciprocalOp>(reciprocalDesc(), ReciprocalTypes());
  return K;
}

OPT_REGISTER_SCHEMA(Reciprocal, unarySchema<ReciprocalOp>(reciprocalDesc(), ReciprocalTypes()));
OPT_REGISTER_KERNELS(Reciprocal, reciprocalKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
