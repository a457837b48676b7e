// SGEMM engine: panel packing, block scheduling over the thread pool, and the microkernels. The
// build does not use -march=native, so the AVX2/AVX-512 kernels are compiled with target
// attributes and only called after a run-time CPU check.
#include "backends/native/ops/common/Gemm.h"
#include "backends/native/ops/common/GemmBf16.h"
#include "backends/native/ops/common/GemmWriteBack512.h"
#include "backends/native/ops/common/MathApprox.h"
#include "backends/native/ops/common/ThreadScratch.h"
#include "backends/native/ops/common/Transpose256.h"
#include "backends/native/ops/common/VecMath256.h"
#include "backends/native/ops/common/VecMath512.h"
#include "core/CpuFeatures.h"

#include <algorithm>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define OPT_GEMM_X86 1
#endif
#if defined(__aarch64__) && defined(__ARM_NEON)
#include <arm_neon.h>
#define OPT_GEMM_NEON 1
#endif

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

namespace {

// K block: an A panel (MR x KC) and a B panel (KC x NR) stay in L1/L2 across a tile's loop. The
// default; a packed B carries its own (PackedB::Kc).
constexpr int64_t KC = GemmKC;

int64_t ceilDiv(int64_t A, int64_t B) { return (A + B - 1) / B; }

// --- portable microkernel: plain loops the compiler vectorizes with baseline SIMD -----------------
constexpr int64_t PortableMR = 4, PortableNR = 16;

#ifndef OPT_GEMM_NEON
void microPortable(const GemmTile &T) {
  const int64_t Kc = T.Kc, Lda = T.Lda, Ldc = T.Ldc, Mr = T.Mr, Nr = T.Nr;
  const float *A = T.A, *B = T.B;
  float *C = T.C;
  const float Alpha = T.Alpha, Beta = T.Beta;
  const bool Accumulate = T.Accumulate;
  const GemmTileEpilogue *Ep = T.Ep;
  float Acc[PortableMR][PortableNR] = {};
  if (Lda == 0) {
    for (int64_t K = 0; K < Kc; ++K) {
      const float *Ak = A + K * PortableMR;
      const float *Bk = B + K * PortableNR;
      for (int64_t I = 0; I < PortableMR; ++I)
        for (int64_t J = 0; J < PortableNR; ++J)
          Acc[I][J] += Ak[I] * Bk[J];
    }
  } else { // rows of the caller's matrix: only the tile's Mr rows exist
    for (int64_t I = 0; I < Mr; ++I)
      for (int64_t K = 0; K < Kc; ++K) {
        const float Av = A[I * Lda + K];
        const float *Bk = B + K * PortableNR;
        for (int64_t J = 0; J < PortableNR; ++J)
          Acc[I][J] += Av * Bk[J];
      }
  }
  for (int64_t I = 0; I < Mr; ++I) {
    float *Row = C + I * Ldc;
    for (int64_t J = 0; J < Nr; ++J) {
      const float V = Alpha * Acc[I][J];
      float R = Accumulate ? Row[J] + V : (Beta == 0.0f ? V : V + Beta * Row[J]);
      if (Ep) {
        if (Ep->Bias)
          R += Ep->Bias[I];
        if (Ep->ColBias)
          R += Ep->ColBias[J];
        R = Ep->Act(R);
      }
      Row[J] = R;
    }
    if (Ep && Ep->Gelu)
      approx::geluErfF32(Row, Row, static_cast<size_t>(Nr));
  }
}

#endif

#ifdef OPT_GEMM_NEON
// --- AArch64 NEON: up to 6 rows x 16 columns = 24 q-register accumulators -------------------------
// Per k: 4 loads of B (16 floats) and 6 scalars of A feed 24 FMAs (by-element: vfmaq_n_f32), the
// register budget of the 32 NEON registers (24 + 4 + A). Baseline on AArch64: no run-time check.
// Same panel widths as the portable kernel (NR 16), so packed layouts written 16 columns at a time
// (Winograd's) fit it.
constexpr int64_t NeonMR = 6, NeonNR = 16;

template <int R, bool Packed> inline void neonTile(const GemmTile &T) {
  float32x4_t Acc[R][4];
  for (int I = 0; I < R; ++I)
    for (int J = 0; J < 4; ++J)
      Acc[I][J] = vdupq_n_f32(0.0f);
  const float *A = T.A, *B = T.B;
  for (int64_t K = 0; K < T.Kc; ++K) {
    const float32x4_t B0 = vld1q_f32(B), B1 = vld1q_f32(B + 4), B2 = vld1q_f32(B + 8), B3 = vld1q_f32(B + 12);
    for (int I = 0; I < R; ++I) {
      const float Av = Packed ? A[I] : A[I * T.Lda + K];
      Acc[I][0] = vfmaq_n_f32(Acc[I][0], B0, Av);
      Acc[I][1] = vfmaq_n_f32(Acc[I][1], B1, Av);
      Acc[I][2] = vfmaq_n_f32(Acc[I][2], B2, Av);
      Acc[I][3] = vfmaq_n_f32(Acc[I][3], B3, Av);
    }
    if (Packed)
      A += NeonMR;
    B += NeonNR;
  }
  const GemmTileEpilogue *Ep = T.Ep;
  const bool Bias = Ep && Ep->Bias, Clamp = Ep && Ep->Act.Kind == ActKind::Clamp, ColBias = Ep && Ep->ColBias;
  const bool OtherAct = Ep && !Ep->Act.clampOnly(); // applied per element after the store
  const float32x4_t Lo = vdupq_n_f32(Clamp ? Ep->Act.Min : 0.0f), Hi = vdupq_n_f32(Clamp ? Ep->Act.Max : 0.0f);
  const bool Full = T.Nr == NeonNR;
  float Tmp[NeonNR];
  float32x4_t CB[4];
  for (int J = 0; J < 4; ++J)
    CB[J] = vdupq_n_f32(0.0f);
  if (ColBias) {
    std::fill(Tmp, Tmp + NeonNR, 0.0f);
    std::copy(Ep->ColBias, Ep->ColBias + T.Nr, Tmp);
    for (int J = 0; J < 4; ++J)
      CB[J] = vld1q_f32(Tmp + 4 * J);
  }
  for (int I = 0; I < R; ++I) {
    float *Row = T.C + I * T.Ldc;
    float32x4_t V[4];
    for (int J = 0; J < 4; ++J)
      V[J] = vmulq_n_f32(Acc[I][J], T.Alpha);
    if (T.Accumulate || T.Beta != 0.0f) {
      const float *Old = Row;
      if (!Full) {
        std::fill(Tmp, Tmp + NeonNR, 0.0f);
        std::copy(Row, Row + T.Nr, Tmp);
        Old = Tmp;
      }
      for (int J = 0; J < 4; ++J)
        V[J] = T.Accumulate ? vaddq_f32(V[J], vld1q_f32(Old + 4 * J)) : vfmaq_n_f32(V[J], vld1q_f32(Old + 4 * J), T.Beta);
    }
    for (int J = 0; J < 4; ++J) {
      if (Bias)
        V[J] = vaddq_f32(V[J], vdupq_n_f32(Ep->Bias[I]));
      if (ColBias)
        V[J] = vaddq_f32(V[J], CB[J]);
      if (Clamp) // FMAX / FMIN return NaN for a NaN operand: it passes through, as in the reference
        V[J] = vminq_f32(Hi, vmaxq_f32(Lo, V[J]));
    }
    if (Full) {
      for (int J = 0; J < 4; ++J)
        vst1q_f32(Row + 4 * J, V[J]);
    } else {
      for (int J = 0; J < 4; ++J)
        vst1q_f32(Tmp + 4 * J, V[J]);
      std::copy(Tmp, Tmp + T.Nr, Row);
    }
    if (OtherAct)
      for (int64_t J = 0; J < T.Nr; ++J)
        Row[J] = Ep->Act(Row[J]);
    if (Ep && Ep->Gelu)
      approx::geluErfF32(Row, Row, static_cast<size_t>(T.Nr));
  }
}

template <bool Packed> void neonRows(const GemmTile &T) {
  switch (T.Mr) {
  case 1: return neonTile<1, Packed>(T);
  case 2: return neonTile<2, Packed>(T);
  case 3: return neonTile<3, Packed>(T);
  case 4: return neonTile<4, Packed>(T);
  case 5: return neonTile<5, Packed>(T);
  case 6: return neonTile<6, Packed>(T);
  default: return;
  }
}

void microNeon(const GemmTile &T) { T.Lda == 0 ? neonRows<true>(T) : neonRows<false>(T); }
#endif

#ifdef OPT_GEMM_X86
// The x86 tiles below are templates on the row count R (so an edge tile of the last, partial
// panel does only its own rows' FMAs and, reading rows in place, never touches rows past M) and
// on the A layout: Packed reads a k-major panel (A[k * MR + i]); otherwise row i is A + i * Lda,
// k contiguous. Rows are addressed from one pointer per 3 rows plus Lda (scaled index, x1 / x2),
// which keeps a 12-row tile in 4 + 1 general registers.
#define OPT_UNROLL _Pragma("GCC unroll 16")

// --- AVX2 + FMA: up to 6 rows x 16 columns = 12 ymm accumulators ----------------------------------
constexpr int Avx2MR = 6, Avx2NR = 16;

template <int R, bool Packed>
__attribute__((target("avx2,fma"), always_inline)) inline void avx2Tile(int64_t Kc, const float *A, int64_t Lda,
                                                                        const float *B, float *C, int64_t Ldc,
                                                                        int64_t Nr, float Alpha, float Beta,
                                                                        bool Accumulate, const GemmTileEpilogue *Ep) {
  __m256 Acc0[R], Acc1[R];
  OPT_UNROLL for (int I = 0; I < R; ++I) Acc0[I] = _mm256_setzero_ps(), Acc1[I] = _mm256_setzero_ps();
  const float *Ab[2] = {A, A + (Packed ? 0 : 3 * Lda)};
  for (int64_t K = 0; K < Kc; ++K) {
    const __m256 B0 = _mm256_loadu_ps(B), B1 = _mm256_loadu_ps(B + 8);
    OPT_UNROLL for (int I = 0; I < R; ++I) {
      const __m256 Av = _mm256_broadcast_ss(Packed ? A + I : Ab[I / 3] + (I % 3) * Lda);
      Acc0[I] = _mm256_fmadd_ps(Av, B0, Acc0[I]), Acc1[I] = _mm256_fmadd_ps(Av, B1, Acc1[I]);
    }
    if (Packed)
      A += Avx2MR;
    else
      ++Ab[0], ++Ab[1];
    B += Avx2NR;
  }
  const __m256 Al = _mm256_set1_ps(Alpha), Be = _mm256_set1_ps(Beta);
  const __m256i Iota0 = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), Iota1 = _mm256_setr_epi32(8, 9, 10, 11, 12, 13, 14, 15);
  const __m256i NrV = _mm256_set1_epi32(static_cast<int>(Nr));
  // Lane j is stored when j < Nr.
  const __m256i M0 = _mm256_cmpgt_epi32(NrV, Iota0), M1 = _mm256_cmpgt_epi32(NrV, Iota1);
  const bool Bias = Ep && Ep->Bias, Clamp = Ep && Ep->Act.Kind == ActKind::Clamp, ColBias = Ep && Ep->ColBias;
  const bool OtherAct = Ep && !Ep->Act.clampOnly(); // in registers before the store (Act256)
  const Act256 Av(OtherAct ? Ep->Act : FusedAct());
  const bool Gelu = Ep && Ep->Gelu;
  const __m256 Lo = _mm256_set1_ps(Clamp ? Ep->Act.Min : 0.0f), Hi = _mm256_set1_ps(Clamp ? Ep->Act.Max : 0.0f);
  const bool Full = Nr == 16;
  const __m256 CB0 = ColBias ? (Full ? _mm256_loadu_ps(Ep->ColBias) : _mm256_maskload_ps(Ep->ColBias, M0)) : _mm256_setzero_ps();
  const __m256 CB1 =
      ColBias ? (Full ? _mm256_loadu_ps(Ep->ColBias + 8) : _mm256_maskload_ps(Ep->ColBias + 8, M1)) : _mm256_setzero_ps();
  OPT_UNROLL for (int I = 0; I < R; ++I) {
    float *Row = C + I * Ldc;
    __m256 V0 = _mm256_mul_ps(Acc0[I], Al), V1 = _mm256_mul_ps(Acc1[I], Al);
    if (Accumulate || Beta != 0.0f) {
      const __m256 C0 = Full ? _mm256_loadu_ps(Row) : _mm256_maskload_ps(Row, M0);
      const __m256 C1 = Full ? _mm256_loadu_ps(Row + 8) : _mm256_maskload_ps(Row + 8, M1);
      if (Accumulate)
        V0 = _mm256_add_ps(V0, C0), V1 = _mm256_add_ps(V1, C1);
      else
        V0 = _mm256_fmadd_ps(Be, C0, V0), V1 = _mm256_fmadd_ps(Be, C1, V1);
    }
    if (Bias) {
      const __m256 Bv = _mm256_set1_ps(Ep->Bias[I]);
      V0 = _mm256_add_ps(V0, Bv), V1 = _mm256_add_ps(V1, Bv);
    }
    if (ColBias)
      V0 = _mm256_add_ps(V0, CB0), V1 = _mm256_add_ps(V1, CB1);
    if (Clamp) { // max/min with the value second so NaN passes through
      V0 = _mm256_min_ps(Hi, _mm256_max_ps(Lo, V0)), V1 = _mm256_min_ps(Hi, _mm256_max_ps(Lo, V1));
    }
    if (OtherAct)
      V0 = Av(V0), V1 = Av(V1);
    if (Gelu) // in registers: approx::geluErfF32's AVX2 values
      V0 = vec256::geluErf256(V0), V1 = vec256::geluErf256(V1);
    if (Full)
      _mm256_storeu_ps(Row, V0), _mm256_storeu_ps(Row + 8, V1);
    else
      _mm256_maskstore_ps(Row, M0, V0), _mm256_maskstore_ps(Row + 8, M1, V1);
  }
}

