// AVX2 + FMA versions of VecMath512's exp2 (the sigmoid / SiLU exponential) and GELU: inline so kernels
// apply them to values still in registers (the AVX2 GEMM tile's fused-activation epilogue, Act256).
// Only call them after a run-time check for AVX2 and FMA (simdAvx2()): the build does not use
// -march=native.
#pragma once

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>

#include <cstdint>

#define OPT_HAVE_VECMATH256 1

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace vec256 {

#define OPT_VEC256 __attribute__((target("avx2,fma"), always_inline))
// The lane masks need AVX2 only (so AVX2 kernels built without FMA inline them too).
#define OPT_VEC256_MASK __attribute__((target("avx2"), always_inline))

/// Lanes j in [Lo, Hi) set: the mask of an AVX2 maskload / maskstore.
OPT_VEC256_MASK inline __m256i laneRange256(int64_t Lo, int64_t Hi) {
  const __m256i Iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_and_si256(_mm256_cmpgt_epi32(Iota, _mm256_set1_epi32(static_cast<int>(Lo) - 1)),
                          _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(Hi)), Iota));
}

/// Lanes j < N set (a tail's mask).
OPT_VEC256_MASK inline __m256i lanesBelow256(int64_t N) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(N)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

OPT_VEC256 inline __m256 set1(float V) { return _mm256_set1_ps(V); }

/// The sum of the 8 lanes of V.
OPT_VEC256_MASK inline float reduceAdd256(__m256 V) {
  __m128 H = _mm_add_ps(_mm256_castps256_ps128(V), _mm256_extractf128_ps(V, 1));
  H = _mm_add_ps(H, _mm_movehl_ps(H, H));
  return _mm_cvtss_f32(_mm_add_ss(H, _mm_movehdup_ps(H)));
}

/// The largest of the 8 lanes of V (maxps order: a NaN in the second operand wins).
OPT_VEC256_MASK inline float reduceMax256(__m256 V) {
  __m128 H = _mm_max_ps(_mm256_castps256_ps128(V), _mm256_extractf128_ps(V, 1));
  H = _mm_max_ps(H, _mm_movehl_ps(H, H));
  return _mm_cvtss_f32(_mm_max_ss(H, _mm_movehdup_ps(H)));
}

/// 2^x for x in [-127, 127] (or NaN): n = round(x), 2^(x - n) by vec512::exp2Neg512's degree-5 fit
/// on [-1/2, 1/2] (relative error 1.6e-7), times 2^n built in the exponent field (AVX2 has no
/// scalef): n = -127 gives the field 0, so the result 0.
OPT_VEC256 inline __m256 exp2InRange256(__m256 X) {
  const __m256 N = _mm256_round_ps(X, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m256 R = _mm256_sub_ps(X, N);
  __m256 P = set1(1.3278164e-3f);
  P = _mm256_fmadd_ps(P, R, set1(9.6755559e-3f));
  P = _mm256_fmadd_ps(P, R, set1(5.5507079e-2f));
  P = _mm256_fmadd_ps(P, R, set1(2.4022119e-1f));
  P = _mm256_fmadd_ps(P, R, set1(6.9314694e-1f));
  P = _mm256_fmadd_ps(P, R, set1(1.0000001f));
  // 2^n: (n + 127) << 23 as float bits (for a NaN, P is NaN and so is the product).
  const __m256i E = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(N), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(P, _mm256_castsi256_ps(E));
}

/// 2^x with x clamped to [-126, 127] (NaN stays NaN): the clamp keeps n a normal exponent, so below
/// 2^-126 the result is 2^-126 times the fit instead of a denormal (sigmoid and SiLU add 1 to it).
OPT_VEC256 inline __m256 exp2Clamped256(__m256 X) {
  return exp2InRange256(_mm256_max_ps(set1(-126.0f), _mm256_min_ps(set1(127.0f), X))); // value second: NaN passes
}

/// 2^x for x <= 0 (a softmax's exponent, x - max): x clamped at -127 (NaN passes), so below about
/// 2^-126 the result is 0 (vec512's scalef keeps denormals there: differences under 2^-126).
OPT_VEC256 inline __m256 exp2NonPos256(__m256 X) { return exp2InRange256(_mm256_max_ps(set1(-127.0f), X)); }

/// GELU (erf form), vec512::gelu512's formula on 8 lanes: erf by Abramowitz-Stegun 7.1.26 with 1 /
/// (1 + p z) by a division (AVX2 has no rcp14) and exp(-z^2) = 2^(-w^2) by exp2Clamped256
/// (2^-126 times its fit below 2^-126, where 1 - P 2^n is 1 in float either way). The values of
/// approx::geluErfF32 on AVX2 CPUs; inline so the GEMM tile applies it to its registers.
OPT_VEC256 inline __m256 geluErf256(__m256 X) {
  const __m256 One = set1(1.0f), Abs = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
  const __m256 H = _mm256_mul_ps(X, set1(0.5f));
  const __m256 W = _mm256_min_ps(set1(12.0f), _mm256_mul_ps(_mm256_and_ps(X, Abs), set1(8.493218003e-01f)));
  const __m256 T = _mm256_div_ps(One, _mm256_fmadd_ps(W, set1(2.727374809e-01f), One));
  __m256 P = _mm256_fmadd_ps(T, set1(1.061405429f), set1(-1.453152027f));
  P = _mm256_fmadd_ps(P, T, set1(1.421413741f));
  P = _mm256_fmadd_ps(P, T, set1(-0.284496736f));
  P = _mm256_fmadd_ps(P, T, set1(0.254829592f));
  P = _mm256_mul_ps(P, T);
  // exp(-z^2) = 2^(-w^2); -w^2 <= 0, so exp2Clamped256's clamp only applies its floor of -126.
  const __m256 E = exp2Clamped256(_mm256_fnmadd_ps(W, W, _mm256_setzero_ps()));
  const __m256 Erf = _mm256_fnmadd_ps(P, E, One);
  return _mm256_fmadd_ps(_mm256_and_ps(H, Abs), Erf, H);
}

} // namespace vec256
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium

#undef OPT_VEC256
#undef OPT_VEC256_MASK
#endif
