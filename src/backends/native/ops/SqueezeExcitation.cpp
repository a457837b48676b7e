// com.optimium SqueezeExcitation (made by passes/FuseSqueezeExcitation): GlobalAveragePool -> 1x1
// Conv (+bias) -> act1 -> 1x1 Conv (+bias) -> act2 -> Mul(x, s) as one op. Inputs X [N, C, H, W],
// W1 [R, C, 1, 1], W2 [C, R, 1, 1], B1 [R] (optional), B2 [C] (optional); act1 and act2 in
// kSeReduceActKeys / kSeExpandActKeys (ir/FusedOps.h): Y[n, c] = X[n, c] * s[n, c] with
// s = act2(W2 act1(W1 mean_hw(X[n]) + B1) + B2).
//
// The AVX-512 and AVX2 + FMA variants read X twice per image and nothing else: the channel means
// (16 or 8 lanes of partial sums per plane), the first matrix-vector product, then per channel
// range the second product and the scaling of those planes (read X, write Y), instead of
// GlobalAveragePool, two Conv kernels on 1x1 planes, two activations and a broadcasting Mul
// (EfficientNet-B0: 16 blocks, MobileNetV3-Small: 9). Each of the three stages splits across
// threads where its work pays for a fan-out (kSeMinParallelWork).
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "backends/native/ops/common/FusedActivation.h"
#include "backends/native/ops/common/OpUtil.h"
#include "backends/native/ops/common/PackedWeights.h"
#include "backends/native/ops/common/SimdDispatch.h"
#include "backends/native/ops/common/VecMath256.h"
#include "ir/FusedOps.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

constexpr size_t kW1 = 1, kW2 = 2, kB1 = 3, kB2 = 4;

struct SeAttrs {
  FusedAct Reduce, Expand;
};

Result<SeAttrs> parseSeAttrs(const Node &N) {
  SeAttrs A;
  ASSIGN_OR_RETURN(A.Reduce, fusedActOf(N, kSeReduceActKeys));
  ASSIGN_OR_RETURN(A.Expand, fusedActOf(N, kSeExpandActKeys));
  return A;
}

/// Whether dimension D of S is the constant V (symbolic dims pass: checked again at run time).
bool dimIs(const TensorShape &S, size_t D, const Expr &V) {
  return !S[D].isConst() || !V.isConst() || S[D].value() == V.value();
}

Status inferSe(ShapeContext &Ctx) {
  RETURN_IF_ERROR(requireInputType(Ctx, 0, {ElementType::F32}));
  RETURN_IF_ERROR(requireSameType(Ctx, 0, kW1));
  RETURN_IF_ERROR(requireSameType(Ctx, 0, kW2));
  const TensorShape &X = Ctx.Inputs[0].Shape, &W1 = Ctx.Inputs[kW1].Shape, &W2 = Ctx.Inputs[kW2].Shape;
  ASSIGN_OR_RETURN(const SeAttrs A, parseSeAttrs(Ctx.N));
  (void)A;
  if (X.getRank() != 4 || W1.getRank() != 4 || W2.getRank() != 4)
    return Ctx.error(ErrorCode::Shape, "input ", X.toString(), " and weights ", W1.toString(), ", ", W2.toString(),
                     " must be 4-D");
  const Expr One(int64_t{1});
  if (!dimIs(W1, 1, X[1]) || !dimIs(W2, 0, X[1]) || !dimIs(W2, 1, W1[0]) || !dimIs(W1, 2, One) ||
      !dimIs(W1, 3, One) || !dimIs(W2, 2, One) || !dimIs(W2, 3, One))
    return Ctx.error(ErrorCode::Shape, "input ", X.toString(), " does not fit the weights ", W1.toString(), " ([R, C, 1, 1]) and ",
                     W2.toString(), " ([C, R, 1, 1])");
  RETURN_IF_ERROR(checkChannelBias(Ctx, kB1, W1[0]));
  RETURN_IF_ERROR(checkChannelBias(Ctx, kB2, W2[0]));
  Ctx.Outputs[0].Type = ElementType::F32;
  Ctx.Outputs[0].Shape = X;
  return Status::ok();
}

OpSchema seSchema() {
  OpSchema S;
  S.Domain = kSqueezeExcitationDomain;
  S.OpType = kSqueezeExcitationOp;
  S.MinInputs = 3;
  S.MaxInputs = 5;
  S.Infer = inferSe;
  return S;
}