template <bool Packed>
__attribute__((target("avx2,fma"))) void avx2Rows(int64_t Kc, const float *A, int64_t Lda, const float *B, float *C,
                                                  int64_t Ldc, int64_t Mr, int64_t Nr, float Alpha, float Beta,
                                                  bool Accumulate, const GemmTileEpilogue *Ep) {
  switch (Mr) {
#define OPT_CASE(Rows)                                                                                                 \
  case Rows: return avx2Tile<Rows, Packed>(Kc, A, Lda, B, C, Ldc, Nr, Alpha, Beta, Accumulate, Ep);
    OPT_CASE(1) OPT_CASE(2) OPT_CASE(3) OPT_CASE(4) OPT_CASE(5) OPT_CASE(6)
#undef OPT_CASE
  default: return;
  }
}

void microAvx2(const GemmTile &T) {
  if (T.Lda == 0)
    avx2Rows<true>(T.Kc, T.A, 0, T.B, T.C, T.Ldc, T.Mr, T.Nr, T.Alpha, T.Beta, T.Accumulate, T.Ep);
  else
    avx2Rows<false>(T.Kc, T.A, T.Lda, T.B, T.C, T.Ldc, T.Mr, T.Nr, T.Alpha, T.Beta, T.Accumulate, T.Ep);
}

/// One Kc x 16 panel (k-major) of B whose column j is Src + j * Lds with k contiguous (a transposed
/// operand: attention's K^T), columns past Cols zero: two 8-column halves, 8 k at a time by 8 x 8
/// register transposes (the element-wise gather this replaces took 8% of BERT-mini's attention).
__attribute__((target("avx2"))) void packPanelTransposedAvx2(float *Panel, const float *Src, int64_t Lds, int64_t Kc,
                                                            int64_t Cols) {
  for (int64_t J0 = 0; J0 < Avx2NR; J0 += 8) {
    const int64_t Rows = std::max<int64_t>(0, std::min<int64_t>(8, Cols - J0));
    for (int64_t K0 = 0; K0 < Kc; K0 += 8) {
      const int64_t Kw = std::min<int64_t>(8, Kc - K0);
      const __m256i M = vec256::lanesBelow256(Kw);
      __m256 R[8];
      for (int I = 0; I < 8; ++I)
        R[I] = I >= Rows  ? _mm256_setzero_ps()
               : Kw == 8 ? _mm256_loadu_ps(Src + (J0 + I) * Lds + K0)
                         : _mm256_maskload_ps(Src + (J0 + I) * Lds + K0, M);
      vec256::transpose8x8(R);
      for (int64_t I = 0; I < Kw; ++I)
        _mm256_storeu_ps(Panel + (K0 + I) * Avx2NR + J0, R[I]);
    }
  }
}

