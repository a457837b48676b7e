// The AVX-512 write-back of one GEMM tile, shared by the float32 microkernel (Gemm.cpp) and the
// bfloat16 dot-product one (GemmBf16Dot.cpp): R rows of one or two 16-float accumulators scaled by
// Alpha, plus C (Accumulate) or Beta * C, then the tile epilogue in registers (row bias, column
// bias, fused activation, GELU) and a masked store of the Nr valid columns. Inline: the
// accumulators stay in registers in the calling tile.
#pragma once

#include <cstdint>

#include "backends/native/ops/common/FusedActivation.h"
#include "backends/native/ops/common/Gemm.h"
#include "backends/native/ops/common/VecMath512.h"

#ifdef OPT_HAVE_VECMATH512
namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized" // the max/min intrinsics' pass-through operand
#endif

/// Half: only the first 16 columns exist (Acc1 is ignored and nothing is stored past column 15).
template <int R, bool Half>
__attribute__((target("avx512f"), always_inline)) inline void
writeBackTile512(const __m512 *Acc0, const __m512 *Acc1, float *C, int64_t Ldc, int64_t Nr, float Alpha, float Beta,
                 bool Accumulate, const GemmTileEpilogue *Ep) {
  const __m512 Al = _mm512_set1_ps(Alpha), Be = _mm512_set1_ps(Beta);
  const __mmask16 M0 = Nr >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << Nr) - 1u);
  const __mmask16 M1 = Nr >= 32   ? static_cast<__mmask16>(0xFFFF)
                       : Nr > 16 ? static_cast<__mmask16>((1u << (Nr - 16)) - 1u)
                                 : static_cast<__mmask16>(0);
  const bool Bias = Ep && Ep->Bias, Act = Ep && Ep->Act.on(), ColBias = Ep && Ep->ColBias, Gelu = Ep && Ep->Gelu;
  const Act512 Av(Act ? Ep->Act : FusedAct());
  const __m512 CB0 = ColBias ? _mm512_maskz_loadu_ps(M0, Ep->ColBias) : _mm512_setzero_ps();
  const __m512 CB1 = ColBias ? _mm512_maskz_loadu_ps(M1, Ep->ColBias + 16) : _mm512_setzero_ps();
  _Pragma("GCC unroll 16") for (int I = 0; I < R; ++I) {
    float *Row = C + I * Ldc;
    __m512 V0 = _mm512_mul_ps(Acc0[I], Al), V1 = _mm512_mul_ps(Acc1[I], Al);
    if (Accumulate) {
      V0 = _mm512_add_ps(V0, _mm512_maskz_loadu_ps(M0, Row));
      V1 = _mm512_add_ps(V1, _mm512_maskz_loadu_ps(M1, Row + 16));
    } else if (Beta != 0.0f) {
      V0 = _mm512_fmadd_ps(Be, _mm512_maskz_loadu_ps(M0, Row), V0);
      V1 = _mm512_fmadd_ps(Be, _mm512_maskz_loadu_ps(M1, Row + 16), V1);
    }
    if (Bias) {
      const __m512 Bv = _mm512_set1_ps(Ep->Bias[I]);
      V0 = _mm512_add_ps(V0, Bv), V1 = _mm512_add_ps(V1, Bv);
    }
    if (ColBias)
      V0 = _mm512_add_ps(V0, CB0), V1 = _mm512_add_ps(V1, CB1);
    if (Act) { // in registers (a clamp keeps NaN: the value operand second)
      V0 = Av(V0);
      if (!Half)
        V1 = Av(V1);
    }
    if (Gelu)
      V0 = vec512::gelu512(V0), V1 = vec512::gelu512(V1);
    _mm512_mask_storeu_ps(Row, M0, V0);
    if (!Half)
      _mm512_mask_storeu_ps(Row + 16, M1, V1);
  }
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
#endif
