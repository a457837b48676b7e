// LayerNormalization (opset 17; f32, f16 computed in f32): normalizes over the dims from 'axis' on,
// then scales and shifts by Scale / B (unidirectionally broadcast to those dims). The optional
// outputs Mean and InvStdDev have X's shape with the normalized dims set to 1 (stash_type float).
#include "backends/native/ops/common/MathApprox.h"
#include "backends/native/ops/common/NormCommon.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

Status inferLayerNorm(ShapeContext &Ctx) {
  RETURN_IF_ERROR(requireFloatInput(Ctx, 0));
  RETURN_IF_ERROR(requireSameType(Ctx, 0, 1));
  RETURN_IF_ERROR(requireSameTypeIfPresent(Ctx, 2));
  const TensorShape &X = Ctx.Inputs[0].Shape;
  if (X.getRank() == 0)
    return Ctx.error(ErrorCode::Shape, "input X must have rank >= 1");
  ASSIGN_OR_RETURN(const NormAxisAttrs A, parseNormAxisAttrs(Ctx.N, X.getRank()));
  const std::vector<Expr> Norm(X.begin() + A.Axis, X.end());
  static const char *Names[] = {"X", "Scale", "B"};
  for (size_t I = 1; I < 3; ++I)
    if (Ctx.hasInput(I) && !broadcastsTo(Ctx.Inputs[I].Shape, Norm))
      return Ctx.error(ErrorCode::Shape, "input '", Names[I], "' ", Ctx.Inputs[I].Shape.toString(),
                       " does not broadcast to the normalized dims ", TensorShape(Norm).toString());
  Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
  Ctx.Outputs[0].Shape = X;
  std::vector<Expr> Stat(X.begin(), X.end());
  for (size_t I = static_cast<size_t>(A.Axis); I < Stat.size(); ++I)
    Stat[I] = Expr(1);
  for (size_t O = 1; O < Ctx.Outputs.size(); ++O) {
    Ctx.Outputs[O].Type = ElementType::F32;
    Ctx.Outputs[O].Shape = TensorShape(Stat);
  }
  return Status::ok();
}

OpSchema layerNormSchema() {
  OpSchema S;
  S.OpType = "LayerNormalization";
  S.MinInputs = 2;
  S.MaxInputs = 3;
  S.MinOutputs = 1;
  S.MaxOutputs = 3;
  S.Infer = inferLayerNorm;
  return S;
}

