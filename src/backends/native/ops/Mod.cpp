// Mod: elementwise remainder with numpy broadcasting. fmod=0: the result takes the divisor's sign
// (Python %, A - floor(A / B) * B); fmod=1: C fmod, the dividend's sign. Floats require fmod=1
// before opset 28, which defines fmod=0 for them too. Integer division by zero is an error.
#include "backends/native/ops/common/ElementwiseBinary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

template <typename C> typename std::enable_if<std::is_integral<C>::value, C>::type modValue(C A, C B, bool Fmod) {
  if (B == C(0))
    return C(0); // rejected before the loop; never divide by zero
  if (std::is_signed<C>::value && B == static_cast<C>(-1))
    return C(0); // INT_MIN % -1 traps on x86
  C R = static_cast<C>(A % B);
  if (!Fmod && R != C(0) && ((R < C(0)) != (B < C(0))))
    R = static_cast<C>(R + B);
  return R;
}
template <typename C> typename std::enable_if<!std::is_integral<C>::value, C>::type modValue(C A, C B, bool Fmod) {
  if (Fmod)
    return std::fmod(A, B);
  C R = std::fmod(A, B); // numpy mod: sign of the divisor; a zero takes the divisor's sign
  if (R != C(0) && ((R < C(0)) != (B < C(0))))
    R += B;
  else if (R == C(0))
    R = std::copysign(C(0), B);
  return R;
}

struct ModOp {
  template <typename C> static C apply(C A, C B, const BinaryParams &P) { return modValue(A, B, P.Mode != 0); }
};

using ModTypes = TypeList<float, double, float16, bfloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
                          uint32_t, uint64_t>;

BinaryDesc modDesc() {
  BinaryDesc D;
  D.OpType = "Mod";
  D.Name = "mod";
  D.ZeroDivisorCheck = true;
  D.Params = [](const Node &N) -> Result<BinaryParams> {
    BinaryParams P;
    ASSIGN_OR_RETURN(P.Mode, N.getInt("fmod", 0));
    if (P.Mode != 0 && P.Mode != 1)
      return makeError(ErrorCode::Model, N.describe(), ": attribute 'fmod' must be 0 or 1, got ", P.Mode);
    return P;
  };
  D.Validate = [](const ShapeContext &Ctx) -> Status {
    ASSIGN_OR_RETURN(const int64_t Fmod, Ctx.N.getInt("fmod", 0));
    if (isFloatType(Ctx.Inputs[0].Type) && Fmod != 1 && Ctx.N.OpsetVersion > 0 && Ctx.N.OpsetVersion < 28)
      return Ctx.error(ErrorCode::Model, "attribute 'fmod' must be 1 for floating-point inputs (",
                       toString(Ctx.Inputs[0].Type), ") before opset 28, got ", Fmod, " at opset ",
                       Ctx.N.OpsetVersion);
    return Status::ok();
  };
  D.IntLow = 1, D.IntHigh = 100; // generic cases: nonzero divisors
  D.DefaultAttrs = {{"fmod", attrInt(1)}};
  D.ExtraCases = [] {
    const auto ints = [](std::vector<double> V) {
      const int64_t N = static_cast<int64_t>(V.size());
      return valuesInput({N}, std::move(V), ElementType::I32, false);
    };
    const TestInput A = ints({-4, 7, 5, 4, -7, 8, -9, 9});
    const TestInput B = ints({2, -3, 8, -2, 3, 5, -4, 4});
    const TestInput FA = valuesInput({6}, {-4.3, 7.2, 5.0, 4.3, -7.2, 8.0}, ElementType::F32, false);
    const TestInput FB = valuesInput({6}, {2.1, -3.4, 8.0, -2.1, 3.4, 5.0}, ElementType::F32, false);
    TestInput Big = ints({-2147483648.0, 5});
    TestInput MinusOne = ints({-1});
    return std::vector<OpTestCase>{
        testCase("mixed_sign_python", {A, B}),
        testCase("mixed_sign_fmod", {A, B}, {{"fmod", attrInt(1)}}),
        testCase("mixed_sign_float", {FA, FB}, {{"fmod", attrInt(1)}}),
        withOpset(testCase("mixed_sign_float_python", {FA, FB}), 28),
        withOpset(testCase("float_edge_cases", {valuesInput({8}, {0.0, -0.0, INFINITY, 5, NAN, 3, -3, -2}, ElementType::F32, false),
                                                valuesInput({8}, {-2, 3, 2, 0, 1, INFINITY, -INFINITY, -INFINITY}, ElementType::F32, false)}),
                  28),
        testCase("int_min_by_minus_one", {Big, MinusOne}),
    };
  };
  return D;
}

OPT_REGISTER_SCHEMA(Mod, binarySchema<ModOp>(modDesc(), ModTypes()));
OPT_REGISTER_KERNELS(Mod, binaryKernels<ModOp>(modDesc(), ModTypes()));

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
