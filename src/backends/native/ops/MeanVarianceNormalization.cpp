// MeanVarianceNormalization (f32, f16): (x - mean) / (sqrt(var) + 1e-9) with mean and variance
// over 'axes' (default [0, 2, 3]), as the ONNX function body defines it.
#include "backends/native/ops/common/NormCommon.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

Result<std::vector<bool>> parseMvnAxes(const Node &N, size_t Rank) {
  ASSIGN_OR_RETURN(const std::vector<int64_t> Axes, N.getInts("axes", {0, 2, 3}));
  std::vector<bool> Reduced(Rank, false);
  for (int64_t A : Axes) {
    ASSIGN_OR_RETURN(const int64_t Ax, normalizeAxis(N, "axes", A, static_cast<int64_t>(Rank)));
    if (Reduced[static_cast<size_t>(Ax)])
      return makeError(ErrorCode::Model, N.describe(), ": attribute 'axes' value ", joinInts(Axes),
                       " repeats axis ", Ax);
    Reduced[static_cast<size_t>(Ax)] = true;
  }
  return Reduced;
}

OpSchema mvnSchema() {
  OpSchema S;
  S.OpType = "MeanVarianceNormalization";
  S.MinInputs = S.MaxInputs = 1;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireFloatInput(Ctx, 0));
    ASSIGN_OR_RETURN(const std::vector<bool> R, parseMvnAxes(Ctx.N, Ctx.Inputs[0].Shape.getRank()));
    (void)R;
    Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
    Ctx.Outputs[0].Shape = Ctx.Inputs[0].Shape;
    return Status::ok();
  };
  return S;
}

Status runMvn(const Node &N, const KernelContext &Ctx, bool Par) {
  const TensorView &X = Ctx.Inputs[0], &Y = Ctx.Outputs[0];
  ASSIGN_OR_RETURN(const std::vector<bool> Reduced, parseMvnAxes(N, X.rank()));
  if (X.Dims != Y.Dims)
    return runError("mvn", "unexpected shapes ", joinInts(X.Dims), " -> ", joinInts(Y.Dims));
  const size_t Total = X.elementCount(), R = X.rank();
  // Map each element to its statistics slot (the index over the kept axes).
  std::vector<int64_t> Slot(Total);
  int64_t Slots = 1;
  for (size_t D = 0; D < R; ++D)
    if (!Reduced[D])
      Slots *= X.Dims[D];
  for (size_t E = 0; E < Total; ++E) {
    size_t Rem = E;
    int64_t S = 0, Mul = 1;
    for (size_t D = R; D-- > 0;) {
      const int64_t Pos = static_cast<int64_t>(Rem % static_cast<size_t>(X.Dims[D]));
      Rem /= static_cast<size_t>(X.Dims[D]);
      if (!Reduced[D]) {
        S += Pos * Mul;
        Mul *= X.Dims[D];
      }
    }
    Slot[E] = S;
  }
  const double Count = Slots ? static_cast<double>(Total) / static_cast<double>(Slots) : 1.0;
  std::vector<double> Mean(static_cast<size_t>(Slots), 0.0), Var(static_cast<size_t>(Slots), 0.0);
  for (size_t E = 0; E < Total; ++E)
    Mean[Slot[E]] += loadFloat(X, E);
  for (double &M : Mean)
    M /= Count;
  for (size_t E = 0; E < Total; ++E) {
    const double D = loadFloat(X, E) - Mean[Slot[E]];
    Var[Slot[E]] += D * D;
  }
  std::vector<float> MeanF(Mean.size()), Inv(Mean.size());
  for (size_t S = 0; S < Mean.size(); ++S) {
    MeanF[S] = static_cast<float>(Mean[S]);
    Inv[S] = static_cast<float>(1.0 / (std::sqrt(Var[S] / Count) + 1e-9));
  }
  forRangeMaybe(Ctx, Par, Total, 16384, [&](size_t Lo, size_t Hi) {
    for (size_t E = Lo; E < Hi; ++E)
      storeFloat(Y, E, (loadFloat(X, E) - MeanF[Slot[E]]) * Inv[Slot[E]]);
  });
  return Status::ok();
}

OpKernels mvnKernels() {
  OpKernels K;
  K.OpType = "MeanVarianceNormalization";
  addFloatVariants(K, "mvn", [](const KernelCreateInfo &I) -> Result<FloatRunFn> {
    ASSIGN_OR_RETURN(const std::vector<bool> R, parseMvnAxes(I.N, I.Inputs[0].Shape.getRank()));
    (void)R;
    const Node N = I.N;
    return FloatRunFn([N](const KernelContext &C, bool Par) { return runMvn(N, C, Par); });
  });
  K.TestCases = [] {
    return std::vector<OpTestCase>{
        testCase("default_axes", {tensorInput({3, 3, 3, 1})}),
        testCase("default_axes_larger", {tensorInput({2, 4, 5, 6})}),
        testCase("axes_last", {tensorInput({4, 8})}, {{"axes", attrInts({1})}}),
        testCase("axes_neg", {tensorInput({2, 3, 4})}, {{"axes", attrInts({-1, 0})}}),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(MeanVarianceNormalization, mvnSchema());
OPT_REGISTER_KERNELS(MeanVarianceNormalization, mvnKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
