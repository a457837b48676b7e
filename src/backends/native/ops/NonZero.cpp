// NonZero: the coordinates of the non-zero elements as an i64 [rank, count] tensor (row-major
// order). The count depends on the data: a fresh symbol at load (folded when the input is a
// small constant), the actual count when the executor re-infers with the values.
#include "backends/native/ops/common/Indexing.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

/// Flags of the non-zero elements of X.
std::vector<uint8_t> nonZeroMask(const TensorView &X) {
  std::vector<uint8_t> Mask(X.elementCount(), 0);
  visitNumeric(X.Type, [&](auto Tag) {
    using T = typename decltype(Tag)::type;
    using C = typename ComputeType<T>::type;
    for (size_t I = 0; I < Mask.size(); ++I)
      Mask[I] = static_cast<C>(X.data<const T>()[I]) != C(0);
  });
  return Mask;
}

Status computeNonZero(const Node &, const std::vector<TensorView> &In, const std::vector<TensorView> &Out,
                      const Parallel &) {
  const TensorView &X = In[0], &Y = Out[0];
  const std::vector<uint8_t> Mask = nonZeroMask(X);
  size_t Count = 0;
  for (uint8_t M : Mask)
    Count += M;
  const size_t R = X.rank();
  if (Y.elementCount() != R * Count)
    return runError("i64_nonzero__ref", "output ", joinInts(Y.Dims), " does not hold ", R, " x ", Count, " coordinates");
  std::vector<int64_t> Pos(R, 0);
  size_t J = 0;
  for (size_t I = 0; I < Mask.size(); ++I) {
    if (Mask[I]) {
      for (size_t D = 0; D < R; ++D)
        Y.data<int64_t>()[D * Count + J] = Pos[D];
      ++J;
    }
    for (size_t D = R; D-- > 0;)
      if (++Pos[D] < X.Dims[D])
        break;
      else
        Pos[D] = 0;
  }
  return Status::ok();
}

OpSchema nonZeroSchema() {
  OpSchema S;
  S.OpType = "NonZero";
  S.MinInputs = S.MaxInputs = 1;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireNumericType(Ctx, 0));
    const long long R = static_cast<long long>(Ctx.Inputs[0].Shape.getRank());
    Ctx.Outputs[0].Type = ElementType::I64;
    if (!isConstInput(Ctx, 0)) {
      Ctx.Outputs[0].Shape = TensorShape({Expr(R), Ctx.newSymbol()});
      return Status::ok();
    }
    size_t Count = 0;
    for (uint8_t M : nonZeroMask(constView(*Ctx.Inputs[0].Const)))
      Count += M;
    Ctx.Outputs[0].Shape = TensorShape({Expr(R), Expr(static_cast<long long>(Count))});
    return foldIfConstant(Ctx, computeNonZero);
  };
  return S;
}

OpKernels nonZeroKernels() {
  OpKernels K;
  K.OpType = "NonZero";
  K.Variants.push_back(computeVariant("i64_nonzero__ref", 0, computeNonZero));
  K.TestCases = [] {
    // The output shape depends on the values: the harness needs them constant to allocate.
    return std::vector<OpTestCase>{
        testCase("2d", {valuesInput({2, 3}, {1, 0, 2, 0, 0, 3}, ElementType::F32, true)}),
        testCase("bool", {valuesInput({2, 2}, {1, 0, 1, 1}, ElementType::Bool, true)}),
        testCase("i32_3d", {valuesInput({2, 2, 3}, {0, 5, 0, 0, -1, 0, 7, 0, 0, 0, 0, 2}, ElementType::I32, true)}),
        testCase("all_zero", {valuesInput({4}, {0}, ElementType::I64, true)}),
        testCase("scalar", {valuesInput({}, {3}, ElementType::F32, true)}),
        testCase("big", {valuesInput({80, 80}, {0, 1, 0, 0, 2}, ElementType::F32, true)}),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(NonZero, nonZeroSchema());
OPT_REGISTER_KERNELS(NonZero, nonZeroKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
