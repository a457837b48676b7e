// SequenceInsert: the input sequence with 'tensor' inserted at 'position' (default: appended).
// Positions run from -n to n for a sequence of n elements; others are an InferError.
#include "backends/native/ops/common/Sequence.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

OpSchema sequenceInsertSchema() {
  OpSchema S;
  S.OpType = "SequenceInsert";
  S.MinInputs = 2;
  S.MaxInputs = 3;
  S.TakesContainers = true;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireSequenceInput(Ctx, 0));
    RETURN_IF_ERROR(requireTensorInput(Ctx, 1));
    if (Ctx.hasInput(2))
      RETURN_IF_ERROR(requirePositionInput(Ctx, 2));
    const ValueInfo &Seq = Ctx.Inputs[0], &T = Ctx.Inputs[1];
    if (Seq.Type != T.Type && Seq.Type != ElementType::Undefined)
      return Ctx.error(ErrorCode::Type, "tensor is ", toString(T.Type), " but the sequence holds ", toString(Seq.Type));
    setSequenceOutput(Ctx, 0, T.Type, mergeElementShapes(Ctx, Seq.Shape, T.Shape));
    return Status::ok();
  };
  return S;
}

Result<std::unique_ptr<Kernel>> createSequenceInsert(const KernelCreateInfo &Info) {
  const Node N = Info.N;
  return makeKernel<FunctionKernel>([N](const KernelContext &Ctx) -> Status {
    ASSIGN_OR_RETURN(const ContainerValue *Seq, sequenceIn(N, Ctx, 0));
    ASSIGN_OR_RETURN(ContainerValue * Out, containerOut(N, Ctx, 0));
    const TensorView &T = Ctx.Inputs[1];
    if (!Seq->Tensors.empty() && Seq->Type != T.Type)
      return makeError(ErrorCode::Type, N.describe(), ": tensor is ", toString(T.Type), " but the sequence holds ",
                       toString(Seq->Type));
    size_t Pos = Seq->Tensors.size();
    if (Ctx.Inputs.size() > 2 && Ctx.Inputs[2].Data) {
      ASSIGN_OR_RETURN(int64_t P, readPosition(N, Ctx.Inputs[2], Seq->Tensors.size(), /*AllowEnd=*/true));
      Pos = static_cast<size_t>(P);
    }
    ASSIGN_OR_RETURN(OwnedTensor Copy, copyToOwned(T));
    std::vector<OwnedTensor> Elems = Seq->Tensors; // shared buffers; Seq may be Out's own input
    Elems.insert(Elems.begin() + static_cast<std::ptrdiff_t>(Pos), std::move(Copy));
    Out->reset(ValueKind::Sequence, T.Type);
    Out->Tensors = std::move(Elems);
    return Status::ok();
  });
}

OpKernels sequenceInsertKernels() {
  OpKernels K;
  K.OpType = "SequenceInsert";
  K.Variants.push_back({"any_sequenceinsert__ref", 0, nullptr, createSequenceInsert});
  K.TestCases = [] {
    return std::vector<OpTestCase>{
        testCase("append", {sequenceInput({{2, 3}, {1, 3}}), tensorInput({4, 3})}),
        testCase("front", {sequenceInput({{2}, {3}}, ElementType::I64), tensorInput({1}, ElementType::I64),
                           valuesInput({}, {-2}, ElementType::I64, false)}),
        testCase("into_empty", {sequenceInput({}), tensorInput({2, 2}), valuesInput({1}, {0}, ElementType::I32, false)})};
  };
  return K;
}

OPT_REGISTER_SCHEMA(SequenceInsert, sequenceInsertSchema());
OPT_REGISTER_KERNELS(SequenceInsert, sequenceInsertKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