/// The sizes of one run, checked against the weights and the output.
struct SeRun {
  int64_t N = 0, C = 0, R = 0, P = 0;
};

Result<SeRun> planSe(const char *Name, const KernelContext &Ctx) {
  const TensorView &X = Ctx.Inputs[0], &W1 = Ctx.Inputs[kW1], &W2 = Ctx.Inputs[kW2], &Y = Ctx.Outputs[0];
  if (X.rank() != 4 || W1.rank() != 4 || W2.rank() != 4 || Y.Dims != X.Dims)
    return runError(Name, "input ", joinInts(X.Dims), ", weights ", joinInts(W1.Dims), ", ", joinInts(W2.Dims),
                    " and output ", joinInts(Y.Dims), " do not match");
  SeRun S;
  S.N = X.Dims[0], S.C = X.Dims[1], S.R = W1.Dims[0], S.P = X.Dims[2] * X.Dims[3];
  if (W1.Dims[1] != S.C || W2.Dims[0] != S.C || W2.Dims[1] != S.R || W1.Dims[2] * W1.Dims[3] != 1 ||
      W2.Dims[2] * W2.Dims[3] != 1)
    return runError(Name, "weights ", joinInts(W1.Dims), " and ", joinInts(W2.Dims), " do not fit the input ",
                    joinInts(X.Dims));
  const float *B1 = inputDataOrNull(Ctx, kB1), *B2 = inputDataOrNull(Ctx, kB2);
  if ((B1 && static_cast<int64_t>(Ctx.Inputs[kB1].elementCount()) != S.R) ||
      (B2 && static_cast<int64_t>(Ctx.Inputs[kB2].elementCount()) != S.C))
    return runError(Name, "a bias does not match the weights");
  return S;
}

/// Y[i] = act(B[i] + sum_j W[i, j] X[j]) for i < Rows (W row-major, Cols wide; B may be null),
/// accumulated in Acc.
template <typename Acc>
void denseAct(const FusedAct &Act, const float *W, const float *B, int64_t Rows, int64_t Cols, const float *X,
              float *Y) {
  for (int64_t I = 0; I < Rows; ++I) {
    Acc S = B ? B[I] : 0;
    const float *Row = W + I * Cols;
    for (int64_t J = 0; J < Cols; ++J)
      S += static_cast<Acc>(Row[J]) * X[J];
    Y[I] = Act(static_cast<float>(S));
  }
}

/// s = act2(W2 act1(W1 Mean + B1) + B2) for one image (Mean: C values; Hidden: R of scratch).
template <typename Acc>
void excite(const SeAttrs &A, const float *W1, const float *B1, const float *W2, const float *B2, int64_t C, int64_t R,
            const float *Mean, float *Hidden, float *Scale) {
  denseAct<Acc>(A.Reduce, W1, B1, R, C, Mean, Hidden);
  denseAct<Acc>(A.Expand, W2, B2, C, R, Hidden, Scale);
}

class SeRefKernel : public Kernel {
public:
  explicit SeRefKernel(SeAttrs A) : A(A) {}

  Status run(const KernelContext &Ctx) const override {
    ASSIGN_OR_RETURN(const SeRun S, planSe("f32_squeeze_excitation__ref", Ctx));
    const float *X = Ctx.Inputs[0].data<float>(), *W1 = Ctx.Inputs[kW1].data<float>();
    const float *W2 = Ctx.Inputs[kW2].data<float>();
    const float *B1 = inputDataOrNull(Ctx, kB1), *B2 = inputDataOrNull(Ctx, kB2);
    float *Y = Ctx.Outputs[0].data<float>();
    std::vector<float> Mean(static_cast<size_t>(S.C)), Hidden(static_cast<size_t>(S.R)), Scale(static_cast<size_t>(S.C));
    for (int64_t N = 0; N < S.N; ++N) {
      const float *Xn = X + N * S.C * S.P;
      for (int64_t C = 0; C < S.C; ++C) {
        double Sum = 0;
        for (int64_t P = 0; P < S.P; ++P)
          Sum += Xn[C * S.P + P];
        Mean[static_cast<size_t>(C)] = S.P ? static_cast<float>(Sum / static_cast<double>(S.P)) : NAN;
      }
      excite<double>(A, W1, B1, W2, B2, S.C, S.R, Mean.data(), Hidden.data(), Scale.data());
      for (int64_t C = 0; C < S.C; ++C)
        for (int64_t P = 0; P < S.P; ++P)
          Y[(N * S.C + C) * S.P + P] = Xn[C * S.P + P] * Scale[static_cast<size_t>(C)];
    }
    return Status::ok();
  }

private:
  SeAttrs A;
};

