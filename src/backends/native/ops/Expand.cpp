// Expand: broadcasts the input to the shape given by a 1-D i64 input (numpy rules in both
// directions: a 1 in the shape keeps the input's dim), any element type. The reference copies
// element by element; the strided variant copies/fills whole rows in parallel.
#include "backends/native/ops/common/Indexing.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

template <bool Fast>
Status computeExpand(const Node &, const std::vector<TensorView> &In, const std::vector<TensorView> &Out,
                     const Parallel &Par) {
  const TensorView &X = In[0], &Y = Out[0];
  const size_t R = Y.rank();
  if (X.rank() > R)
    return runError("any_expand__ref", "output rank ", R, " is below the input rank ", X.rank());
  const std::vector<int64_t> XS = stridesOf(X.Dims);
  StridedView V;
  V.Dims = Y.Dims;
  V.Strides.assign(R, 0);
  for (size_t I = 0; I < X.rank(); ++I) {
    const size_t O = I + R - X.rank();
    if (X.Dims[I] != 1 && X.Dims[I] != Y.Dims[O])
      return runError("any_expand__ref", "cannot broadcast input ", joinInts(X.Dims), " to ", joinInts(Y.Dims));
    V.Strides[O] = X.Dims[I] == 1 ? 0 : XS[I];
  }
  if (Y.elementCount() == 0)
    return Status::ok();
  if (Fast)
    stridedCopyFast(X.Data, Y.Data, getElementSize(X.Type), V, Par);
  else
    stridedCopyRef(X.Data, Y.Data, getElementSize(X.Type), V);
  return Status::ok();
}

Status inferExpand(ShapeContext &Ctx) {
  RETURN_IF_ERROR(requireCopyableType(Ctx, 0));
  RETURN_IF_ERROR(requireInputType(Ctx, 1, {ElementType::I64}));
  const TensorShape &X = Ctx.Inputs[0].Shape, &SI = Ctx.Inputs[1].Shape;
  if (SI.getRank() != 1)
    return Ctx.error(ErrorCode::Shape, "input 1 (shape) must be 1-D, got ", SI.toString());
  Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
  if (isConstInput(Ctx, 1)) {
    ASSIGN_OR_RETURN(const std::vector<int64_t> Target, constInts(Ctx, 1));
    for (int64_t D : Target)
      if (D < 0)
        return Ctx.error(ErrorCode::Shape, "input 1 (shape) ", joinInts(Target), " has a negative dimension");
    auto B = broadcastShapes(X, TensorShape::fromDims(Target));
    if (!B.isOk())
      return Ctx.error(ErrorCode::Shape, B.status().message());
    Ctx.Outputs[0].Shape = *B;
    return foldIfConstant(Ctx, computeExpand<false>);
  }
  if (!SI[0].isConst())
    return Ctx.error(ErrorCode::Shape, "cannot infer the output rank: the shape input is neither constant nor of known "
                                       "length");
  // Unknown target: the rank is max(rank, length); a known input dim other than 1 must survive.
  const size_t R = std::max<size_t>(X.getRank(), static_cast<size_t>(SI[0].value()));
  std::vector<Expr> Dims(R);
  for (size_t I = 0; I < R; ++I) {
    const bool HasX = I + X.getRank() >= R;
    const Expr D = HasX ? X[I + X.getRank() - R] : Expr(1);
    Dims[I] = D.isConst() && D.value() != 1 ? D : Ctx.newSymbol();
  }
  Ctx.Outputs[0].Shape = TensorShape(std::move(Dims));
  return Status::ok();
}

OpSchema expandSchema() {
  OpSchema S;
  S.OpType = "Expand";
  S.MinInputs = S.MaxInputs = 2;
  S.Infer = inferExpand;
  return S;
}

OpKernels expandKernels() {
  OpKernels K;
  K.OpType = "Expand";
  K.Variants.push_back(computeVariant("any_expand__ref", 0, computeExpand<false>));
  K.Variants.push_back(computeVariant("any_expand__strided", 10, computeExpand<true>));
  K.TestCases = [] {
    return std::vector<OpTestCase>{
        testCase("dim_changed", {tensorInput({3, 1}), intsInput({2, 1, 6})}),
        testCase("dim_unchanged", {tensorInput({3, 1}), intsInput({3, 4})}),
        testCase("shape_smaller", {tensorInput({2, 3}), intsInput({1, 3})}),
        testCase("scalar", {tensorInput({}), intsInput({2, 3})}),
        testCase("middle", {typedInputs({4, 1, 5}, ElementType::I64)[0], intsInput({2, 4, 3, 5})}),
        testCase("u8_big", {typedInputs({1, 64}, ElementType::U8)[0], intsInput({300, 64})}),
        testCase("empty", {tensorInput({2, 1}), intsInput({2, 0})}),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(Expand, expandSchema());
OPT_REGISTER_KERNELS(Expand, expandKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
