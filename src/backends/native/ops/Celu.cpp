// Celu: max(0, x) + min(0, alpha * (e^(x / alpha) - 1)); alpha 1 by default (float32 only, as the spec). The elementwise machinery is shared in common/ElementwiseUnary.h.
#include "backends/native/ops/common/ElementwiseUnary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct CeluOp {
  template <typename C> static C apply(C X, const UnaryParams &P) {
    (void)P;
    return std::max(C(0), X) + std::min(C(0), C(P.Alpha) * (std::exp(X / C(P.Alpha)) - C(1)));
  }
};

using CeluTypes = TypeList<float>;

UnaryDesc celuDesc() {
  UnaryDesc D;
  D.OpType = "Celu";
  D.Name = "celu";
  D.Params = [](const Node &N) -> Result<UnaryParams> {
    UnaryParams P;
    ASSIGN_OR_RETURN(P.Alpha, N.getFloat("alpha", 1.0f));
    if (P.Alpha == 0)
      return makeError(ErrorCode::Model, N.describe(), ": attribute 'alpha' must be nonzero, got 0");
    return P;
  };
  D.ExtraCases = [] { return std::vector<OpTestCase>{testCase("alpha", {tensorInput({3, 4})}, floatAttrMap({{"alpha", 2.0f}}))}; };
  return D;
}

OpKernels celuKernels() {
  OpKernels K = unaryKernels<CeluOp>(celuDesc(), CeluTypes());
  return K;
}

OPT_REGISTER_SCHEMA(Celu, unarySchema<CeluOp>(celuDesc(), CeluTypes()));
OPT_REGISTER_KERNELS(Celu, celuKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
