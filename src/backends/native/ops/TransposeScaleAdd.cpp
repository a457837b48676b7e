// com.optimium TransposeScaleAdd (made by passes/FuseTransposeScaleAdd): a channels-last tensor
// brought back to channels-first, scaled per channel and added to a channels-first one in one pass,
// as ConvNeXt's blocks end: Transpose (perm [0, r-1, 1, ..., r-2]) -> Mul (layer scale [C, 1, 1])
// -> Add (the residual). Inputs X [N, P1, ..., Pk, C], Scale (C values), R [N, C, P1, ..., Pk];
// Y[n, c, p] = Scale[c] * X[n, p, c] + R[n, c, p].
//
// The AVX2 variant moves 8 x 8 blocks (8 positions of 8 channels) through registers, 256 positions
// of all channels at a time: one read of X and R and one write of Y, instead of the Transpose's,
// the Mul's and the Add's three passes over the tensor.
#include <algorithm>

#include "backends/native/ops/common/OpUtil.h"
#include "backends/native/ops/common/SimdDispatch.h"
#include "backends/native/ops/common/Transpose256.h"
#include "backends/native/ops/common/VecMath256.h"
#include "ir/FusedOps.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

constexpr size_t kX = 0, kScale = 1, kResidual = 2;

Status inferTsa(ShapeContext &Ctx) {
  RETURN_IF_ERROR(requireInputType(Ctx, kX, {ElementType::F32}));
  RETURN_IF_ERROR(requireSameType(Ctx, kX, kScale));
  RETURN_IF_ERROR(requireSameType(Ctx, kX, kResidual));
  const TensorShape &X = Ctx.Inputs[kX].Shape, &R = Ctx.Inputs[kResidual].Shape;
  const size_t Rank = X.getRank();
  if (Rank < 3 || R.getRank() != Rank)
    return Ctx.error(ErrorCode::Shape, "input ", X.toString(), " and residual ", R.toString(),
                     " must have the same rank, at least 3");
  std::vector<Expr> Dims{X[0], X[Rank - 1]};
  for (size_t D = 1; D + 1 < Rank; ++D)
    Dims.push_back(X[D]);
  for (size_t D = 0; D < Rank; ++D)
    if (Dims[D].isConst() && R[D].isConst() && Dims[D].value() != R[D].value())
      return Ctx.error(ErrorCode::Shape, "residual ", R.toString(), " is not the channels-first form of ",
                       X.toString());
  const TensorShape &S = Ctx.Inputs[kScale].Shape;
  const Expr SCount = S.getElementCount();
  if (SCount.isConst() && X[Rank - 1].isConst() && SCount.value() != X[Rank - 1].value())
    return Ctx.error(ErrorCode::Shape, "scale ", S.toString(), " must hold one value per channel of ", X.toString());
  Ctx.Outputs[0].Type = ElementType::F32;
  Ctx.Outputs[0].Shape = TensorShape(std::move(Dims));
  return Status::ok();
}

OpSchema tsaSchema() {
  OpSchema S;
  S.Domain = kTransposeScaleAddDomain;
  S.OpType = kTransposeScaleAddOp;
  S.MinInputs = S.MaxInputs = 3;
  S.Infer = inferTsa;
  return S;
}

/// The sizes of one run: N images of P positions by C channels.
struct TsaRun {
  int64_t N = 0, P = 0, C = 0;
};

Result<TsaRun> planTsa(const char *Name, const KernelContext &Ctx) {
  const TensorView &X = Ctx.Inputs[kX], &R = Ctx.Inputs[kResidual], &Y = Ctx.Outputs[0];
  const size_t Rank = X.rank();
  if (Rank < 3 || R.Dims != Y.Dims || Y.rank() != Rank)
    return runError(Name, "input ", joinInts(X.Dims), ", residual ", joinInts(R.Dims), " and output ",
                    joinInts(Y.Dims), " do not match");
  TsaRun T;
  T.N = X.Dims[0], T.C = X.Dims[Rank - 1], T.P = product(X.Dims, 1, Rank - 1);
  if (Y.Dims[0] != T.N || Y.Dims[1] != T.C || product(Y.Dims, 2, Rank) != T.P)
    return runError(Name, "output ", joinInts(Y.Dims), " is not the channels-first form of ", joinInts(X.Dims));
  if (static_cast<int64_t>(Ctx.Inputs[kScale].elementCount()) != T.C)
    return runError(Name, "scale of ", Ctx.Inputs[kScale].elementCount(), " values for ", T.C, " channels");
  return T;
}

