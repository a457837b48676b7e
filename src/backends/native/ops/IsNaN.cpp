// IsNaN: a bool tensor, true where the input is NaN (f16, bf16, f32, f64).
#include "backends/native/ops/common/ElementwiseUnary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct IsNaNOp {
  template <typename C> static bool apply(C X, const UnaryParams &) { return X != X; }
};

using IsNaNTypes = TypeList<float, double, float16, bfloat16>;

UnaryDesc isnanDesc() {
  UnaryDesc D;
  D.OpType = "IsNaN";
  D.Name = "isnan";
  D.ExtraCases = [] {
    return std::vector<OpTestCase>{testCase(
        "specials", {valuesInput({8}, {NAN, 1.0, -INFINITY, INFINITY, 0.0, -NAN, 3.5, -1e30}, ElementType::F32, false)})};
  };
  return D;
}

OPT_REGISTER_SCHEMA(IsNaN, unarySchema<IsNaNOp>(isnanDesc(), IsNaNTypes()));
OPT_REGISTER_KERNELS(IsNaN, unaryKernels<IsNaNOp>(isnanDesc(), IsNaNTypes()));

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
