// OneHot: a new axis of size 'depth' where position indices[...] holds values[1] and the rest
// values[0]; negative indices count from depth, out-of-range ones give an all-off row. Indices
// and depth of any numeric type, values of any copyable type.
#include <cmath>

#include "backends/native/ops/common/Indexing.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

/// Element I of a numeric tensor as int64 (floats truncate toward zero).
int64_t readAsInt(const TensorView &V, size_t I) {
  int64_t R = 0;
  visitNumeric(V.Type, [&](auto Tag) {
    using T = typename decltype(Tag)::type;
    using C = typename ComputeType<T>::type;
    R = static_cast<int64_t>(static_cast<C>(V.data<const T>()[I]));
  });
  return R;
}

Status computeOneHot(const Node &N, const std::vector<TensorView> &In, const std::vector<TensorView> &Out,
                     const Parallel &) {
  const TensorView &Idx = In[0], &Values = In[2], &Y = Out[0];
  ASSIGN_OR_RETURN(int64_t Axis, N.getInt("axis", -1));
  ASSIGN_OR_RETURN(Axis, normalizeAxis(N, "axis", Axis, static_cast<int64_t>(Y.rank())));
  const size_t A = static_cast<size_t>(Axis), Elem = getElementSize(Y.Type);
  const int64_t Depth = Y.Dims[A], Outer = product(Y.Dims, 0, A), Inner = product(Y.Dims, A + 1, Y.rank());
  const char *Off = static_cast<const char *>(Values.Data), *On = Off + Elem;
  char *Dst = static_cast<char *>(Y.Data);
  for (int64_t O = 0; O < Outer; ++O)
    for (int64_t I = 0; I < Inner; ++I) {
      int64_t Hot = readAsInt(Idx, static_cast<size_t>(O * Inner + I));
      if (Hot < 0)
        Hot += Depth;
      for (int64_t D = 0; D < Depth; ++D)
        copyElement(Dst + ((O * Depth + D) * Inner + I) * static_cast<int64_t>(Elem), D == Hot ? On : Off, Elem);
    }
  return Status::ok();
}

OpSchema oneHotSchema() {
  OpSchema S;
  S.OpType = "OneHot";
  S.MinInputs = S.MaxInputs = 3;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireNumericType(Ctx, 0));
    RETURN_IF_ERROR(requireNumericType(Ctx, 1));
    RETURN_IF_ERROR(requireCopyableType(Ctx, 2));
    const TensorShape &I = Ctx.Inputs[0].Shape;
    const Expr VC = Ctx.Inputs[2].Shape.getElementCount(), DC = Ctx.Inputs[1].Shape.getElementCount();
    if (Ctx.Inputs[2].Shape.getRank() != 1 || (VC.isConst() && VC.value() != 2))
      return Ctx.error(ErrorCode::Shape, "input 2 (values) must be [off, on] (shape [2]), got ",
                       Ctx.Inputs[2].Shape.toString());
    if (DC.isConst() && DC.value() != 1)
      return Ctx.error(ErrorCode::Shape, "input 1 (depth) must have one element, got ", Ctx.Inputs[1].Shape.toString());
    const int64_t OutRank = static_cast<int64_t>(I.getRank()) + 1;
    ASSIGN_OR_RETURN(int64_t Axis, Ctx.N.getInt("axis", -1));
    ASSIGN_OR_RETURN(Axis, normalizeAxis(Ctx.N, "axis", Axis, OutRank));
    Expr Depth = Ctx.newSymbol();
    if (isConstInput(Ctx, 1)) {
      const int64_t D = readAsInt(constView(*Ctx.Inputs[1].Const), 0);
      if (D < 1)
        return Ctx.error(ErrorCode::Shape, "input 1 (depth) must be >= 1, got ", D);
      Depth = Expr(static_cast<long long>(D));
    }
    std::vector<Expr> Dims(I.begin(), I.end());
    Dims.insert(Dims.begin() + Axis, Depth);
    Ctx.Outputs[0].Type = Ctx.Inputs[2].Type;
    Ctx.Outputs[0].Shape = TensorShape(std::move(Dims));
    return foldIfConstant(Ctx, computeOneHot);
  };
  return S;
}

OpKernels oneHotKernels() {
  OpKernels K;
  K.OpType = "OneHot";
  K.Variants.push_back(computeVariant("any_onehot__ref", 0, computeOneHot));
  K.TestCases = [] {
    const auto vals = [](double Off, double On, ElementType T) { return valuesInput({2}, {Off, On}, T, false); };
    return std::vector<OpTestCase>{
        testCase("last_axis", {valuesInput({2, 3}, {0, 1, 2, 9, -1, 4}, ElementType::I64, false),
                               scalarInput(5, ElementType::I64), vals(0, 1, ElementType::F32)}),
        testCase("axis0_float_idx", {valuesInput({4}, {1.7, 0, 3, -2}, ElementType::F32, false),
                                     valuesInput({1}, {4}, ElementType::F32, true), vals(-1, 2, ElementType::I32)},
                 {{"axis", attrInt(0)}}),
        testCase("middle_axis", {valuesInput({2, 2}, {1, 0, 2, 2}, ElementType::I32, false),
                                 scalarInput(3, ElementType::I32), vals(2, 7, ElementType::I64)},
                 {{"axis", attrInt(1)}}),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(OneHot, oneHotSchema());
OPT_REGISTER_KERNELS(OneHot, oneHotKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
