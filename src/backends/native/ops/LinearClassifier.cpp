// ai.onnx.ml LinearClassifier: scores = X W^T + intercepts (W: E x F, E = number of intercepts),
// labels the arg max (E = 1: score > 0 picks the second of two labels, else 1 / 0); float math, post
// transform and the binary conventions as ONNX Runtime (E = 1 with two labels writes [1 - s, s],
// whatever the transform). skl2onnx emits it for LogisticRegression, SGDClassifier, LinearSVC,
// RidgeClassifier and Perceptron. String class labels are rejected at load (no string tensors).
#include "backends/native/ops/common/MlCommon.h"
#include "backends/native/ops/common/ThreadScratch.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct LinearClassifierParams {
  std::vector<float> W, B;
  std::vector<int64_t> Labels;
  int64_t Classes = 0, Features = 0;
  PostTransform Post = PostTransform::None;
  bool AddSecond = false; ///< one score, two labels: Z gets [1 - s, s]
};

Result<LinearClassifierParams> readParams(const Node &N) {
  LinearClassifierParams P;
  ASSIGN_OR_RETURN(P.W, N.getFloats("coefficients", {}));
  ASSIGN_OR_RETURN(P.B, N.getFloats("intercepts", {}));
  ASSIGN_OR_RETURN(P.Labels, N.getInts("classlabels_ints", {}));
  ASSIGN_OR_RETURN(const std::vector<std::string> Strings, mlStrings(N, "classlabels_strings"));
  ASSIGN_OR_RETURN(P.Post, mlPostTransform(N));
  if (!Strings.empty())
    return attrError(N, "classlabels_strings",
                     "is not supported: the native backend produces no string tensors; export the model with "
                     "integer class labels (fit on integer-encoded y)");
  if (P.B.empty())
    return attrError(N, "intercepts", "is empty (one intercept per class is required)");
  P.Classes = static_cast<int64_t>(P.B.size());
  if (P.W.empty() || P.W.size() % P.B.size() != 0)
    return attrError(N, "coefficients", "has ", P.W.size(), " values, expected a positive multiple of the ",
                     P.B.size(), " intercepts");
  P.Features = static_cast<int64_t>(P.W.size() / P.B.size());
  if (P.Classes > 1 && static_cast<int64_t>(P.Labels.size()) != P.Classes)
    return attrError(N, "classlabels_ints", "has ", P.Labels.size(), " labels, expected one per class (", P.Classes, ")");
  P.AddSecond = P.Classes == 1 && P.Labels.size() == 2;
  return P;
}

OpSchema linearClassifierSchema() {
  OpSchema S = mlSchema("LinearClassifier", [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireMlNumeric(Ctx, 0));
    ASSIGN_OR_RETURN(const LinearClassifierParams P, readParams(Ctx.N));
    Expr Rows, Cols;
    RETURN_IF_ERROR(mlInputShape(Ctx, Rows, Cols));
    if (Cols.isConst() && Cols.value() != P.Features)
      return Ctx.error(ErrorCode::Shape, "input has ", Cols.value(), " features, the coefficients ", P.Features);
    Ctx.Outputs[0].Type = ElementType::I64;
    Ctx.Outputs[0].Shape = TensorShape({Rows});
    Ctx.Outputs[1].Type = ElementType::F32;
    Ctx.Outputs[1].Shape = TensorShape({Rows, Expr(static_cast<long long>(P.AddSecond ? 2 : P.Classes))});
    return Status::ok();
  });
  S.MinOutputs = S.MaxOutputs = 2;
  return S;
}

