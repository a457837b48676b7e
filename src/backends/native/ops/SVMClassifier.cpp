// ai.onnx.ml SVMClassifier: libsvm's one-vs-one SVC (support vectors grouped by class,
// vectors_per_class; coefficients [classes - 1, vectors]; one rho per pair of classes) or a
// liblinear model (no support vectors: scores x . coefficients[c] + rho[0]). Pair decisions vote;
// with prob_a / prob_b the pairwise sigmoid probabilities are coupled into class probabilities by
// libsvm's multiclass_probability (Wu, Lin and Weng 2004). Outputs, label choice and binary
// conventions as ONNX Runtime computes them (float input and kernels, pair sums in double):
//   Y [N] int64 labels, Z [N, classes] (probabilities, or liblinear scores), or without
//   probabilities [N, pairs] decision values ([N, 2] for two classes: [-s, s], or [1 - s, s] with a
//   post transform). skl2onnx emits it for SVC / NuSVC. String class labels are rejected at load.
#include "backends/native/ops/common/Svm.h"
#include "backends/native/ops/common/ThreadScratch.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct SvcParams {
  SvmKernel K;
  std::vector<float> Coef, Sv, Rho, ProbA, ProbB;
  std::vector<int64_t> PerClass, Start, Labels;
  int64_t Classes = 0, Vectors = 0, Features = 0, Pairs = 0;
  bool Liblinear = false, WeightsPositive = true;
  PostTransform Post = PostTransform::None;

  bool proba() const { return !ProbA.empty(); }
  /// Scores per row in Z.
  int64_t width() const { return !Liblinear && !proba() ? (Classes > 2 ? Pairs : 2) : Classes; }
};

Result<SvcParams> readParams(const Node &N) {
  SvcParams P;
  ASSIGN_OR_RETURN(P.K, readSvmKernel(N));
  ASSIGN_OR_RETURN(P.Coef, N.getFloats("coefficients", {}));
  ASSIGN_OR_RETURN(P.Sv, N.getFloats("support_vectors", {}));
  ASSIGN_OR_RETURN(P.Rho, N.getFloats("rho", {}));
  ASSIGN_OR_RETURN(P.ProbA, N.getFloats("prob_a", {}));
  ASSIGN_OR_RETURN(P.ProbB, N.getFloats("prob_b", {}));
  ASSIGN_OR_RETURN(P.PerClass, N.getInts("vectors_per_class", {}));
  ASSIGN_OR_RETURN(P.Labels, N.getInts("classlabels_ints", {}));
  ASSIGN_OR_RETURN(P.Post, mlPostTransform(N));
  ASSIGN_OR_RETURN(const std::vector<std::string> Strings, mlStrings(N, "classlabels_strings"));
  if (!Strings.empty())
    return attrError(N, "classlabels_strings",
                     "is not supported: the native backend produces no string tensors; export the model with "
                     "integer class labels (fit on integer-encoded y)");
  if (P.Labels.empty())
    return attrError(N, "classlabels_ints", "is required");
  if (P.Coef.empty())
    return attrError(N, "coefficients", "is required");
  if (P.Rho.empty())
    return attrError(N, "rho", "is required");
  if (P.ProbA.size() != P.ProbB.size())
    return attrError(N, "prob_a", "has ", P.ProbA.size(), " values but 'prob_b' has ", P.ProbB.size());
  P.Classes = static_cast<int64_t>(P.Labels.size());
  P.Pairs = P.Classes * (P.Classes - 1) / 2;
  for (int64_t V : P.PerClass) {
    if (V < 0)
      return attrError(N, "vectors_per_class", "has a negative count");
    P.Start.push_back(P.Vectors);
    P.Vectors += V;
  }
  if (P.Vectors > 0) {
    if (static_cast<int64_t>(P.PerClass.size()) != P.Classes)
      return attrError(N, "vectors_per_class", "has ", P.PerClass.size(), " counts, expected one per class (",
                       P.Classes, ")");
    if (P.Sv.empty() || P.Sv.size() % static_cast<size_t>(P.Vectors) != 0)
      return attrError(N, "support_vectors", "has ", P.Sv.size(), " values, expected a multiple of the ", P.Vectors,
                       " support vectors");
    P.Features = static_cast<int64_t>(P.Sv.size()) / P.Vectors;
    if (static_cast<int64_t>(P.Coef.size()) != (P.Classes - 1) * P.Vectors)
      return attrError(N, "coefficients", "has ", P.Coef.size(), " values, expected (classes - 1) x vectors = ",
                       (P.Classes - 1) * P.Vectors);
    if (static_cast<int64_t>(P.Rho.size()) < P.Pairs)
      return attrError(N, "rho", "has ", P.Rho.size(), " values, expected one per pair of classes (", P.Pairs, ")");
    if (P.proba() && static_cast<int64_t>(P.ProbA.size()) != P.Pairs)
      return attrError(N, "prob_a", "has ", P.ProbA.size(), " values, expected one per pair of classes (", P.Pairs, ")");
  } else {
    P.Liblinear = true;
    P.K.K = SvmKernel::Linear;
    if (P.Coef.size() % static_cast<size_t>(P.Classes) != 0)
      return attrError(N, "coefficients", "has ", P.Coef.size(), " values, expected a multiple of the ", P.Classes,
                       " classes");
    P.Features = static_cast<int64_t>(P.Coef.size()) / P.Classes;
  }
  for (float C : P.Coef)
    P.WeightsPositive = P.WeightsPositive && C >= 0;
  return P;
}

