// SequenceLength: the number of elements of a sequence, as an int64 scalar.
#include "backends/native/ops/common/Sequence.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

OpSchema sequenceLengthSchema() {
  OpSchema S;
  S.OpType = "SequenceLength";
  S.MinInputs = S.MaxInputs = 1;
  S.TakesContainers = true;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireSequenceInput(Ctx, 0));
    Ctx.Outputs[0].Type = ElementType::I64;
    Ctx.Outputs[0].Shape = TensorShape(std::vector<Expr>{});
    return Status::ok();
  };
  return S;
}

Result<std::unique_ptr<Kernel>> createSequenceLength(const KernelCreateInfo &Info) {
  const Node N = Info.N;
  return makeKernel<FunctionKernel>([N](const KernelContext &Ctx) -> Status {
    ASSIGN_OR_RETURN(const ContainerValue *Seq, sequenceIn(N, Ctx, 0));
    if (!Ctx.Outputs[0].Data || Ctx.Outputs[0].elementCount() != 1)
      return makeError(ErrorCode::Infer, N.describe(), ": the output is not a scalar");
    *Ctx.Outputs[0].data<int64_t>() = static_cast<int64_t>(Seq->Tensors.size());
    return Status::ok();
  });
}

OpKernels sequenceLengthKernels() {
  OpKernels K;
  K.OpType = "SequenceLength";
  K.Variants.push_back({"any_sequencelength__ref", 0, nullptr, createSequenceLength});
  K.TestCases = [] {
    return std::vector<OpTestCase>{testCase("three", {sequenceInput({{2}, {3}, {1, 1}})}),
                                   testCase("empty", {sequenceInput({})})};
  };
  return K;
}

OPT_REGISTER_SCHEMA(SequenceLength, sequenceLengthSchema());
OPT_REGISTER_KERNELS(SequenceLength, sequenceLengthKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
