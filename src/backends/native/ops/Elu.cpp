// Elu: x < 0 ? alpha * (e^x - 1) : x; alpha 1 by default. The elementwise machinery is shared in common/ElementwiseUnary.h.
#include "backends/native/ops/common/ElementwiseUnary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct EluOp {
  template <typename C> static C apply(C X, const UnaryParams &P) {
    (void)P;
    return X < C(0) ? C(P.Alpha) * (std::exp(X) - C(1)) : X;
  }
};

using EluTypes = TypeList<float, double, float16, bfloat16>;

UnaryDesc eluDesc() {
  UnaryDesc D;
  D.OpType = "Elu";
  D.Name = "elu";
  D.Params = floatAttrs("alpha", 1.0f);
  D.ExtraCases = [] { return std::vector<OpTestCase>{testCase("alpha", {tensorInput({3, 4})}, floatAttrMap({{"alpha", 2.0f}}))}; };
  return D;
}

OpKernels eluKernels() {
  OpKernels K = unaryKernels<EluOp>(eluDesc(), EluTypes());
  return K;
}

OPT_REGISTER_SCHEMA(Elu, unarySchema<EluOp>(eluDesc(), EluTypes()));
OPT_REGISTER_KERNELS(Elu, eluKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
