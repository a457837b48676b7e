// ConcatFromSequence: the elements of a sequence joined along 'axis' (new_axis = 0, the default),
// or stacked along a new axis at 'axis' (new_axis = 1). The output is sized while the kernel runs:
// its length along the axis depends on the sequence.
#include "backends/native/ops/common/Sequence.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

OpSchema concatFromSequenceSchema() {
  OpSchema S;
  S.OpType = "ConcatFromSequence";
  S.MinInputs = S.MaxInputs = 1;
  S.TakesContainers = true;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireSequenceInput(Ctx, 0));
    if (!Ctx.N.hasAttr("axis"))
      return Ctx.error(ErrorCode::Model, "attribute 'axis' is required");
    ASSIGN_OR_RETURN(int64_t Axis, Ctx.N.getInt("axis", 0));
    ASSIGN_OR_RETURN(int64_t NewAxis, Ctx.N.getInt("new_axis", 0));
    std::vector<Expr> Dims = Ctx.Inputs[0].Shape.dims();
    const int64_t Rank = static_cast<int64_t>(Dims.size()) + (NewAxis ? 1 : 0);
    Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
    if (Axis < -Rank || Axis >= Rank) {
      // The element shape may be a guess (unknown rank): the kernel checks the actual one.
      Ctx.Outputs[0].Shape = unknownShape(Ctx);
      return Status::ok();
    }
    const size_t A = static_cast<size_t>(Axis < 0 ? Axis + Rank : Axis);
    if (NewAxis)
      Dims.insert(Dims.begin() + static_cast<std::ptrdiff_t>(A), Ctx.newSymbol());
    else
      Dims[A] = Ctx.newSymbol();
    Ctx.Outputs[0].Shape = TensorShape(std::move(Dims));
    return Status::ok();
  };
  return S;
}

Result<std::unique_ptr<Kernel>> createConcatFromSequence(const KernelCreateInfo &Info) {
  const Node N = Info.N;
  ASSIGN_OR_RETURN(int64_t AxisAttr, N.getInt("axis", 0));
  ASSIGN_OR_RETURN(int64_t NewAxis, N.getInt("new_axis", 0));
  return makeKernel<FunctionKernel>([N, AxisAttr, NewAxis](const KernelContext &Ctx) -> Status {
    ASSIGN_OR_RETURN(const ContainerValue *Seq, sequenceIn(N, Ctx, 0));
    if (Seq->Tensors.empty())
      return makeError(ErrorCode::Infer, N.describe(), ": the sequence is empty (length 0); there is nothing to concatenate");
    const std::vector<int64_t> &First = Seq->Tensors[0].View.Dims;
    const int64_t Rank = static_cast<int64_t>(First.size()) + (NewAxis ? 1 : 0);
    ASSIGN_OR_RETURN(int64_t Axis, normalizeAxis(N, "axis", AxisAttr, Rank));
    const size_t A = static_cast<size_t>(Axis);
    std::vector<int64_t> OutDims = First;
    if (NewAxis)
      OutDims.insert(OutDims.begin() + static_cast<std::ptrdiff_t>(A), 0);
    else
      OutDims[A] = 0;
    for (size_t I = 0; I < Seq->Tensors.size(); ++I) {
      const std::vector<int64_t> &D = Seq->Tensors[I].View.Dims;
      bool Same = D.size() == First.size();
      for (size_t K = 0; Same && K < D.size(); ++K)
        Same = D[K] == First[K] || (!NewAxis && K == A);
      if (!Same)
        return makeError(ErrorCode::Shape, N.describe(), ": element ", I, " has shape ", joinInts(D), ", element 0 ",
                         joinInts(First), NewAxis ? " (stacked elements must have one shape)" : "");
      OutDims[A] += NewAxis ? 1 : D[A];
    }
    ASSIGN_OR_RETURN(TensorView Y, controlFlowOutput(N, Ctx, currentOutputAllocator(), 0, OutDims));
    const size_t Elem = getElementSize(Seq->Type);
    const int64_t Outer = product(OutDims, 0, A), Inner = product(OutDims, A + 1, OutDims.size());
    int64_t Offset = 0;
    for (const OwnedTensor &T : Seq->Tensors) {
      const int64_t Part = NewAxis ? 1 : T.View.Dims[A];
      for (int64_t O = 0; O < Outer && Part * Inner > 0; ++O)
        std::memcpy(static_cast<char *>(Y.Data) + (O * OutDims[A] + Offset) * Inner * Elem,
                    static_cast<const char *>(T.View.Data) + O * Part * Inner * Elem,
                    static_cast<size_t>(Part * Inner) * Elem);
      Offset += Part;
    }
    return Status::ok();
  });
}

OpKernels concatFromSequenceKernels() {
  OpKernels K;
  K.OpType = "ConcatFromSequence";
  K.Variants.push_back({"any_concatfromsequence__ref", 0, nullptr, createConcatFromSequence});
  K.TestCases = [] {
    return std::vector<OpTestCase>{
        testCase("concat_axis1", {sequenceInput({{2, 1}, {2, 3}, {2, 2}})}, {{"axis", attrInt(1)}}),
        testCase("stack_last", {sequenceInput({{2, 3}, {2, 3}}, ElementType::I64)},
                 {{"axis", attrInt(-1)}, {"new_axis", attrInt(1)}}),
        testCase("concat_axis0", {sequenceInput({{1}, {4}})}, {{"axis", attrInt(0)}})};
  };
  return K;
}

OPT_REGISTER_SCHEMA(ConcatFromSequence, concatFromSequenceSchema());
OPT_REGISTER_KERNELS(ConcatFromSequence, concatFromSequenceKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