Status runLayerNorm(const Node &N, const KernelContext &Ctx, bool Par) {
  const TensorView &X = Ctx.Inputs[0], &Y = Ctx.Outputs[0];
  ASSIGN_OR_RETURN(const NormAxisAttrs A, parseNormAxisAttrs(N, X.rank()));
  const size_t Ax = static_cast<size_t>(A.Axis);
  const std::vector<int64_t> Norm(X.Dims.begin() + Ax, X.Dims.end());
  const int64_t Outer = product(X.Dims, 0, Ax), Inner = product(Norm, 0, Norm.size());
  const std::vector<float> Scale = loadFloats(Ctx.Inputs[1]);
  const std::vector<float> Bias = hasRunInput(Ctx, 2) ? loadFloats(Ctx.Inputs[2]) : std::vector<float>();
  const std::vector<int64_t> SIdx = broadcastIndex(Ctx.Inputs[1].Dims, Norm);
  const std::vector<int64_t> BIdx = hasRunInput(Ctx, 2) ? broadcastIndex(Ctx.Inputs[2].Dims, Norm) : std::vector<int64_t>();
  const auto Dense = [Inner](const std::vector<int64_t> &Idx) {
    for (size_t I = 0; I < Idx.size(); ++I)
      if (Idx[I] != static_cast<int64_t>(I))
        return false;
    return static_cast<int64_t>(Idx.size()) == Inner;
  };
  if (Par && X.Type == ElementType::F32 && Dense(SIdx) && (Bias.empty() || Dense(BIdx))) {
    // The common case (f32, scale/bias over the whole row): one vectorized pass per statistic.
    const float *In = X.data<const float>();
    float *Out = Y.data<float>();
    float *MeanOut = hasRunOutput(Ctx, 1) ? Ctx.Outputs[1].data<float>() : nullptr;
    float *InvOut = hasRunOutput(Ctx, 2) ? Ctx.Outputs[2].data<float>() : nullptr;
    const float *S = Scale.data(), *Bv = Bias.empty() ? nullptr : Bias.data();
    Ctx.Par.forRange(static_cast<size_t>(Outer), std::max<int64_t>(1, 4096 / std::max<int64_t>(Inner, 1)),
                     [&](size_t Lo, size_t Hi) {
                       for (size_t R = Lo; R < Hi; ++R)
                         approx::layerNormF32(In + R * static_cast<size_t>(Inner), Out + R * static_cast<size_t>(Inner), static_cast<size_t>(Inner), S, Bv,
                                              A.Epsilon, MeanOut ? MeanOut + R : nullptr, InvOut ? InvOut + R : nullptr);
                     });
    return Status::ok();
  }
  forRangeMaybe(Ctx, Par, static_cast<size_t>(Outer), std::max<int64_t>(1, 4096 / std::max<int64_t>(Inner, 1)),
                [&](size_t Lo, size_t Hi) {
                  std::vector<float> Row(static_cast<size_t>(Inner));
                  for (size_t R = Lo; R < Hi; ++R) {
                    const size_t Base = R * static_cast<size_t>(Inner);
                    float Sum = 0;
                    for (int64_t I = 0; I < Inner; ++I)
                      Sum += (Row[I] = loadFloat(X, Base + I));
                    const float Mean = Inner ? Sum / static_cast<float>(Inner) : 0.0f;
                    float Sq = 0;
                    for (int64_t I = 0; I < Inner; ++I) {
                      Row[I] -= Mean;
                      Sq += Row[I] * Row[I];
                    }
                    const float Var = Inner ? Sq / static_cast<float>(Inner) : 0.0f;
                    const float Inv = 1.0f / std::sqrt(Var + A.Epsilon);
                    for (int64_t I = 0; I < Inner; ++I) {
                      float V = Row[I] * Inv * Scale[SIdx[I]];
                      if (!Bias.empty())
                        V += Bias[BIdx[I]];
                      storeFloat(Y, Base + I, V);
                    }
                    if (hasRunOutput(Ctx, 1))
                      Ctx.Outputs[1].data<float>()[R] = Mean;
                    if (hasRunOutput(Ctx, 2))
                      Ctx.Outputs[2].data<float>()[R] = Inv;
                  }
                });
  return Status::ok();
}

std::vector<OpTestCase> layerNormCases() {
  const auto X = [](std::vector<int64_t> D) { return tensorInput(std::move(D)); };
  const auto W = [](std::vector<int64_t> D) { return constInput(std::move(D)); };
  std::vector<OpTestCase> Cases = {
      testCase("last_axis", {X({2, 3, 8}), W({8}), W({8})}),
      testCase("no_bias", {X({4, 16}), W({16})}),
      testCase("axis1", {X({2, 3, 4, 5}), W({3, 4, 5}), W({3, 4, 5})}, {{"axis", attrInt(1)}}),
      testCase("axis_neg2_broadcast_scale", {X({2, 3, 4, 5}), W({1, 5}), W({5})}, {{"axis", attrInt(-2)}}),
      testCase("axis0", {X({3, 4}), W({3, 4}), W({3, 4})}, {{"axis", attrInt(0)}}),
      testCase("epsilon", {X({5, 7}), W({7}), W({7})}, {{"epsilon", attrFloat(0.1f)}}),
      testCase("many_rows", {X({64, 96}), W({96}), W({96})}),
  };
  OpTestCase Stats = testCase("mean_invstd", {X({2, 3, 6}), W({6}), W({6})}, {{"axis", attrInt(-1)}});
  Stats.NumOutputs = 3;
  Cases.push_back(Stats);
  return Cases;
}

OpKernels layerNormKernels() {
  OpKernels K;
  K.OpType = "LayerNormalization";
  addFloatVariants(K, "layernorm", [](const KernelCreateInfo &I) -> Result<FloatRunFn> {
    ASSIGN_OR_RETURN(const NormAxisAttrs A, parseNormAxisAttrs(I.N, I.Inputs[0].Shape.getRank()));
    (void)A;
    const Node N = I.N;
    return FloatRunFn([N](const KernelContext &C, bool Par) { return runLayerNorm(N, C, Par); });
  });
  K.TestCases = layerNormCases;
  return K;
}

OPT_REGISTER_SCHEMA(LayerNormalization, layerNormSchema());
OPT_REGISTER_KERNELS(LayerNormalization, layerNormKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