// --- AVX-512F: up to 12 rows x 32 columns = 24 zmm accumulators, masked column edges -------------
// Per k: 2 loads of B and 12 broadcasts of A feed 24 FMAs (the 6x32 tile this replaces needed 8
// loads per 12 FMAs and ran at ~60% of FMA peak). 24 + 2 B registers leave the A broadcasts
// folded into the FMAs' memory operands.
constexpr int Avx512MR = 12, Avx512NR = 32;

// GCC 12 flags the _mm512_undefined_ps() inside _mm512_max_ps/_mm512_min_ps as maybe-uninitialized
// once per instantiated tile (a false positive: the intrinsic's pass-through operand is unused).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

// Half: the tile's columns end within the first 16 (the last panel of a 14x14 plane: 196 = 6 * 32
// + 4); only the first vector of each row is computed (about half the time of a full tile).
template <int R, bool Packed, bool Half>
__attribute__((target("avx512f,fma"), always_inline)) inline void
avx512Tile(int64_t Kc, const float *A, int64_t Lda, const float *B, const float *BNext, float *C, int64_t Ldc,
           int64_t Nr, float Alpha, float Beta, bool Accumulate, const GemmTileEpilogue *Ep) {
  __m512 Acc0[R], Acc1[R];
  OPT_UNROLL for (int I = 0; I < R; ++I) Acc0[I] = _mm512_setzero_ps(), Acc1[I] = _mm512_setzero_ps();
  const float *Ab[4] = {A, A + (Packed ? 0 : 3 * Lda), A + (Packed ? 0 : 6 * Lda), A + (Packed ? 0 : 9 * Lda)};
  // Unrolled by 2: loop overhead off the FMA ports (+2-5% in a same-process microbenchmark; 4 was no better).
  _Pragma("GCC unroll 2") for (int64_t K = 0; K < Kc; ++K) {
    if (BNext) { // the next B panel (from L3 or memory) into L2, two lines per k, while this tile computes
      _mm_prefetch(reinterpret_cast<const char *>(BNext + K * Avx512NR), _MM_HINT_T1);
      _mm_prefetch(reinterpret_cast<const char *>(BNext + K * Avx512NR + 16), _MM_HINT_T1);
    }
    const __m512 B0 = _mm512_loadu_ps(B), B1 = Half ? B0 : _mm512_loadu_ps(B + 16);
    // A packed panel streams from L2 (or further: large weights); 16 k ahead covers its latency.
    // (Rows read in place are left to the hardware prefetchers: prefetching them measured the same.)
    if (Packed)
      _mm_prefetch(reinterpret_cast<const char *>(A + 16 * Avx512MR), _MM_HINT_T0);
    OPT_UNROLL for (int I = 0; I < R; ++I) {
      const __m512 Av = _mm512_set1_ps(Packed ? A[I] : Ab[I / 3][(I % 3) * Lda]);
      Acc0[I] = _mm512_fmadd_ps(Av, B0, Acc0[I]);
      if (!Half)
        Acc1[I] = _mm512_fmadd_ps(Av, B1, Acc1[I]);
    }
    if (Packed) {
      A += Avx512MR;
    } else {
      OPT_UNROLL for (int P = 0; P < (R + 2) / 3; ++P)++ Ab[P];
    }
    B += Avx512NR;
  }
  writeBackTile512<R, Half>(Acc0, Acc1, C, Ldc, Nr, Alpha, Beta, Accumulate, Ep);
}

template <bool Packed>
__attribute__((target("avx512f,fma"))) void avx512Rows(int64_t Kc, const float *A, int64_t Lda, const float *B,
                                                      const float *BNext, float *C, int64_t Ldc, int64_t Mr,
                                                      int64_t Nr, float Alpha, float Beta, bool Accumulate,
                                                      const GemmTileEpilogue *Ep) {
  const bool Half = Nr <= 16;
  switch (Mr) {
#define OPT_CASE(Rows)                                                                                                 \
  case Rows:                                                                                                           \
    return Half ? avx512Tile<Rows, Packed, true>(Kc, A, Lda, B, BNext, C, Ldc, Nr, Alpha, Beta, Accumulate, Ep)       \
                : avx512Tile<Rows, Packed, false>(Kc, A, Lda, B, BNext, C, Ldc, Nr, Alpha, Beta, Accumulate, Ep);
    OPT_CASE(1) OPT_CASE(2) OPT_CASE(3) OPT_CASE(4) OPT_CASE(5) OPT_CASE(6)
    OPT_CASE(7) OPT_CASE(8) OPT_CASE(9) OPT_CASE(10) OPT_CASE(11) OPT_CASE(12)
#undef OPT_CASE
  default: return;
  }
}

#pragma GCC diagnostic pop

void microAvx512(const GemmTile &T) {
  if (T.Lda == 0)
    avx512Rows<true>(T.Kc, T.A, 0, T.B, T.BNext, T.C, T.Ldc, T.Mr, T.Nr, T.Alpha, T.Beta, T.Accumulate, T.Ep);
  else
    avx512Rows<false>(T.Kc, T.A, T.Lda, T.B, T.BNext, T.C, T.Ldc, T.Mr, T.Nr, T.Alpha, T.Beta, T.Accumulate, T.Ep);
}
#undef OPT_UNROLL
#endif

#ifdef OPT_GEMM_X86
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

/// One Kc x 32 panel (k-major) of B whose column j is Src + j * Lds with k contiguous (a transposed
/// operand: attention's K^T), columns past Cols zero: two 16-column halves, 16 k at a time.
__attribute__((target("avx512f"))) void packPanelTransposedAvx512(float *Panel, const float *Src, int64_t Lds,
                                                                  int64_t Kc, int64_t Cols) {
  for (int64_t J0 = 0; J0 < Avx512NR; J0 += 16) {
    const int64_t Rows = std::max<int64_t>(0, std::min<int64_t>(16, Cols - J0));
    for (int64_t K0 = 0; K0 < Kc; K0 += 16) {
      const int64_t Kw = std::min<int64_t>(16, Kc - K0);
      const __mmask16 M = static_cast<__mmask16>((1u << Kw) - 1u);
      __m512 R[16];
      for (int I = 0; I < 16; ++I)
        R[I] = I < Rows ? _mm512_maskz_loadu_ps(M, Src + (J0 + I) * Lds + K0) : _mm512_setzero_ps();
      vec512::transpose16x16(R);
      for (int64_t I = 0; I < Kw; ++I)
        _mm512_store_ps(Panel + (K0 + I) * Avx512NR + J0, R[I]);
    }
  }
}
#pragma GCC diagnostic pop
#endif

#ifdef OPT_GEMM_NEON
// On AArch64 the baseline kernel is the NEON one (NEON is part of the architecture).
const GemmMicroKernel PortableKernel{GemmIsa::Portable, "neon_6x16", NeonMR, NeonNR, microNeon};
#else
const GemmMicroKernel PortableKernel{GemmIsa::Portable, "portable_4x16", PortableMR, PortableNR, microPortable};
#endif
#ifdef OPT_GEMM_X86
const GemmMicroKernel Avx2Kernel{GemmIsa::Avx2, "avx2_6x16", Avx2MR, Avx2NR, microAvx2};
const GemmMicroKernel Avx512Kernel{GemmIsa::Avx512, "avx512_12x32", Avx512MR, Avx512NR, microAvx512};
#endif

} // namespace

bool gemmIsaAvailable(GemmIsa Isa) {
  switch (Isa) {
  case GemmIsa::Portable: return true;
#ifdef OPT_GEMM_X86
  case GemmIsa::Avx2: return cpuFeatures().avx2Fma();
  case GemmIsa::Avx512: return cpuFeatures().avx512Fma();
#else
  default: return false;
#endif
  }
  return false;
}

