// bfloat16 weight panels for the GEMM engine (see GemmBf16.h): packing, unpacking a panel for the
// float32 microkernels, and the GEMV slab steps that read the bf16 rows directly.
#include "backends/native/ops/common/GemmBf16.h"

#include <algorithm>

#include "backends/native/ops/common/SimdDispatch.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

namespace {

int64_t ceilDiv(int64_t A, int64_t B) { return (A + B - 1) / B; }

uint16_t loadBits(const unsigned char *Src, int64_t Index) {
  uint16_t V;
  std::memcpy(&V, Src + 2 * Index, sizeof(V));
  return V;
}

void unpackPanelPortable(const uint16_t *Src, int64_t Kc, int64_t NR, float *Dst) {
  for (int64_t K = 0; K < Kc; ++K, Src += NR, Dst += NR)
    for (int64_t J = 0; J < NR; ++J)
      Dst[J] = bfloat16::toFloat(Src[bf16Slot(J, NR)]);
}

void gemvSlabPortable(const float *A, const uint16_t *Slab, int64_t Kc, int64_t NR, float *Acc) {
  for (int64_t K = 0; K < Kc; ++K, Slab += NR) {
    const float Ak = A[K];
    for (int64_t J = 0; J < NR; ++J)
      Acc[J] += Ak * bfloat16::toFloat(Slab[bf16Slot(J, NR)]);
  }
}

#ifdef OPT_SIMD_X86
// GCC 12 flags the undefined pass-through operand inside the shift intrinsics.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
/// One packed row of 32 (16 slots of two bf16) as the two float vectors of columns 0-15, 16-31.
__attribute__((target("avx512f"), always_inline)) inline void splitRow32(__m512i Row, __m512 &Lo, __m512 &Hi) {
  Lo = _mm512_castsi512_ps(_mm512_slli_epi32(Row, 16));
  Hi = _mm512_castsi512_ps(_mm512_and_si512(Row, _mm512_set1_epi32(static_cast<int>(0xFFFF0000u))));
}

__attribute__((target("avx512f"))) void unpackPanel32Avx512(const uint16_t *Src, int64_t Kc, int64_t, float *Dst) {
  for (int64_t K = 0; K < Kc; ++K, Src += 32, Dst += 32) {
    __m512 Lo, Hi;
    splitRow32(_mm512_load_si512(Src), Lo, Hi);
    _mm512_store_ps(Dst, Lo);
    _mm512_store_ps(Dst + 16, Hi);
  }
}

/// How far ahead (in u16, 4 KiB) the bf16 GEMV prefetches its stream. The hardware prefetcher
/// alone left the LM head of the GPT decoder (512 x 32000, 32 MB of bf16) at 3.5-3.7 ms, 9 GB/s;
/// with this, 2.45-2.5 ms (13 GB/s), one thread, alternating runs (8 KiB: 2.5-3.0 ms).
constexpr int64_t PrefetchAhead = 2048;
/// Two independent accumulator pairs (even and odd k), as the float32 slab step: the stream, not
/// the FMA latency, sets the pace. Each pair of rows prefetches the two lines PrefetchAhead on.
__attribute__((target("avx512f,fma"))) void gemvSlab32Avx512(const float *A, const uint16_t *Slab, int64_t Kc, int64_t,
                                                              float *Acc) {
  __m512 E0 = _mm512_loadu_ps(Acc), E1 = _mm512_loadu_ps(Acc + 16);
  __m512 O0 = _mm512_setzero_ps(), O1 = _mm512_setzero_ps();
  int64_t K = 0;
  for (; K + 2 <= Kc; K += 2, Slab += 64) {
    _mm_prefetch(reinterpret_cast<const char *>(Slab + PrefetchAhead), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char *>(Slab + PrefetchAhead + 32), _MM_HINT_T0);
    __m512 L0, H0, L1, H1;
    splitRow32(_mm512_load_si512(Slab), L0, H0);
    splitRow32(_mm512_load_si512(Slab + 32), L1, H1);
    const __m512 X0 = _mm512_set1_ps(A[K]), X1 = _mm512_set1_ps(A[K + 1]);
    E0 = _mm512_fmadd_ps(X0, L0, E0);
    E1 = _mm512_fmadd_ps(X0, H0, E1);
    O0 = _mm512_fmadd_ps(X1, L1, O0);
    O1 = _mm512_fmadd_ps(X1, H1, O1);
  }
  if (K < Kc) {
    __m512 L0, H0;
    splitRow32(_mm512_load_si512(Slab), L0, H0);
    const __m512 X0 = _mm512_set1_ps(A[K]);
    E0 = _mm512_fmadd_ps(X0, L0, E0);
    E1 = _mm512_fmadd_ps(X0, H0, E1);
  }
  _mm512_storeu_ps(Acc, _mm512_add_ps(E0, O0));
  _mm512_storeu_ps(Acc + 16, _mm512_add_ps(E1, O1));
}

__attribute__((target("avx2,fma"), always_inline)) inline void splitRow16(__m256i Row, __m256 &Lo, __m256 &Hi) {
  Lo = _mm256_castsi256_ps(_mm256_slli_epi32(Row, 16));
  Hi = _mm256_castsi256_ps(_mm256_and_si256(Row, _mm256_set1_epi32(static_cast<int>(0xFFFF0000u))));
}

__attribute__((target("avx2,fma"))) void unpackPanel16Avx2(const uint16_t *Src, int64_t Kc, int64_t, float *Dst) {
  for (int64_t K = 0; K < Kc; ++K, Src += 16, Dst += 16) {
    __m256 Lo, Hi;
    splitRow16(_mm256_load_si256(reinterpret_cast<const __m256i *>(Src)), Lo, Hi);
    _mm256_store_ps(Dst, Lo);
    _mm256_store_ps(Dst + 8, Hi);
  }
}

__attribute__((target("avx2,fma"))) void gemvSlab16Avx2(const float *A, const uint16_t *Slab, int64_t Kc, int64_t,
                                                         float *Acc) {
  __m256 E0 = _mm256_loadu_ps(Acc), E1 = _mm256_loadu_ps(Acc + 8);
  __m256 O0 = _mm256_setzero_ps(), O1 = _mm256_setzero_ps();
  int64_t K = 0;
  for (; K + 2 <= Kc; K += 2, Slab += 32) {
    __m256 L0, H0, L1, H1;
    splitRow16(_mm256_load_si256(reinterpret_cast<const __m256i *>(Slab)), L0, H0);
    splitRow16(_mm256_load_si256(reinterpret_cast<const __m256i *>(Slab + 16)), L1, H1);
    const __m256 X0 = _mm256_set1_ps(A[K]), X1 = _mm256_set1_ps(A[K + 1]);
    E0 = _mm256_fmadd_ps(X0, L0, E0);
    E1 = _mm256_fmadd_ps(X0, H0, E1);
    O0 = _mm256_fmadd_ps(X1, L1, O0);
    O1 = _mm256_fmadd_ps(X1, H1, O1);
  }
  if (K < Kc) {
    __m256 L0, H0;
    splitRow16(_mm256_load_si256(reinterpret_cast<const __m256i *>(Slab)), L0, H0);
    const __m256 X0 = _mm256_set1_ps(A[K]);
    E0 = _mm256_fmadd_ps(X0, L0, E0);
    E1 = _mm256_fmadd_ps(X0, H0, E1);
  }
  _mm256_storeu_ps(Acc, _mm256_add_ps(E0, O0));
  _mm256_storeu_ps(Acc + 8, _mm256_add_ps(E1, O1));
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif

} // namespace

void packBBf16(const GemmMicroKernel &MK, int64_t K, int64_t N, const void *Bits, int64_t RowStride,
               int64_t ColStride, PackedB &Out, const std::function<void(int64_t, int64_t)> &AfterRows,
               int64_t KC) {
  const int64_t NR = MK.NR, Panels = ceilDiv(N, NR), Npad = Panels * NR;
  Out.K = K;
  Out.N = N;
  Out.Kc = KC;
  Out.Bf16 = true;
  Out.Data.resize(static_cast<size_t>(std::max<int64_t>(1, ceilDiv(Npad * K, 2))));
  uint16_t *Dst = reinterpret_cast<uint16_t *>(Out.Data.data());
  const unsigned char *Src = static_cast<const unsigned char *>(Bits);
  // Rows [R0, R1) of each K block at a time: GemmReleaseRows at most between AfterRows calls.
  const int64_t Step = AfterRows ? GemmReleaseRows : KC;
  for (int64_t K0 = 0; K0 < K; K0 += KC) {
    const int64_t Kc = std::min(KC, K - K0);
    for (int64_t R0 = 0; R0 < Kc; R0 += Step) {
      const int64_t R1 = std::min(Kc, R0 + Step);
      for (int64_t P = 0; P < Panels; ++P) {
        uint16_t *Panel = Dst + K0 * Npad + P * Kc * NR;
        const int64_t Cols = std::min(NR, N - P * NR);
        for (int64_t J = Cols; J < NR; ++J) // zero columns past N
          for (int64_t Kk = R0; Kk < R1; ++Kk)
            Panel[Kk * NR + bf16Slot(J, NR)] = 0;
        // Walk the source in its memory order: along a row, or (a transposed source) down k.
        if (ColStride == 1) {
          for (int64_t Kk = R0; Kk < R1; ++Kk)
            for (int64_t J = 0; J < Cols; ++J)
              Panel[Kk * NR + bf16Slot(J, NR)] = loadBits(Src, (K0 + Kk) * RowStride + P * NR + J);
        } else {
          for (int64_t J = 0; J < Cols; ++J)
            for (int64_t Kk = R0; Kk < R1; ++Kk)
              Panel[Kk * NR + bf16Slot(J, NR)] = loadBits(Src, (K0 + Kk) * RowStride + (P * NR + J) * ColStride);
        }
      }
      if (AfterRows)
        AfterRows(K0 + R0, K0 + R1);
    }
  }
}

void unpackBf16Panel(const GemmMicroKernel &MK, const uint16_t *Src, int64_t Kc, float *Dst) {
#ifdef OPT_SIMD_X86
  if (MK.Isa == GemmIsa::Avx512 && MK.NR == 32)
    return unpackPanel32Avx512(Src, Kc, 32, Dst);
  if (MK.Isa == GemmIsa::Avx2 && MK.NR == 16)
    return unpackPanel16Avx2(Src, Kc, 16, Dst);
#endif
  unpackPanelPortable(Src, Kc, MK.NR, Dst);
}

GemvBf16SlabFn gemvBf16SlabFor(const GemmMicroKernel &MK) {
#ifdef OPT_SIMD_X86
  if (MK.Isa == GemmIsa::Avx512 && MK.NR == 32)
    return gemvSlab32Avx512;
  if (MK.Isa == GemmIsa::Avx2 && MK.NR == 16)
    return gemvSlab16Avx2;
#else
  (void)MK; // one slab step: the portable one
#endif
  return gemvSlabPortable;
}

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
