// Cast: converts to the element type in attribute 'to' (bool, integers, f16, bf16, f32, f64 and the
// low-precision float8 / float8e8m0 / float4e2m1 / int4 / uint4 / int2 / uint2 types in every
// combination; float -> int truncates). 'saturate' (opset 19+) decides whether out-of-range values
// clamp or become inf/NaN for float8 targets, 'round_mode' (opset 24+) rounds float8e8m0 targets;
// core/LowPrecision.h has the rules. Small constant inputs fold at load (shape arithmetic in exports).
#include "backends/native/ops/common/ElementwiseCast.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

OpSchema castSchema() {
  OpSchema S;
  S.OpType = "Cast";
  S.MinInputs = S.MaxInputs = 1;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    if (!castableType(Ctx.Inputs[0].Type))
      return Ctx.error(ErrorCode::Type, "input 0 has element type ", toString(Ctx.Inputs[0].Type),
                       ", which the native backend cannot cast");
    if (!Ctx.N.hasAttr("to"))
      return Ctx.error(ErrorCode::Model, "required attribute 'to' is missing");
    ASSIGN_OR_RETURN(const int64_t To, Ctx.N.getInt("to", 0));
    ASSIGN_OR_RETURN(const ElementType T, elementTypeFromOnnx(Ctx, "to", To));
    RETURN_IF_ERROR(parseCastOptions(Ctx.N).status());
    Ctx.Outputs[0].Type = T;
    Ctx.Outputs[0].Shape = Ctx.Inputs[0].Shape;
    return foldWithKernel(Ctx, [](const KernelCreateInfo &I) { return makeCastKernel(I, "cast__fold", false); });
  };
  return S;
}

OpKernels castKernels() {
  OpKernels K;
  K.OpType = "Cast";
  K.Variants.push_back(castVariant("any_cast__ref", false));
  K.Variants.push_back(castVariant("any_cast__parallel", true));
  K.TestCases = [] {
    const auto to = [](int64_t Code) { return std::map<std::string, AttrValue>{{"to", attrInt(Code)}}; };
    const auto withAttr = [](std::map<std::string, AttrValue> A, const char *Name, int64_t V) {
      A[Name] = attrInt(V);
      return A;
    };
    const auto x = [](ElementType T, double Lo = -100, double Hi = 100) { return rangeInput({3, 7}, T, Lo, Hi); };
    const ElementType F32 = ElementType::F32, F64 = ElementType::F64, I64 = ElementType::I64;
    std::vector<OpTestCase> Cases{
        testCase("f32_to_i64", {x(F32)}, to(7)),
        testCase("f32_to_i32_negative_truncates", {valuesInput({6}, {-2.7, -0.5, 0.5, 2.7, 1e10, -1e10}, F32, false)},
                 to(6)),
        testCase("f32_to_f64", {x(F32)}, to(11)),
        testCase("f32_to_f16", {x(F32)}, to(10)),
        testCase("f32_to_bf16", {x(F32)}, to(16)),
        testCase("f32_to_bool", {valuesInput({5}, {0, 1, -0.0, 0.25, NAN}, F32, false)}, to(9)),
        testCase("f32_to_u8", {x(F32, 0, 255)}, to(2)),
        testCase("f32_to_i8", {x(F32)}, to(3)),
        testCase("f64_to_f32", {x(F64)}, to(1)),
        testCase("i64_to_f32", {x(I64, -1e12, 1e12)}, to(1)),
        testCase("i64_to_i32", {x(I64)}, to(6)),
        testCase("i32_to_i64", {x(ElementType::I32)}, to(7)),
        testCase("i64_to_bool", {x(I64, -2, 2)}, to(9)),
        testCase("bool_to_f32", {valuesInput({4}, {0, 1, 1, 0}, ElementType::Bool, false)}, to(1)),
        testCase("bool_to_i64", {valuesInput({4}, {0, 1, 1, 0}, ElementType::Bool, false)}, to(7)),
        testCase("u8_to_f32", {x(ElementType::U8, 0, 255)}, to(1)),
        testCase("i8_to_u8", {x(ElementType::I8)}, to(2)),
        testCase("same_type", {x(F32)}, to(1)),
        testCase("const_i64_to_f32", {valuesInput({3}, {1, 2, 3}, I64, true)}, to(1)),
        testCase("large", {rangeInput({4, 50000}, F32, -1000, 1000)}, to(7)),
        testCase("empty", {rangeInput({0, 3}, F32, -1, 1)}, to(11)),
        testCase("f16_to_f32", {x(ElementType::F16)}, to(1)),
        // Low-precision types (core/LowPrecision.h): rounding, saturation, sub-byte integers.
        testCase("f32_to_e4m3fn", {x(F32, -600, 600)}, to(17)),
        testCase("f32_to_e4m3fn_no_saturate", {x(F32, -600, 600)}, withAttr(to(17), "saturate", 0)),
        testCase("f32_to_e4m3fnuz", {x(F32, -300, 300)}, to(18)),
        testCase("f64_to_e5m2_no_saturate", {x(F64, -7e4, 7e4)}, withAttr(to(19), "saturate", 0)),
        testCase("f32_to_e5m2fnuz", {x(F32, -1e-5, 1e-5)}, to(20)),
        testCase("f32_to_f4e2m1", {x(F32, -8, 8)}, to(23)),
        testCase("f32_to_e8m0", {x(F32, 0, 1e6)}, to(24)),
        testCase("f32_to_i4", {x(F32, -10, 10)}, to(22)),
        testCase("f32_to_u4", {x(F32, -2, 17)}, to(21)),
        testCase("f16_to_i2", {x(ElementType::F16, -3, 3)}, to(26)),
        testCase("i32_to_u2_keeps_low_bits", {x(ElementType::I32, -100, 100)}, to(25)),
        testCase("i64_to_i4_keeps_low_bits", {x(I64, -100, 100)}, to(22)),
        testCase("e4m3fn_to_f32", {x(ElementType::F8E4M3FN, -448, 448)}, to(1)),
        testCase("e5m2_to_f16", {x(ElementType::F8E5M2, -6e4, 6e4)}, to(10)),
        testCase("e4m3fnuz_to_e5m2", {x(ElementType::F8E4M3FNUZ, -240, 240)}, to(19)),
        testCase("f4e2m1_to_f64", {x(ElementType::F4E2M1, -6, 6)}, to(11)),
        testCase("e8m0_to_f32", {x(ElementType::F8E8M0, 1e-3, 1e3)}, to(1)),
        testCase("i4_to_f32", {x(ElementType::I4, -8, 7)}, to(1)),
        testCase("u4_to_u8", {x(ElementType::U4, 0, 15)}, to(2)),
        testCase("i2_to_i64", {x(ElementType::I2, -2, 1)}, to(7)),
        testCase("u2_to_bool", {x(ElementType::U2, 0, 3)}, to(9)),
        testCase("i4_to_i2", {x(ElementType::I4, -8, 7)}, to(26)),
        testCase("large_f32_to_e5m2", {rangeInput({4, 50000}, F32, -1000, 1000)}, to(19)),
    };
    return Cases;
  };
  return K;
}

OPT_REGISTER_SCHEMA(Cast, castSchema());
OPT_REGISTER_KERNELS(Cast, castKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
