// Tan: tangent. The elementwise machinery is shared in common/ElementwiseUnary.h.
#include "backends/native/ops/common/ElementwiseUnary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct TanOp {
  template <typename C> static C apply(C X, const UnaryParams &P) {
    (void)P;
    return std::tan(X);
  }
};

using TanTypes = TypeList<float, double, float16, bfloat16>;

UnaryDesc tanDesc() {
  UnaryDesc D;
  D.OpType = "Tan";
  D.Name = "tan";
  D.Low = -1.5, D.High = 1.5;
  return D;
}

OpKernels tanKernels() {
  OpKernels K = unaryKernels<TanOp>(tanDesc(), TanTypes());
  return K;
}

OPT_REGISTER_SCHEMA(Tan, unarySchema<TanOp>(tanDesc(), TanTypes()));
OPT_REGISTER_KERNELS(Tan, tanKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
