// Acos: arccosine. The elementwise machinery is shared in common/ElementwiseUnary.h.
#include "backends/native/ops/common/ElementwiseUnary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct AcosOp {
  template <typename C> static C apply(C X, const UnaryParams &P) {
    (void)P;
    return std::acos(X);
  }
};

using AcosTypes = TypeList<float, double, float16, bfloat16>;

UnaryDesc acosDesc() {
  UnaryDesc D;
  D.OpType = "Acos";
  D.Name = "acos";
  D.Low = -1, D.High = 1;
  return D;
}

OpKernels acosKernels() {
  OpKernels K = unaryKernels<AcosOp>(acosDesc(), AcosTypes());
  return K;
}

OPT_REGISTER_SCHEMA(Acos, unarySchema<AcosOp>(acosDesc(), AcosTypes()));
OPT_REGISTER_KERNELS(Acos, acosKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