class LinearClassifierKernel : public Kernel {
public:
  explicit LinearClassifierKernel(LinearClassifierParams P) : P(std::move(P)) {}
  Status run(const KernelContext &Ctx) const override {
    ASSIGN_OR_RETURN(const MlRows R, mlRows("linearclassifier", Ctx.Inputs[0]));
    if (R.Cols != P.Features)
      return runError("linearclassifier", "input has ", R.Cols, " features, the coefficients ", P.Features);
    int64_t *Label = Ctx.Outputs[0].data<int64_t>();
    float *Z = Ctx.Outputs[1].data<float>();
    const int64_t E = P.Classes, Width = P.AddSecond ? 2 : E;
    Ctx.Par.ifWorth(R.Rows * E * P.Features).forRange(static_cast<size_t>(R.Rows), 1, [&](size_t Begin, size_t End) {
      ScratchFrame F;
      double *Row = F.take<double>(static_cast<size_t>(P.Features));
      for (size_t I = Begin; I < End; ++I) {
        R.row(Ctx.Inputs[0], static_cast<int64_t>(I), Row);
        float *S = Z + I * static_cast<size_t>(Width);
        for (int64_t C = 0; C < E; ++C) {
          float Acc = 0;
          for (int64_t K = 0; K < P.Features; ++K)
            Acc += static_cast<float>(Row[K]) * P.W[static_cast<size_t>(C * P.Features + K)];
          S[C] = Acc + P.B[static_cast<size_t>(C)];
        }
        if (E == 1) {
          const bool Two = P.Labels.size() == 2;
          Label[I] = S[0] > 0 ? (Two ? P.Labels[1] : 1) : (Two ? P.Labels[0] : 0);
        } else {
          int64_t Best = 0;
          for (int64_t C = 1; C < E; ++C)
            if (S[C] > S[Best])
              Best = C;
          Label[I] = P.Labels[static_cast<size_t>(Best)];
        }
        if (P.AddSecond && P.Post != PostTransform::Probit) {
          S[1] = S[0];
          S[0] = 1 - S[0];
        } else {
          if (P.AddSecond)
            S[1] = 0;
          mlTransformScores(P.Post, S, static_cast<size_t>(E));
        }
      }
    });
    return Status::ok();
  }

private:
  LinearClassifierParams P;
};

Result<std::unique_ptr<Kernel>> createLinearClassifier(const KernelCreateInfo &Info) {
  ASSIGN_OR_RETURN(LinearClassifierParams P, readParams(Info.N));
  return makeKernel<LinearClassifierKernel>(std::move(P));
}

std::vector<OpTestCase> linearClassifierCases() {
  auto Case = [](std::string Label, int Classes, int Labels, const char *Post, ElementType T = ElementType::F32) {
    std::vector<float> W, B;
    for (int C = 0; C < Classes; ++C) {
      B.push_back(0.1f * static_cast<float>(C) - 0.1f);
      for (int K = 0; K < 4; ++K)
        W.push_back(0.3f * static_cast<float>((C * 5 + K * 3) % 7) - 0.9f);
    }
    std::vector<int64_t> L;
    for (int C = 0; C < Labels; ++C)
      L.push_back(3 * C + 1);
    OpTestCase Tc = testCase(std::move(Label), {tensorInput({6, 4}, T)},
                             {{"coefficients", attrFloats(W)},
                              {"intercepts", attrFloats(B)},
                              {"classlabels_ints", attrInts(L)},
                              {"post_transform", attrString(Post)}});
    Tc.NumOutputs = 2;
    return Tc;
  };
  return {Case("three_none", 3, 3, "NONE"),          Case("three_softmax", 3, 3, "SOFTMAX"),
          Case("four_logistic", 4, 4, "LOGISTIC"),   Case("three_softmax_zero", 3, 3, "SOFTMAX_ZERO"),
          Case("binary_two_scores", 2, 2, "LOGISTIC"), Case("binary_one_score", 1, 2, "LOGISTIC"),
          Case("one_score_no_labels", 1, 0, "NONE"), Case("double_input", 3, 3, "NONE", ElementType::F64)};
}

OPT_REGISTER_SCHEMA(LinearClassifier, linearClassifierSchema());
OPT_REGISTER_KERNELS(LinearClassifier, OpKernels{kMlDomain,
                                                 "LinearClassifier",
                                                 {{"f32_linearclassifier__ref", 0, nullptr, createLinearClassifier}},
                                                 linearClassifierCases});

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
