// SequenceAt: a copy of the element at 'position' (-n to n-1; others are an InferError). The
// output is sized while the kernel runs when the elements' shapes are not known before.
#include "backends/native/ops/common/Sequence.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

OpSchema sequenceAtSchema() {
  OpSchema S;
  S.OpType = "SequenceAt";
  S.MinInputs = S.MaxInputs = 2;
  S.TakesContainers = true;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireSequenceInput(Ctx, 0));
    RETURN_IF_ERROR(requirePositionInput(Ctx, 1));
    Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
    Ctx.Outputs[0].Shape = Ctx.Inputs[0].Shape;
    return Status::ok();
  };
  return S;
}

Result<std::unique_ptr<Kernel>> createSequenceAt(const KernelCreateInfo &Info) {
  const Node N = Info.N;
  return makeKernel<FunctionKernel>([N](const KernelContext &Ctx) -> Status {
    ASSIGN_OR_RETURN(const ContainerValue *Seq, sequenceIn(N, Ctx, 0));
    ASSIGN_OR_RETURN(int64_t Pos, readPosition(N, Ctx.Inputs[1], Seq->Tensors.size(), /*AllowEnd=*/false));
    return writeControlFlowOutput(N, Ctx, currentOutputAllocator(), 0, Seq->Tensors[static_cast<size_t>(Pos)].View);
  });
}

OpKernels sequenceAtKernels() {
  OpKernels K;
  K.OpType = "SequenceAt";
  K.Variants.push_back({"any_sequenceat__ref", 0, nullptr, createSequenceAt});
  K.TestCases = [] {
    return std::vector<OpTestCase>{
        testCase("first", {sequenceInput({{2, 3}, {2, 3}}), valuesInput({}, {0}, ElementType::I64, false)}),
        testCase("last_ragged", {sequenceInput({{2}, {5}}, ElementType::I64), valuesInput({1}, {-1}, ElementType::I32, false)})};
  };
  return K;
}

OPT_REGISTER_SCHEMA(SequenceAt, sequenceAtSchema());
OPT_REGISTER_KERNELS(SequenceAt, sequenceAtKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