const GemmMicroKernel &gemmMicroKernel(GemmIsa Isa) {
#ifdef OPT_GEMM_X86
  if (Isa == GemmIsa::Avx512)
    return Avx512Kernel;
  if (Isa == GemmIsa::Avx2)
    return Avx2Kernel;
#else
  (void)Isa; // one kernel: the baseline one
#endif
  return PortableKernel;
}

// Packed layouts. A: for each K block kb, for each MR-row panel p: kc x MR floats (k-major),
// zero-padded past M. B: for each kb, for each NR-column panel: kc x NR floats, zero-padded past N.
// Every block before the last K block is KC deep, so a panel's offset is computable directly.
int64_t gemmKcForWeights(int64_t K, GemmIsa Isa) {
  const int64_t Max = Isa == GemmIsa::Avx2 ? 1024 : 256;
  if (K <= Max)
    return std::max<int64_t>(K, 1);
  const int64_t Blocks = ceilDiv(K, Max);
  return ceilDiv(K, Blocks);
}

void packA(const GemmMicroKernel &MK, int64_t M, int64_t K, MatrixRef A, PackedA &Out, int64_t KC) {
  const int64_t MR = MK.MR, Panels = ceilDiv(M, MR), Mpad = Panels * MR;
  Out.M = M;
  Out.K = K;
  Out.Kc = KC;
  Out.Data.resize(static_cast<size_t>(std::max<int64_t>(1, Mpad * K)));
  float *Dst = Out.Data.data();
  for (int64_t K0 = 0; K0 < K; K0 += KC) {
    const int64_t Kc = std::min(KC, K - K0);
    for (int64_t P = 0; P < Panels; ++P) {
      float *Panel = Dst + K0 * Mpad + P * Kc * MR;
      for (int64_t Kk = 0; Kk < Kc; ++Kk)
        for (int64_t I = 0; I < MR; ++I) {
          const int64_t Row = P * MR + I;
          Panel[Kk * MR + I] = Row < M ? A.Data[Row * A.RowStride + (K0 + Kk) * A.ColStride] : 0.0f;
        }
    }
  }
}

void packB(const GemmMicroKernel &MK, int64_t K, int64_t N, MatrixRef B, PackedB &Out, const Parallel &Par) {
  packB(MK, K, N, B, Out, Par, nullptr);
}

void packB(const GemmMicroKernel &MK, int64_t K, int64_t N, MatrixRef B, PackedB &Out, const Parallel &Par,
           const std::function<void(int64_t, int64_t)> &AfterRows, int64_t KC) {
  const int64_t NR = MK.NR, Panels = ceilDiv(N, NR), Npad = Panels * NR;
  const int64_t KBlocks = ceilDiv(K, KC);
  Out.K = K;
  Out.N = N;
  Out.Kc = KC;
  Out.Data.resize(static_cast<size_t>(std::max<int64_t>(1, Npad * K)));
  float *Dst = Out.Data.data();
  // Rows [R0, R1) of panel P of the K block starting at K0.
  const auto packRows = [&](int64_t K0, int64_t P, int64_t R0, int64_t R1) {
    const int64_t Kc = std::min(KC, K - K0);
    float *Panel = Dst + K0 * Npad + P * Kc * NR + (R0 - K0) * NR;
    const int64_t Cols = std::min(NR, N - P * NR);
#ifdef OPT_GEMM_X86
    if (B.RowStride == 1 && B.ColStride != 1 && MK.Isa == GemmIsa::Avx512 && NR == Avx512NR) {
      // A transposed source (k contiguous within each column): 16 x 16 register transposes.
      packPanelTransposedAvx512(Panel, B.Data + R0 + P * NR * B.ColStride, B.ColStride, R1 - R0, Cols);
      return;
    }
    if (B.RowStride == 1 && B.ColStride != 1 && MK.Isa == GemmIsa::Avx2 && NR == Avx2NR) {
      packPanelTransposedAvx2(Panel, B.Data + R0 + P * NR * B.ColStride, B.ColStride, R1 - R0, Cols);
      return;
    }
#endif
    for (int64_t Row = R0; Row < R1; ++Row) {
      const float *Src = B.Data + Row * B.RowStride + P * NR * B.ColStride;
      float *D = Panel + (Row - R0) * NR;
      if (B.ColStride == 1) {
        std::memcpy(D, Src, static_cast<size_t>(Cols) * sizeof(float));
      } else {
        for (int64_t J = 0; J < Cols; ++J)
          D[J] = Src[J * B.ColStride];
      }
      for (int64_t J = Cols; J < NR; ++J)
        D[J] = 0.0f;
    }
  };
  if (!AfterRows) { // all panels of all K blocks at once
    Par.forRange(static_cast<size_t>(KBlocks * Panels), 4, [&](size_t Begin, size_t End) {
      for (size_t T = Begin; T < End; ++T) {
        const int64_t K0 = static_cast<int64_t>(T) / Panels * KC;
        packRows(K0, static_cast<int64_t>(T) % Panels, K0, std::min(K, K0 + KC));
      }
    });
    return;
  }
  for (int64_t K0 = 0; K0 < K; K0 += KC)
    for (int64_t R0 = K0; R0 < std::min(K, K0 + KC); R0 += GemmReleaseRows) {
      const int64_t R1 = std::min({K, K0 + KC, R0 + GemmReleaseRows});
      Par.forRange(static_cast<size_t>(Panels), 4, [&](size_t Begin, size_t End) {
        for (size_t P = Begin; P < End; ++P)
          packRows(K0, static_cast<int64_t>(P), R0, R1);
      });
      AfterRows(R0, R1);
    }
}

