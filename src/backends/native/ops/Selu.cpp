// Selu: gamma * (x > 0 ? x : alpha * e^x - alpha), with the spec's default alpha and gamma. The elementwise machinery is shared in common/ElementwiseUnary.h.
#include "backends/native/ops/common/ElementwiseUnary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct SeluOp {
  template <typename C> static C apply(C X, const UnaryParams &P) {
    (void)P;
    return X > C(0) ? C(P.Gamma) * X : C(P.Gamma) * (C(P.Alpha) * std::exp(X) - C(P.Alpha));
  }
};

using SeluTypes = TypeList<float, double, float16, bfloat16>;

UnaryDesc seluDesc() {
  UnaryDesc D;
  D.OpType = "Selu";
  D.Name = "selu";
  D.Params = floatAttrs("alpha", 1.67326319217681884765625f, nullptr, 0, "gamma", 1.05070102214813232421875f);
  D.ExtraCases = [] { return std::vector<OpTestCase>{testCase("alpha_gamma", {tensorInput({3, 4})}, floatAttrMap({{"alpha", 2.0f}, {"gamma", 3.0f}}))}; };
  return D;
}

OpKernels seluKernels() {
  OpKernels K = unaryKernels<SeluOp>(seluDesc(), SeluTypes());
  return K;
}

OPT_REGISTER_SCHEMA(Selu, unarySchema<SeluOp>(seluDesc(), SeluTypes()));
OPT_REGISTER_KERNELS(Selu, seluKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
