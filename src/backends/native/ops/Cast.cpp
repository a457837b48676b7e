// Cast: converts to the element type in attribute 'to' (bool, integers, f16, bf16, f32, f64 in
// every combination; float -> int truncates). 'saturate' (opset 19+) only concerns float8, which
// is unsupported (TypeError). Small constant inputs fold at load (shape arithmetic in exports).
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
    ASSIGN_OR_RETURN(const int64_t Saturate, Ctx.N.getInt("saturate", 1));
    if (Saturate != 0 && Saturate != 1)
      return Ctx.error(ErrorCode::Model, "attribute 'saturate' must be 0 or 1, got ", Saturate);
    Ctx.Outputs[0].Type = T;
    Ctx.Outputs[0].Shape = Ctx.Inputs[0].Shape;
    return foldWithKernel(Ctx, [](const KernelCreateInfo &) { return makeKernel<CastKernel>("cast__fold", false); });
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
