// Vectorizable float32 approximations (see MathApprox.h). Written as branch-free scalar code
// that GCC vectorizes; target_clones builds AVX-512, AVX2 and baseline versions of each loop.
#include "backends/native/ops/common/MathApprox.h"
#include "backends/native/ops/common/VecMath256.h"
#include "backends/native/ops/common/VecMath512.h"
#include "core/CpuFeatures.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#endif

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace approx {
namespace {

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define OPT_MATH_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define OPT_MATH_CLONES
#endif

inline float bitsToFloat(int32_t B) {
  float F;
  std::memcpy(&F, &B, 4);
  return F;
}

/// exp(x) for x in float range: Cody-Waite reduction by ln2 and a degree-6 polynomial (Cephes).
inline float expApprox(float X) {
  X = X < -87.0f ? -87.0f : (X > 88.0f ? 88.0f : X);
  const float Magic = 12582912.0f; // 1.5 * 2^23: adding it rounds to an integer
  const float N = (X * 1.44269504088896341f + Magic) - Magic;
  const float R = (X - N * 0.693359375f) - N * -2.12194440e-4f;
  float P = 1.9875691500E-4f;
  P = P * R + 1.3981999507E-3f;
  P = P * R + 8.3334519073E-3f;
  P = P * R + 4.1665795894E-2f;
  P = P * R + 1.6666665459E-1f;
  P = P * R + 5.0000001201E-1f;
  const float E = P * R * R + R + 1.0f;
  // NaN (X was NaN) has no integer value: scale by 2^0 instead, E is NaN already.
  const int32_t Ni = N == N ? static_cast<int32_t>(N) : 0;
  return E * bitsToFloat((Ni + 127) << 23);
}

inline float tanhApprox(float X) {
  const float A = X < 0 ? -X : X;
  // Large |x|: 1 - 2 / (exp(2|x|) + 1); small |x|: odd Taylor series (no cancellation).
  const float Big = 1.0f - 2.0f / (expApprox(2.0f * A) + 1.0f);
  const float X2 = X * X;
  const float Small = X * (1.0f + X2 * (-1.0f / 3 + X2 * (2.0f / 15 + X2 * (-17.0f / 315 + X2 * (62.0f / 2835)))));
  const float T = X < 0 ? -Big : Big;
  return A < 0.125f ? Small : T;
}

inline float erfApprox(float X) {
  const float A = X < 0 ? -X : X;
  // |x| < 0.5: Maclaurin series; otherwise Abramowitz-Stegun 7.1.26 (abs. error <= 1.5e-7).
  const float X2 = X * X;
  const float Small =
      1.1283791670955126f * X *
      (1.0f + X2 * (-1.0f / 3 + X2 * (1.0f / 10 + X2 * (-1.0f / 42 + X2 * (1.0f / 216 + X2 * (-1.0f / 1320))))));
  const float T = 1.0f / (1.0f + 0.3275911f * A);
  const float Poly =
      T * (0.254829592f + T * (-0.284496736f + T * (1.421413741f + T * (-1.453152027f + T * 1.061405429f))));
  const float Big = 1.0f - Poly * expApprox(-A * A);
  const float S = X < 0 ? -Big : Big;
  return A < 0.5f ? Small : S;
}

} // namespace

OPT_MATH_CLONES void expF32(const float *X, float *Y, size_t N) {
  for (size_t I = 0; I < N; ++I)
    Y[I] = expApprox(X[I]);
}

OPT_MATH_CLONES void sigmoidF32(const float *X, float *Y, size_t N) {
  for (size_t I = 0; I < N; ++I)
    Y[I] = 1.0f / (1.0f + expApprox(-X[I]));
}

OPT_MATH_CLONES void tanhF32(const float *X, float *Y, size_t N) {
  for (size_t I = 0; I < N; ++I)
    Y[I] = tanhApprox(X[I]);
}

OPT_MATH_CLONES void erfF32(const float *X, float *Y, size_t N) {
  for (size_t I = 0; I < N; ++I)
    Y[I] = erfApprox(X[I]);
}

OPT_MATH_CLONES void geluErfF32Generic(const float *X, float *Y, size_t N) {
  for (size_t I = 0; I < N; ++I)
    Y[I] = 0.5f * X[I] * (1.0f + erfApprox(X[I] * 0.70710678118654752f));
}

OPT_MATH_CLONES void geluTanhF32(const float *X, float *Y, size_t N) {
  for (size_t I = 0; I < N; ++I) {
    const float V = X[I];
    Y[I] = 0.5f * V * (1.0f + tanhApprox(0.7978845608028654f * (V + 0.044715f * V * V * V)));
  }
}

namespace {
constexpr size_t Lanes = 16; // partial results per reduction: one AVX-512 register of floats

inline float maxOf(float A, float B) { return A > B ? A : B; } // B wins on NaN (maxps order)
} // namespace

OPT_MATH_CLONES void softmaxF32Generic(const float *X, float *Y, size_t N) {
  if (N == 0)
    return;
  float M[Lanes];
  for (size_t J = 0; J < Lanes; ++J)
    M[J] = X[0];
  size_t I = 0;
  for (; I + Lanes <= N; I += Lanes)
    for (size_t J = 0; J < Lanes; ++J)
      M[J] = maxOf(M[J], X[I + J]);
  float Max = X[0];
  for (size_t J = 0; J < Lanes; ++J)
    Max = maxOf(Max, M[J]);
  for (size_t K = I; K < N; ++K)
    Max = maxOf(Max, X[K]);
  float S[Lanes] = {};
  for (I = 0; I + Lanes <= N; I += Lanes)
    for (size_t J = 0; J < Lanes; ++J) {
      const float E = expApprox(X[I + J] - Max);
      Y[I + J] = E;
      S[J] += E;
    }
  float Sum = 0;
  for (size_t K = I; K < N; ++K)
    Sum += (Y[K] = expApprox(X[K] - Max));
  for (size_t J = 0; J < Lanes; ++J)
    Sum += S[J];
  const float Inv = 1.0f / Sum;
  for (size_t K = 0; K < N; ++K)
    Y[K] *= Inv;
}

OPT_MATH_CLONES float sumF32(const float *X, size_t N) {
  float S[Lanes] = {};
  size_t I = 0;
  for (; I + Lanes <= N; I += Lanes)
    for (size_t J = 0; J < Lanes; ++J)
      S[J] += X[I + J];
  float Sum = 0;
  for (size_t K = I; K < N; ++K)
    Sum += X[K];
  for (size_t J = 0; J < Lanes; ++J)
    Sum += S[J];
  return Sum;
}

OPT_MATH_CLONES void layerNormF32Generic(const float *X, float *Y, size_t N, const float *Scale, const float *Bias,
                                  float Epsilon, float *MeanOut, float *InvStdOut) {
  const float Mean = N ? sumF32(X, N) / static_cast<float>(N) : 0.0f;
  float Q[Lanes] = {};
  size_t I;
  for (I = 0; I + Lanes <= N; I += Lanes)
    for (size_t J = 0; J < Lanes; ++J) {
      const float D = X[I + J] - Mean;
      Q[J] += D * D;
    }
  float Sq = 0;
  for (size_t K = I; K < N; ++K)
    Sq += (X[K] - Mean) * (X[K] - Mean);
  for (size_t J = 0; J < Lanes; ++J)
    Sq += Q[J];
  const float Var = N ? Sq / static_cast<float>(N) : 0.0f;
  const float Inv = 1.0f / std::sqrt(Var + Epsilon);
  if (Bias)
    for (size_t K = 0; K < N; ++K)
      Y[K] = (X[K] - Mean) * Inv * Scale[K] + Bias[K];
  else
    for (size_t K = 0; K < N; ++K)
      Y[K] = (X[K] - Mean) * Inv * Scale[K];
  if (MeanOut)
    *MeanOut = Mean;
  if (InvStdOut)
    *InvStdOut = Inv;
}

// --- explicit AVX-512 loops for the hot paths (softmax rows, GELU, layer norm) ------------------
// GCC's vectorization of the generic loops above leaves the reductions and the exp's integer
// scaling partly scalar; these run the same math 16 lanes at a time (the exp's 2^n by scalef).
#if defined(__GNUC__) && defined(__x86_64__)
#define OPT_MATH_AVX512 1
#define OPT_AVX512 __attribute__((target("avx512f")))
// GCC 12 flags the _mm512_undefined_ps() inside the masked / max / min intrinsics as
// maybe-uninitialized (a false positive, as in Gemm.cpp).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace {

bool haveAvx512() {
  static const bool Have = cpuFeatures().AVX512F;
  return Have;
}

using vec512::exp2Neg512;
using vec512::exp512;
using vec512::gelu512;
using vec512::set1;

inline __mmask16 tailMask(size_t Left) { return static_cast<__mmask16>((1u << Left) - 1u); }

bool haveAvx2Fma() {
  static const bool Have = cpuFeatures().avx2Fma();
  return Have;
}

#define OPT_AVX2_FMA __attribute__((target("avx2,fma")))

OPT_AVX2_FMA void geluErfAvx2(const float *X, float *Y, size_t N) {
  size_t I = 0;
  for (; I + 8 <= N; I += 8)
    _mm256_storeu_ps(Y + I, vec256::geluErf256(_mm256_loadu_ps(X + I)));
  if (I < N) {
    alignas(32) float In[8] = {}, Out[8];
    for (size_t K = I; K < N; ++K)
      In[K - I] = X[K];
    _mm256_store_ps(Out, vec256::geluErf256(_mm256_load_ps(In)));
    for (size_t K = I; K < N; ++K)
      Y[K] = Out[K - I];
  }
}

/// softmaxAvx512 on 8 lanes: exp(x - max) = 2^((x - max) log2 e) by vec256::exp2NonPos256 (0 below
/// 2^-126), two accumulators for the sum, the tail through masked loads and stores.
OPT_AVX2_FMA void softmaxAvx2(const float *X, float *Y, size_t N) {
  if (N == 0)
    return;
  const size_t Full = N & ~static_cast<size_t>(7);
  const __m256i Tail = vec256::lanesBelow256(static_cast<int64_t>(N - Full));
  const __m256 NegInf = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  __m256 M0 = NegInf, M1 = NegInf;
  size_t I = 0;
  for (; I + 16 <= N; I += 16) {
    M0 = _mm256_max_ps(M0, _mm256_loadu_ps(X + I));
    M1 = _mm256_max_ps(M1, _mm256_loadu_ps(X + I + 8));
  }
  if (I < Full)
    M0 = _mm256_max_ps(M0, _mm256_loadu_ps(X + I));
  // Masked-off lanes load 0: blend -inf there. max(a, NaN) keeps the NaN (value second).
  if (Full < N)
    M1 = _mm256_max_ps(M1, _mm256_blendv_ps(NegInf, _mm256_maskload_ps(X + Full, Tail), _mm256_castsi256_ps(Tail)));
  const __m256 Max = _mm256_set1_ps(vec256::reduceMax256(_mm256_max_ps(M0, M1)));
  const __m256 L2e = _mm256_set1_ps(1.44269504088896341f);
#define OPT_SOFTMAX_EXP(V) vec256::exp2NonPos256(_mm256_mul_ps(_mm256_sub_ps((V), Max), L2e))
  __m256 S0 = _mm256_setzero_ps(), S1 = _mm256_setzero_ps();
  for (I = 0; I + 16 <= N; I += 16) {
    const __m256 E0 = OPT_SOFTMAX_EXP(_mm256_loadu_ps(X + I));
    const __m256 E1 = OPT_SOFTMAX_EXP(_mm256_loadu_ps(X + I + 8));
    _mm256_storeu_ps(Y + I, E0);
    _mm256_storeu_ps(Y + I + 8, E1);
    S0 = _mm256_add_ps(S0, E0), S1 = _mm256_add_ps(S1, E1);
  }
  if (I < Full) {
    const __m256 E = OPT_SOFTMAX_EXP(_mm256_loadu_ps(X + I));
    _mm256_storeu_ps(Y + I, E);
    S0 = _mm256_add_ps(S0, E);
  }
  if (Full < N) {
    const __m256 E = _mm256_and_ps(OPT_SOFTMAX_EXP(_mm256_maskload_ps(X + Full, Tail)), _mm256_castsi256_ps(Tail));
    _mm256_maskstore_ps(Y + Full, Tail, E);
    S1 = _mm256_add_ps(S1, E);
  }
#undef OPT_SOFTMAX_EXP
  const __m256 Inv = _mm256_set1_ps(1.0f / vec256::reduceAdd256(_mm256_add_ps(S0, S1)));
  for (I = 0; I < Full; I += 8)
    _mm256_storeu_ps(Y + I, _mm256_mul_ps(_mm256_loadu_ps(Y + I), Inv));
  if (Full < N)
    _mm256_maskstore_ps(Y + Full, Tail, _mm256_mul_ps(_mm256_maskload_ps(Y + Full, Tail), Inv));
}

OPT_AVX512 void geluErfAvx512(const float *X, float *Y, size_t N) {
  size_t I = 0;
  for (; I + 16 <= N; I += 16)
    _mm512_storeu_ps(Y + I, gelu512(_mm512_loadu_ps(X + I)));
  if (I < N) {
    const __mmask16 M = tailMask(N - I);
    _mm512_mask_storeu_ps(Y + I, M, gelu512(_mm512_maskz_loadu_ps(M, X + I)));
  }
}

OPT_AVX512 void softmaxAvx512(const float *X, float *Y, size_t N) {
  if (N == 0)
    return;
  __m512 Mv = set1(-std::numeric_limits<float>::infinity());
  size_t I = 0;
  for (; I + 16 <= N; I += 16)
    Mv = _mm512_max_ps(Mv, _mm512_loadu_ps(X + I));
  const __mmask16 Tail = tailMask(N - I);
  if (Tail)
    Mv = _mm512_mask_max_ps(Mv, Tail, Mv, _mm512_maskz_loadu_ps(Tail, X + I));
  // exp(x - max) = 2^((x - max) log2 e), the exponent <= 0 (clamped at -160, where 2^y is 0 in
  // float). x - max is formed first: rows of huge scores (a finfo.min mask on every key) keep
  // their differences. A NaN anywhere makes its exp, the sum, and so every output NaN.
  const __m512 Max = set1(_mm512_reduce_max_ps(Mv)), L2e = set1(1.44269504088896341f), Lo = set1(-160.0f);
#define OPT_SOFTMAX_EXP(V) exp2Neg512(_mm512_max_ps(Lo, _mm512_mul_ps(_mm512_sub_ps((V), Max), L2e)))
  __m512 S0 = _mm512_setzero_ps(), S1 = _mm512_setzero_ps();
  for (I = 0; I + 32 <= N; I += 32) {
    const __m512 E0 = OPT_SOFTMAX_EXP(_mm512_loadu_ps(X + I));
    const __m512 E1 = OPT_SOFTMAX_EXP(_mm512_loadu_ps(X + I + 16));
    _mm512_storeu_ps(Y + I, E0);
    _mm512_storeu_ps(Y + I + 16, E1);
    S0 = _mm512_add_ps(S0, E0), S1 = _mm512_add_ps(S1, E1);
  }
  for (; I + 16 <= N; I += 16) {
    const __m512 E = OPT_SOFTMAX_EXP(_mm512_loadu_ps(X + I));
    _mm512_storeu_ps(Y + I, E);
    S0 = _mm512_add_ps(S0, E);
  }
  if (Tail) {
    const __m512 E = OPT_SOFTMAX_EXP(_mm512_maskz_loadu_ps(Tail, X + I));
    _mm512_mask_storeu_ps(Y + I, Tail, E);
    S0 = _mm512_mask_add_ps(S0, Tail, S0, E);
  }
#undef OPT_SOFTMAX_EXP
  const __m512 Inv = set1(1.0f / _mm512_reduce_add_ps(_mm512_add_ps(S0, S1)));
  for (I = 0; I + 16 <= N; I += 16)
    _mm512_storeu_ps(Y + I, _mm512_mul_ps(_mm512_loadu_ps(Y + I), Inv));
  if (Tail)
    _mm512_mask_storeu_ps(Y + I, Tail, _mm512_mul_ps(_mm512_maskz_loadu_ps(Tail, Y + I), Inv));
}

/// 8 floats from P, or the lanes of M only (the others 0) when not Whole.
OPT_AVX2_FMA inline __m256 load256(const float *P, bool Whole, __m256i M) {
  return Whole ? _mm256_loadu_ps(P) : _mm256_maskload_ps(P, M);
}

OPT_AVX2_FMA inline void store256(float *P, __m256 V, bool Whole, __m256i M) {
  if (Whole)
    _mm256_storeu_ps(P, V);
  else
    _mm256_maskstore_ps(P, M, V);
}

/// 8 lanes of X + Residual (+ Bias2) from element I (lanes of M only; the others 0), stored to Y
/// when either is given (the sum the statistics and the output read).
OPT_AVX2_FMA inline __m256 skipSum256(const float *X, const float *Residual, const float *Bias2, float *Y, size_t I,
                                      bool Whole, __m256i M) {
  __m256 V = load256(X + I, Whole, M);
  if (Residual)
    V = _mm256_add_ps(V, load256(Residual + I, Whole, M));
  if (Bias2)
    V = _mm256_add_ps(V, load256(Bias2 + I, Whole, M));
  if (Residual || Bias2)
    store256(Y + I, V, Whole, M);
  return V;
}

/// Y[J..J+8) = (Src - mean) * invstd * Scale (+ Bias), the lanes of M only when not Whole.
OPT_AVX2_FMA inline void normOut256(const float *Src, const float *Scale, const float *Bias, float *Y, size_t J,
                                    __m256 Mean, __m256 Inv, bool Whole, __m256i M) {
  const __m256 D = _mm256_mul_ps(_mm256_sub_ps(load256(Src + J, Whole, M), Mean), Inv);
  const __m256 Sc = load256(Scale + J, Whole, M);
  store256(Y + J, Bias ? _mm256_fmadd_ps(D, Sc, load256(Bias + J, Whole, M)) : _mm256_mul_ps(D, Sc), Whole, M);
}

/// layerNormAvx512 on 8 lanes (AVX2 + FMA): the skip sum and its total, the centred sum of squares,
/// then the scaled output, four accumulators per reduction, the tail by masked loads and stores.
OPT_AVX2_FMA void layerNormAvx2(const float *X, const float *Residual, const float *Bias2, float *Y, size_t N,
                                const float *Scale, const float *Bias, float Epsilon, float *MeanOut,
                                float *InvStdOut) {
  const size_t Full = N & ~static_cast<size_t>(7), Full4 = N & ~static_cast<size_t>(31);
  const __m256i Tail = vec256::lanesBelow256(static_cast<int64_t>(N - Full)), All = _mm256_set1_epi32(-1);
  __m256 S0 = _mm256_setzero_ps(), S1 = _mm256_setzero_ps(), S2 = _mm256_setzero_ps(), S3 = _mm256_setzero_ps();
  size_t I = 0;
  for (; I < Full4; I += 32) {
    S0 = _mm256_add_ps(S0, skipSum256(X, Residual, Bias2, Y, I, true, All));
    S1 = _mm256_add_ps(S1, skipSum256(X, Residual, Bias2, Y, I + 8, true, All));
    S2 = _mm256_add_ps(S2, skipSum256(X, Residual, Bias2, Y, I + 16, true, All));
    S3 = _mm256_add_ps(S3, skipSum256(X, Residual, Bias2, Y, I + 24, true, All));
  }
  for (; I < Full; I += 8)
    S0 = _mm256_add_ps(S0, skipSum256(X, Residual, Bias2, Y, I, true, All));
  if (Full < N)
    S1 = _mm256_add_ps(S1, skipSum256(X, Residual, Bias2, Y, Full, false, Tail));
  const float *Src = Residual || Bias2 ? Y : X;
  const float Mean =
      N ? vec256::reduceAdd256(_mm256_add_ps(_mm256_add_ps(S0, S1), _mm256_add_ps(S2, S3))) / static_cast<float>(N)
        : 0.0f;
  const __m256 Mv = _mm256_set1_ps(Mean);
  __m256 Q0 = _mm256_setzero_ps(), Q1 = _mm256_setzero_ps(), Q2 = _mm256_setzero_ps(), Q3 = _mm256_setzero_ps();
  for (I = 0; I < Full4; I += 32) {
    const __m256 D0 = _mm256_sub_ps(_mm256_loadu_ps(Src + I), Mv), D1 = _mm256_sub_ps(_mm256_loadu_ps(Src + I + 8), Mv);
    const __m256 D2 = _mm256_sub_ps(_mm256_loadu_ps(Src + I + 16), Mv);
    const __m256 D3 = _mm256_sub_ps(_mm256_loadu_ps(Src + I + 24), Mv);
    Q0 = _mm256_fmadd_ps(D0, D0, Q0), Q1 = _mm256_fmadd_ps(D1, D1, Q1);
    Q2 = _mm256_fmadd_ps(D2, D2, Q2), Q3 = _mm256_fmadd_ps(D3, D3, Q3);
  }
  for (; I < Full; I += 8) {
    const __m256 D = _mm256_sub_ps(_mm256_loadu_ps(Src + I), Mv);
    Q0 = _mm256_fmadd_ps(D, D, Q0);
  }
  if (Full < N) {
    const __m256 D = _mm256_and_ps(_mm256_sub_ps(_mm256_maskload_ps(Src + Full, Tail), Mv), _mm256_castsi256_ps(Tail));
    Q1 = _mm256_fmadd_ps(D, D, Q1);
  }
  const float Var =
      N ? vec256::reduceAdd256(_mm256_add_ps(_mm256_add_ps(Q0, Q1), _mm256_add_ps(Q2, Q3))) / static_cast<float>(N)
        : 0.0f;
  const float Inv = 1.0f / std::sqrt(Var + Epsilon);
  const __m256 Iv = _mm256_set1_ps(Inv);
  for (I = 0; I < Full; I += 8)
    normOut256(Src, Scale, Bias, Y, I, Mv, Iv, true, All);
  if (Full < N)
    normOut256(Src, Scale, Bias, Y, Full, Mv, Iv, false, Tail);
  if (MeanOut)
    *MeanOut = Mean;
  if (InvStdOut)
    *InvStdOut = Inv;
}

/// 16 lanes of X + Residual (+ Bias2) from element I, stored to Y when either is given (the sum
/// the statistics and the output read).
OPT_AVX512 inline __m512 skipSum(const float *X, const float *Residual, const float *Bias2, float *Y, size_t I,
                                 __mmask16 M) {
  __m512 V = _mm512_maskz_loadu_ps(M, X + I);
  if (Residual)
    V = _mm512_add_ps(V, _mm512_maskz_loadu_ps(M, Residual + I));
  if (Bias2)
    V = _mm512_add_ps(V, _mm512_maskz_loadu_ps(M, Bias2 + I));
  if (Residual || Bias2)
    _mm512_mask_storeu_ps(Y + I, M, V);
  return V;
}

/// Sum of a row (Residual / Bias2 added first into Y when given: the skip connection), then the
/// centred sum of squares, then Y = (x - mean) * invstd * Scale + Bias. Four accumulators per
/// reduction: a row is a few hundred elements, so the adds' latency chain would otherwise set the pace.
OPT_AVX512 void layerNormAvx512(const float *X, const float *Residual, const float *Bias2, float *Y, size_t N,
                                const float *Scale, const float *Bias, float Epsilon, float *MeanOut,
                                float *InvStdOut) {
  const size_t Full = N & ~static_cast<size_t>(15), Full4 = N & ~static_cast<size_t>(63);
  const __mmask16 Tail = tailMask(N - Full);
  __m512 S0 = _mm512_setzero_ps(), S1 = _mm512_setzero_ps(), S2 = _mm512_setzero_ps(), S3 = _mm512_setzero_ps();
  size_t I = 0;
  for (; I < Full4; I += 64) {
    S0 = _mm512_add_ps(S0, skipSum(X, Residual, Bias2, Y, I, 0xFFFF));
    S1 = _mm512_add_ps(S1, skipSum(X, Residual, Bias2, Y, I + 16, 0xFFFF));
    S2 = _mm512_add_ps(S2, skipSum(X, Residual, Bias2, Y, I + 32, 0xFFFF));
    S3 = _mm512_add_ps(S3, skipSum(X, Residual, Bias2, Y, I + 48, 0xFFFF));
  }
  for (; I < N; I += 16)
    S0 = _mm512_add_ps(S0, skipSum(X, Residual, Bias2, Y, I, I < Full ? static_cast<__mmask16>(0xFFFF) : Tail));
  const float *Src = Residual || Bias2 ? Y : X;
  const float Mean =
      N ? _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(S0, S1), _mm512_add_ps(S2, S3))) / static_cast<float>(N) : 0.0f;
  const __m512 Mv = set1(Mean);
  __m512 Q0 = _mm512_setzero_ps(), Q1 = _mm512_setzero_ps(), Q2 = _mm512_setzero_ps(), Q3 = _mm512_setzero_ps();
  for (I = 0; I < Full4; I += 64) {
    const __m512 D0 = _mm512_sub_ps(_mm512_loadu_ps(Src + I), Mv), D1 = _mm512_sub_ps(_mm512_loadu_ps(Src + I + 16), Mv);
    const __m512 D2 = _mm512_sub_ps(_mm512_loadu_ps(Src + I + 32), Mv), D3 = _mm512_sub_ps(_mm512_loadu_ps(Src + I + 48), Mv);
    Q0 = _mm512_fmadd_ps(D0, D0, Q0), Q1 = _mm512_fmadd_ps(D1, D1, Q1);
    Q2 = _mm512_fmadd_ps(D2, D2, Q2), Q3 = _mm512_fmadd_ps(D3, D3, Q3);
  }
  for (; I < N; I += 16) {
    const __mmask16 M = I < Full ? static_cast<__mmask16>(0xFFFF) : Tail;
    const __m512 D = _mm512_maskz_sub_ps(M, _mm512_maskz_loadu_ps(M, Src + I), Mv);
    Q0 = _mm512_fmadd_ps(D, D, Q0);
  }
  const float Var =
      N ? _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(Q0, Q1), _mm512_add_ps(Q2, Q3))) / static_cast<float>(N) : 0.0f;
  const float Inv = 1.0f / std::sqrt(Var + Epsilon);
  const __m512 Iv = set1(Inv);
  for (I = 0; I < N; I += 16) {
    const __mmask16 M = I < Full ? static_cast<__mmask16>(0xFFFF) : Tail;
    const __m512 D = _mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(M, Src + I), Mv), Iv);
    const __m512 Sc = _mm512_maskz_loadu_ps(M, Scale + I);
    const __m512 R = Bias ? _mm512_fmadd_ps(D, Sc, _mm512_maskz_loadu_ps(M, Bias + I)) : _mm512_mul_ps(D, Sc);
    _mm512_mask_storeu_ps(Y + I, M, R);
  }
  if (MeanOut)
    *MeanOut = Mean;
  if (InvStdOut)
    *InvStdOut = Inv;
}

} // namespace
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif

void geluErfF32(const float *X, float *Y, size_t N) {
#ifdef OPT_MATH_AVX512
  if (haveAvx512())
    return geluErfAvx512(X, Y, N);
  if (haveAvx2Fma())
    return geluErfAvx2(X, Y, N);
#endif
  geluErfF32Generic(X, Y, N);
}

void softmaxF32(const float *X, float *Y, size_t N) {
#ifdef OPT_MATH_AVX512
  if (haveAvx512())
    return softmaxAvx512(X, Y, N);
  if (haveAvx2Fma())
    return softmaxAvx2(X, Y, N);
#endif
  softmaxF32Generic(X, Y, N);
}

void layerNormF32(const float *X, float *Y, size_t N, const float *Scale, const float *Bias, float Epsilon,
                  float *MeanOut, float *InvStdOut) {
#ifdef OPT_MATH_AVX512
  if (haveAvx512())
    return layerNormAvx512(X, nullptr, nullptr, Y, N, Scale, Bias, Epsilon, MeanOut, InvStdOut);
  if (haveAvx2Fma())
    return layerNormAvx2(X, nullptr, nullptr, Y, N, Scale, Bias, Epsilon, MeanOut, InvStdOut);
#endif
  layerNormF32Generic(X, Y, N, Scale, Bias, Epsilon, MeanOut, InvStdOut);
}

void skipLayerNormF32(const float *X, const float *Residual, const float *Bias2, float *Y, size_t N,
                      const float *Scale, const float *Bias, float Epsilon, float *MeanOut, float *InvStdOut) {
#ifdef OPT_MATH_AVX512
  if (haveAvx512())
    return layerNormAvx512(X, Residual, Bias2, Y, N, Scale, Bias, Epsilon, MeanOut, InvStdOut);
  if (haveAvx2Fma())
    return layerNormAvx2(X, Residual, Bias2, Y, N, Scale, Bias, Epsilon, MeanOut, InvStdOut);
#endif
  for (size_t I = 0; I < N; ++I) {
    float V = X[I];
    if (Residual)
      V += Residual[I];
    if (Bias2)
      V += Bias2[I];
    Y[I] = V;
  }
  layerNormF32Generic(Y, Y, N, Scale, Bias, Epsilon, MeanOut, InvStdOut);
}

} // namespace approx
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