#ifdef OPT_SIMD_X86
/// The mean of each of Count planes of P floats (16 partial sums per plane, then one reduction).
OPT_TARGET_AVX512 void planeMeansAvx512(const float *X, int64_t P, int64_t Count, float *Mean) {
  const __mmask16 Tail = static_cast<__mmask16>((1u << (P % 16)) - 1u);
  const float Inv = 1.0f / static_cast<float>(P);
  for (int64_t C = 0; C < Count; ++C) {
    const float *Row = X + C * P;
    __m512 A0 = _mm512_setzero_ps(), A1 = _mm512_setzero_ps();
    int64_t I = 0;
    for (; I + 32 <= P; I += 32) {
      A0 = _mm512_add_ps(A0, _mm512_loadu_ps(Row + I));
      A1 = _mm512_add_ps(A1, _mm512_loadu_ps(Row + I + 16));
    }
    if (I + 16 <= P) {
      A0 = _mm512_add_ps(A0, _mm512_loadu_ps(Row + I));
      I += 16;
    }
    if (I < P)
      A1 = _mm512_add_ps(A1, _mm512_maskz_loadu_ps(Tail, Row + I));
    Mean[C] = _mm512_reduce_add_ps(_mm512_add_ps(A0, A1)) * Inv;
  }
}

/// Y = X * Scale[c] over Count planes of P floats.
OPT_TARGET_AVX512 void scalePlanesAvx512(const float *X, const float *Scale, int64_t P, int64_t Count, float *Y) {
  const __mmask16 Tail = static_cast<__mmask16>((1u << (P % 16)) - 1u);
  for (int64_t C = 0; C < Count; ++C) {
    const float *Row = X + C * P;
    float *Out = Y + C * P;
    const __m512 S = _mm512_set1_ps(Scale[C]);
    int64_t I = 0;
    for (; I + 16 <= P; I += 16)
      _mm512_storeu_ps(Out + I, _mm512_mul_ps(_mm512_loadu_ps(Row + I), S));
    if (I < P)
      _mm512_mask_storeu_ps(Out + I, Tail, _mm512_mul_ps(_mm512_maskz_loadu_ps(Tail, Row + I), S));
  }
}

/// excite's first product in float, 16 lanes, for hidden rows [Lo, Hi): Hidden = act1(W1 Mean + B1).
OPT_TARGET_AVX512 void reduceAvx512(const SeAttrs &A, const float *W1, const float *B1, int64_t C, const float *Mean,
                                    float *Hidden, int64_t Lo, int64_t Hi) {
  for (int64_t I = Lo; I < Hi; ++I) {
    const float *Row = W1 + I * C;
    __m512 S = _mm512_setzero_ps();
    int64_t J = 0;
    for (; J + 16 <= C; J += 16)
      S = _mm512_fmadd_ps(_mm512_loadu_ps(Row + J), _mm512_loadu_ps(Mean + J), S);
    if (J < C) {
      const __mmask16 M = static_cast<__mmask16>((1u << (C - J)) - 1u);
      S = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(M, Row + J), _mm512_maskz_loadu_ps(M, Mean + J), S);
    }
    Hidden[I] = _mm512_reduce_add_ps(S) + (B1 ? B1[I] : 0.0f);
  }
  applyFusedAct(A.Reduce, Hidden + Lo, static_cast<size_t>(Hi - Lo));
}

