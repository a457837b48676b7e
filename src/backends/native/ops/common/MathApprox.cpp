// Vectorizable float32 approximations (see MathApprox.h). Written as branch-free scalar code
// that GCC vectorizes; target_clones builds AVX-512, AVX2 and baseline versions of each loop.
#include "backends/native/ops/common/MathApprox.h"

#include <cmath>
#include <cstdint>
#include <cstring>

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

OPT_MATH_CLONES void geluErfF32(const float *X, float *Y, size_t N) {
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

OPT_MATH_CLONES void softmaxF32(const float *X, float *Y, size_t N) {
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

OPT_MATH_CLONES void layerNormF32(const float *X, float *Y, size_t N, const float *Scale, const float *Bias,
                                  float Epsilon, float *MeanOut, float *InvStdOut) {
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
  const float Mean = N ? Sum / static_cast<float>(N) : 0.0f;
  float Q[Lanes] = {};
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

} // namespace approx
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
