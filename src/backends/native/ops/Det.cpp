// Det (opset 11): the determinant of each square matrix of X [..., M, M] (output [...]), by LU
// decomposition with partial pivoting in double. Float types.
#include <cmath>

#include "backends/native/ops/common/ElementwiseCommon.h"
#include "backends/native/ops/common/FloatDispatch.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

/// Determinant of the M x M matrix A (row-major, overwritten).
double luDeterminant(std::vector<double> &A, int64_t M) {
  double Det = 1.0;
  for (int64_t C = 0; C < M; ++C) {
    int64_t Pivot = C;
    for (int64_t R = C + 1; R < M; ++R)
      if (std::fabs(A[static_cast<size_t>(R * M + C)]) > std::fabs(A[static_cast<size_t>(Pivot * M + C)]))
        Pivot = R;
    const double P = A[static_cast<size_t>(Pivot * M + C)];
    if (P == 0.0)
      return 0.0;
    if (Pivot != C) {
      for (int64_t K = 0; K < M; ++K)
        std::swap(A[static_cast<size_t>(Pivot * M + K)], A[static_cast<size_t>(C * M + K)]);
      Det = -Det;
    }
    Det *= P;
    for (int64_t R = C + 1; R < M; ++R) {
      const double F = A[static_cast<size_t>(R * M + C)] / P;
      if (F != 0.0)
        for (int64_t K = C + 1; K < M; ++K)
          A[static_cast<size_t>(R * M + K)] -= F * A[static_cast<size_t>(C * M + K)];
    }
  }
  return Det;
}

Status computeDet(const Node &, const std::vector<TensorView> &In, const std::vector<TensorView> &Out,
                  const Parallel &Par) {
  const TensorView &X = In[0], &Y = Out[0];
  const size_t R = X.rank();
  if (R < 2 || X.Dims[R - 1] != X.Dims[R - 2])
    return runError("det", "input ", joinInts(X.Dims), " is not [..., M, M]");
  const int64_t M = X.Dims[R - 1];
  const size_t Count = static_cast<size_t>(product(X.Dims, 0, R - 2));
  if (Y.elementCount() != Count)
    return runError("det", "output ", joinInts(Y.Dims), " does not hold ", Count, " determinants");
  visitFloat(X.Type, [&](auto Tag) {
    using T = typename decltype(Tag)::type;
    Par.forRange(Count, 8, [&](size_t Begin, size_t End) {
      std::vector<double> A(static_cast<size_t>(M * M));
      for (size_t I = Begin; I < End; ++I) {
        const T *Src = X.data<const T>() + I * static_cast<size_t>(M * M);
        for (size_t K = 0; K < A.size(); ++K)
          A[K] = static_cast<double>(static_cast<ComputeT<T>>(Src[K]));
        Y.data<T>()[I] = static_cast<T>(static_cast<ComputeT<T>>(luDeterminant(A, M)));
      }
    });
  });
  return Status::ok();
}

OpSchema detSchema() {
  OpSchema S;
  S.OpType = "Det";
  S.MinInputs = S.MaxInputs = 1;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireInputTypeIn(Ctx, 0, elementTypes(FloatTypes()), "X"));
    const TensorShape &X = Ctx.Inputs[0].Shape;
    const size_t R = X.getRank();
    if (R < 2 || (X[R - 1].isConst() && X[R - 2].isConst() && X[R - 1].value() != X[R - 2].value()))
      return Ctx.error(ErrorCode::Shape, "input ", X.toString(), " is not a stack of square matrices [..., M, M]");
    Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
    Ctx.Outputs[0].Shape = TensorShape(std::vector<Expr>(X.begin(), X.end() - 2));
    return Status::ok();
  };
  return S;
}

OpKernels detKernels() {
  OpKernels K;
  K.OpType = "Det";
  K.Variants.push_back(computeVariant("any_det__ref", 0, computeDet));
  K.TestCases = [] {
    return std::vector<OpTestCase>{
        testCase("2x2", {tensorInput({2, 2})}),
        testCase("batched_5x5", {tensorInput({3, 2, 5, 5})}),
        testCase("singular", {valuesInput({3, 3}, {1, 2, 3, 2, 4, 6, 0, 1, 1}, ElementType::F32, false)}),
        testCase("f64_pivoting", {valuesInput({3, 3}, {0, 2, 1, 1, 0, 3, 4, 1, 0}, ElementType::F64, false)}),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(Det, detSchema());
OPT_REGISTER_KERNELS(Det, detKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
