// The shared AVX-512 quantization loop (see QuantizeRange.h).
#include "backends/native/ops/common/QuantizeRange.h"

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

} // namespace
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

void quantizeRangeAvx512(const float *X, uint8_t *Y, float Scale, int32_t Zp, bool Signed, size_t Lo, size_t Hi) {
  if (Signed)
    quantizeRange<true>(X, Y, Scale, Zp, Lo, Hi);
  else
    quantizeRange<false>(X, Y, Scale, Zp, Lo, Hi);
}
#else
void quantizeRangeAvx512(const float *, uint8_t *, float, int32_t, bool, size_t, size_t) {}
#endif

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
