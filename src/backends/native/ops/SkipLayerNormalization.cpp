// com.microsoft SkipLayerNormalization (ONNX Runtime's contrib op; also what
// passes/FuseSkipLayerNorm makes of a residual Add -> LayerNormalization): with s = (input + skip)
// + bias, output = (s - mean(s)) / sqrt(var(s) + epsilon) * gamma + beta over the last dim. f32;
// input and skip of one shape, gamma / beta / bias 1-D over the last dim. Optional outputs: mean
// and inv_std_var (the input's shape with the last dim 1, as LayerNormalization's) and
// input_skip_bias_sum (s). The sums are taken in the unfused graph's order, so s is bit-identical
// to its Adds.
#include "backends/native/ops/common/MathApprox.h"
#include "backends/native/ops/common/NormCommon.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

enum SkipLnInput { InX, InSkip, InGamma, InBeta, InBias };
enum SkipLnOutput { OutY, OutMean, OutInvStd, OutSum };

/// ONNX Runtime's default epsilon for this op.
constexpr float DefaultEpsilon = 1e-12f;

Status inferSkipLayerNorm(ShapeContext &Ctx) {
  RETURN_IF_ERROR(requireInputType(Ctx, InX, {ElementType::F32}));
  for (size_t I = InSkip; I <= InBias; ++I)
    if (Ctx.hasInput(I))
      RETURN_IF_ERROR(requireSameType(Ctx, InX, I));
  const TensorShape &X = Ctx.Inputs[InX].Shape, &S = Ctx.Inputs[InSkip].Shape;
  if (X.getRank() == 0)
    return Ctx.error(ErrorCode::Shape, "input must have rank >= 1");
  bool Same = S.getRank() == X.getRank();
  for (size_t D = 0; Same && D < X.getRank(); ++D)
    Same = !(X[D].isConst() && S[D].isConst() && X[D].value() != S[D].value());
  if (!Same)
    return Ctx.error(ErrorCode::Shape, "skip ", S.toString(), " must have the input's shape ", X.toString());
  const Expr &Hidden = X[X.getRank() - 1];
  static const char *Names[] = {"input", "skip", "gamma", "beta", "bias"};
  for (size_t I = InGamma; I <= InBias; ++I) {
    if (!Ctx.hasInput(I))
      continue;
    const TensorShape &P = Ctx.Inputs[I].Shape;
    if (P.getRank() != 1 || (P[0].isConst() && Hidden.isConst() && P[0].value() != Hidden.value()))
      return Ctx.error(ErrorCode::Shape, Names[I], " ", P.toString(), " is not 1-D over the last dim of ",
                       X.toString());
  }
  if (!Ctx.hasInput(InGamma))
    return Ctx.error(ErrorCode::Model, "input 'gamma' is required");
  std::vector<Expr> Stat(X.begin(), X.end());
  Stat.back() = Expr(1);
  for (size_t O = 0; O < Ctx.Outputs.size(); ++O) {
    const bool IsStat = O == OutMean || O == OutInvStd;
    Ctx.Outputs[O].Type = ElementType::F32;
    Ctx.Outputs[O].Shape = IsStat ? TensorShape(Stat) : X;
  }
  return Status::ok();
}

OpSchema skipLayerNormSchema() {
  OpSchema S;
  S.Domain = "com.microsoft";
  S.OpType = "SkipLayerNormalization";
  S.MinInputs = 3;
  S.MaxInputs = 5;
  S.MinOutputs = 1;
  S.MaxOutputs = 4;
  S.Infer = inferSkipLayerNorm;
  return S;
}

struct SkipLnRun {
  const float *X, *Skip, *Gamma, *Beta, *Bias;
  float *Y, *Mean, *InvStd, *Sum;
  int64_t Rows, Hidden;
};

Result<SkipLnRun> resolveSkipLn(const KernelContext &Ctx) {
  const TensorView &X = Ctx.Inputs[InX];
  SkipLnRun R;
  if (X.rank() == 0 || Ctx.Inputs[InSkip].Dims != X.Dims)
    return runError("skiplayernorm", "skip ", joinInts(Ctx.Inputs[InSkip].Dims), " must have the input's shape ",
                    joinInts(X.Dims));
  R.Hidden = X.Dims.back();
  R.Rows = R.Hidden ? static_cast<int64_t>(X.elementCount()) / R.Hidden : 0;
  for (size_t I = InGamma; I <= InBias; ++I)
    if (hasRunInput(Ctx, I) && Ctx.Inputs[I].Dims != std::vector<int64_t>{R.Hidden})
      return runError("skiplayernorm", "input ", I, " ", joinInts(Ctx.Inputs[I].Dims), " is not [", R.Hidden, "]");
  const auto In = [&](size_t I) { return hasRunInput(Ctx, I) ? Ctx.Inputs[I].data<const float>() : nullptr; };
  const auto Out = [&](size_t I) { return hasRunOutput(Ctx, I) ? Ctx.Outputs[I].data<float>() : nullptr; };
  R.X = In(InX), R.Skip = In(InSkip), R.Gamma = In(InGamma), R.Beta = In(InBeta), R.Bias = In(InBias);
  R.Y = Out(OutY), R.Mean = Out(OutMean), R.InvStd = Out(OutInvStd), R.Sum = Out(OutSum);
  return R;
}

