// LpNormalization (f32, f16): x / ||x||_p along one axis (p = 1 or 2). A zero norm gives 0 (not
// 0/0 = NaN), as the ONNX reference and node tests define it.
#include "backends/native/ops/common/NormCommon.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct LpAttrs {
  int64_t Axis = -1, P = 2;
};

Result<LpAttrs> parseLpAttrs(const Node &N, size_t Rank) {
  LpAttrs A;
  ASSIGN_OR_RETURN(const int64_t Axis, N.getInt("axis", -1));
  ASSIGN_OR_RETURN(A.Axis, normalizeAxis(N, "axis", Axis, static_cast<int64_t>(Rank)));
  ASSIGN_OR_RETURN(A.P, N.getInt("p", 2));
  if (A.P != 1 && A.P != 2)
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'p' value ", A.P, " must be 1 or 2");
  return A;
}

OpSchema lpSchema() {
  OpSchema S;
  S.OpType = "LpNormalization";
  S.MinInputs = S.MaxInputs = 1;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireFloatInput(Ctx, 0));
    const TensorShape &In = Ctx.Inputs[0].Shape;
    if (In.getRank() == 0)
      return Ctx.error(ErrorCode::Shape, "input must have rank >= 1");
    ASSIGN_OR_RETURN(const LpAttrs A, parseLpAttrs(Ctx.N, In.getRank()));
    (void)A;
    Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
    Ctx.Outputs[0].Shape = In;
    return Status::ok();
  };
  return S;
}

Status runLp(const Node &N, const KernelContext &Ctx, bool Par) {
  const TensorView &X = Ctx.Inputs[0], &Y = Ctx.Outputs[0];
  ASSIGN_OR_RETURN(const LpAttrs A, parseLpAttrs(N, X.rank()));
  if (X.Dims != Y.Dims)
    return runError("lpnormalization", "unexpected shapes ", joinInts(X.Dims), " -> ", joinInts(Y.Dims));
  const size_t Ax = static_cast<size_t>(A.Axis);
  const int64_t Outer = product(X.Dims, 0, Ax), Len = X.Dims[Ax], Inner = product(X.Dims, Ax + 1, X.rank());
  forRangeMaybe(Ctx, Par, static_cast<size_t>(Outer * Inner), 64, [&](size_t Lo, size_t Hi) {
    for (size_t L = Lo; L < Hi; ++L) {
      const int64_t O = static_cast<int64_t>(L) / Inner, I = static_cast<int64_t>(L) % Inner;
      const size_t Base = static_cast<size_t>(O * Len * Inner + I);
      float Norm = 0;
      for (int64_t K = 0; K < Len; ++K) {
        const float V = loadFloat(X, Base + K * Inner);
        Norm += A.P == 1 ? std::fabs(V) : V * V;
      }
      if (A.P == 2)
        Norm = std::sqrt(Norm);
      for (int64_t K = 0; K < Len; ++K)
        storeFloat(Y, Base + K * Inner, Norm == 0 ? 0.0f : loadFloat(X, Base + K * Inner) / Norm);
    }
  });
  return Status::ok();
}

OpKernels lpKernels() {
  OpKernels K;
  K.OpType = "LpNormalization";
  addFloatVariants(K, "lpnormalization", [](const KernelCreateInfo &I) -> Result<FloatRunFn> {
    ASSIGN_OR_RETURN(const LpAttrs A, parseLpAttrs(I.N, I.Inputs[0].Shape.getRank()));
    (void)A;
    const Node N = I.N;
    return FloatRunFn([N](const KernelContext &C, bool Par) { return runLp(N, C, Par); });
  });
  K.TestCases = [] {
    return std::vector<OpTestCase>{
        testCase("l2_last", {tensorInput({3, 4, 5})}),
        testCase("l1_axis1", {tensorInput({3, 4, 5})}, {{"p", attrInt(1)}, {"axis", attrInt(1)}}),
        testCase("l2_axis0", {tensorInput({6, 7})}, {{"axis", attrInt(0)}}),
        testCase("1d", {tensorInput({9})}),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(LpNormalization, lpSchema());
OPT_REGISTER_KERNELS(LpNormalization, lpKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
