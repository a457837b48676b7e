// SequenceErase: the input sequence without the element at 'position' (default: the last one).
// Positions run from -n to n-1; others (and erasing from an empty sequence) are an InferError.
#include "backends/native/ops/common/Sequence.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

OpSchema sequenceEraseSchema() {
  OpSchema S;
  S.OpType = "SequenceErase";
  S.MinInputs = 1;
  S.MaxInputs = 2;
  S.TakesContainers = true;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireSequenceInput(Ctx, 0));
    if (Ctx.hasInput(1))
      RETURN_IF_ERROR(requirePositionInput(Ctx, 1));
    setSequenceOutput(Ctx, 0, Ctx.Inputs[0].Type, Ctx.Inputs[0].Shape);
    return Status::ok();
  };
  return S;
}

Result<std::unique_ptr<Kernel>> createSequenceErase(const KernelCreateInfo &Info) {
  const Node N = Info.N;
  return makeKernel<FunctionKernel>([N](const KernelContext &Ctx) -> Status {
    ASSIGN_OR_RETURN(const ContainerValue *Seq, sequenceIn(N, Ctx, 0));
    ASSIGN_OR_RETURN(ContainerValue * Out, containerOut(N, Ctx, 0));
    const size_t Len = Seq->Tensors.size();
    int64_t Pos = static_cast<int64_t>(Len) - 1;
    if (Ctx.Inputs.size() > 1 && Ctx.Inputs[1].Data) {
      ASSIGN_OR_RETURN(Pos, readPosition(N, Ctx.Inputs[1], Len, /*AllowEnd=*/false));
    } else if (Len == 0) {
      return makeError(ErrorCode::Infer, N.describe(), ": cannot erase from an empty sequence (length 0)");
    }
    std::vector<OwnedTensor> Elems = Seq->Tensors;
    Elems.erase(Elems.begin() + static_cast<std::ptrdiff_t>(Pos));
    Out->reset(ValueKind::Sequence, Seq->Type);
    Out->Tensors = std::move(Elems);
    return Status::ok();
  });
}

OpKernels sequenceEraseKernels() {
  OpKernels K;
  K.OpType = "SequenceErase";
  K.Variants.push_back({"any_sequenceerase__ref", 0, nullptr, createSequenceErase});
  K.TestCases = [] {
    return std::vector<OpTestCase>{
        testCase("last", {sequenceInput({{2, 3}, {1, 3}, {4, 3}})}),
        testCase("middle", {sequenceInput({{2}, {3}, {1}}, ElementType::I32), valuesInput({}, {1}, ElementType::I64, false)}),
        testCase("negative", {sequenceInput({{2}, {3}}), valuesInput({}, {-2}, ElementType::I32, false)})};
  };
  return K;
}

OPT_REGISTER_SCHEMA(SequenceErase, sequenceEraseSchema());
OPT_REGISTER_KERNELS(SequenceErase, sequenceEraseKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
