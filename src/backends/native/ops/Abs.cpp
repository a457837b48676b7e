// Abs: absolute value (every numeric type; signed minimum wraps as in numpy). The elementwise machinery is shared in common/ElementwiseUnary.h.
#include "backends/native/ops/common/ElementwiseUnary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct AbsOp {
  template <typename C> static C apply(C X, const UnaryParams &P) {
    (void)P;
    return absValue(X);
  }
};

using AbsTypes = TypeList<float, double, float16, bfloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t>;

UnaryDesc absDesc() {
  UnaryDesc D;
  D.OpType = "Abs";
  D.Name = "abs";
  return D;
}

OpKernels absKernels() {
  OpKernels K = unaryKernels<AbsOp>(absDesc(), AbsTypes());
  return K;
}

OPT_REGISTER_SCHEMA(Abs, unarySchema<AbsOp>(absDesc(), AbsTypes()));
OPT_REGISTER_KERNELS(Abs, absKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
