// LRN (f32, f16): local response normalization across channels,
// y = x / (bias + alpha / size * sum_{c' in window(c)} x[c']^2)^beta, the window spanning
// floor((size-1)/2) channels before and ceil((size-1)/2) after.
#include "backends/native/ops/common/NormCommon.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct LrnAttrs {
  float Alpha = 1e-4f, Beta = 0.75f, Bias = 1.0f;
  int64_t Size = 0;
};

Result<LrnAttrs> parseLrnAttrs(const Node &N) {
  LrnAttrs A;
  if (!N.hasAttr("size"))
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'size' is required");
  ASSIGN_OR_RETURN(A.Size, N.getInt("size", 0));
  if (A.Size <= 0)
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'size' value ", A.Size, " must be positive");
  ASSIGN_OR_RETURN(A.Alpha, N.getFloat("alpha", 1e-4f));
  ASSIGN_OR_RETURN(A.Beta, N.getFloat("beta", 0.75f));
  ASSIGN_OR_RETURN(A.Bias, N.getFloat("bias", 1.0f));
  return A;
}

OpSchema lrnSchema() {
  OpSchema S;
  S.OpType = "LRN";
  S.MinInputs = S.MaxInputs = 1;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireFloatInput(Ctx, 0));
    ASSIGN_OR_RETURN(const LrnAttrs A, parseLrnAttrs(Ctx.N));
    (void)A;
    const TensorShape &In = Ctx.Inputs[0].Shape;
    if (In.getRank() < 3)
      return Ctx.error(ErrorCode::Shape, "input must be [N, C, spatial...], got ", In.toString());
    Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
    Ctx.Outputs[0].Shape = In;
    return Status::ok();
  };
  return S;
}

Status runLrn(const LrnAttrs &A, const KernelContext &Ctx, bool Par) {
  const TensorView &X = Ctx.Inputs[0], &Y = Ctx.Outputs[0];
  if (X.rank() < 3 || X.Dims != Y.Dims)
    return runError("lrn", "unexpected shapes ", joinInts(X.Dims), " -> ", joinInts(Y.Dims));
  const int64_t N = X.Dims[0], C = X.Dims[1], Inner = product(X.Dims, 2, X.rank());
  const int64_t Before = (A.Size - 1) / 2, After = A.Size - 1 - Before;
  const float Coef = A.Alpha / static_cast<float>(A.Size);
  forRangeMaybe(Ctx, Par, static_cast<size_t>(N * C), 1, [&](size_t Lo, size_t Hi) {
    for (size_t P = Lo; P < Hi; ++P) {
      const int64_t Img = static_cast<int64_t>(P) / C, Ch = static_cast<int64_t>(P) % C;
      const int64_t C0 = std::max<int64_t>(0, Ch - Before), C1 = std::min<int64_t>(C - 1, Ch + After);
      for (int64_t I = 0; I < Inner; ++I) {
        float Sum = 0;
        for (int64_t K = C0; K <= C1; ++K) {
          const float V = loadFloat(X, static_cast<size_t>((Img * C + K) * Inner + I));
          Sum += V * V;
        }
        const size_t Off = static_cast<size_t>((Img * C + Ch) * Inner + I);
        storeFloat(Y, Off, loadFloat(X, Off) / std::pow(A.Bias + Coef * Sum, A.Beta));
      }
    }
  });
  return Status::ok();
}

OpKernels lrnKernels() {
  OpKernels K;
  K.OpType = "LRN";
  addFloatVariants(K, "lrn", [](const KernelCreateInfo &I) -> Result<FloatRunFn> {
    ASSIGN_OR_RETURN(const LrnAttrs A, parseLrnAttrs(I.N));
    return FloatRunFn([A](const KernelContext &C, bool Par) { return runLrn(A, C, Par); });
  });
  K.TestCases = [] {
    return std::vector<OpTestCase>{
        testCase("size3", {tensorInput({2, 5, 4, 4})}, {{"size", attrInt(3)}}),
        testCase("size4_attrs", {tensorInput({1, 6, 3, 5})},
                 {{"size", attrInt(4)}, {"alpha", attrFloat(2e-3f)}, {"beta", attrFloat(0.5f)}, {"bias", attrFloat(2.f)}}),
        testCase("size1_1d", {tensorInput({1, 3, 8})}, {{"size", attrInt(1)}}),
        testCase("wide_window", {tensorInput({1, 4, 3, 3})}, {{"size", attrInt(9)}}),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(LRN, lrnSchema());
OPT_REGISTER_KERNELS(LRN, lrnKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
