// Mish: x * tanh(softplus(x)). The elementwise machinery is shared in common/ElementwiseUnary.h.
#include "backends/native/ops/common/ElementwiseUnary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct MishOp {
  template <typename C> static C apply(C X, const UnaryParams &P) {
    (void)P;
    return X * std::tanh(X > C(20) ? X : std::log1p(std::exp(X)));
  }
};

using MishTypes = TypeList<float, double, float16, bfloat16>;

UnaryDesc mishDesc() {
  UnaryDesc D;
  D.OpType = "Mish";
  D.Name = "mish";
  D.Low = -10, D.High = 10;
  return D;
}

OpKernels mishKernels() {
  OpKernels K = unaryKernels<MishOp>(mishDesc(), MishTypes());
  return K;
}

OPT_REGISTER_SCHEMA(Mish, unarySchema<MishOp>(mishDesc(), MishTypes()));
OPT_REGISTER_KERNELS(Mish, mishKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