/// excite's second product for channels [Lo, Hi): Scale = act2(B2 + sum over j of Hidden[j] *
/// W2T[j, :]) (W2 transposed to [R, C]), 16 output channels at a time, each hidden value broadcast.
OPT_TARGET_AVX512 void expandAvx512(const SeAttrs &A, const float *W2T, const float *B2, int64_t C, int64_t R,
                                    const float *Hidden, float *Scale, int64_t Lo, int64_t Hi) {
  for (int64_t I0 = Lo; I0 < Hi; I0 += 16) {
    const int64_t Lanes = std::min<int64_t>(16, Hi - I0);
    const __mmask16 M = static_cast<__mmask16>((1u << Lanes) - 1u);
    __m512 S = B2 ? _mm512_maskz_loadu_ps(M, B2 + I0) : _mm512_setzero_ps();
    for (int64_t J = 0; J < R; ++J)
      S = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(M, W2T + J * C + I0), _mm512_set1_ps(Hidden[J]), S);
    _mm512_mask_storeu_ps(Scale + I0, M, S);
  }
  applyFusedAct(A.Expand, Scale + Lo, static_cast<size_t>(Hi - Lo));
}

/// planeMeansAvx512 on 8 lanes (two accumulators).
OPT_TARGET_AVX2 void planeMeansAvx2(const float *X, int64_t P, int64_t Count, float *Mean) {
  const __m256i Tail = vec256::lanesBelow256(P % 8);
  const float Inv = 1.0f / static_cast<float>(P);
  for (int64_t C = 0; C < Count; ++C) {
    const float *Row = X + C * P;
    __m256 A0 = _mm256_setzero_ps(), A1 = _mm256_setzero_ps();
    int64_t I = 0;
    for (; I + 16 <= P; I += 16) {
      A0 = _mm256_add_ps(A0, _mm256_loadu_ps(Row + I));
      A1 = _mm256_add_ps(A1, _mm256_loadu_ps(Row + I + 8));
    }
    if (I + 8 <= P) {
      A0 = _mm256_add_ps(A0, _mm256_loadu_ps(Row + I));
      I += 8;
    }
    if (I < P)
      A1 = _mm256_add_ps(A1, _mm256_maskload_ps(Row + I, Tail));
    Mean[C] = vec256::reduceAdd256(_mm256_add_ps(A0, A1)) * Inv;
  }
}

/// scalePlanesAvx512 on 8 lanes.
OPT_TARGET_AVX2 void scalePlanesAvx2(const float *X, const float *Scale, int64_t P, int64_t Count, float *Y) {
  const __m256i Tail = vec256::lanesBelow256(P % 8);
  for (int64_t C = 0; C < Count; ++C) {
    const float *Row = X + C * P;
    float *Out = Y + C * P;
    const __m256 S = _mm256_set1_ps(Scale[C]);
    int64_t I = 0;
    for (; I + 16 <= P; I += 16) {
      const __m256 V0 = _mm256_mul_ps(_mm256_loadu_ps(Row + I), S), V1 = _mm256_mul_ps(_mm256_loadu_ps(Row + I + 8), S);
      _mm256_storeu_ps(Out + I, V0), _mm256_storeu_ps(Out + I + 8, V1);
    }
    if (I + 8 <= P) {
      _mm256_storeu_ps(Out + I, _mm256_mul_ps(_mm256_loadu_ps(Row + I), S));
      I += 8;
    }
    if (I < P)
      _mm256_maskstore_ps(Out + I, Tail, _mm256_mul_ps(_mm256_maskload_ps(Row + I, Tail), S));
  }
}

/// Hidden[I] (before the activation) for one row of W1: two accumulators, a masked tail.
OPT_TARGET_AVX2 inline float reduceRowAvx2(const float *Row, const float *Mean, int64_t C) {
  __m256 S0 = _mm256_setzero_ps(), S1 = _mm256_setzero_ps();
  int64_t J = 0;
  for (; J + 16 <= C; J += 16) {
    S0 = _mm256_fmadd_ps(_mm256_loadu_ps(Row + J), _mm256_loadu_ps(Mean + J), S0);
    S1 = _mm256_fmadd_ps(_mm256_loadu_ps(Row + J + 8), _mm256_loadu_ps(Mean + J + 8), S1);
  }
  if (J + 8 <= C) {
    S0 = _mm256_fmadd_ps(_mm256_loadu_ps(Row + J), _mm256_loadu_ps(Mean + J), S0);
    J += 8;
  }
  if (J < C) {
    const __m256i M = vec256::lanesBelow256(C - J);
    S1 = _mm256_fmadd_ps(_mm256_maskload_ps(Row + J, M), _mm256_maskload_ps(Mean + J, M), S1);
  }
  return vec256::reduceAdd256(_mm256_add_ps(S0, S1));
}

