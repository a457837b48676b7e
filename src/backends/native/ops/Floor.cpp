// Floor: round toward -inf. The elementwise machinery is shared in common/ElementwiseUnary.h.
#include "backends/native/ops/common/ElementwiseUnary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct FloorOp {
  template <typename C> static C apply(C X, const UnaryParams &P) {
    (void)P;
    return std::floor(X);
  }
};

using FloorTypes = TypeList<float, double, float16, bfloat16>;

UnaryDesc floorDesc() {
  UnaryDesc D;
  D.OpType = "Floor";
  D.Name = "floor";
  D.Low = -10, D.High = 10;
  return D;
}

OpKernels floorKernels() {
  OpKernels K = unaryKernels<FloorOp>(floorDesc(), FloorTypes());
  return K;
}

OPT_REGISTER_SCHEMA(Floor, unarySchema<FloorOp>(floorDesc(), FloorTypes()));
OPT_REGISTER_KERNELS(Floor, floorKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
