// ai.onnx.ml SVMRegressor: Y [N, 1] = sum_j coefficients[j] K(x, sv_j) + rho[0] (n_supports > 0),
// or the linear x . coefficients + rho[0]; one_class maps to +1 / -1. Float input and math, as
// ONNX Runtime (which applies no post transform here either). skl2onnx emits it for SVR, NuSVR and
// OneClassSVM.
#include "backends/native/ops/common/Svm.h"
#include "backends/native/ops/common/ThreadScratch.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct SvrParams {
  SvmKernel K;
  std::vector<float> Coef, Sv;
  float Rho = 0;
  int64_t Vectors = 0, Features = 0;
  bool OneClass = false;
};

Result<SvrParams> readParams(const Node &N) {
  SvrParams P;
  ASSIGN_OR_RETURN(P.K, readSvmKernel(N));
  ASSIGN_OR_RETURN(P.Coef, N.getFloats("coefficients", {}));
  ASSIGN_OR_RETURN(P.Sv, N.getFloats("support_vectors", {}));
  ASSIGN_OR_RETURN(P.Vectors, N.getInt("n_supports", 0));
  ASSIGN_OR_RETURN(const int64_t OneClass, N.getInt("one_class", 0));
  ASSIGN_OR_RETURN(const std::vector<float> Rho, N.getFloats("rho", {}));
  P.OneClass = OneClass != 0;
  if (Rho.empty())
    return attrError(N, "rho", "is required");
  P.Rho = Rho[0];
  if (P.Coef.empty())
    return attrError(N, "coefficients", "is required");
  if (P.Vectors < 0)
    return attrError(N, "n_supports", "is negative");
  if (P.Vectors > 0) {
    if (static_cast<int64_t>(P.Coef.size()) != P.Vectors)
      return attrError(N, "coefficients", "has ", P.Coef.size(), " values, expected one per support vector (",
                       P.Vectors, ")");
    if (P.Sv.empty() || P.Sv.size() % static_cast<size_t>(P.Vectors) != 0)
      return attrError(N, "support_vectors", "has ", P.Sv.size(), " values, expected a multiple of n_supports (",
                       P.Vectors, ")");
    P.Features = static_cast<int64_t>(P.Sv.size()) / P.Vectors;
  } else {
    P.K.K = SvmKernel::Linear;
    P.Features = static_cast<int64_t>(P.Coef.size());
  }
  return P;
}

OpSchema svmRegressorSchema() {
  return mlSchema("SVMRegressor", [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireInputType(Ctx, 0, {ElementType::F32}));
    ASSIGN_OR_RETURN(const SvrParams P, readParams(Ctx.N));
    Expr Rows, Cols;
    RETURN_IF_ERROR(mlInputShape(Ctx, Rows, Cols));
    if (Cols.isConst() && Cols.value() != P.Features)
      return Ctx.error(ErrorCode::Shape, "input has ", Cols.value(), " features, the model ", P.Features);
    Ctx.Outputs[0].Type = ElementType::F32;
    Ctx.Outputs[0].Shape = TensorShape({Rows, Expr(1)});
    return Status::ok();
  });
}

class SvmRegressorKernel : public Kernel {
public:
  explicit SvmRegressorKernel(SvrParams P) : P(std::move(P)) {}
  Status run(const KernelContext &Ctx) const override {
    ASSIGN_OR_RETURN(const MlRows R, mlRows("svmregressor", Ctx.Inputs[0]));
    if (R.Cols != P.Features)
      return runError("svmregressor", "input has ", R.Cols, " features, the model ", P.Features);
    const float *X = Ctx.Inputs[0].data<float>();
    float *Y = Ctx.Outputs[0].data<float>();
    const int64_t Work = R.Rows * std::max<int64_t>(P.Vectors, 1) * P.Features;
    Ctx.Par.ifWorth(Work).forRange(static_cast<size_t>(R.Rows), 1, [&](size_t Begin, size_t End) {
      for (size_t I = Begin; I < End; ++I) {
        const float *Row = X + I * static_cast<size_t>(P.Features);
        float S;
        if (P.Vectors > 0) {
          S = 0;
          for (int64_t V = 0; V < P.Vectors; ++V)
            S += P.K(Row, P.Sv.data() + V * P.Features, P.Features) * P.Coef[static_cast<size_t>(V)];
        } else {
          S = P.K(Row, P.Coef.data(), P.Features);
        }
        S += P.Rho;
        Y[I] = P.OneClass ? (S > 0 ? 1.0f : -1.0f) : S;
      }
    });
    return Status::ok();
  }

private:
  SvrParams P;
};

Result<std::unique_ptr<Kernel>> createSvmRegressor(const KernelCreateInfo &Info) {
  ASSIGN_OR_RETURN(SvrParams P, readParams(Info.N));
  return makeKernel<SvmRegressorKernel>(std::move(P));
}

std::vector<OpTestCase> svmRegressorCases() {
  const std::vector<float> Sv = {0.1f, -0.2f, 0.3f, 0.5f, 0.4f, -0.6f, -0.3f, 0.2f, 0.7f};
  const std::vector<float> Coef = {0.8f, -0.5f, 0.3f};
  auto Case = [&](std::string Label, const char *Kernel, int64_t OneClass) {
    return testCase(std::move(Label), {tensorInput({6, 3})},
                    {{"kernel_type", attrString(Kernel)},
                     {"kernel_params", attrFloats({0.7f, 0.2f, 3})},
                     {"support_vectors", attrFloats(Sv)},
                     {"coefficients", attrFloats(Coef)},
                     {"n_supports", attrInt(3)},
                     {"rho", attrFloats({0.1f})},
                     {"one_class", attrInt(OneClass)}});
  };
  std::vector<OpTestCase> Cases = {Case("rbf", "RBF", 0), Case("poly", "POLY", 0), Case("sigmoid", "SIGMOID", 0),
                                   Case("linear_kernel", "LINEAR", 0), Case("one_class", "RBF", 1)};
  Cases.push_back(testCase("liblinear", {tensorInput({5, 3})},
                           {{"coefficients", attrFloats({0.5f, -1, 2})}, {"rho", attrFloats({0.3f})}}));
  return Cases;
}

OPT_REGISTER_SCHEMA(SVMRegressor, svmRegressorSchema());
OPT_REGISTER_KERNELS(SVMRegressor, OpKernels{kMlDomain,
                                             "SVMRegressor",
                                             {{"f32_svmregressor__ref", 0, nullptr, createSvmRegressor}},
                                             svmRegressorCases});

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