OpSchema svmClassifierSchema() {
  OpSchema S = mlSchema("SVMClassifier", [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireMlNumeric(Ctx, 0));
    ASSIGN_OR_RETURN(const SvcParams P, readParams(Ctx.N));
    Expr Rows, Cols;
    RETURN_IF_ERROR(mlInputShape(Ctx, Rows, Cols));
    if (Cols.isConst() && Cols.value() != P.Features)
      return Ctx.error(ErrorCode::Shape, "input has ", Cols.value(), " features, the model ", P.Features);
    Ctx.Outputs[0].Type = ElementType::I64;
    Ctx.Outputs[0].Shape = TensorShape({Rows});
    Ctx.Outputs[1].Type = ElementType::F32;
    Ctx.Outputs[1].Shape = TensorShape({Rows, Expr(static_cast<long long>(P.width()))});
    return Status::ok();
  });
  S.MinOutputs = S.MaxOutputs = 2;
  return S;
}

/// libsvm's coupling of pairwise probabilities R (K x K, R[i][j] = P(i | i or j)) into P (K).
void multiclassProbability(int64_t K, const float *R, float *P, float *Q, float *Qp) {
  const size_t N = static_cast<size_t>(K);
  std::fill(Q, Q + N * N, 0.0f);
  const float Eps = 0.005f / static_cast<float>(K);
  for (size_t I = 0; I < N; ++I) {
    P[I] = 1.0f / static_cast<float>(K);
    for (size_t J = 0; J < I; ++J) {
      Q[I * N + I] += R[J * N + I] * R[J * N + I];
      Q[I * N + J] = Q[J * N + I];
    }
    for (size_t J = I + 1; J < N; ++J) {
      Q[I * N + I] += R[J * N + I] * R[J * N + I];
      Q[I * N + J] = -R[J * N + I] * R[I * N + J];
    }
  }
  for (int Iter = 0; Iter < 100; ++Iter) {
    float PQP = 0;
    for (size_t I = 0; I < N; ++I) {
      Qp[I] = 0;
      for (size_t J = 0; J < N; ++J)
        Qp[I] += Q[I * N + J] * P[J];
      PQP += P[I] * Qp[I];
    }
    float MaxError = 0;
    for (size_t I = 0; I < N; ++I)
      MaxError = std::max(MaxError, std::fabs(Qp[I] - PQP));
    if (MaxError < Eps)
      break;
    for (size_t I = 0; I < N; ++I) {
      const float Diff = (-Qp[I] + PQP) / Q[I * N + I];
      P[I] += Diff;
      PQP = (PQP + Diff * (Diff * Q[I * N + I] + 2 * Qp[I])) / (1 + Diff) / (1 + Diff);
      for (size_t J = 0; J < N; ++J) {
        Qp[J] = (Qp[J] + Diff * Q[I * N + J]) / (1 + Diff);
        P[J] /= (1 + Diff);
      }
    }
  }
}

