// RMSNormalization (opset 23; f32, f16/bf16 computed in f32): Y = X / sqrt(mean(X^2) + epsilon) *
// Scale, the mean taken over the dims from 'axis' on, Scale broadcast to those dims (stash_type 1).
#include "backends/native/ops/common/NormCommon.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

Status inferRmsNorm(ShapeContext &Ctx) {
  RETURN_IF_ERROR(requireFloatInput(Ctx, 0));
  RETURN_IF_ERROR(requireSameType(Ctx, 0, 1));
  const TensorShape &X = Ctx.Inputs[0].Shape;
  if (X.getRank() == 0)
    return Ctx.error(ErrorCode::Shape, "input X must have rank >= 1");
  ASSIGN_OR_RETURN(const NormAxisAttrs A, parseNormAxisAttrs(Ctx.N, X.getRank()));
  const std::vector<Expr> Norm(X.begin() + A.Axis, X.end());
  if (!broadcastsTo(Ctx.Inputs[1].Shape, Norm))
    return Ctx.error(ErrorCode::Shape, "input 'scale' ", Ctx.Inputs[1].Shape.toString(),
                     " does not broadcast to the normalized dims ", TensorShape(Norm).toString());
  Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
  Ctx.Outputs[0].Shape = X;
  return Status::ok();
}

OpSchema rmsNormSchema() {
  OpSchema S;
  S.OpType = "RMSNormalization";
  S.MinInputs = S.MaxInputs = 2;
  S.Infer = inferRmsNorm;
  return S;
}

Status runRmsNorm(const Node &N, const KernelContext &Ctx, bool Par) {
  const TensorView &X = Ctx.Inputs[0], &Y = Ctx.Outputs[0];
  ASSIGN_OR_RETURN(const NormAxisAttrs A, parseNormAxisAttrs(N, X.rank()));
  if (X.Dims != Y.Dims)
    return runError("rmsnorm", "output ", joinInts(Y.Dims), " differs from input ", joinInts(X.Dims));
  const size_t Ax = static_cast<size_t>(A.Axis);
  const std::vector<int64_t> Norm(X.Dims.begin() + Ax, X.Dims.end());
  const int64_t Outer = product(X.Dims, 0, Ax), Inner = product(Norm, 0, Norm.size());
  const std::vector<float> Scale = loadFloats(Ctx.Inputs[1]);
  const std::vector<int64_t> SIdx = broadcastIndex(Ctx.Inputs[1].Dims, Norm);
  forRangeMaybe(Ctx, Par, static_cast<size_t>(Outer), std::max<int64_t>(1, 4096 / std::max<int64_t>(Inner, 1)),
                [&](size_t Lo, size_t Hi) {
                  std::vector<float> Row(static_cast<size_t>(Inner));
                  for (size_t R = Lo; R < Hi; ++R) {
                    const size_t Base = R * static_cast<size_t>(Inner);
                    float Sq = 0;
                    for (int64_t I = 0; I < Inner; ++I) {
                      Row[I] = loadFloat(X, Base + I);
                      Sq += Row[I] * Row[I];
                    }
                    const float MeanSq = Inner ? Sq / static_cast<float>(Inner) : 0.0f;
                    const float Rms = std::sqrt(MeanSq + A.Epsilon);
                    for (int64_t I = 0; I < Inner; ++I)
                      storeFloat(Y, Base + I, Row[I] / Rms * Scale[SIdx[I]]);
                  }
                });
  return Status::ok();
}

std::vector<OpTestCase> rmsNormCases() {
  const auto X = [](std::vector<int64_t> D) { return tensorInput(std::move(D)); };
  const auto W = [](std::vector<int64_t> D) { return constInput(std::move(D)); };
  std::vector<OpTestCase> Cases = {
      testCase("last_axis", {X({2, 3, 8}), W({8})}),
      testCase("axis1", {X({2, 3, 4, 5}), W({3, 4, 5})}, {{"axis", attrInt(1)}}),
      testCase("axis_neg2_broadcast_scale", {X({2, 3, 4, 5}), W({1, 5})}, {{"axis", attrInt(-2)}}),
      testCase("axis0", {X({3, 4}), W({3, 4})}, {{"axis", attrInt(0)}}),
      testCase("epsilon", {X({5, 7}), W({7})}, {{"epsilon", attrFloat(0.1f)}}),
      testCase("many_rows", {X({64, 96}), W({96})}),
  };
  for (OpTestCase &C : Cases)
    C.OpsetVersion = 23; // the op's first opset
  return Cases;
}

OpKernels rmsNormKernels() {
  OpKernels K;
  K.OpType = "RMSNormalization";
  addFloatVariants(K, "rmsnorm", [](const KernelCreateInfo &I) -> Result<FloatRunFn> {
    ASSIGN_OR_RETURN(const NormAxisAttrs A, parseNormAxisAttrs(I.N, I.Inputs[0].Shape.getRank()));
    (void)A;
    const Node N = I.N;
    return FloatRunFn([N](const KernelContext &C, bool Par) { return runRmsNorm(N, C, Par); });
  });
  K.TestCases = rmsNormCases;
  return K;
}

OPT_REGISTER_SCHEMA(RMSNormalization, rmsNormSchema());
OPT_REGISTER_KERNELS(RMSNormalization, rmsNormKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