namespace {

/// Where a tile's A comes from: a packed panel, or (Rows != nullptr) rows of the caller's matrix.
struct GemmASource {
  const float *Packed = nullptr;
  int64_t Mpad = 0;
  const float *Rows = nullptr;
  int64_t Lda = 0;
};

/// Where a tile's B comes from: a packed B, or (Rows.Base != nullptr) rows in place.
struct GemmBSource {
  const PackedB *Packed = nullptr;
  GemmRowsB Rows{};
};

/// Dst (Kc x NR, k-major) = columns [Col0, Col0 + Cols) of B (rows Base + Off[k], column j at
/// ColOff[j] within a row, or j when ColOff is null), zeros past Cols.
void copyBPanelPortable(float *Dst, const float *Base, const int64_t *Off, const int64_t *ColOff, int64_t Kc,
                        int64_t Col0, int64_t Cols, int64_t NR) {
  for (int64_t K = 0; K < Kc; ++K, Dst += NR) {
    if (ColOff) {
      const float *Row = Base + Off[K];
      for (int64_t J = 0; J < Cols; ++J)
        Dst[J] = Row[ColOff[Col0 + J]];
    } else {
      std::memcpy(Dst, Base + Off[K] + Col0, static_cast<size_t>(Cols) * sizeof(float));
    }
    std::fill(Dst + Cols, Dst + NR, 0.0f);
  }
}
#ifdef OPT_GEMM_X86
/// The copy loop of copyBPanelAvx512 for two 16-lane groups whose columns lie within a 32-float
/// window each: a group with a gap (Permute) takes two masked loads and a two-source permute, a
/// contiguous one a single masked load.
template <bool Permute0, bool Permute1>
__attribute__((target("avx512f"))) void copyWindowsAvx512(float *Dst, const float *Base, const int64_t *Off,
                                                          int64_t Kc, int64_t B0, int64_t B1, __mmask16 L0,
                                                          __mmask16 Lo0, __mmask16 Hi0, __m512i I0, __mmask16 L1,
                                                          __mmask16 Lo1, __mmask16 Hi1, __m512i I1) {
  for (int64_t K = 0; K < Kc; ++K, Dst += 32) {
    const float *W0 = Base + Off[K] + B0, *W1 = Base + Off[K] + B1;
    _mm512_store_ps(Dst, Permute0 ? _mm512_maskz_permutex2var_ps(L0, _mm512_maskz_loadu_ps(Lo0, W0), I0,
                                                                 _mm512_maskz_loadu_ps(Hi0, W0 + 16))
                                  : _mm512_maskz_loadu_ps(L0, W0));
    _mm512_store_ps(Dst + 16, Permute1 ? _mm512_maskz_permutex2var_ps(L1, _mm512_maskz_loadu_ps(Lo1, W1), I1,
                                                                      _mm512_maskz_loadu_ps(Hi1, W1 + 16))
                                       : _mm512_maskz_loadu_ps(L1, W1));
  }
}

__attribute__((target("avx512f"))) void copyBPanelAvx512(float *Dst, const float *Base, const int64_t *Off,
                                                         const int64_t *ColOff, int64_t Kc, int64_t Col0,
                                                         int64_t Cols) {
  // Masked-off lanes are not read, so the loads never run past a row's valid columns.
  const __mmask16 M0 = Cols >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << Cols) - 1u);
  const __mmask16 M1 = Cols >= 32   ? static_cast<__mmask16>(0xFFFF)
                       : Cols > 16 ? static_cast<__mmask16>((1u << (Cols - 16)) - 1u)
                                   : static_cast<__mmask16>(0);
  if (!ColOff) {
    for (int64_t K = 0; K < Kc; ++K, Dst += 32) {
      const float *Row = Base + Off[K] + Col0;
      _mm512_store_ps(Dst, _mm512_maskz_loadu_ps(M0, Row));
      _mm512_store_ps(Dst + 16, _mm512_maskz_loadu_ps(M1, Row + 16));
    }
    return;
  }
  // Columns that lie within 32 floats of a group's first column (an output row's pixels and a
  // few gap columns: the common case) are two masked loads and one two-source permute per group.
  struct Group {
    bool Window, Contiguous; // Contiguous: lane l reads Base + l
    int64_t Base;
    __mmask16 Lanes, Lo, Hi; // valid lanes; lanes of the 32-float window [Base, Base + 16) and [Base + 16, ...)
    __m512i Index;
  };
  Group Gs[2];
  for (int G = 0; G < 2; ++G) {
    Group &Gr = Gs[G];
    const int64_t J0 = 16 * G, N = std::max<int64_t>(0, std::min<int64_t>(16, Cols - J0));
    Gr.Lanes = static_cast<__mmask16>((1u << N) - 1u);
    Gr.Window = Gr.Contiguous = true;
    Gr.Base = N ? ColOff[Col0 + J0] : 0;
    alignas(64) int32_t Idx[16] = {};
    int64_t Span = 0;
    for (int64_t L = 0; L < N; ++L) {
      const int64_t D = ColOff[Col0 + J0 + L] - Gr.Base;
      Gr.Window &= D >= 0 && D < 32;
      Gr.Contiguous &= D == L;
      Idx[L] = static_cast<int32_t>(D & 31);
      Span = std::max(Span, D + 1);
    }
    Gr.Index = _mm512_load_si512(Idx);
    Gr.Lo = static_cast<__mmask16>(Span >= 16 ? 0xFFFFu : (1u << Span) - 1u);
    Gr.Hi = static_cast<__mmask16>(Span <= 16 ? 0u : Span >= 32 ? 0xFFFFu : (1u << (Span - 16)) - 1u);
  }
  if (Gs[0].Window && Gs[1].Window) {
    const Group &G0 = Gs[0], &G1 = Gs[1];
    const auto Copy = G0.Contiguous ? (G1.Contiguous ? copyWindowsAvx512<false, false> : copyWindowsAvx512<false, true>)
                                    : (G1.Contiguous ? copyWindowsAvx512<true, false> : copyWindowsAvx512<true, true>);
    Copy(Dst, Base, Off, Kc, G0.Base, G1.Base, G0.Lanes, G0.Lo, G0.Hi, G0.Index, G1.Lanes, G1.Lo, G1.Hi, G1.Index);
    return;
  }
  for (int64_t K = 0; K < Kc; ++K, Dst += 32) { // columns far apart: lane by lane
    const float *Row = Base + Off[K];
    for (int G = 0; G < 2; ++G) {
      alignas(64) float Tmp[16] = {};
      for (int L = 0; L < 16; ++L)
        if (Gs[G].Lanes >> L & 1)
          Tmp[L] = Row[ColOff[Col0 + 16 * G + L]];
      _mm512_store_ps(Dst + 16 * G, _mm512_load_ps(Tmp));
    }
  }
}
#endif
#ifdef OPT_GEMM_X86
/// One 8-lane group of an AVX2 B panel: lanes [0, Split) read Row + Off0 + l, lanes [Split, Lanes)
/// Row + Off1 + l (an output row's last pixels, then the next row's first ones after the padding
/// columns between them). Lanes past Lanes are zero.
struct Avx2Group {
  int64_t Off0 = 0, Off1 = 0;
  int Split = 0, Lanes = 0;
  bool Two = false; ///< a second run (lanes [Split, Lanes))
};

/// The group of lanes [J0, J0 + 8) of columns [Col0, Col0 + Cols): false when its columns are not
/// one or two contiguous runs (then the caller copies element by element).
inline bool avx2Group(const int64_t *ColOff, int64_t Col0, int64_t Cols, int64_t J0, Avx2Group &G) {
  G.Lanes = static_cast<int>(std::max<int64_t>(0, std::min<int64_t>(8, Cols - J0)));
  G.Split = G.Lanes;
  G.Two = false;
  G.Off0 = ColOff ? (G.Lanes ? ColOff[Col0 + J0] : 0) : Col0 + J0;
  if (!ColOff)
    return true;
  for (int L = 1; L < G.Lanes; ++L) {
    const int64_t D = ColOff[Col0 + J0 + L];
    if (!G.Two && D == G.Off0 + L)
      continue;
    if (G.Two && D == G.Off1 + L)
      continue;
    if (G.Two)
      return false; // a third run
    G.Two = true, G.Split = L, G.Off1 = D - L;
  }
  return true;
}

/// copyBPanelAvx2's loop for two groups, each one run (a masked load) or two (two masked loads
/// whose lanes do not overlap, or-ed). Masked-off lanes are not read: no load runs past a row.
template <bool Two0, bool Two1>
__attribute__((target("avx2"))) void copyGroupsAvx2(float *Dst, const float *Base, const int64_t *Off, int64_t Kc,
                                                    const Avx2Group &G0, const Avx2Group &G1) {
  const __m256i A0 = vec256::laneRange256(0, G0.Split), B0 = vec256::laneRange256(G0.Split, G0.Lanes);
  const __m256i A1 = vec256::laneRange256(0, G1.Split), B1 = vec256::laneRange256(G1.Split, G1.Lanes);
  for (int64_t K = 0; K < Kc; ++K, Dst += 16) {
    const float *Row = Base + Off[K];
    __m256 V0 = _mm256_maskload_ps(Row + G0.Off0, A0), V1 = _mm256_maskload_ps(Row + G1.Off0, A1);
    if (Two0)
      V0 = _mm256_or_ps(V0, _mm256_maskload_ps(Row + G0.Off1, B0));
    if (Two1)
      V1 = _mm256_or_ps(V1, _mm256_maskload_ps(Row + G1.Off1, B1));
    _mm256_storeu_ps(Dst, V0);
    _mm256_storeu_ps(Dst + 8, V1);
  }
}

/// copyBPanelPortable for NR = 16 with AVX2: a row of columns read in place is two (masked) loads
/// per k; im2col columns with gaps (ColOff: the padding columns between output rows) are, per
/// 8-lane group, one or two runs of contiguous columns, each a masked load (replaced a scalar
/// element-by-element copy that took 9-12% of ResNet-50 and SqueezeNet on AVX2).
__attribute__((target("avx2"))) void copyBPanelAvx2(float *Dst, const float *Base, const int64_t *Off,
                                                    const int64_t *ColOff, int64_t Kc, int64_t Col0, int64_t Cols) {
  Avx2Group G0, G1;
  if (!avx2Group(ColOff, Col0, Cols, 0, G0) || !avx2Group(ColOff, Col0, Cols, 8, G1)) {
    copyBPanelPortable(Dst, Base, Off, ColOff, Kc, Col0, Cols, 16); // columns far apart
    return;
  }
  const auto Copy = G0.Two ? (G1.Two ? copyGroupsAvx2<true, true> : copyGroupsAvx2<true, false>)
                           : (G1.Two ? copyGroupsAvx2<false, true> : copyGroupsAvx2<false, false>);
  Copy(Dst, Base, Off, Kc, G0, G1);
}
#endif

} // namespace

