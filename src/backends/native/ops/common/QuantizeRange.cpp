// The shared AVX-512 / AVX2 quantization loops (see QuantizeRange.h).
#include "backends/native/ops/common/QuantizeRange.h"

#include <algorithm>
#include <cmath>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

#if defined(__x86_64__)
// GCC 12 flags the undefined pass-through operand inside the conversion intrinsics.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
namespace {

/// float32 -> u8/s8 with one scale and zero point, 16 per step: the division, rounding (half to
/// even) and saturation of the reference, in that order.
template <bool Signed>
__attribute__((target("avx512f,avx512bw,avx512vl"))) void quantizeRange(const float *X, uint8_t *Y, float Scale, int32_t Zp,
                                                                      size_t Lo, size_t Hi) {
  constexpr int RN = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  const __m512 S = _mm512_set1_ps(Scale);
  // Clamping before rounding at integer bounds (minus the zero point) equals clamping after it. NaN
  // is mapped to 0 first, as roundHalfEven does.
  const __m512 L = _mm512_set1_ps(static_cast<float>((Signed ? -128 : 0) - Zp));
  const __m512 H = _mm512_set1_ps(static_cast<float>((Signed ? 127 : 255) - Zp));
  const __m512i Z = _mm512_set1_epi32(Zp);
  for (size_t I = Lo; I < Hi; I += 16) {
    const __mmask16 M = Hi - I >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << (Hi - I)) - 1u);
    __m512 Q = _mm512_div_round_ps(_mm512_maskz_loadu_ps(M, X + I), S, RN);
    Q = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(Q, Q, _CMP_ORD_Q), Q); // NaN -> 0, as roundHalfEven
    Q = _mm512_min_ps(_mm512_max_ps(Q, L), H);
    const __m512i V = _mm512_add_epi32(_mm512_cvt_roundps_epi32(Q, RN), Z);
    _mm_mask_storeu_epi8(Y + I, M, _mm512_cvtepi32_epi8(V));
  }
}

/// quantizeRange on AVX2: 8 per step (division, NaN -> 0, clamp, round half to even: the MXCSR
/// default is not relied on), the last < 8 as the reference (float division, rint in double).
template <bool Signed>
__attribute__((target("avx2"))) void quantizeRange2(const float *X, uint8_t *Y, float Scale, int32_t Zp, size_t Lo,
                                                    size_t Hi) {
  const __m256 S = _mm256_set1_ps(Scale);
  const int32_t QLo = Signed ? -128 : 0, QHi = Signed ? 127 : 255;
  const __m256 L = _mm256_set1_ps(static_cast<float>(QLo - Zp)), H = _mm256_set1_ps(static_cast<float>(QHi - Zp));
  const __m256i Z = _mm256_set1_epi32(Zp);
  size_t I = Lo;
  for (; I + 8 <= Hi; I += 8) {
    __m256 Q = _mm256_div_ps(_mm256_loadu_ps(X + I), S);
    Q = _mm256_and_ps(Q, _mm256_cmp_ps(Q, Q, _CMP_ORD_Q)); // NaN -> 0
    Q = _mm256_min_ps(_mm256_max_ps(Q, L), H);
    Q = _mm256_round_ps(Q, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m256i V = _mm256_add_epi32(_mm256_cvttps_epi32(Q), Z); // in range: the packs keep it
    const __m128i W = _mm_packs_epi32(_mm256_castsi256_si128(V), _mm256_extracti128_si256(V, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i *>(Y + I), Signed ? _mm_packs_epi16(W, W) : _mm_packus_epi16(W, W));
  }
  for (; I < Hi; ++I) {
    const float Q = X[I] / Scale;
    const double R = std::isnan(Q) ? 0.0 : std::nearbyint(std::min(9.0e18, std::max(-9.0e18, static_cast<double>(Q))));
    const double V = std::min<double>(QHi, std::max<double>(QLo, R + Zp));
    Y[I] = static_cast<uint8_t>(static_cast<int32_t>(V));
  }
}

} // namespace
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

void quantizeRangeAvx2(const float *X, uint8_t *Y, float Scale, int32_t Zp, bool Signed, size_t Lo, size_t Hi) {
  if (Signed)
    quantizeRange2<true>(X, Y, Scale, Zp, Lo, Hi);
  else
    quantizeRange2<false>(X, Y, Scale, Zp, Lo, Hi);
}

__attribute__((target("avx2"))) void floatRangeAvx2(const float *X, size_t Lo, size_t Hi, float &Min, float &Max) {
  __m256 VMax = _mm256_setzero_ps(), VMin = _mm256_setzero_ps();
  size_t I = Lo;
  for (; I + 8 <= Hi; I += 8) {
    const __m256 V = _mm256_loadu_ps(X + I);
    VMax = _mm256_max_ps(V, VMax); // a NaN V gives the second operand: skipped
    VMin = _mm256_min_ps(V, VMin);
  }
  alignas(32) float A[8], B[8];
  _mm256_store_ps(A, VMax);
  _mm256_store_ps(B, VMin);
  float Mx = 0, Mn = 0;
  for (int K = 0; K < 8; ++K) {
    Mx = std::max(Mx, A[K]);
    Mn = std::min(Mn, B[K]);
  }
  for (; I < Hi; ++I) {
    Mx = std::max(Mx, X[I]);
    Mn = std::min(Mn, X[I]);
  }
  Min = Mn, Max = Mx;
}

void quantizeRangeAvx512(const float *X, uint8_t *Y, float Scale, int32_t Zp, bool Signed, size_t Lo, size_t Hi) {
  if (Signed)
    quantizeRange<true>(X, Y, Scale, Zp, Lo, Hi);
  else
    quantizeRange<false>(X, Y, Scale, Zp, Lo, Hi);
}
#else
void quantizeRangeAvx512(const float *, uint8_t *, float, int32_t, bool, size_t, size_t) {}
void quantizeRangeAvx2(const float *, uint8_t *, float, int32_t, bool, size_t, size_t) {}
void floatRangeAvx2(const float *, size_t, size_t, float &Min, float &Max) { Min = Max = 0; }
#endif

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