/// reduceAvx512 on 8 lanes, the activation by applyFusedActAvx2. Four rows at a time, each with
/// two accumulators (eight independent FMA chains; one row's two chains left the loop waiting on
/// the FMA latency), their tails by reduceRowAvx2.
OPT_TARGET_AVX2 void reduceAvx2(const SeAttrs &A, const float *W1, const float *B1, int64_t C, const float *Mean,
                                float *Hidden, int64_t Lo, int64_t Hi) {
  const int64_t Full = C / 16 * 16;
  int64_t I = Lo;
  for (; I + 4 <= Hi; I += 4) {
    const float *R0 = W1 + I * C, *R1 = R0 + C, *R2 = R1 + C, *R3 = R2 + C;
    __m256 S[8];
    for (__m256 &V : S)
      V = _mm256_setzero_ps();
    for (int64_t J = 0; J < Full; J += 16) {
      const __m256 M0 = _mm256_loadu_ps(Mean + J), M1 = _mm256_loadu_ps(Mean + J + 8);
      S[0] = _mm256_fmadd_ps(_mm256_loadu_ps(R0 + J), M0, S[0]);
      S[1] = _mm256_fmadd_ps(_mm256_loadu_ps(R0 + J + 8), M1, S[1]);
      S[2] = _mm256_fmadd_ps(_mm256_loadu_ps(R1 + J), M0, S[2]);
      S[3] = _mm256_fmadd_ps(_mm256_loadu_ps(R1 + J + 8), M1, S[3]);
      S[4] = _mm256_fmadd_ps(_mm256_loadu_ps(R2 + J), M0, S[4]);
      S[5] = _mm256_fmadd_ps(_mm256_loadu_ps(R2 + J + 8), M1, S[5]);
      S[6] = _mm256_fmadd_ps(_mm256_loadu_ps(R3 + J), M0, S[6]);
      S[7] = _mm256_fmadd_ps(_mm256_loadu_ps(R3 + J + 8), M1, S[7]);
    }
    for (int64_t K = 0; K < 4; ++K)
      Hidden[I + K] = vec256::reduceAdd256(_mm256_add_ps(S[2 * K], S[2 * K + 1])) +
                      (Full < C ? reduceRowAvx2(W1 + (I + K) * C + Full, Mean + Full, C - Full) : 0.0f) +
                      (B1 ? B1[I + K] : 0.0f);
  }
  for (; I < Hi; ++I)
    Hidden[I] = reduceRowAvx2(W1 + I * C, Mean, C) + (B1 ? B1[I] : 0.0f);
  applyFusedActAvx2(A.Reduce, Hidden + Lo, Hidden + Lo, static_cast<size_t>(Hi - Lo));
}

/// expandAvx512 on 8 lanes: 32 channels at a time (four independent FMA chains over the hidden
/// values; one chain per 8 channels waited on the FMA latency, ~half of the op's time), then 8
/// at a time with masks.
OPT_TARGET_AVX2 void expandAvx2(const SeAttrs &A, const float *W2T, const float *B2, int64_t C, int64_t R,
                                const float *Hidden, float *Scale, int64_t Lo, int64_t Hi) {
  int64_t I0 = Lo;
  for (; I0 + 32 <= Hi; I0 += 32) {
    __m256 S[4];
    for (int K = 0; K < 4; ++K)
      S[K] = B2 ? _mm256_loadu_ps(B2 + I0 + 8 * K) : _mm256_setzero_ps();
    for (int64_t J = 0; J < R; ++J) {
      const float *W = W2T + J * C + I0;
      const __m256 H = _mm256_set1_ps(Hidden[J]);
      for (int K = 0; K < 4; ++K)
        S[K] = _mm256_fmadd_ps(_mm256_loadu_ps(W + 8 * K), H, S[K]);
    }
    for (int K = 0; K < 4; ++K)
      _mm256_storeu_ps(Scale + I0 + 8 * K, S[K]);
  }
  for (; I0 < Hi; I0 += 8) {
    const __m256i M = vec256::lanesBelow256(std::min<int64_t>(8, Hi - I0));
    __m256 S = B2 ? _mm256_maskload_ps(B2 + I0, M) : _mm256_setzero_ps();
    for (int64_t J = 0; J < R; ++J)
      S = _mm256_fmadd_ps(_mm256_maskload_ps(W2T + J * C + I0, M), _mm256_set1_ps(Hidden[J]), S);
    _mm256_maskstore_ps(Scale + I0, M, S);
  }
  applyFusedActAvx2(A.Expand, Scale + Lo, Scale + Lo, static_cast<size_t>(Hi - Lo));
}

