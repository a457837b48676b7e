// Shrink: x < -lambd ? x + bias : (x > lambd ? x - bias : 0); lambd 0.5 and bias 0 by default.
// The elementwise machinery is shared in common/ElementwiseUnary.h.
#include "backends/native/ops/common/ElementwiseUnary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct ShrinkOp {
  // Alpha = lambd, Beta = bias.
  template <typename C> static C apply(C X, const UnaryParams &P) {
    const C L = C(P.Alpha), B = C(P.Beta);
    return X < -L ? X + B : (X > L ? X - B : C(0));
  }
};

using ShrinkTypes = TypeList<float, double, float16, bfloat16>;

UnaryDesc shrinkDesc() {
  UnaryDesc D;
  D.OpType = "Shrink";
  D.Name = "shrink";
  D.Params = floatAttrs("lambd", 0.5f, "bias", 0.0f);
  D.ExtraCases = [] {
    return std::vector<OpTestCase>{
        testCase("soft", {tensorInput({3, 5})}, floatAttrMap({{"lambd", 0.3f}, {"bias", 0.3f}})),
        testCase("hard", {tensorInput({4, 4})}, floatAttrMap({{"lambd", 0.6f}}))};
  };
  return D;
}

OPT_REGISTER_SCHEMA(Shrink, unarySchema<ShrinkOp>(shrinkDesc(), ShrinkTypes()));
OPT_REGISTER_KERNELS(Shrink, unaryKernels<ShrinkOp>(shrinkDesc(), ShrinkTypes()));

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