class SvmClassifierKernel : public Kernel {
public:
  explicit SvmClassifierKernel(SvcParams P) : P(std::move(P)) {}
  Status run(const KernelContext &Ctx) const override {
    ASSIGN_OR_RETURN(const MlRows R, mlRows("svmclassifier", Ctx.Inputs[0]));
    if (R.Cols != P.Features)
      return runError("svmclassifier", "input has ", R.Cols, " features, the model ", P.Features);
    int64_t *Label = Ctx.Outputs[0].data<int64_t>();
    float *Z = Ctx.Outputs[1].data<float>();
    const int64_t Work = R.Rows * std::max<int64_t>(P.Vectors, P.Classes) * P.Features;
    Ctx.Par.ifWorth(Work).forRange(static_cast<size_t>(R.Rows), 1, [&](size_t Begin, size_t End) {
      ScratchFrame F;
      const size_t K = static_cast<size_t>(P.Classes);
      double *RowD = F.take<double>(static_cast<size_t>(P.Features));
      float *Row = F.take<float>(static_cast<size_t>(P.Features));
      float *Kern = F.take<float>(static_cast<size_t>(std::max<int64_t>(P.Vectors, 1)));
      float *Pair = F.take<float>(static_cast<size_t>(std::max<int64_t>(P.Pairs, 1)));
      int64_t *Votes = F.take<int64_t>(K);
      float *Pr = F.take<float>(K * K), *Q = F.take<float>(K * K), *Qp = F.take<float>(K);
      for (size_t I = Begin; I < End; ++I) {
        R.row(Ctx.Inputs[0], static_cast<int64_t>(I), RowD);
        for (int64_t J = 0; J < P.Features; ++J)
          Row[J] = static_cast<float>(RowD[J]); // ORT casts the input to float
        Label[I] = row(Row, Kern, Pair, Votes, Pr, Q, Qp, Z + I * static_cast<size_t>(P.width()));
      }
    });
    return Status::ok();
  }

private:
  /// Scores one row into Out (width() values); returns its label.
  int64_t row(const float *X, float *Kern, float *Pair, int64_t *Votes, float *Pr, float *Q, float *Qp,
              float *Out) const {
    const int64_t K = P.Classes;
    int64_t MaxClass = 0;
    float MaxWeight = 0;
    int Second = -1; // how one binary decision value becomes two scores (ORT's add_second_class)
    int64_t Scores = K;
    if (P.Liblinear) {
      for (int64_t C = 0; C < K; ++C)
        Out[C] = P.K(X, P.Coef.data() + C * P.Features, P.Features) + P.Rho[0];
      MaxClass = std::max_element(Out, Out + K) - Out;
      MaxWeight = Out[MaxClass];
    } else {
      for (int64_t V = 0; V < P.Vectors; ++V)
        Kern[V] = P.K(X, P.Sv.data() + V * P.Features, P.Features);
      std::fill(Votes, Votes + K, int64_t(0));
      size_t Idx = 0;
      for (int64_t A = 0; A < K - 1; ++A)
        for (int64_t B = A + 1; B < K; ++B, ++Idx) {
          double Sum = 0;
          const float *CoefA = P.Coef.data() + (B - 1) * P.Vectors, *CoefB = P.Coef.data() + A * P.Vectors;
          for (int64_t M = P.Start[A]; M < P.Start[A] + P.PerClass[A]; ++M)
            Sum += CoefA[M] * Kern[M];
          for (int64_t M = P.Start[B]; M < P.Start[B] + P.PerClass[B]; ++M)
            Sum += CoefB[M] * Kern[M];
          Sum += P.Rho[Idx];
          Pair[Idx] = static_cast<float>(Sum);
          ++Votes[Sum > 0 ? A : B];
        }
      MaxClass = std::max_element(Votes, Votes + K) - Votes;
      if (P.proba()) {
        const size_t N = static_cast<size_t>(K);
        std::fill(Pr, Pr + N * N, 0.0f);
        Idx = 0;
        for (size_t A = 0; A + 1 < N; ++A)
          for (size_t B = A + 1; B < N; ++B, ++Idx) {
            const float V = std::min(std::max(1 - mlLogistic(Pair[Idx] * P.ProbA[Idx] + P.ProbB[Idx]), 1.0e-7f),
                                     1 - 1.0e-7f);
            Pr[A * N + B] = V;
            Pr[B * N + A] = 1 - V;
          }
        multiclassProbability(K, Pr, Out, Q, Qp);
      } else {
        Scores = P.Pairs;
        std::copy(Pair, Pair + P.Pairs, Out);
        if (K <= 2)
          Second = P.Post == PostTransform::None ? 2 : 0;
      }
    }
    int64_t Label;
    if (P.Pairs == 1) {
      const bool Positive = !P.proba() && ((P.WeightsPositive && MaxWeight >= 0.5f) || (MaxWeight > 0 && !P.WeightsPositive));
      Label = P.Labels[Positive ? 1 : static_cast<size_t>(MaxClass)];
    } else {
      Label = P.Labels[static_cast<size_t>(MaxClass)];
    }
    if (Scores == 1 && Second >= 0) {
      const float S = Out[0];
      if (P.Post == PostTransform::Probit) {
        Out[0] = mlProbit(S);
        Out[1] = 0;
      } else {
        Out[0] = Second == 0 ? 1 - S : -S;
        Out[1] = S;
      }
    } else {
      mlTransformScores(P.Post, Out, static_cast<size_t>(Scores));
    }
    return Label;
  }

