// SplitToSequence: cuts the input along 'axis' into a sequence. 'split' is a chunk length (scalar;
// the last chunk may be shorter) or the list of lengths (1-D); without it every entry of the axis
// becomes an element, with the axis kept (keepdims = 1, default) or removed (keepdims = 0).
#include "backends/native/ops/common/Sequence.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

/// Lengths of the chunks of an axis of Dim entries for a split tensor of Rank SplitRank (-1: no
/// split input) with values Split.
Result<std::vector<int64_t>> chunkLengths(const Node &N, int64_t Dim, int SplitRank, const std::vector<int64_t> &Split) {
  std::vector<int64_t> Lengths;
  if (SplitRank < 0) {
    Lengths.assign(static_cast<size_t>(Dim), 1);
    return Lengths;
  }
  if (SplitRank == 0) {
    const int64_t K = Split.empty() ? 0 : Split[0];
    if (K <= 0)
      return makeError(ErrorCode::Infer, N.describe(), ": split ", K, " must be positive");
    for (int64_t Off = 0; Off < Dim; Off += K)
      Lengths.push_back(std::min(K, Dim - Off));
    return Lengths;
  }
  int64_t Sum = 0;
  for (int64_t L : Split) {
    if (L < 0)
      return makeError(ErrorCode::Infer, N.describe(), ": split ", joinInts(Split), " has a negative length");
    Sum += L;
  }
  if (Sum != Dim)
    return makeError(ErrorCode::Infer, N.describe(), ": split ", joinInts(Split), " adds up to ", Sum,
                     " but the axis has ", Dim, " entries");
  return Split;
}

OpSchema splitToSequenceSchema() {
  OpSchema S;
  S.OpType = "SplitToSequence";
  S.MinInputs = 1;
  S.MaxInputs = 2;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireCopyableType(Ctx, 0));
    const TensorShape &X = Ctx.Inputs[0].Shape;
    ASSIGN_OR_RETURN(int64_t Axis, Ctx.N.getInt("axis", 0));
    ASSIGN_OR_RETURN(Axis, normalizeAxis(Ctx.N, "axis", Axis, static_cast<int64_t>(X.getRank())));
    ASSIGN_OR_RETURN(int64_t KeepDims, Ctx.N.getInt("keepdims", 1));
    std::vector<Expr> Dims = X.dims();
    const size_t A = static_cast<size_t>(Axis);
    if (!Ctx.hasInput(1)) {
      if (KeepDims)
        Dims[A] = Expr(1);
      else
        Dims.erase(Dims.begin() + static_cast<std::ptrdiff_t>(A));
    } else {
      RETURN_IF_ERROR(requireIndexType(Ctx, 1));
      if (Ctx.Inputs[1].Shape.getRank() > 1)
        return Ctx.error(ErrorCode::Shape, "split must be a scalar or 1-D, got shape ", Ctx.Inputs[1].Shape.toString());
      Dims[A] = Ctx.newSymbol();
      if (isConstInput(Ctx, 1)) {
        ASSIGN_OR_RETURN(std::vector<int64_t> Split, constInts(Ctx, 1));
        const bool Scalar = Ctx.Inputs[1].Shape.getRank() == 0;
        for (int64_t L : Split)
          if (L < 0 || (Scalar && L == 0))
            return Ctx.error(ErrorCode::Model, "split ", joinInts(Split), " must hold ",
                             Scalar ? "a positive length" : "lengths >= 0");
        const bool Equal = !Split.empty() && std::all_of(Split.begin(), Split.end(), [&](int64_t L) { return L == Split[0]; });
        if (Equal && (!Scalar || (X[A].isConst() && X[A].value() % Split[0] == 0)))
          Dims[A] = Expr(static_cast<long long>(Split[0]));
        if (!Scalar && X[A].isConst()) {
          int64_t Sum = 0;
          for (int64_t L : Split)
            Sum += L;
          if (Sum != X[A].value())
            return Ctx.error(ErrorCode::Shape, "split ", joinInts(Split), " adds up to ", Sum, " but axis ", Axis,
                             " of ", X.toString(), " has ", X[A].value());
        }
      }
    }
    setSequenceOutput(Ctx, 0, Ctx.Inputs[0].Type, TensorShape(std::move(Dims)));
    return Status::ok();
  };
  return S;
}

