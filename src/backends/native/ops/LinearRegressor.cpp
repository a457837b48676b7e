// ai.onnx.ml LinearRegressor: Y = X W^T + intercepts (W: targets x F), float math, then the post
// transform (for one target only PROBIT applies, as in ONNX Runtime). skl2onnx emits it for
// LinearRegression, Ridge, Lasso, ElasticNet, SGDRegressor and LinearSVR.
#include "backends/native/ops/common/MlCommon.h"
#include "backends/native/ops/common/ThreadScratch.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct LinearRegressorParams {
  std::vector<float> W, B;
  int64_t Targets = 1, Features = 0;
  PostTransform Post = PostTransform::None;
};

Result<LinearRegressorParams> readParams(const Node &N) {
  LinearRegressorParams P;
  ASSIGN_OR_RETURN(P.W, N.getFloats("coefficients", {}));
  ASSIGN_OR_RETURN(P.B, N.getFloats("intercepts", {}));
  ASSIGN_OR_RETURN(P.Targets, N.getInt("targets", 1));
  ASSIGN_OR_RETURN(P.Post, mlPostTransform(N));
  if (P.Targets <= 0)
    return attrError(N, "targets", "must be positive, got ", P.Targets);
  if (P.W.empty() || P.W.size() % static_cast<size_t>(P.Targets) != 0)
    return attrError(N, "coefficients", "has ", P.W.size(), " values, expected a positive multiple of targets (",
                     P.Targets, ")");
  if (!P.B.empty() && static_cast<int64_t>(P.B.size()) != P.Targets)
    return attrError(N, "intercepts", "has ", P.B.size(), " values, expected none or ", P.Targets);
  P.B.resize(static_cast<size_t>(P.Targets), 0.0f);
  P.Features = static_cast<int64_t>(P.W.size()) / P.Targets;
  return P;
}

OpSchema linearRegressorSchema() {
  return mlSchema("LinearRegressor", [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireMlNumeric(Ctx, 0));
    ASSIGN_OR_RETURN(const LinearRegressorParams P, readParams(Ctx.N));
    Expr Rows, Cols;
    RETURN_IF_ERROR(mlInputShape(Ctx, Rows, Cols));
    if (Cols.isConst() && Cols.value() != P.Features)
      return Ctx.error(ErrorCode::Shape, "input has ", Cols.value(), " features, the coefficients ", P.Features);
    Ctx.Outputs[0].Type = ElementType::F32;
    Ctx.Outputs[0].Shape = TensorShape({Rows, Expr(static_cast<long long>(P.Targets))});
    return Status::ok();
  });
}

class LinearRegressorKernel : public Kernel {
public:
  explicit LinearRegressorKernel(LinearRegressorParams P) : P(std::move(P)) {}
  Status run(const KernelContext &Ctx) const override {
    ASSIGN_OR_RETURN(const MlRows R, mlRows("linearregressor", Ctx.Inputs[0]));
    if (R.Cols != P.Features)
      return runError("linearregressor", "input has ", R.Cols, " features, the coefficients ", P.Features);
    float *Y = Ctx.Outputs[0].data<float>();
    Ctx.Par.ifWorth(R.Rows * P.Targets * P.Features).forRange(static_cast<size_t>(R.Rows), 1, [&](size_t Begin, size_t End) {
      ScratchFrame F;
      double *Row = F.take<double>(static_cast<size_t>(P.Features));
      for (size_t I = Begin; I < End; ++I) {
        R.row(Ctx.Inputs[0], static_cast<int64_t>(I), Row);
        float *S = Y + I * static_cast<size_t>(P.Targets);
        for (int64_t T = 0; T < P.Targets; ++T) {
          float Acc = 0;
          for (int64_t K = 0; K < P.Features; ++K)
            Acc += static_cast<float>(Row[K]) * P.W[static_cast<size_t>(T * P.Features + K)];
          S[T] = Acc + P.B[static_cast<size_t>(T)];
        }
        mlTransformScores(P.Post, S, static_cast<size_t>(P.Targets));
      }
    });
    return Status::ok();
  }

private:
  LinearRegressorParams P;
};

Result<std::unique_ptr<Kernel>> createLinearRegressor(const KernelCreateInfo &Info) {
  ASSIGN_OR_RETURN(LinearRegressorParams P, readParams(Info.N));
  return makeKernel<LinearRegressorKernel>(std::move(P));
}

std::vector<OpTestCase> linearRegressorCases() {
  auto Case = [](std::string Label, int Targets, bool Intercepts, const char *Post, ElementType T = ElementType::F32) {
    std::vector<float> W, B;
    for (int C = 0; C < Targets; ++C) {
      B.push_back(0.2f * static_cast<float>(C) + 0.5f);
      for (int K = 0; K < 5; ++K)
        W.push_back(0.1f * static_cast<float>((C * 3 + K * 2) % 5) - 0.2f);
    }
    std::map<std::string, AttrValue> A = {{"coefficients", attrFloats(W)}, {"targets", attrInt(Targets)},
                                          {"post_transform", attrString(Post)}};
    if (Intercepts)
      A["intercepts"] = attrFloats(B);
    return testCase(std::move(Label), {tensorInput({7, 5}, T)}, A);
  };
  return {Case("one_target", 1, true, "NONE"), Case("three_targets", 3, true, "SOFTMAX"),
          Case("no_intercepts", 2, false, "LOGISTIC"), Case("one_target_probit", 1, true, "PROBIT"),
          Case("int32_input", 2, true, "NONE", ElementType::I32)};
}

OPT_REGISTER_SCHEMA(LinearRegressor, linearRegressorSchema());
OPT_REGISTER_KERNELS(LinearRegressor, OpKernels{kMlDomain,
                                                "LinearRegressor",
                                                {{"f32_linearregressor__ref", 0, nullptr, createLinearRegressor}},
                                                linearRegressorCases});

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
