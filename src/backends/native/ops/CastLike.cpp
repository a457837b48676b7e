// CastLike: Cast to the element type of input 1 ('target_type'); its values are not read.
#include "backends/native/ops/common/ElementwiseCast.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

OpSchema castLikeSchema() {
  OpSchema S;
  S.OpType = "CastLike";
  S.MinInputs = S.MaxInputs = 2;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    for (size_t I = 0; I < 2; ++I)
      if (!castableType(Ctx.Inputs[I].Type))
        return Ctx.error(ErrorCode::Type, "input ", I, " has element type ", toString(Ctx.Inputs[I].Type),
                         ", which the native backend cannot cast");
    RETURN_IF_ERROR(parseCastOptions(Ctx.N).status());
    Ctx.Outputs[0].Type = Ctx.Inputs[1].Type;
    Ctx.Outputs[0].Shape = Ctx.Inputs[0].Shape;
    // Only input 0's values matter for folding.
    if (!Ctx.Inputs[0].Const)
      return Status::ok();
    ShapeContext One(Ctx.N);
    One.Inputs = {Ctx.Inputs[0]};
    One.Outputs = Ctx.Outputs;
    RETURN_IF_ERROR(
        foldWithKernel(One, [](const KernelCreateInfo &I) { return makeCastKernel(I, "castlike__fold", false); }));
    Ctx.Outputs = One.Outputs;
    return Status::ok();
  };
  return S;
}

OpKernels castLikeKernels() {
  OpKernels K;
  K.OpType = "CastLike";
  K.Variants.push_back(castVariant("any_castlike__ref", false));
  K.Variants.push_back(castVariant("any_castlike__parallel", true));
  K.TestCases = [] {
    const auto like = [](ElementType T) { return tensorInput({1}, T); };
    const auto x = [](ElementType T, double Lo = -100, double Hi = 100) { return rangeInput({3, 7}, T, Lo, Hi); };
    return std::vector<OpTestCase>{
        testCase("f32_to_i64", {x(ElementType::F32), like(ElementType::I64)}),
        testCase("i64_to_f32", {x(ElementType::I64), like(ElementType::F32)}),
        testCase("f32_to_f16", {x(ElementType::F32), like(ElementType::F16)}),
        testCase("f64_to_f32", {x(ElementType::F64), like(ElementType::F32)}),
        testCase("f32_to_bool", {x(ElementType::F32, -1, 1), like(ElementType::Bool)}),
        testCase("large", {rangeInput({4, 50000}, ElementType::F32, -1000, 1000), like(ElementType::I32)}),
        testCase("f32_to_e4m3fn", {x(ElementType::F32, -600, 600), like(ElementType::F8E4M3FN)}),
        testCase("f32_to_e5m2_no_saturate", {x(ElementType::F32, -7e4, 7e4), like(ElementType::F8E5M2)},
                 {{"saturate", attrInt(0)}}),
        testCase("f32_to_i4", {x(ElementType::F32, -10, 10), like(ElementType::I4)}),
        testCase("u2_to_f32", {x(ElementType::U2, 0, 3), like(ElementType::F32)}),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(CastLike, castLikeSchema());
OPT_REGISTER_KERNELS(CastLike, castLikeKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