  SvcParams P;
};

Result<std::unique_ptr<Kernel>> createSvmClassifier(const KernelCreateInfo &Info) {
  ASSIGN_OR_RETURN(SvcParams P, readParams(Info.N));
  return makeKernel<SvmClassifierKernel>(std::move(P));
}

/// Classes classes with 2 support vectors each over 3 features.
std::map<std::string, AttrValue> svcAttrs(int Classes, const char *Kernel, bool Proba, const char *Post) {
  std::vector<float> Sv, Coef, Rho, A, B;
  std::vector<int64_t> PerClass, Labels;
  for (int C = 0; C < Classes; ++C) {
    PerClass.push_back(2);
    Labels.push_back(5 + C);
    for (int V = 0; V < 2; ++V)
      for (int F = 0; F < 3; ++F)
        Sv.push_back(0.3f * static_cast<float>((C * 7 + V * 5 + F * 3) % 7) - 0.9f);
  }
  for (int R = 0; R < Classes - 1; ++R)
    for (int V = 0; V < 2 * Classes; ++V)
      Coef.push_back(0.25f * static_cast<float>((R * 3 + V * 5) % 9) - 1.0f);
  for (int P = 0; P < Classes * (Classes - 1) / 2; ++P) {
    Rho.push_back(0.1f * static_cast<float>(P) - 0.1f);
    A.push_back(-1.5f - 0.2f * static_cast<float>(P));
    B.push_back(0.05f * static_cast<float>(P));
  }
  std::map<std::string, AttrValue> M = {{"kernel_type", attrString(Kernel)},
                                        {"kernel_params", attrFloats({0.6f, 0.3f, 2})},
                                        {"support_vectors", attrFloats(Sv)},
                                        {"coefficients", attrFloats(Coef)},
                                        {"vectors_per_class", attrInts(PerClass)},
                                        {"rho", attrFloats(Rho)},
                                        {"classlabels_ints", attrInts(Labels)},
                                        {"post_transform", attrString(Post)}};
  if (Proba) {
    M["prob_a"] = attrFloats(A);
    M["prob_b"] = attrFloats(B);
  }
  return M;
}

std::vector<OpTestCase> svmClassifierCases() {
  std::vector<OpTestCase> Cases;
  auto Add = [&](std::string Label, std::map<std::string, AttrValue> A) {
    OpTestCase C = testCase(std::move(Label), {tensorInput({6, 3})}, std::move(A));
    C.NumOutputs = 2;
    Cases.push_back(C);
  };
  Add("rbf_proba", svcAttrs(3, "RBF", true, "NONE"));
  Add("poly_votes", svcAttrs(4, "POLY", false, "NONE"));
  Add("sigmoid_proba", svcAttrs(3, "SIGMOID", true, "NONE"));
  Add("linear_votes_logistic", svcAttrs(3, "LINEAR", false, "LOGISTIC"));
  Add("binary_proba", svcAttrs(2, "RBF", true, "NONE"));
  Add("binary_decision", svcAttrs(2, "RBF", false, "NONE"));
  Add("binary_decision_logistic", svcAttrs(2, "POLY", false, "LOGISTIC"));
  Add("liblinear", {{"coefficients", attrFloats({0.5f, -1, 2, 0.25f, 0.75f, -0.5f, 1, 0, -1})},
                    {"rho", attrFloats({0.3f})},
                    {"classlabels_ints", attrInts({1, 2, 3})}});
  return Cases;
}

OPT_REGISTER_SCHEMA(SVMClassifier, svmClassifierSchema());
OPT_REGISTER_KERNELS(SVMClassifier, OpKernels{kMlDomain,
                                              "SVMClassifier",
                                              {{"f32_svmclassifier__ref", 0, nullptr, createSvmClassifier}},
                                              svmClassifierCases});

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