/// The ISA-specific steps of SeSimdKernel.
struct SeAvx512 {
  static constexpr const char *Name = "f32_squeeze_excitation__avx512";
  static void means(const float *X, int64_t P, int64_t Count, float *Mean) { planeMeansAvx512(X, P, Count, Mean); }
  static void scale(const float *X, const float *S, int64_t P, int64_t Count, float *Y) {
    scalePlanesAvx512(X, S, P, Count, Y);
  }
  static constexpr int64_t Lanes = 16;
  static void reduce(const SeAttrs &A, const float *W1, const float *B1, int64_t C, const float *Mean, float *Hidden,
                     int64_t Lo, int64_t Hi) {
    reduceAvx512(A, W1, B1, C, Mean, Hidden, Lo, Hi);
  }
  static void expand(const SeAttrs &A, const float *W2T, const float *B2, int64_t C, int64_t R, const float *Hidden,
                     float *Scale, int64_t Lo, int64_t Hi) {
    expandAvx512(A, W2T, B2, C, R, Hidden, Scale, Lo, Hi);
  }
};
struct SeAvx2 {
  static constexpr const char *Name = "f32_squeeze_excitation__avx2";
  static void means(const float *X, int64_t P, int64_t Count, float *Mean) { planeMeansAvx2(X, P, Count, Mean); }
  static void scale(const float *X, const float *S, int64_t P, int64_t Count, float *Y) {
    scalePlanesAvx2(X, S, P, Count, Y);
  }
  static constexpr int64_t Lanes = 8;
  static void reduce(const SeAttrs &A, const float *W1, const float *B1, int64_t C, const float *Mean, float *Hidden,
                     int64_t Lo, int64_t Hi) {
    reduceAvx2(A, W1, B1, C, Mean, Hidden, Lo, Hi);
  }
  static void expand(const SeAttrs &A, const float *W2T, const float *B2, int64_t C, int64_t R, const float *Hidden,
                     float *Scale, int64_t Lo, int64_t Hi) {
    expandAvx2(A, W2T, B2, C, R, Hidden, Scale, Lo, Hi);
  }
};

/// W2 [C, R] transposed to [R, C] into T.
void transposeW2(const float *W2, int64_t C, int64_t R, float *T) {
  for (int64_t I = 0; I < C; ++I)
    for (int64_t J = 0; J < R; ++J)
      T[J * C + I] = W2[I * R + J];
}

/// The cost rule of SeSimdKernel's fan-outs, in units of about one plane float moved: a weight
/// counts 2 (W1 and W2 come from L3 each run, the planes from the producer's L1/L2), a plane
/// float 1 per pass (the means read it, the scaling reads and writes it). A stage splits across
/// threads from kSeMinParallelWork on, into one equal chunk per thread: its items cost the same,
/// and each further chunk costs the pool a claim (chunks of ~4K floats made MobileNetV3-Small's
/// 16-channel 56x56 block 7.1 -> 8.8 us at 2 threads, and 2^17 as the threshold, which kept it
/// on one thread, 7.4 -> 9.0).
constexpr int64_t kSeMinParallelWork = int64_t{1} << 15;

/// Items per chunk: Count items split evenly over Threads, in multiples of Align.
size_t seGrain(int64_t Count, int Threads, int64_t Align) {
  const int64_t Items = (Count + Threads - 1) / std::max(Threads, 1);
  return static_cast<size_t>(std::max<int64_t>(1, (Items + Align - 1) / Align * Align));
}

