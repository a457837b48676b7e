// Decode-step attention row loops (see KvStream.h): a portable version and an AVX-512 one.
#include "backends/native/ops/common/KvStream.h"

#include <algorithm>
#include <cstring>

#include "backends/native/ops/common/SimdDispatch.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

namespace {

void copyDotPortable(const KvRows &In, float *Dst, int64_t D, const float *Q, int64_t NQ, float *Scores,
                     int64_t ScoreStride) {
  for (int64_t T = 0; T < In.Rows; ++T) {
    const float *Row = In.Src + T * In.SrcStride;
    std::memcpy(Dst + T * D, Row, static_cast<size_t>(D) * sizeof(float));
    for (int64_t Qi = 0; Qi < NQ; ++Qi) {
      const float *Qr = Q + Qi * D;
      float Dot = 0;
      for (int64_t E = 0; E < D; ++E)
        Dot += Qr[E] * Row[E];
      Scores[Qi * ScoreStride + T] = Dot;
    }
  }
}

void copyAxpyPortable(const KvRows &In, float *Dst, int64_t D, const float *P, int64_t NQ, int64_t PStride,
                      float *Acc) {
  for (int64_t T = 0; T < In.Rows; ++T) {
    const float *Row = In.Src + T * In.SrcStride;
    std::memcpy(Dst + T * D, Row, static_cast<size_t>(D) * sizeof(float));
    for (int64_t Qi = 0; Qi < NQ; ++Qi) {
      const float Pt = P[Qi * PStride + T];
      float *A = Acc + Qi * D;
      for (int64_t E = 0; E < D; ++E)
        A[E] += Pt * Row[E];
    }
  }
}

#ifdef OPT_SIMD_X86
// GCC 12 flags the masked loads' pass-through operand of _mm512_maskz_loadu_ps.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
constexpr int64_t MaxQ = 8; // query rows kept in registers per pass over a row

OPT_TARGET_AVX512 inline void storeRow(float *Dst, __m512 V, __mmask16 M, bool Stream) {
  if (Stream)
    _mm512_stream_ps(Dst, V); // only with whole vectors (M all ones)
  else
    _mm512_mask_storeu_ps(Dst, M, V);
}

OPT_TARGET_AVX512 void copyDotAvx512(const KvRows &In, float *Dst, int64_t D, const float *Q, int64_t NQ,
                                     float *Scores, int64_t ScoreStride, bool Stream) {
  for (int64_t Q0 = 0; Q0 < NQ; Q0 += MaxQ) {
    const int64_t Nq = std::min(MaxQ, NQ - Q0);
    // Rows past the first query block are only read again (the copy is done).
    const bool Copy = Q0 == 0;
    for (int64_t T = 0; T < In.Rows; ++T) {
      const float *Row = In.Src + T * In.SrcStride;
      float *Out = Dst + T * D;
      __m512 Acc[MaxQ];
      for (int64_t Qi = 0; Qi < Nq; ++Qi)
        Acc[Qi] = _mm512_setzero_ps();
      for (int64_t E = 0; E < D; E += 16) {
        const __mmask16 M = D - E >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << (D - E)) - 1u);
        const __m512 V = _mm512_maskz_loadu_ps(M, Row + E);
        if (Copy)
          storeRow(Out + E, V, M, Stream);
        for (int64_t Qi = 0; Qi < Nq; ++Qi)
          Acc[Qi] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(M, Q + (Q0 + Qi) * D + E), V, Acc[Qi]);
      }
      for (int64_t Qi = 0; Qi < Nq; ++Qi)
        Scores[(Q0 + Qi) * ScoreStride + T] = _mm512_reduce_add_ps(Acc[Qi]);
    }
  }
}

OPT_TARGET_AVX512 void copyAxpyAvx512(const KvRows &In, float *Dst, int64_t D, const float *P, int64_t NQ,
                                      int64_t PStride, float *Acc, bool Stream) {
  for (int64_t T = 0; T < In.Rows; ++T) {
    const float *Row = In.Src + T * In.SrcStride;
    float *Out = Dst + T * D;
    for (int64_t E = 0; E < D; E += 16) {
      const __mmask16 M = D - E >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << (D - E)) - 1u);
      const __m512 V = _mm512_maskz_loadu_ps(M, Row + E);
      storeRow(Out + E, V, M, Stream);
      for (int64_t Qi = 0; Qi < NQ; ++Qi) {
        float *A = Acc + Qi * D + E;
        _mm512_mask_storeu_ps(A, M, _mm512_fmadd_ps(_mm512_set1_ps(P[Qi * PStride + T]), V, _mm512_maskz_loadu_ps(M, A)));
      }
    }
  }
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif

} // namespace

void kvCopyDot(const KvRows &In, float *Dst, int64_t D, const float *Q, int64_t NQ, float *Scores,
               int64_t ScoreStride, bool Stream, bool Avx512) {
#ifdef OPT_SIMD_X86
  if (Avx512 && simdAvx512())
    return copyDotAvx512(In, Dst, D, Q, NQ, Scores, ScoreStride, Stream && D % 16 == 0);
#endif
  (void)Stream;
  (void)Avx512;
  copyDotPortable(In, Dst, D, Q, NQ, Scores, ScoreStride);
}

void kvCopyAxpy(const KvRows &In, float *Dst, int64_t D, const float *P, int64_t NQ, int64_t PStride, float *Acc,
                bool Stream, bool Avx512) {
#ifdef OPT_SIMD_X86
  if (Avx512 && simdAvx512())
    return copyAxpyAvx512(In, Dst, D, P, NQ, PStride, Acc, Stream && D % 16 == 0);
#endif
  (void)Stream;
  (void)Avx512;
  copyAxpyPortable(In, Dst, D, P, NQ, PStride, Acc);
}

void kvStreamFence() {
#ifdef OPT_SIMD_X86
  _mm_sfence();
#endif
}

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