/// Y for positions [P0, P1) of image N, one value at a time.
void tsaSpan(const TsaRun &T, const float *X, const float *S, const float *R, float *Y, int64_t N, int64_t P0,
             int64_t P1) {
  for (int64_t C = 0; C < T.C; ++C) {
    const float Sc = S[C];
    const float *Rc = R + (N * T.C + C) * T.P;
    float *Yc = Y + (N * T.C + C) * T.P;
    for (int64_t P = P0; P < P1; ++P)
      Yc[P] = Sc * X[(N * T.P + P) * T.C + C] + Rc[P];
  }
}

class TsaRefKernel : public Kernel {
public:
  Status run(const KernelContext &Ctx) const override {
    ASSIGN_OR_RETURN(const TsaRun T, planTsa("f32_transpose_scale_add__ref", Ctx));
    const float *X = Ctx.Inputs[kX].data<const float>(), *S = Ctx.Inputs[kScale].data<const float>();
    const float *R = Ctx.Inputs[kResidual].data<const float>();
    float *Y = Ctx.Outputs[0].data<float>();
    for (int64_t N = 0; N < T.N; ++N)
      tsaSpan(T, X, S, R, Y, N, 0, T.P);
    return Status::ok();
  }
};

/// Positions per task step: 32 8 x 8 blocks per 8 channels, so each channel's output and residual
/// runs are 1 KiB (X's step, 256 positions x C, in L2). ConvNeXt's 96 x 56 x 56 (1 thread, Zen 3,
/// per-op minima under load): 16 positions 0.90 ms, 64 positions 0.58, against 0.45 for the
/// Transpose alone and 0.80 for the three ops; 16 channels along all positions instead 0.82.
constexpr int64_t kStep = 256;

#if defined(OPT_SIMD_X86) && defined(OPT_HAVE_VECMATH256)
/// Positions [P0, P0 + Len) (Len <= 8) of channels [C0, C0 + 8) of image N.
OPT_TARGET_AVX2 inline void tsaBlock8(const TsaRun &T, const float *X, const float *S, const float *R, float *Y,
                                      int64_t N, int64_t C0, int64_t P0, int64_t Len) {
  __m256 V[8];
  const float *Xp = X + (N * T.P + P0) * T.C + C0;
  for (int64_t I = 0; I < 8; ++I)
    V[I] = I < Len ? _mm256_loadu_ps(Xp + I * T.C) : _mm256_setzero_ps();
  vec256::transpose8x8(V);
  const int64_t Base = (N * T.C + C0) * T.P + P0;
  if (Len == 8) {
    for (int64_t C = 0; C < 8; ++C)
      _mm256_storeu_ps(Y + Base + C * T.P,
                       _mm256_fmadd_ps(_mm256_set1_ps(S[C0 + C]), V[C], _mm256_loadu_ps(R + Base + C * T.P)));
    return;
  }
  const __m256i M = vec256::lanesBelow256(Len);
  for (int64_t C = 0; C < 8; ++C)
    _mm256_maskstore_ps(Y + Base + C * T.P, M,
                        _mm256_fmadd_ps(_mm256_set1_ps(S[C0 + C]), V[C], _mm256_maskload_ps(R + Base + C * T.P, M)));
}

/// Tasks [Lo, Hi): task I is step I % Steps of channel part (I / Steps) % Parts of image I / (Steps
/// * Parts); a part is Span channels (a multiple of 8, or all of them).
OPT_TARGET_AVX2 void tsaTasksAvx2(const TsaRun &T, const float *X, const float *S, const float *R, float *Y,
                                  int64_t Steps, int64_t Parts, int64_t Span, size_t Lo, size_t Hi) {
  for (size_t I = Lo; I < Hi; ++I) {
    const int64_t Task = static_cast<int64_t>(I), N = Task / (Steps * Parts);
    const int64_t P0 = Task % Steps * kStep, P1 = std::min(T.P, P0 + kStep);
    const int64_t Ca = (Task / Steps) % Parts * Span, Cb = std::min(T.C, Ca + Span);
    const int64_t C8 = Ca + (Cb - Ca) / 8 * 8;
    for (int64_t C0 = Ca; C0 < C8; C0 += 8)
      for (int64_t P = P0; P < P1; P += 8)
        tsaBlock8(T, X, S, R, Y, N, C0, P, std::min<int64_t>(8, P1 - P));
    for (int64_t C = C8; C < Cb; ++C) { // the last channels (not a multiple of 8) one value at a time
      const float Sc = S[C];
      const float *Rc = R + (N * T.C + C) * T.P;
      float *Yc = Y + (N * T.C + C) * T.P;
      for (int64_t P = P0; P < P1; ++P)
        Yc[P] = Sc * X[(N * T.P + P) * T.C + C] + Rc[P];
    }
  }
}
#endif

