// HardSwish: x * max(0, min(1, x / 6 + 0.5)). The elementwise machinery is shared in common/ElementwiseUnary.h.
#include "backends/native/ops/common/ElementwiseUnary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct HardSwishOp {
  template <typename C> static C apply(C X, const UnaryParams &P) {
    (void)P;
    return X * std::max(C(0), std::min(C(1), X * C(1.0 / 6) + C(0.5)));
  }
};

using HardSwishTypes = TypeList<float, double, float16, bfloat16>;

UnaryDesc hardswishDesc() {
  UnaryDesc D;
  D.OpType = "HardSwish";
  D.Name = "hardswish";
  D.Low = -5, D.High = 5;
  return D;
}

OpKernels hardswishKernels() {
  OpKernels K = unaryKernels<HardSwishOp>(hardswishDesc(), HardSwishTypes());
  return K;
}

OPT_REGISTER_SCHEMA(HardSwish, unarySchema<HardSwishOp>(hardswishDesc(), HardSwishTypes()));
OPT_REGISTER_KERNELS(HardSwish, hardswishKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
