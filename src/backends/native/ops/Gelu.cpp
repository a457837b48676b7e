// Gelu (opset 20): approximate="none": 0.5 x (1 + erf(x / sqrt 2)); "tanh":
// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))). f16, bf16, f32, f64; a vectorized f32 variant.
#include "backends/native/ops/common/ElementwiseUnary.h"
#include "backends/native/ops/common/MathApprox.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct GeluOp {
  template <typename C> static C apply(C X, const UnaryParams &P) {
    if (P.Mode)
      return C(0.5) * X * (C(1) + std::tanh(C(0.7978845608028654) * (X + C(0.044715) * X * X * X)));
    return C(0.5) * X * (C(1) + std::erf(X * C(0.70710678118654752)));
  }
};

using GeluTypes = TypeList<float, double, float16, bfloat16>;

Result<UnaryParams> geluParams(const Node &N) {
  UnaryParams P;
  ASSIGN_OR_RETURN(const std::string Approx, N.getString("approximate", "none"));
  if (Approx != "none" && Approx != "tanh")
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'approximate' must be \"none\" or \"tanh\", got \"",
                     Approx, "\"");
  P.Mode = Approx == "tanh";
  return P;
}

UnaryDesc geluDesc() {
  UnaryDesc D;
  D.OpType = "Gelu";
  D.Name = "gelu";
  D.Params = geluParams;
  D.Low = -5, D.High = 5;
  D.ExtraCases = [] {
    return std::vector<OpTestCase>{
        withOpset(testCase("tanh", {rangeInput({4, 33}, ElementType::F32, -5, 5)}, {{"approximate", attrString("tanh")}}),
                  20),
        withOpset(testCase("tanh_large", {rangeInput({2, 50000}, ElementType::F32, -6, 6)},
                           {{"approximate", attrString("tanh")}}),
                  20),
        withOpset(testCase("tanh_f64", {rangeInput({7}, ElementType::F64, -5, 5)}, {{"approximate", attrString("tanh")}}),
                  20),
    };
  };
  return D;
}

OpKernels geluKernels() {
  OpKernels K = unaryKernels<GeluOp>(geluDesc(), GeluTypes());
  K.Variants.push_back(unaryF32LoopVariant("f32_gelu__vec", [](const Node &N) -> F32LoopFn {
    auto P = geluParams(N);
    return P.isOk() && P->Mode ? &approx::geluTanhF32 : &approx::geluErfF32;
  }));
  return K;
}

OPT_REGISTER_SCHEMA(Gelu, unarySchema<GeluOp>(geluDesc(), GeluTypes()));
OPT_REGISTER_KERNELS(Gelu, geluKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