class TsaAvx2Kernel : public Kernel {
public:
  Status run(const KernelContext &Ctx) const override {
#if defined(OPT_SIMD_X86) && defined(OPT_HAVE_VECMATH256)
    ASSIGN_OR_RETURN(const TsaRun T, planTsa("f32_transpose_scale_add__avx2", Ctx));
    const float *X = Ctx.Inputs[kX].data<const float>(), *S = Ctx.Inputs[kScale].data<const float>();
    const float *R = Ctx.Inputs[kResidual].data<const float>();
    float *Y = Ctx.Outputs[0].data<float>();
    const int64_t Steps = (T.P + kStep - 1) / kStep;
    // One step per task; planes of few steps are split by channels too, into parts of 8 x 2^k
    // channels, until there are 4 tasks per thread (ConvNeXt-Tiny's 384 x 14 x 14 at 2 threads: 8
    // parts of 48 channels; its 96 x 56 x 56: 13 steps of all 96).
    const int64_t Want = 4 * std::max(1, Ctx.Par.threads());
    int64_t Span = T.C;
    while (T.N * Steps * ((T.C + Span - 1) / Span) < Want && Span % 16 == 0)
      Span /= 2;
    const int64_t Parts = (T.C + Span - 1) / Span;
    Ctx.Par.forRange(static_cast<size_t>(T.N * Steps * Parts), 1,
                     [&](size_t Lo, size_t Hi) { tsaTasksAvx2(T, X, S, R, Y, Steps, Parts, Span, Lo, Hi); });
    return Status::ok();
#else
    (void)Ctx;
    return runError("f32_transpose_scale_add__avx2", "not built for x86 with AVX2");
#endif
  }
};

bool typesOk(const KernelCreateInfo &I) {
  return inputIs(I, kX, ElementType::F32) && inputIs(I, kScale, ElementType::F32) &&
         inputIs(I, kResidual, ElementType::F32);
}

std::vector<OpTestCase> tsaCases() {
  const auto X = [](std::vector<int64_t> D) { return tensorInput(std::move(D)); };
  const auto W = [](std::vector<int64_t> D) { return constInput(std::move(D)); };
  return {
      // ConvNeXt-Tiny's stages: 96 channels on 56x56 (whole 16-position steps), 384 on 14x14 and
      // 768 on 7x7 (a partial last step and a partial 8-block); channels not a multiple of 8, a
      // batch of 2, a 1-D signal, a scale that is not constant.
      testCase("convnext_56x56", {X({1, 56, 56, 96}), W({96, 1, 1}), X({1, 96, 56, 56})}),
      testCase("convnext_14x14", {X({1, 14, 14, 384}), W({384, 1, 1}), X({1, 384, 14, 14})}),
      testCase("convnext_7x7", {X({1, 7, 7, 768}), W({768, 1, 1}), X({1, 768, 7, 7})}),
      testCase("odd_channels_batch2", {X({2, 5, 7, 13}), W({13}), X({2, 13, 5, 7})}),
      testCase("rank3", {X({2, 37, 24}), W({24, 1}), X({2, 24, 37})}),
      testCase("scale_not_const", {X({1, 4, 6, 16}), X({1, 16, 1, 1}), X({1, 16, 4, 6})}),
  };
}

OpKernels tsaKernels() {
  OpKernels K;
  K.Domain = kTransposeScaleAddDomain;
  K.OpType = kTransposeScaleAddOp;
  K.Variants.push_back({"f32_transpose_scale_add__ref", 0, typesOk,
                        [](const KernelCreateInfo &) { return makeKernel<TsaRefKernel>(); }});
  K.Variants.push_back({"f32_transpose_scale_add__avx2", 10,
                        [](const KernelCreateInfo &I) { return typesOk(I) && simdAvx2(); },
                        [](const KernelCreateInfo &) { return makeKernel<TsaAvx2Kernel>(); }});
  K.TestCases = tsaCases;
  return K;
}

OPT_REGISTER_SCHEMA(TransposeScaleAdd, tsaSchema());
OPT_REGISTER_KERNELS(TransposeScaleAdd, tsaKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
