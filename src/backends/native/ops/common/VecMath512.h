// AVX-512 versions of the approximations in MathApprox (exp, GELU), and the 16 x 16 register
// transpose the GEMM, Winograd and row-pipeline kernels share; inline so that kernels can
// apply them to values still in registers (the GEMM's write-back of a fused MatMul + Gelu) and
// give bit-identical results to the loops in MathApprox.cpp. Only call them after a run-time check
// for AVX-512F: the build does not use -march=native.
#pragma once

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#include <cstdint>

#define OPT_HAVE_VECMATH512 1

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace vec512 {

#define OPT_VEC512 __attribute__((target("avx512f"), always_inline))

OPT_VEC512 inline __m512 set1(float V) { return _mm512_set1_ps(V); }

/// exp(x), as expApprox: x clamped to [-104, 88.72] (NaN passes: the clamp keeps the value operand
/// second), Cody-Waite reduction, the same polynomial, 2^n applied by scalef (so results below the
/// float range are 0 instead of exp(-87)).
OPT_VEC512 inline __m512 exp512(__m512 X) {
  X = _mm512_max_ps(set1(-104.0f), _mm512_min_ps(set1(88.72283f), X));
  const __m512 N = _mm512_roundscale_ps(_mm512_mul_ps(X, set1(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 R = _mm512_fnmadd_ps(N, set1(0.693359375f), X);
  R = _mm512_fnmadd_ps(N, set1(-2.12194440e-4f), R);
  __m512 P = set1(1.9875691500E-4f);
  P = _mm512_fmadd_ps(P, R, set1(1.3981999507E-3f));
  P = _mm512_fmadd_ps(P, R, set1(8.3334519073E-3f));
  P = _mm512_fmadd_ps(P, R, set1(4.1665795894E-2f));
  P = _mm512_fmadd_ps(P, R, set1(1.6666665459E-1f));
  P = _mm512_fmadd_ps(P, R, set1(5.0000001201E-1f));
  P = _mm512_fmadd_ps(P, _mm512_mul_ps(R, R), _mm512_add_ps(R, set1(1.0f)));
  return _mm512_scalef_ps(P, N);
}

/// 2^x for x <= 0 with 2^x >= 2^-149 or x = -inf..: n = round(x), 2^(x - n) by a degree-5 fit on
/// [-1/2, 1/2] (relative error 1.6e-7), scaled by 2^n with scalef. No clamping: callers keep x in
/// [-150, 0] (or accept 0 below it).
OPT_VEC512 inline __m512 exp2Neg512(__m512 X) {
  const __m512 N = _mm512_roundscale_ps(X, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m512 R = _mm512_sub_ps(X, N);
  __m512 P = set1(1.3278164e-3f);
  P = _mm512_fmadd_ps(P, R, set1(9.6755559e-3f));
  P = _mm512_fmadd_ps(P, R, set1(5.5507079e-2f));
  P = _mm512_fmadd_ps(P, R, set1(2.4022119e-1f));
  P = _mm512_fmadd_ps(P, R, set1(6.9314694e-1f));
  P = _mm512_fmadd_ps(P, R, set1(1.0000001f));
  return _mm512_scalef_ps(P, N);
}

/// 2^x with x clamped to [-127, 127] (NaN stays NaN): exp2Neg512 of the clamped x (its
/// fit and scalef hold on both sides of 0). The exp of sigmoid and SiLU:
/// exp(a v) = 2^(a log2(e) v) with the log2(e) folded into the caller's constant, 12 operations per
/// vector instead of exp512's 15 (on Zen 4, where a 512-bit operation takes both 256-bit halves,
/// the activation's arithmetic is what bounds a fused SiLU epilogue).
OPT_VEC512 inline __m512 exp2Clamped512(__m512 X) {
  return exp2Neg512(_mm512_max_ps(set1(-127.0f), _mm512_min_ps(set1(127.0f), X)));
}

/// 0.5 x (1 + erf(x / sqrt 2)) = h + |h| erf(z) with h = x / 2, z = |x| / sqrt 2; erf(z) for z >= 0
/// by Abramowitz-Stegun 7.1.26, 1 - t (a1 + ... + a5 t^4) t exp(-z^2) with t = 1 / (1 + p z) (abs.
/// error <= 1.5e-7 over all z, so GELU's is at most 1.5e-7 |h|). Computed on w = z sqrt(log2 e),
/// so exp(-z^2) = 2^(-w^2); 1 / (1 + p z) by rcp14 and one Newton step; w is capped at 12 (2^-144:
/// erf is 1 in float long before), which also keeps x = +-inf finite inside.
OPT_VEC512 inline __m512 gelu512(__m512 X) {
  const __m512 H = _mm512_mul_ps(X, set1(0.5f));
  const __m512 W = _mm512_min_ps(set1(12.0f), _mm512_mul_ps(_mm512_abs_ps(X), set1(8.493218003e-01f)));
  const __m512 Den = _mm512_fmadd_ps(W, set1(2.727374809e-01f), set1(1.0f)); // 1 + p z
  __m512 T = _mm512_rcp14_ps(Den);
  T = _mm512_mul_ps(T, _mm512_fnmadd_ps(Den, T, set1(2.0f)));
  __m512 P = _mm512_fmadd_ps(T, set1(1.061405429f), set1(-1.453152027f));
  P = _mm512_fmadd_ps(P, T, set1(1.421413741f));
  P = _mm512_fmadd_ps(P, T, set1(-0.284496736f));
  P = _mm512_fmadd_ps(P, T, set1(0.254829592f));
  P = _mm512_mul_ps(P, T);
  const __m512 E = exp2Neg512(_mm512_fnmadd_ps(W, W, _mm512_setzero_ps())); // exp(-z^2)
  const __m512 Erf = _mm512_fnmadd_ps(P, E, set1(1.0f));
  return _mm512_fmadd_ps(_mm512_abs_ps(H), Erf, H);
}

// GCC 12 flags the undefined pass-through operands inside the shuffle intrinsics (false positive).
#if !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
/// Transposes the 16 x 16 block R in registers (R[i] lane j <- R[j] lane i).
OPT_VEC512 inline void transpose16x16(__m512 R[16]) {
  __m512 T[16];
  for (int I = 0; I < 16; I += 2) {
    T[I] = _mm512_unpacklo_ps(R[I], R[I + 1]);
    T[I + 1] = _mm512_unpackhi_ps(R[I], R[I + 1]);
  }
  for (int I = 0; I < 16; I += 4) {
    R[I] = _mm512_shuffle_ps(T[I], T[I + 2], 0x44);
    R[I + 1] = _mm512_shuffle_ps(T[I], T[I + 2], 0xEE);
    R[I + 2] = _mm512_shuffle_ps(T[I + 1], T[I + 3], 0x44);
    R[I + 3] = _mm512_shuffle_ps(T[I + 1], T[I + 3], 0xEE);
  }
  for (int H = 0; H < 16; H += 8)
    for (int I = 0; I < 4; ++I) {
      T[H + I] = _mm512_shuffle_f32x4(R[H + I], R[H + I + 4], 0x88);
      T[H + I + 4] = _mm512_shuffle_f32x4(R[H + I], R[H + I + 4], 0xDD);
    }
  for (int I = 0; I < 8; ++I) {
    R[I] = _mm512_shuffle_f32x4(T[I], T[I + 8], 0x88);
    R[I + 8] = _mm512_shuffle_f32x4(T[I], T[I + 8], 0xDD);
  }
}
#if !defined(__clang__)
#pragma GCC diagnostic pop
#endif

/// max(X, Y) where a NaN in either wins (max_ps alone returns Y when X is NaN), as MaxPool. (The
/// maskz form: GCC 12 warns about the undefined pass-through of the plain one.)
OPT_VEC512 inline __m512 nanMax512(__m512 X, __m512 Y) {
  return _mm512_mask_mov_ps(_mm512_maskz_max_ps(0xFFFF, X, Y), _mm512_cmp_ps_mask(X, X, _CMP_UNORD_Q), X);
}

/// 2x2 stride-2 unpadded max pooling of one plane (rows W floats apart, OH x OW outputs, rows OW
/// apart): per vector of 16 outputs, the vertical max of two input row segments, then the max of
/// lane pairs. A NaN wins. MaxPool's AVX-512 kernel, and Conv + MaxPool's band (SmallConv).
__attribute__((target("avx512f"))) inline void maxPool2x2Plane512(const float *In, int64_t W, float *Out, int64_t OH,
                                                                  int64_t OW) {
  const __m512i Even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  const __m512i Odd = _mm512_add_epi32(Even, _mm512_set1_epi32(1));
  for (int64_t Oh = 0; Oh < OH; ++Oh) {
    const float *R0 = In + 2 * Oh * W, *R1 = R0 + W;
    float *O = Out + Oh * OW;
    for (int64_t Ow0 = 0; Ow0 < OW; Ow0 += 16) {
      const int64_t N = OW - Ow0 < 16 ? OW - Ow0 : 16, Cols = 2 * N;
      const __mmask16 Lo = static_cast<__mmask16>(Cols >= 16 ? 0xFFFFu : (1u << Cols) - 1u);
      const __mmask16 Hi = static_cast<__mmask16>(Cols > 16 ? (1u << (Cols - 16)) - 1u : 0u);
      const __m512 V0 =
          nanMax512(_mm512_maskz_loadu_ps(Lo, R0 + 2 * Ow0), _mm512_maskz_loadu_ps(Lo, R1 + 2 * Ow0));
      const __m512 V1 =
          nanMax512(_mm512_maskz_loadu_ps(Hi, R0 + 2 * Ow0 + 16), _mm512_maskz_loadu_ps(Hi, R1 + 2 * Ow0 + 16));
      const __m512 R = nanMax512(_mm512_permutex2var_ps(V0, Even, V1), _mm512_permutex2var_ps(V0, Odd, V1));
      _mm512_mask_storeu_ps(O + Ow0, static_cast<__mmask16>((1u << N) - 1u), R);
    }
  }
}

} // namespace vec512
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium

#undef OPT_VEC512
#endif