void copyRowsBPanel(const GemmRowsB &B, int64_t K0, int64_t Kc, int64_t Col0, int64_t Cols, int64_t NR, float *Dst) {
#ifdef OPT_GEMM_X86
  if (NR == 32 && cpuFeatures().avx512Fma()) {
    copyBPanelAvx512(Dst, B.Base, B.RowOffsets + K0, B.ColOffsets, Kc, Col0, Cols);
    return;
  }
  if (NR == 16 && cpuFeatures().avx2Fma()) {
    copyBPanelAvx2(Dst, B.Base, B.RowOffsets + K0, B.ColOffsets, Kc, Col0, Cols);
    return;
  }
#endif
  copyBPanelPortable(Dst, B.Base, B.RowOffsets + K0, B.ColOffsets, Kc, Col0, Cols, NR);
}

namespace {

void gemmDriver(const GemmMicroKernel &MK, int64_t M, int64_t K, const GemmASource &A, const GemmBSource &B,
                float Alpha, float Beta, float *C, int64_t Ldc, const Parallel &Par, const GemmEpilogue *Ep) {
  const int64_t N = B.Packed ? B.Packed->N : B.Rows.N;
  const int64_t KC = B.Packed ? B.Packed->Kc : GemmKC; // a packed A was packed with the same
  if (M == 0 || N == 0)
    return;
  // Where column J of C starts (row 0) and its row stride: C itself, or a part of a split.
  const GemmColumnSplit *Split = Ep ? Ep->Split : nullptr;
  const auto column = [&](int64_t J, int64_t &Stride) -> float * {
    if (!Split) {
      Stride = Ldc;
      return C + J;
    }
    size_t Part = 0;
    while (Part + 1 < Split->Parts && J >= Split->Begin[Part + 1])
      ++Part;
    Stride = Split->Ldc[Part];
    return Split->C[Part] + (J - Split->Begin[Part]);
  };
  if (K == 0) { // empty sum: C = Beta * C
    for (int64_t I = 0; I < M; ++I)
      for (int64_t J = 0; J < N; ++J) {
        int64_t Stride;
        float *Cj = column(J, Stride);
        float &Out = Cj[I * Stride];
        float V = Beta == 0.0f ? 0.0f : Beta * Out;
        if (Ep && Ep->RowBias)
          V += Ep->RowBias[I];
        if (Ep && Ep->ColBias)
          V += Ep->ColBias[J];
        if (Ep)
          V = Ep->Act(V);
        if (Ep && Ep->Gelu)
          approx::geluErfF32(&V, &V, 1);
        Out = V;
      }
    return;
  }
  const int64_t MR = MK.MR, NR = MK.NR;
  const int64_t PanelsM = ceilDiv(M, MR), PanelsN = ceilDiv(N, NR);
  const int64_t Npad = PanelsN * NR;
  // A task is a block of up to 8 x 4 tiles; enough tasks to balance, big enough to reuse panels.
  // With B read in place every task copies each of its B panels once per K block: a task takes
  // all rows then (the K block of A stays in L2: 22 panels of a 256-channel conv are 264 KiB).
  const int64_t BlockM = B.Packed ? 8 : PanelsM, BlockN = 4;
  const int64_t TasksN = ceilDiv(PanelsN, BlockN);
  int64_t TasksM = ceilDiv(PanelsM, BlockM);
  // With few tasks, a count that is not a multiple of the threads leaves one idle at the end (9
  // tasks on 2 threads: 5 + 4): add row blocks until it is, and spread the panels evenly over them.
  const int64_t Threads = std::max(1, Par.threads());
  while (Threads > 1 && (TasksM * TasksN) % Threads != 0 && TasksM * TasksN < 8 * Threads && TasksM < PanelsM)
    ++TasksM;
  // A bf16 B (GemmBf16.h) is unpacked one panel at a time into the worker's panel buffer, right
  // before the task's row tiles reuse it (the float32 microkernels then run as usual).
  const uint16_t *PB16 = B.Packed && B.Packed->Bf16 ? bf16Data(*B.Packed) : nullptr;
  const float *PB = B.Packed && !PB16 ? B.Packed->Data.data() : nullptr;
  Par.forRange(static_cast<size_t>(TasksM * TasksN), 1, [&](size_t Begin, size_t End) {
    // B rows in place: each K block of the task's column panels is copied here, into a buffer of
    // this worker (L1/L2-sized: at most BlockN panels), right before the task's tiles reuse it; a
    // bf16 B is unpacked into it one panel at a time.
    // (on its scratch stack, ThreadScratch.h: above a Winograd task's tile buffers when nested)
    ScratchFrame Scratch;
    float *const PanelData = PB ? nullptr : Scratch.take<float>(static_cast<size_t>((PB16 ? 1 : BlockN) * KC * NR));
    // Tiles of row panels [Pa, Pb) in column panel Q: the call's fields that do not depend on the
    // row panel are set once (a 16-k tile of a SqueezeNet 1x1 conv is ~100 cycles of FMAs, and
    // rebuilding the call per tile cost 8-10% of that model on AVX2).
    const auto rowTiles = [&](int64_t Pa, int64_t Pb, int64_t Q, int64_t K0, int64_t Kc, const float *Bp,
                              const float *BNext) {
      GemmTileEpilogue TileEp;
      const bool Last = K0 + Kc >= K;
      if (Last && Ep) {
        TileEp.ColBias = Ep->ColBias ? Ep->ColBias + Q * NR : nullptr;
        TileEp.Act = Ep->Act, TileEp.Gelu = Ep->Gelu;
      }
      int64_t LdcQ;
      float *CQ = column(Q * NR, LdcQ);
      GemmTile Tile;
      Tile.Kc = Kc, Tile.Lda = A.Rows ? A.Lda : 0, Tile.B = Bp;
      Tile.Ldc = LdcQ, Tile.Nr = std::min(NR, N - Q * NR);
      Tile.Alpha = Alpha, Tile.Beta = Beta, Tile.Accumulate = K0 > 0, Tile.Ep = Last && Ep ? &TileEp : nullptr;
      for (int64_t P = Pa; P < Pb; ++P) {
        Tile.A = A.Rows ? A.Rows + P * MR * A.Lda + K0 : A.Packed + K0 * A.Mpad + P * Kc * MR;
        Tile.BNext = P == Pa ? BNext : nullptr; // the first tile prefetches for the rest
        Tile.C = CQ + P * MR * LdcQ, Tile.Mr = std::min(MR, M - P * MR);
        if (Last && Ep)
          TileEp.Bias = Ep->RowBias ? Ep->RowBias + P * MR : nullptr;
        MK.Fn(Tile);
      }
    };
    for (size_t T = Begin; T < End; ++T) {
      const int64_t Tm = static_cast<int64_t>(T) % TasksM, Tn = static_cast<int64_t>(T) / TasksM;
      const int64_t P0 = Tm * PanelsM / TasksM, P1 = (Tm + 1) * PanelsM / TasksM;
      const int64_t Q0 = Tn * PanelsN / TasksN, Q1 = (Tn + 1) * PanelsN / TasksN;
      for (int64_t K0 = 0; K0 < K; K0 += KC) {
        const int64_t Kc = std::min(KC, K - K0);
        // A K block of the task's A panels beyond L2's share (a 1280-channel 1x1 conv on a 7x7 plane:
        // 107 panels) would stream from memory once per column panel: copy every column panel
        // first, then run the rows outside. Otherwise each panel is copied right before its tiles
        // (still in L1 for them).
        const bool RowsOutside = (P1 - P0) * MR * Kc * static_cast<int64_t>(sizeof(float)) > (256 << 10);
        if (PB16) {
          for (int64_t Q = Q0; Q < Q1; ++Q) {
            unpackBf16Panel(MK, PB16 + K0 * Npad + Q * Kc * NR, Kc, PanelData);
            rowTiles(P0, P1, Q, K0, Kc, PanelData, nullptr);
          }
          continue;
        }
        if (!PB) {
          for (int64_t Q = Q0; Q < Q1; ++Q) {
            float *Dst = PanelData + (RowsOutside ? (Q - Q0) * KC * NR : 0);
            const int64_t Nr = std::min(NR, N - Q * NR);
#ifdef OPT_GEMM_X86
            if (MK.Isa == GemmIsa::Avx512 && NR == 32)
              copyBPanelAvx512(Dst, B.Rows.Base, B.Rows.RowOffsets + K0, B.Rows.ColOffsets, Kc, Q * NR, Nr);
            else if (MK.Isa == GemmIsa::Avx2 && NR == 16)
              copyBPanelAvx2(Dst, B.Rows.Base, B.Rows.RowOffsets + K0, B.Rows.ColOffsets, Kc, Q * NR, Nr);
            else
#endif
              copyBPanelPortable(Dst, B.Rows.Base, B.Rows.RowOffsets + K0, B.Rows.ColOffsets, Kc, Q * NR, Nr, NR);
            if (!RowsOutside)
              rowTiles(P0, P1, Q, K0, Kc, Dst, nullptr);
          }
          if (RowsOutside)
            for (int64_t P = P0; P < P1; ++P)
              for (int64_t Q = Q0; Q < Q1; ++Q)
                rowTiles(P, P + 1, Q, K0, Kc, PanelData + (Q - Q0) * KC * NR, nullptr);
          continue;
        }
        for (int64_t Q = Q0; Q < Q1; ++Q) {
          const float *Bp = PB + K0 * Npad + Q * Kc * NR;
          // The packed panel this task reads after this one: the next column panel, or the first
          // one of the next K block.
          const float *BNext = Q + 1 < Q1    ? Bp + Kc * NR
                               : K0 + KC < K ? PB + (K0 + KC) * Npad + Q0 * std::min(KC, K - K0 - KC) * NR
                                             : nullptr;
          rowTiles(P0, P1, Q, K0, Kc, Bp, BNext);
        }
      }
    }
  });
}

} // namespace

