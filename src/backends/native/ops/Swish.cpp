// Swish (opset 24): x * sigmoid(alpha * x); alpha 1 by default. The elementwise machinery is shared
// in common/ElementwiseUnary.h.
#include <cmath>

#include "backends/native/ops/common/ElementwiseUnary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct SwishOp {
  template <typename C> static C apply(C X, const UnaryParams &P) {
    return X / (C(1) + std::exp(-C(P.Alpha) * X));
  }
};

using SwishTypes = TypeList<float, double, float16, bfloat16>;

UnaryDesc swishDesc() {
  UnaryDesc D;
  D.OpType = "Swish";
  D.Name = "swish";
  D.Params = floatAttrs("alpha", 1.0f);
  D.ExtraCases = [] {
    return std::vector<OpTestCase>{testCase("alpha", {tensorInput({3, 4})}, floatAttrMap({{"alpha", 0.5f}})),
                                   testCase("large_magnitude", {rangeInput({2, 9}, ElementType::F32, -90, 90)})};
  };
  return D;
}

OPT_REGISTER_SCHEMA(Swish, unarySchema<SwishOp>(swishDesc(), SwishTypes()));
OPT_REGISTER_KERNELS(Swish, unaryKernels<SwishOp>(swishDesc(), SwishTypes()));

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
