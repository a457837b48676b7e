// Flatten: [d0..dn) -> [d0*..*d(axis-1), d(axis)*..*d(n-1)], any element type; axis in [-r, r].
#include "backends/native/ops/common/OpUtil.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

OpSchema flattenSchema() {
  OpSchema S;
  S.OpType = "Flatten";
  S.MinInputs = S.MaxInputs = 1;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireCopyableType(Ctx, 0));
    const TensorShape &In = Ctx.Inputs[0].Shape;
    const int64_t Rank = static_cast<int64_t>(In.getRank());
    ASSIGN_OR_RETURN(int64_t Axis, Ctx.N.getInt("axis", 1));
    ASSIGN_OR_RETURN(Axis, normalizeAxis(Ctx.N, "axis", Axis, Rank, /*Inclusive=*/true));
    Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
    Ctx.Outputs[0].Shape = TensorShape{productExpr(In, 0, static_cast<size_t>(Axis)),
                                       productExpr(In, static_cast<size_t>(Axis), In.getRank())};
    return Status::ok();
  };
  return S;
}

OpKernels flattenKernels() {
  OpKernels K;
  K.OpType = "Flatten";
  K.Variants.push_back(byteCopyVariant("any_flatten__ref"));
  K.TestCases = [] {
    return std::vector<OpTestCase>{
        testCase("default_axis", {tensorInput({2, 3, 4})}),
        testCase("axis0", {tensorInput({2, 3, 4})}, {{"axis", attrInt(0)}}),
        testCase("axis_rank", {tensorInput({2, 3, 4})}, {{"axis", attrInt(3)}}),
        testCase("negative_axis", {tensorInput({2, 3, 4, 5})}, {{"axis", attrInt(-2)}}),
        testCase("i64", typedInputs({2, 2, 2}, ElementType::I64), {{"axis", attrInt(2)}}),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(Flatten, flattenSchema());
OPT_REGISTER_KERNELS(Flatten, flattenKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
