// Compress: keeps the slices along 'axis' (or the elements of the flattened input when no axis)
// whose condition entry is true; a condition shorter than the axis drops the rest. The output
// length depends on the condition: constant -> known, else a fresh symbol. Any element type.
#include "backends/native/ops/common/Indexing.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

/// Indices of the kept entries among the first Dim.
std::vector<int64_t> keptIndices(const TensorView &Cond, int64_t Dim) {
  std::vector<int64_t> Kept;
  const size_t N = std::min<size_t>(Cond.elementCount(), static_cast<size_t>(Dim));
  for (size_t I = 0; I < N; ++I)
    if (static_cast<const uint8_t *>(Cond.Data)[I])
      Kept.push_back(static_cast<int64_t>(I));
  return Kept;
}

Status computeCompress(const Node &N, const std::vector<TensorView> &In, const std::vector<TensorView> &Out,
                       const Parallel &) {
  const TensorView &X = In[0], &Y = Out[0];
  const size_t Elem = getElementSize(X.Type);
  int64_t Outer = 1, Dim = static_cast<int64_t>(X.elementCount()), Inner = 1;
  if (N.hasAttr("axis")) {
    ASSIGN_OR_RETURN(int64_t Axis, N.getInt("axis", 0));
    ASSIGN_OR_RETURN(Axis, normalizeAxis(N, "axis", Axis, static_cast<int64_t>(X.rank())));
    const size_t A = static_cast<size_t>(Axis);
    Outer = product(X.Dims, 0, A), Dim = X.Dims[A], Inner = product(X.Dims, A + 1, X.rank());
  }
  const std::vector<int64_t> Kept = keptIndices(In[1], Dim);
  const int64_t K = static_cast<int64_t>(Kept.size());
  if (Y.elementCount() != static_cast<size_t>(Outer * K * Inner))
    return runError("any_compress__ref", "output ", joinInts(Y.Dims), " does not match the condition");
  for (int64_t O = 0; O < Outer; ++O)
    for (int64_t J = 0; J < K; ++J)
      std::memcpy(static_cast<char *>(Y.Data) + ((O * K + J) * Inner) * static_cast<int64_t>(Elem),
                  static_cast<const char *>(X.Data) + ((O * Dim + Kept[static_cast<size_t>(J)]) * Inner) * static_cast<int64_t>(Elem),
                  static_cast<size_t>(Inner) * Elem);
  return Status::ok();
}

OpSchema compressSchema() {
  OpSchema S;
  S.OpType = "Compress";
  S.MinInputs = S.MaxInputs = 2;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireCopyableType(Ctx, 0));
    RETURN_IF_ERROR(requireInputType(Ctx, 1, {ElementType::Bool}));
    const TensorShape &X = Ctx.Inputs[0].Shape;
    if (Ctx.Inputs[1].Shape.getRank() != 1)
      return Ctx.error(ErrorCode::Shape, "input 1 (condition) must be 1-D, got ", Ctx.Inputs[1].Shape.toString());
    std::vector<Expr> Dims;
    size_t A = 0;
    Expr Dim = X.getElementCount();
    if (Ctx.N.hasAttr("axis")) {
      ASSIGN_OR_RETURN(int64_t Axis, Ctx.N.getInt("axis", 0));
      ASSIGN_OR_RETURN(Axis, normalizeAxis(Ctx.N, "axis", Axis, static_cast<int64_t>(X.getRank())));
      A = static_cast<size_t>(Axis);
      Dims = X.dims();
      Dim = X[A];
    } else {
      Dims = {Dim};
    }
    if (isConstInput(Ctx, 1) && Dim.isConst())
      Dims[A] = Expr(static_cast<long long>(keptIndices(constView(*Ctx.Inputs[1].Const), Dim.value()).size()));
    else
      Dims[A] = Ctx.newSymbol();
    Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
    Ctx.Outputs[0].Shape = TensorShape(std::move(Dims));
    return foldIfConstant(Ctx, computeCompress);
  };
  return S;
}

OpKernels compressKernels() {
  OpKernels K;
  K.OpType = "Compress";
  K.Variants.push_back(computeVariant("any_compress__ref", 0, computeCompress));
  K.TestCases = [] {
    const auto cond = [](std::vector<double> V) {
      const int64_t N = static_cast<int64_t>(V.size());
      return valuesInput({N}, std::move(V), ElementType::Bool, true);
    };
    return std::vector<OpTestCase>{
        testCase("axis0", {tensorInput({3, 2}), cond({0, 1, 1})}, {{"axis", attrInt(0)}}),
        testCase("axis1_short", {tensorInput({3, 4}), cond({1, 0, 1})}, {{"axis", attrInt(1)}}),
        testCase("neg_axis", {tensorInput({2, 3}), cond({0, 1, 1})}, {{"axis", attrInt(-1)}}),
        testCase("flat", {typedInputs({2, 3}, ElementType::I32)[0], cond({0, 1, 0, 0, 1})}),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(Compress, compressSchema());
OPT_REGISTER_KERNELS(Compress, compressKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