Result<std::unique_ptr<Kernel>> createSplitToSequence(const KernelCreateInfo &Info) {
  const Node N = Info.N;
  ASSIGN_OR_RETURN(int64_t AxisAttr, N.getInt("axis", 0));
  ASSIGN_OR_RETURN(int64_t KeepDims, N.getInt("keepdims", 1));
  return makeKernel<FunctionKernel>([N, AxisAttr, KeepDims](const KernelContext &Ctx) -> Status {
    const TensorView &X = Ctx.Inputs[0];
    ASSIGN_OR_RETURN(int64_t Axis, normalizeAxis(N, "axis", AxisAttr, static_cast<int64_t>(X.rank())));
    const size_t A = static_cast<size_t>(Axis);
    const bool HasSplit = Ctx.Inputs.size() > 1 && Ctx.Inputs[1].Data;
    std::vector<int64_t> Split;
    if (HasSplit) {
      ASSIGN_OR_RETURN(Split, readInts(Ctx.Inputs[1], "split"));
    }
    ASSIGN_OR_RETURN(std::vector<int64_t> Lengths,
                     chunkLengths(N, X.Dims[A], HasSplit ? static_cast<int>(Ctx.Inputs[1].rank()) : -1, Split));
    ASSIGN_OR_RETURN(ContainerValue * Out, containerOut(N, Ctx, 0));
    Out->reset(ValueKind::Sequence, X.Type);
    const size_t Elem = getElementSize(X.Type);
    const int64_t Outer = product(X.Dims, 0, A), Inner = product(X.Dims, A + 1, X.rank()), Dim = X.Dims[A];
    int64_t Offset = 0;
    for (int64_t Len : Lengths) {
      std::vector<int64_t> Dims = X.Dims;
      Dims[A] = Len;
      if (!HasSplit && !KeepDims)
        Dims.erase(Dims.begin() + static_cast<std::ptrdiff_t>(A));
      ASSIGN_OR_RETURN(OwnedTensor T, allocateOwnedTensor(X.Type, Dims));
      for (int64_t O = 0; O < Outer && Len * Inner > 0; ++O)
        std::memcpy(static_cast<char *>(T.View.Data) + O * Len * Inner * Elem,
                    static_cast<const char *>(X.Data) + (O * Dim + Offset) * Inner * Elem,
                    static_cast<size_t>(Len * Inner) * Elem);
      Offset += Len;
      Out->Tensors.push_back(std::move(T));
    }
    return Status::ok();
  });
}

OpKernels splitToSequenceKernels() {
  OpKernels K;
  K.OpType = "SplitToSequence";
  K.Variants.push_back({"any_splittosequence__ref", 0, nullptr, createSplitToSequence});
  K.TestCases = [] {
    return std::vector<OpTestCase>{
        testCase("each_entry", {tensorInput({3, 4})}, {{"axis", attrInt(1)}}),
        testCase("no_keepdims", {tensorInput({3, 4})}, {{"axis", attrInt(0)}, {"keepdims", attrInt(0)}}),
        testCase("chunk", {tensorInput({7, 2}), valuesInput({}, {3}, ElementType::I64, true)}),
        testCase("lengths", {tensorInput({2, 6}, ElementType::I32), valuesInput({3}, {1, 2, 3}, ElementType::I64, false)},
                 {{"axis", attrInt(-1)}})};
  };
  return K;
}

OPT_REGISTER_SCHEMA(SplitToSequence, splitToSequenceSchema());
OPT_REGISTER_KERNELS(SplitToSequence, splitToSequenceKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