void gemmPacked(const GemmMicroKernel &MK, const PackedA &A, const PackedB &B, float Alpha, float Beta, float *C,
                int64_t Ldc, const Parallel &Par, const GemmEpilogue *Ep) {
  GemmASource Src;
  Src.Packed = A.Data.data();
  Src.Mpad = ceilDiv(A.M, MK.MR) * MK.MR;
  GemmBSource BSrc;
  BSrc.Packed = &B;
  gemmDriver(MK, A.M, A.K, Src, BSrc, Alpha, Beta, C, Ldc, Par, Ep);
}

void gemmPackedRowsB(const GemmMicroKernel &MK, const PackedA &A, const GemmRowsB &B, float Alpha, float Beta,
                     float *C, int64_t Ldc, const Parallel &Par, const GemmEpilogue *Ep) {
  GemmASource Src;
  Src.Packed = A.Data.data();
  Src.Mpad = ceilDiv(A.M, MK.MR) * MK.MR;
  GemmBSource BSrc;
  BSrc.Rows = B;
  gemmDriver(MK, A.M, A.K, Src, BSrc, Alpha, Beta, C, Ldc, Par, Ep);
}

void gemmRowsA(const GemmMicroKernel &MK, int64_t M, int64_t K, const float *A, int64_t Lda, const PackedB &B,
               float Alpha, float Beta, float *C, int64_t Ldc, const Parallel &Par, const GemmEpilogue *Ep) {
  if (Lda == 0 && M > 1) { // every row the same memory: the microkernels take Lda == 0 for "packed"
    PackedA PA;
    packA(MK, M, K, MatrixRef{A, 0, 1}, PA, B.Kc);
    gemmPacked(MK, PA, B, Alpha, Beta, C, Ldc, Par, Ep);
    return;
  }
  GemmASource Src;
  Src.Rows = A;
  Src.Lda = std::max<int64_t>(Lda, 1); // one row: the stride is never used
  GemmBSource BSrc;
  BSrc.Packed = &B;
  gemmDriver(MK, M, K, Src, BSrc, Alpha, Beta, C, Ldc, Par, Ep);
}

void gemmA(const GemmMicroKernel &MK, int64_t M, int64_t K, MatrixRef A, const PackedB &B, float Alpha, float Beta,
           float *C, int64_t Ldc, const Parallel &Par, const GemmEpilogue *Ep) {
  if (A.ColStride == 1 && A.RowStride >= 0) {
    gemmRowsA(MK, M, K, A.Data, A.RowStride, B, Alpha, Beta, C, Ldc, Par, Ep);
    return;
  }
  PackedA PA;
  packA(MK, M, K, A, PA, B.Kc);
  gemmPacked(MK, PA, B, Alpha, Beta, C, Ldc, Par, Ep);
}

void sgemm(const GemmMicroKernel &MK, int64_t M, int64_t N, int64_t K, float Alpha, MatrixRef A, MatrixRef B,
           float Beta, float *C, int64_t Ldc, const Parallel &Par) {
  PackedB PB;
  packB(MK, K, N, B, PB, Par);
  gemmA(MK, M, K, A, PB, Alpha, Beta, C, Ldc, Par);
}

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

/// Acc[0:NR) += A (1 x Kc) x one Kc x NR slab of a packed B (k-major).
template <int64_t NR> inline void gemvSlab(const float *A, const float *Slab, int64_t Kc, float *Acc) {
  for (int64_t Kk = 0; Kk < Kc; ++Kk) {
    const float Ak = A[Kk];
    const float *Row = Slab + Kk * NR;
    for (int64_t J = 0; J < NR; ++J)
      Acc[J] += Ak * Row[J];
  }
}

#ifdef OPT_GEMM_X86
/// The AVX-512 slab step: two independent accumulator pairs (even and odd k), so the FMA latency
/// never limits a memory-bound stream. It prefetches 8 KiB ahead: the GPT decoder's LM head (65 MB)
/// took 5.9-8.0 ms mean / 4.7-6.4 min without, 5.7-6.6 / 4.5-5.2 with (six rounds alternating two
/// library builds on a noisy host; better in 4-5 of 6), as the bf16 GEMV's prefetch gained 30%.
__attribute__((target("avx512f,fma"))) inline void gemvSlab32Avx512(const float *A, const float *Slab, int64_t Kc,
                                                                     float *Acc) {
  __m512 E0 = _mm512_loadu_ps(Acc), E1 = _mm512_loadu_ps(Acc + 16);
  __m512 O0 = _mm512_setzero_ps(), O1 = _mm512_setzero_ps();
  int64_t Kk = 0;
  for (; Kk + 2 <= Kc; Kk += 2) {
    const float *Row = Slab + Kk * 32;
    for (int L = 0; L < 64; L += 16) // the two rows' lines 8 KiB ahead
      _mm_prefetch(reinterpret_cast<const char *>(Row + 2048 + L), _MM_HINT_T0);
    const __m512 X0 = _mm512_set1_ps(A[Kk]), X1 = _mm512_set1_ps(A[Kk + 1]);
    E0 = _mm512_fmadd_ps(X0, _mm512_load_ps(Row), E0);
    E1 = _mm512_fmadd_ps(X0, _mm512_load_ps(Row + 16), E1);
    O0 = _mm512_fmadd_ps(X1, _mm512_load_ps(Row + 32), O0);
    O1 = _mm512_fmadd_ps(X1, _mm512_load_ps(Row + 48), O1);
  }
  if (Kk < Kc) {
    const __m512 X0 = _mm512_set1_ps(A[Kk]);
    E0 = _mm512_fmadd_ps(X0, _mm512_load_ps(Slab + Kk * 32), E0);
    E1 = _mm512_fmadd_ps(X0, _mm512_load_ps(Slab + Kk * 32 + 16), E1);
  }
  _mm512_storeu_ps(Acc, _mm512_add_ps(E0, O0));
  _mm512_storeu_ps(Acc + 16, _mm512_add_ps(E1, O1));
}