/// The reference: float32 sums in the unfused order, statistics in double.
Status runSkipLnRef(float Epsilon, const KernelContext &Ctx) {
  ASSIGN_OR_RETURN(const SkipLnRun R, resolveSkipLn(Ctx));
  std::vector<float> S(static_cast<size_t>(R.Hidden));
  for (int64_t Row = 0; Row < R.Rows; ++Row) {
    const int64_t Base = Row * R.Hidden;
    double Sum = 0;
    for (int64_t I = 0; I < R.Hidden; ++I) {
      float V = R.X[Base + I] + R.Skip[Base + I];
      if (R.Bias)
        V += R.Bias[I];
      S[I] = V;
      Sum += V;
      if (R.Sum)
        R.Sum[Base + I] = V;
    }
    const double Mean = R.Hidden ? Sum / static_cast<double>(R.Hidden) : 0.0;
    double Sq = 0;
    for (int64_t I = 0; I < R.Hidden; ++I)
      Sq += (S[I] - Mean) * (S[I] - Mean);
    const double Inv = 1.0 / std::sqrt((R.Hidden ? Sq / static_cast<double>(R.Hidden) : 0.0) + Epsilon);
    for (int64_t I = 0; I < R.Hidden; ++I)
      R.Y[Base + I] = static_cast<float>((S[I] - Mean) * Inv * R.Gamma[I] + (R.Beta ? R.Beta[I] : 0.0f));
    if (R.Mean)
      R.Mean[Row] = static_cast<float>(Mean);
    if (R.InvStd)
      R.InvStd[Row] = static_cast<float>(Inv);
  }
  return Status::ok();
}

/// Rows split over the pool; each row is one pass of approx::skipLayerNormF32 (the sum lands in
/// the output row, or in input_skip_bias_sum when that is wanted, and is normalized from there).
Status runSkipLnFast(float Epsilon, const KernelContext &Ctx) {
  ASSIGN_OR_RETURN(const SkipLnRun R, resolveSkipLn(Ctx));
  const size_t H = static_cast<size_t>(R.Hidden);
  Ctx.Par.forRange(static_cast<size_t>(R.Rows), std::max<size_t>(1, 8192 / std::max<size_t>(H, 1)),
                   [&](size_t Lo, size_t Hi) {
                     for (size_t Row = Lo; Row < Hi; ++Row) {
                       const size_t Base = Row * H;
                       float *Mean = R.Mean ? R.Mean + Row : nullptr, *Inv = R.InvStd ? R.InvStd + Row : nullptr;
                       if (R.Sum) {
                         for (size_t I = 0; I < H; ++I) {
                           float V = R.X[Base + I] + R.Skip[Base + I];
                           if (R.Bias)
                             V += R.Bias[I];
                           R.Sum[Base + I] = V;
                         }
                         approx::layerNormF32(R.Sum + Base, R.Y + Base, H, R.Gamma, R.Beta, Epsilon, Mean, Inv);
                       } else {
                         approx::skipLayerNormF32(R.X + Base, R.Skip + Base, R.Bias, R.Y + Base, H, R.Gamma, R.Beta,
                                                  Epsilon, Mean, Inv);
                       }
                     }
                   });
  return Status::ok();
}

OpKernels skipLayerNormKernels() {
  OpKernels K;
  K.Domain = "com.microsoft";
  K.OpType = "SkipLayerNormalization";
  const auto Variant = [](std::string Name, int Priority, Status (*Run)(float, const KernelContext &)) {
    return KernelVariant{Name, Priority, [](const KernelCreateInfo &I) { return inputIs(I, InX, ElementType::F32); },
                         [Run](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
                           ASSIGN_OR_RETURN(const float Eps, I.N.getFloat("epsilon", DefaultEpsilon));
                           return makeKernel<FunctionKernel>([Run, Eps](const KernelContext &C) { return Run(Eps, C); });
                         }};
  };
  K.Variants.push_back(Variant("f32_skiplayernorm__ref", 0, runSkipLnRef));
  K.Variants.push_back(Variant("f32_skiplayernorm__parallel", 10, runSkipLnFast));
  K.TestCases = [] {
    const auto X = [](std::vector<int64_t> D) { return tensorInput(std::move(D)); };
    const auto W = [](std::vector<int64_t> D) { return constInput(std::move(D)); };
    const auto Eps = [](float E) { return std::map<std::string, AttrValue>{{"epsilon", attrFloat(E)}}; };
    std::vector<OpTestCase> C = {
        testCase("bert", {X({2, 16, 64}), X({2, 16, 64}), W({64}), W({64})}, Eps(1e-12f)),
        testCase("bias_odd_hidden", {X({3, 5, 37}), X({3, 5, 37}), W({37}), W({37}), W({37})}, Eps(1e-5f)),
        testCase("no_beta_2d", {X({7, 20}), X({7, 20}), W({20}), omittedInput(), X({20})}),
        testCase("one_column", {X({4, 1}), X({4, 1}), W({1}), W({1})}, Eps(0.1f)),
        testCase("many_rows", {X({1, 130, 96}), X({1, 130, 96}), W({96}), W({96}), W({96})}, Eps(1e-5f)),
    };
    OpTestCase All = testCase("all_outputs", {X({2, 3, 19}), X({2, 3, 19}), W({19}), W({19}), W({19})}, Eps(1e-5f));
    All.NumOutputs = 4;
    C.push_back(All);
    return C;
  };
  return K;
}

OPT_REGISTER_SCHEMA(SkipLayerNormalization, skipLayerNormSchema());
OPT_REGISTER_KERNELS(SkipLayerNormalization, skipLayerNormKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
