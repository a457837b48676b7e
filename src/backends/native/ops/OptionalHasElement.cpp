// OptionalHasElement: whether the input holds a value, as a bool scalar. A tensor or sequence
// input holds one; an omitted input (opset 18) does not.
#include "backends/native/ops/common/Sequence.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

OpSchema optionalHasElementSchema() {
  OpSchema S;
  S.OpType = "OptionalHasElement";
  S.MinInputs = 0;
  S.MaxInputs = 1;
  S.TakesContainers = true;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    Ctx.Outputs[0].Type = ElementType::Bool;
    Ctx.Outputs[0].Shape = TensorShape(std::vector<Expr>{});
    if (!Ctx.hasInput(0)) // no input: known to be false, fold
      Ctx.Outputs[0].Const = ConstData::allocate(ElementType::Bool, {});
    return Status::ok();
  };
  return S;
}

Result<std::unique_ptr<Kernel>> createOptionalHasElement(const KernelCreateInfo &Info) {
  const Node N = Info.N;
  return makeKernel<FunctionKernel>([N](const KernelContext &Ctx) -> Status {
    if (!Ctx.Outputs[0].Data || Ctx.Outputs[0].elementCount() != 1)
      return makeError(ErrorCode::Infer, N.describe(), ": the output is not a scalar");
    *Ctx.Outputs[0].data<uint8_t>() = !Ctx.Inputs.empty() && holdsValue(Ctx.Inputs[0]) ? 1 : 0;
    return Status::ok();
  });
}

OpKernels optionalHasElementKernels() {
  OpKernels K;
  K.OpType = "OptionalHasElement";
  K.Variants.push_back({"any_optionalhaselement__ref", 0, nullptr, createOptionalHasElement});
  K.TestCases = [] {
    return std::vector<OpTestCase>{withOpset(testCase("full", {optionalInput(ValueKind::OptionalTensor, {{3}})}), 18),
                                   withOpset(testCase("empty", {optionalInput(ValueKind::OptionalSequence, {})}), 18),
                                   withOpset(testCase("tensor", {tensorInput({2})}), 18)};
  };
  return K;
}

OPT_REGISTER_SCHEMA(OptionalHasElement, optionalHasElementSchema());
OPT_REGISTER_KERNELS(OptionalHasElement, optionalHasElementKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
