// OptionalGetElement: the value inside an optional (a tensor or a sequence); a tensor or sequence
// input passes through (opset 18). An empty optional is an InferError naming the node.
#include "backends/native/ops/common/Sequence.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

OpSchema optionalGetElementSchema() {
  OpSchema S;
  S.OpType = "OptionalGetElement";
  S.MinInputs = S.MaxInputs = 1;
  S.TakesContainers = true;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    const ValueInfo &In = Ctx.Inputs[0];
    Ctx.Outputs[0].Kind = unwrapOptional(In.Kind);
    Ctx.Outputs[0].Type = In.Type;
    Ctx.Outputs[0].Shape = In.Shape;
    if (!isContainerKind(In.Kind))
      RETURN_IF_ERROR(requireCopyableType(Ctx, 0));
    return Status::ok();
  };
  return S;
}

Result<std::unique_ptr<Kernel>> createOptionalGetElement(const KernelCreateInfo &Info) {
  const Node N = Info.N;
  return makeKernel<FunctionKernel>([N](const KernelContext &Ctx) -> Status {
    const TensorView &In = Ctx.Inputs[0];
    if (!holdsValue(In))
      return makeError(ErrorCode::Infer, N.describe(), ": the optional input is empty");
    if (ContainerValue *Out = Ctx.Outputs[0].container())
      return assignContainer(*Out, In, N.describe() + ": input 0");
    return writeControlFlowOutput(N, Ctx, currentOutputAllocator(), 0, In);
  });
}

OpKernels optionalGetElementKernels() {
  OpKernels K;
  K.OpType = "OptionalGetElement";
  K.Variants.push_back({"any_optionalgetelement__ref", 0, nullptr, createOptionalGetElement});
  K.TestCases = [] {
    return std::vector<OpTestCase>{
        withOpset(testCase("optional_tensor", {optionalInput(ValueKind::OptionalTensor, {{2, 3}})}), 18),
        withOpset(testCase("optional_sequence", {optionalInput(ValueKind::OptionalSequence, {{2}, {4}}, ElementType::I32)}), 18),
        withOpset(testCase("tensor", {tensorInput({4})}), 18)};
  };
  return K;
}

OPT_REGISTER_SCHEMA(OptionalGetElement, optionalGetElementSchema());
OPT_REGISTER_KERNELS(OptionalGetElement, optionalGetElementKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
