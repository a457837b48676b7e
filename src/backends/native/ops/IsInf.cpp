// IsInf: a bool tensor, true where the input is +inf (detect_positive, default 1) or -inf
// (detect_negative, default 1). f16, bf16, f32, f64.
#include "backends/native/ops/common/ElementwiseUnary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct IsInfOp {
  template <typename C> static bool apply(C X, const UnaryParams &P) {
    return (P.Mode && X == -std::numeric_limits<C>::infinity()) ||
           (P.Mode2 && X == std::numeric_limits<C>::infinity());
  }
};

using IsInfTypes = TypeList<float, double, float16, bfloat16>;

UnaryDesc isinfDesc() {
  UnaryDesc D;
  D.OpType = "IsInf";
  D.Name = "isinf";
  D.Params = [](const Node &N) -> Result<UnaryParams> {
    UnaryParams P;
    ASSIGN_OR_RETURN(P.Mode, N.getInt("detect_negative", 1));
    ASSIGN_OR_RETURN(P.Mode2, N.getInt("detect_positive", 1));
    return P;
  };
  D.ExtraCases = [] {
    const TestInput Specials =
        valuesInput({8}, {NAN, 1.0, -INFINITY, INFINITY, 0.0, -INFINITY, 3.5, INFINITY}, ElementType::F32, false);
    return std::vector<OpTestCase>{
        testCase("specials", {Specials}),
        testCase("negative_only", {Specials}, {{"detect_positive", attrInt(0)}}),
        testCase("positive_only", {Specials}, {{"detect_negative", attrInt(0)}}),
    };
  };
  return D;
}

OPT_REGISTER_SCHEMA(IsInf, unarySchema<IsInfOp>(isinfDesc(), IsInfTypes()));
OPT_REGISTER_KERNELS(IsInf, unaryKernels<IsInfOp>(isinfDesc(), IsInfTypes()));

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