/// The vector kernel on Isa's steps (SeAvx512, SeAvx2).
template <typename Isa> class SeSimdKernel : public Kernel {
public:
  /// W2T: the constant W2 transposed at creation (empty: W2 is transposed per run).
  SeSimdKernel(SeAttrs A, AlignedFloats W2T) : A(A), W2T(std::move(W2T)) {}

  Status run(const KernelContext &Ctx) const override {
    const char *Name = Isa::Name;
    ASSIGN_OR_RETURN(const SeRun S, planSe(Name, Ctx));
    if (S.P == 0 || S.C == 0)
      return S.P == 0 ? Status::ok() : runError(Name, "no channels");
    const float *X = Ctx.Inputs[0].data<float>(), *W1 = Ctx.Inputs[kW1].data<float>();
    const float *W2 = Ctx.Inputs[kW2].data<float>();
    const float *B1 = inputDataOrNull(Ctx, kB1), *B2 = inputDataOrNull(Ctx, kB2);
    float *Y = Ctx.Outputs[0].data<float>();
    std::vector<float> Mean(static_cast<size_t>(S.C)), Hidden(static_cast<size_t>(S.R) + 1),
        Scale(static_cast<size_t>(S.C));
    std::vector<float> LocalW2T;
    if (W2T.size() != static_cast<size_t>(S.C * S.R)) {
      LocalW2T.resize(static_cast<size_t>(S.C * S.R));
      transposeW2(W2, S.C, S.R, LocalW2T.data());
    }
    const float *W2t = LocalW2T.empty() ? W2T.data() : LocalW2T.data();
    // Up to three fan-outs per image, each only where its work pays for one (kSeMinParallelWork):
    // the channel means, the first product by hidden rows, then per channel range the second
    // product and the scaling of those planes.
    const int64_t ExpandWork = 2 * S.R + 2 * S.P; // per channel: a column of W2T, its plane read and written
    const int Threads = Ctx.Par.threads();
    const size_t MeanGrain = seGrain(S.C, Threads, 1), ReduceGrain = seGrain(S.R, Threads, 1),
                 ExpandGrain = seGrain(S.C, Threads, Isa::Lanes);
    const Parallel &MeanPar = Ctx.Par.ifWorth(S.C * S.P, kSeMinParallelWork);
    const Parallel &ReducePar = Ctx.Par.ifWorth(2 * S.R * S.C, kSeMinParallelWork);
    const Parallel &ExpandPar = Ctx.Par.ifWorth(S.C * ExpandWork, kSeMinParallelWork);
    for (int64_t N = 0; N < S.N; ++N) {
      const float *Xn = X + N * S.C * S.P;
      float *Yn = Y + N * S.C * S.P;
      MeanPar.forRange(static_cast<size_t>(S.C), MeanGrain, [&](size_t Lo, size_t Hi) {
        Isa::means(Xn + static_cast<int64_t>(Lo) * S.P, S.P, static_cast<int64_t>(Hi - Lo), Mean.data() + Lo);
      });
      ReducePar.forRange(static_cast<size_t>(S.R), ReduceGrain, [&](size_t Lo, size_t Hi) {
        Isa::reduce(A, W1, B1, S.C, Mean.data(), Hidden.data(), static_cast<int64_t>(Lo), static_cast<int64_t>(Hi));
      });
      ExpandPar.forRange(static_cast<size_t>(S.C), ExpandGrain, [&](size_t Lo, size_t Hi) {
        Isa::expand(A, W2t, B2, S.C, S.R, Hidden.data(), Scale.data(), static_cast<int64_t>(Lo), static_cast<int64_t>(Hi));
        const int64_t Off = static_cast<int64_t>(Lo) * S.P;
        Isa::scale(Xn + Off, Scale.data() + Lo, S.P, static_cast<int64_t>(Hi - Lo), Yn + Off);
      });
    }
    return Status::ok();
  }

private:
  SeAttrs A;
  AlignedFloats W2T;
};
#endif

bool typesOk(const KernelCreateInfo &I) {
  for (size_t K : {size_t(0), kW1, kW2})
    if (!inputIs(I, K, ElementType::F32))
      return false;
  for (size_t K : {kB1, kB2})
    if (I.Inputs.size() > K && I.Inputs[K].Present && !inputIs(I, K, ElementType::F32))
      return false;
  return true;
}