/// The AVX2 slab step for 16-column panels: four independent accumulator pairs (k mod 4), so
/// neither the FMA latency nor one dependency chain limits the stream, and B prefetched 8 KiB
/// ahead as in the AVX-512 step. (gemvSlab<16> called from an AVX2 function was still the
/// baseline-SIMD instance of the template: MobileNetV3-Small's 576 -> 1024 classifier took 0.3 ms.)
__attribute__((target("avx2,fma"))) inline void gemvSlab16Avx2(const float *A, const float *Slab, int64_t Kc,
                                                                float *Acc) {
  __m256 E0 = _mm256_loadu_ps(Acc), E1 = _mm256_loadu_ps(Acc + 8);
  __m256 O0 = _mm256_setzero_ps(), O1 = _mm256_setzero_ps(), P0 = O0, P1 = O0, Q0 = O0, Q1 = O0;
  int64_t Kk = 0;
  for (; Kk + 4 <= Kc; Kk += 4) {
    const float *Row = Slab + Kk * 16;
    for (int L = 0; L < 64; L += 16) // the four rows' lines 8 KiB ahead
      _mm_prefetch(reinterpret_cast<const char *>(Row + 2048 + L), _MM_HINT_T0);
    const __m256 X0 = _mm256_broadcast_ss(A + Kk), X1 = _mm256_broadcast_ss(A + Kk + 1);
    const __m256 X2 = _mm256_broadcast_ss(A + Kk + 2), X3 = _mm256_broadcast_ss(A + Kk + 3);
    E0 = _mm256_fmadd_ps(X0, _mm256_loadu_ps(Row), E0), E1 = _mm256_fmadd_ps(X0, _mm256_loadu_ps(Row + 8), E1);
    O0 = _mm256_fmadd_ps(X1, _mm256_loadu_ps(Row + 16), O0), O1 = _mm256_fmadd_ps(X1, _mm256_loadu_ps(Row + 24), O1);
    P0 = _mm256_fmadd_ps(X2, _mm256_loadu_ps(Row + 32), P0), P1 = _mm256_fmadd_ps(X2, _mm256_loadu_ps(Row + 40), P1);
    Q0 = _mm256_fmadd_ps(X3, _mm256_loadu_ps(Row + 48), Q0), Q1 = _mm256_fmadd_ps(X3, _mm256_loadu_ps(Row + 56), Q1);
  }
  for (; Kk < Kc; ++Kk) {
    const __m256 X0 = _mm256_broadcast_ss(A + Kk);
    E0 = _mm256_fmadd_ps(X0, _mm256_loadu_ps(Slab + Kk * 16), E0);
    E1 = _mm256_fmadd_ps(X0, _mm256_loadu_ps(Slab + Kk * 16 + 8), E1);
  }
  _mm256_storeu_ps(Acc, _mm256_add_ps(_mm256_add_ps(E0, O0), _mm256_add_ps(P0, Q0)));
  _mm256_storeu_ps(Acc + 8, _mm256_add_ps(_mm256_add_ps(E1, O1), _mm256_add_ps(P1, Q1)));
}
#endif

/// Columns of panels [Begin, End) of Y = A (1 x K) x packed B, reading B in memory order: within
/// a group of panels, each K block's slabs are one contiguous stretch of the packed buffer (the
/// K blocks of one panel are far apart), so the whole task streams front to back instead of
/// hopping between K blocks per panel. Partial sums of a group (GroupPanels x NR floats) stay in L1.
template <int64_t NR, typename T = float, typename SlabFn>
inline void gemvPanels(const float *A, const PackedB &B, float *Y, size_t Begin, size_t End, SlabFn Slab) {
  constexpr size_t GroupPanels = 64;
  const int64_t Npad = (B.N + NR - 1) / NR * NR;
  const T *Base = reinterpret_cast<const T *>(B.Data.data());
  alignas(64) float Acc[GroupPanels * NR];
  for (size_t G0 = Begin; G0 < End; G0 += GroupPanels) {
    const size_t G1 = std::min(End, G0 + GroupPanels);
    const int64_t Width = static_cast<int64_t>(G1 - G0) * NR;
    std::fill(Acc, Acc + Width, 0.0f);
    for (int64_t K0 = 0; K0 < B.K; K0 += B.Kc) {
      const int64_t Kc = std::min(B.Kc, B.K - K0);
      const T *Slabs = Base + K0 * Npad + static_cast<int64_t>(G0) * Kc * NR;
      for (size_t P = G0; P < G1; ++P)
        Slab(A + K0, Slabs + static_cast<int64_t>(P - G0) * Kc * NR, Kc, Acc + static_cast<int64_t>(P - G0) * NR);
    }
    const int64_t Col = static_cast<int64_t>(G0) * NR;
    std::memcpy(Y + Col, Acc, static_cast<size_t>(std::min(Width, B.N - Col)) * sizeof(float));
  }
}

#ifdef OPT_GEMM_X86
__attribute__((target("avx512f,fma"))) void gemvPanelsAvx512(const float *A, const PackedB &B, float *Y, size_t Begin,
                                                              size_t End) {
  gemvPanels<32>(A, B, Y, Begin, End, gemvSlab32Avx512);
}
__attribute__((target("avx2,fma"))) void gemvPanelsAvx2(const float *A, const PackedB &B, float *Y, size_t Begin,
                                                         size_t End) {
  gemvPanels<16>(A, B, Y, Begin, End, gemvSlab16Avx2);
}
#endif

} // namespace

void gemvPacked(const GemmMicroKernel &MK, const float *A, const PackedB &B, float *Y, const Parallel &Par) {
  const int64_t NR = MK.NR, Panels = (B.N + NR - 1) / NR;
  if (B.N == 0)
    return;
  // At least 64 KB of B per task, so small GEMVs stay on one thread; beyond that about four items
  // per thread (the pool hands stolen work out an item at a time), at most one panel group each,
  // so an item still streams its K blocks' slabs contiguously.
  const int64_t MinPanels = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, B.K * NR));
  const int64_t Even = Panels / (4 * std::max(1, Par.threads()));
  const size_t Grain = static_cast<size_t>(std::max(MinPanels, std::min<int64_t>(Even, 64)));
  if (B.Bf16) { // bf16 weights: half the bytes streamed, the same float32 products
    const GemvBf16SlabFn Slab = gemvBf16SlabFor(MK);
    const auto Step = [Slab, NR](const float *Ak, const uint16_t *S, int64_t Kc, float *Acc) { Slab(Ak, S, Kc, NR, Acc); };
    Par.forRange(static_cast<size_t>(Panels), Grain, [&](size_t Begin, size_t End) {
      if (NR == 32)
        return gemvPanels<32, uint16_t>(A, B, Y, Begin, End, Step);
      if (NR == 16)
        return gemvPanels<16, uint16_t>(A, B, Y, Begin, End, Step);
      // any other panel width: one element at a time
      const int64_t Npad = Panels * NR;
      for (size_t P = Begin; P < End; ++P)
        for (int64_t J = static_cast<int64_t>(P) * NR; J < std::min(B.N, static_cast<int64_t>(P + 1) * NR); ++J) {
          float S = 0;
          for (int64_t K0 = 0; K0 < B.K; K0 += B.Kc) {
            const int64_t Kc = std::min(B.Kc, B.K - K0);
            const uint16_t *Panel = bf16Data(B) + K0 * Npad + static_cast<int64_t>(P) * Kc * NR;
            for (int64_t Kk = 0; Kk < Kc; ++Kk)
              S += A[K0 + Kk] * bfloat16::toFloat(Panel[Kk * NR + bf16Slot(J - static_cast<int64_t>(P) * NR, NR)]);
          }
          Y[J] = S;
        }
    });
    return;
  }
  Par.forRange(static_cast<size_t>(Panels), Grain, [&](size_t Begin, size_t End) {
#ifdef OPT_GEMM_X86
    if (MK.Isa == GemmIsa::Avx512 && NR == 32)
      return gemvPanelsAvx512(A, B, Y, Begin, End);
    if (MK.Isa == GemmIsa::Avx2 && NR == 16)
      return gemvPanelsAvx2(A, B, Y, Begin, End);
#endif
    if (NR == PortableNR)
      return gemvPanels<PortableNR>(A, B, Y, Begin, End, gemvSlab<PortableNR>);
    for (size_t P = Begin; P < End; ++P) // any other panel width: plain loops
      for (int64_t J = static_cast<int64_t>(P) * NR; J < std::min(B.N, static_cast<int64_t>(P + 1) * NR); ++J) {
        float S = 0;
        for (int64_t K0 = 0; K0 < B.K; K0 += B.Kc) {
          const int64_t Kc = std::min(B.Kc, B.K - K0);
          const float *Panel = B.Data.data() + K0 * Panels * NR + static_cast<int64_t>(P) * Kc * NR;
          for (int64_t Kk = 0; Kk < Kc; ++Kk)
            S += A[K0 + Kk] * Panel[Kk * NR + (J - static_cast<int64_t>(P) * NR)];
        }
        Y[J] = S;
      }
  });
}

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
