// Identity: output = input, any element type (byte copy into the output's own buffer).
#include "backends/native/ops/common/OpUtil.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

OpSchema identitySchema() {
  OpSchema S;
  S.OpType = "Identity";
  S.MinInputs = S.MaxInputs = 1;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireCopyableType(Ctx, 0));
    Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
    Ctx.Outputs[0].Shape = Ctx.Inputs[0].Shape;
    return Status::ok();
  };
  return S;
}

OpKernels identityKernels() {
  OpKernels K;
  K.OpType = "Identity";
  K.Variants.push_back(byteCopyVariant("any_identity__ref"));
  K.TestCases = [] {
    return std::vector<OpTestCase>{testCase("f32", {tensorInput({2, 3})}),
                                   testCase("i64", typedInputs({4}, ElementType::I64)),
                                   testCase("u8", typedInputs({3, 1}, ElementType::U8)),
                                   testCase("scalar", {tensorInput({})})};
  };
  return K;
}

OPT_REGISTER_SCHEMA(Identity, identitySchema());
OPT_REGISTER_KERNELS(Identity, identityKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