std::vector<OpTestCase> seCases() {
  const auto X = [](std::vector<int64_t> D) { return tensorInput(std::move(D)); };
  const auto W = [](std::vector<int64_t> D) { return constInput(std::move(D)); };
  const auto acts = [](const char *Reduce, const char *Expand, float ExpandAlpha, float ExpandBeta) {
    std::map<std::string, AttrValue> M;
    if (Reduce) {
      M[kSeReduceActKeys.Kind] = attrString(Reduce);
    } else {
      M[kSeReduceActKeys.Min] = attrFloat(0.0f); // Relu
    }
    M[kSeExpandActKeys.Kind] = attrString(Expand);
    M[kSeExpandActKeys.Alpha] = attrFloat(ExpandAlpha);
    M[kSeExpandActKeys.Beta] = attrFloat(ExpandBeta);
    return M;
  };
  const auto effnet = acts(kFusedActSilu, kFusedActSigmoid, 1.0f, 0.0f);
  const auto mnv3 = acts(nullptr, kFusedActHardSigmoid, 0.1666667f, 0.5f);
  return {
      // EfficientNet-B0's blocks: SiLU then Sigmoid; planes 112x112 (P % 16 == 0) and 7x7 (tails).
      testCase("effnet_112x112", {X({1, 32, 112, 112}), W({8, 32, 1, 1}), W({32, 8, 1, 1}), W({8}), W({32})}, effnet),
      testCase("effnet_7x7", {X({1, 1152, 7, 7}), W({48, 1152, 1, 1}), W({1152, 48, 1, 1}), W({48}), W({1152})},
               effnet, 1e-4),
      // Both products large enough to split across threads (hidden rows, then channel ranges).
      testCase("split_products_7x7", {X({1, 1152, 7, 7}), W({96, 1152, 1, 1}), W({1152, 96, 1, 1}), W({96}), W({1152})},
               effnet, 1e-4),
      // MobileNetV3-Small's: Relu then HardSigmoid; 14x14, channels not a multiple of 16.
      testCase("mnv3_14x14", {X({1, 120, 14, 14}), W({32, 120, 1, 1}), W({120, 32, 1, 1}), W({32}), W({120})}, mnv3),
      testCase("batch2_no_reduce_bias_odd", {X({2, 21, 5, 3}), W({5, 21, 1, 1}), W({21, 5, 1, 1}), omittedInput(), W({21})},
               acts(kFusedActHardSwish, kFusedActSigmoid, 1.0f, 0.0f)),
      testCase("no_biases_7x7", {X({1, 20, 7, 7}), W({4, 20, 1, 1}), W({20, 4, 1, 1})}, mnv3),
      testCase("weights_not_const", {X({1, 40, 9, 9}), X({10, 40, 1, 1}), X({40, 10, 1, 1}), X({10}), X({40})}, effnet),
  };
}

#ifdef OPT_SIMD_X86
template <typename Isa> KernelVariant seSimdVariant(int Priority, bool (*CpuHas)()) {
  return {Isa::Name, Priority, [CpuHas](const KernelCreateInfo &I) { return typesOk(I) && CpuHas(); },
          [](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
            ASSIGN_OR_RETURN(const SeAttrs A, parseSeAttrs(I.N));
            AlignedFloats W2T; // a compiled folder's packed.bin holds it (the load borrows it)
            const ConstData *W2 = I.Inputs[kW2].Const.get();
            if (W2 && W2->Dims.size() == 4)
              packFloatsCached(packedWeightsKey(I, kW2, std::string(Isa::Name) + "/w2t"),
                               static_cast<size_t>(std::max<int64_t>(1, W2->Dims[0] * W2->Dims[1])), W2T,
                               [&](float *T) { transposeW2(W2->as<float>(), W2->Dims[0], W2->Dims[1], T); });
            return makeKernel<SeSimdKernel<Isa>>(A, std::move(W2T));
          }};
}
#endif

OpKernels seKernels() {
  OpKernels K;
  K.Domain = kSqueezeExcitationDomain;
  K.OpType = kSqueezeExcitationOp;
  K.Variants.push_back({"f32_squeeze_excitation__ref", 0, typesOk,
                        [](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
                          ASSIGN_OR_RETURN(const SeAttrs A, parseSeAttrs(I.N));
                          return makeKernel<SeRefKernel>(A);
                        }});
#ifdef OPT_SIMD_X86
  K.Variants.push_back(seSimdVariant<SeAvx512>(30, simdAvx512));
  K.Variants.push_back(seSimdVariant<SeAvx2>(25, simdAvx2));
#endif
  K.TestCases = seCases;
  return K;
}

OPT_REGISTER_SCHEMA(SqueezeExcitation, seSchema());
OPT_REGISTER_KERNELS(SqueezeExcitation, seKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
