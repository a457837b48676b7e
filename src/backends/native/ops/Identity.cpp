// Identity: output = input, any element type (byte copy into the output's own buffer); sequences
// and optionals pass their elements on without copying them.
#include "backends/native/ops/common/Sequence.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

OpSchema identitySchema() {
  OpSchema S;
  S.OpType = "Identity";
  S.MinInputs = S.MaxInputs = 1;
  S.TakesContainers = true;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    if (!isContainerKind(Ctx.Inputs[0].Kind))
      RETURN_IF_ERROR(requireCopyableType(Ctx, 0));
    Ctx.Outputs[0].Kind = Ctx.Inputs[0].Kind;
    Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
    Ctx.Outputs[0].Shape = Ctx.Inputs[0].Shape;
    return Status::ok();
  };
  return S;
}

class IdentityKernel : public Kernel {
public:
  explicit IdentityKernel(const Node &N) : N(N), Copy("any_identity__ref") {}
  Status run(const KernelContext &Ctx) const override {
    if (ContainerValue *Out = Ctx.Outputs[0].container())
      return assignContainer(*Out, Ctx.Inputs[0], N.describe() + ": input 0");
    return Copy.run(Ctx);
  }

private:
  Node N;
  ByteCopyKernel Copy;
};

OpKernels identityKernels() {
  OpKernels K;
  K.OpType = "Identity";
  K.Variants.push_back({"any_identity__ref", 0, nullptr,
                        [](const KernelCreateInfo &I) { return makeKernel<IdentityKernel>(I.N); }});
  K.TestCases = [] {
    return std::vector<OpTestCase>{testCase("f32", {tensorInput({2, 3})}),
                                   testCase("i64", typedInputs({4}, ElementType::I64)),
                                   testCase("u8", typedInputs({3, 1}, ElementType::U8)),
                                   testCase("scalar", {tensorInput({})}),
                                   testCase("sequence", {sequenceInput({{2}, {3, 1}})}),
                                   testCase("optional", {optionalInput(ValueKind::OptionalSequence, {{2}})})};
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
