// The bf16 compute GEMM (GemmBf16Dot.h): packing into bf16 pairs, the AVX512_BF16 microkernel and
// the two drivers (activations as A: MatMul / Gemm; activations as B: convolutions). Compiled with
// target attributes; called only after bf16DotAvailable().
#include "backends/native/ops/common/GemmBf16Dot.h"

#include <algorithm>
#include <cstring>

#include "Optimium/Runtime/Types/BFloat16.h"
#include "backends/native/ops/common/MathApprox.h"
#include "core/CpuFeatures.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include "backends/native/ops/common/GemmWriteBack512.h"
#include "backends/native/ops/common/VecMath512.h"
#define OPT_BF16DOT_X86 1
#define OPT_TARGET_BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16,fma")))
#endif

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

namespace {

int64_t ceilDiv(int64_t A, int64_t B) { return (A + B - 1) / B; }

/// Element (R, C) of M rounded to bfloat16 (nearest even, as VCVTNE2PS2BF16). Read with memcpy:
/// weights left in the model file may be unaligned.
uint32_t bf16At(const MatrixRef &M, int64_t R, int64_t C) {
  float F;
  std::memcpy(&F, M.Data + R * M.RowStride + C * M.ColStride, sizeof F);
  return bfloat16::fromFloat(F);
}

} // namespace

bool bf16DotAvailable() {
#ifdef OPT_BF16DOT_X86
  const CpuFeatures &F = cpuFeatures();
  return F.AVX512BF16 && F.avx512Core() && F.FMA;
#else
  return false;
#endif
}

int64_t bf16DotKc(int64_t K) {
  constexpr int64_t Max = 512;
  if (K <= Max)
    return std::max<int64_t>(2, (K + 1) / 2 * 2);
  const int64_t Blocks = ceilDiv(K, Max);
  return (ceilDiv(K, Blocks) + 1) / 2 * 2;
}

void packBf16DotB(int64_t K, int64_t N, MatrixRef B, Bf16DotB &Out, int64_t Kc, const std::string &Key) {
  const int64_t NR = kBf16DotNR, Panels = ceilDiv(N, NR), Npad = Panels * NR;
  Out.K = K, Out.N = N, Out.Kc = Kc;
  Out.Slots.borrowOrPack(Key + "/kc" + std::to_string(Kc), static_cast<size_t>(std::max<int64_t>(1, ceilDiv(K, 2) * Npad)),
                         [&](uint32_t *Slots) {
                           for (int64_t K0 = 0; K0 < K; K0 += Kc) {
                             const int64_t Kb = std::min(Kc, K - K0), Pc = ceilDiv(Kb, 2);
                             for (int64_t P = 0; P < Panels; ++P) {
                               uint32_t *Panel = Slots + K0 / 2 * Npad + P * Pc * NR;
                               for (int64_t Pr = 0; Pr < Pc; ++Pr)
                                 for (int64_t J = 0; J < std::min(NR, N - P * NR); ++J) {
                                   const int64_t Col = P * NR + J, K1 = K0 + 2 * Pr;
                                   const uint32_t Lo = bf16At(B, K1, Col),
                                                  Hi = K1 + 1 < K ? bf16At(B, K1 + 1, Col) : 0u;
                                   Panel[Pr * NR + J] = Lo | Hi << 16;
                                 }
                             }
                           }
                         });
}

void packBf16DotA(int64_t M, int64_t K, MatrixRef A, Bf16DotA &Out, const std::string &Key) {
  Out.M = M, Out.K = K;
  const int64_t Pairs = Out.pairsPerRow();
  Out.Slots.borrowOrPack(Key, static_cast<size_t>(std::max<int64_t>(1, M * Pairs)), [&](uint32_t *Slots) {
    for (int64_t I = 0; I < M; ++I)
      for (int64_t Kk = 0; Kk < K; ++Kk)
        Slots[I * Pairs + Kk / 2] |= bf16At(A, I, Kk) << (Kk % 2 ? 16 : 0);
  });
}

#ifdef OPT_BF16DOT_X86
namespace {

#define OPT_UNROLL _Pragma("GCC unroll 16")
// GCC 12 flags the undefined pass-through operand inside the max/min intrinsics (see Gemm.cpp).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

/// One tile: C[0:R, 0:Nr] (= or +=) Alpha * A x B over Pc pairs, then Ep. Row i of A is
/// A + i * Lda (pairs); B is Pc rows of 32 slots. Half: the columns end within the first 16.
template <int R, bool Half>
OPT_TARGET_BF16 __attribute__((always_inline)) inline void
bf16Tile(int64_t Pc, const uint32_t *A, int64_t Lda, const uint32_t *B, float *C, int64_t Ldc, int64_t Nr,
         float Alpha, float Beta, bool Accumulate, const GemmTileEpilogue *Ep) {
  __m512 Acc0[R], Acc1[R];
  OPT_UNROLL for (int I = 0; I < R; ++I) Acc0[I] = _mm512_setzero_ps(), Acc1[I] = _mm512_setzero_ps();
  // One pointer per 3 rows plus Lda (scaled index x1 / x2), as the float32 kernel addresses them.
  const uint32_t *Ab[4] = {A, A + 3 * Lda, A + 6 * Lda, A + 9 * Lda};
  _Pragma("GCC unroll 2") for (int64_t P = 0; P < Pc; ++P) {
    const __m512i B0 = _mm512_loadu_si512(B), B1 = Half ? B0 : _mm512_loadu_si512(B + 16);
    OPT_UNROLL for (int I = 0; I < R; ++I) {
      const __m512i Av = _mm512_set1_epi32(static_cast<int>(Ab[I / 3][(I % 3) * Lda]));
      Acc0[I] = _mm512_dpbf16_ps(Acc0[I], (__m512bh)Av, (__m512bh)B0);
      if (!Half)
        Acc1[I] = _mm512_dpbf16_ps(Acc1[I], (__m512bh)Av, (__m512bh)B1);
    }
    OPT_UNROLL for (int Q = 0; Q < (R + 2) / 3; ++Q)++ Ab[Q];
    B += kBf16DotNR;
  }
  writeBackTile512<R, Half>(Acc0, Acc1, C, Ldc, Nr, Alpha, Beta, Accumulate, Ep);
}

OPT_TARGET_BF16 void bf16Rows(int64_t Pc, const uint32_t *A, int64_t Lda, const uint32_t *B, float *C, int64_t Ldc,
                              int64_t Mr, int64_t Nr, float Alpha, float Beta, bool Accumulate,
                              const GemmTileEpilogue *Ep) {
  const bool Half = Nr <= 16;
  switch (Mr) {
#define OPT_CASE(Rows)                                                                                                 \
  case Rows:                                                                                                           \
    return Half ? bf16Tile<Rows, true>(Pc, A, Lda, B, C, Ldc, Nr, Alpha, Beta, Accumulate, Ep)                        \
                : bf16Tile<Rows, false>(Pc, A, Lda, B, C, Ldc, Nr, Alpha, Beta, Accumulate, Ep);
    OPT_CASE(1) OPT_CASE(2) OPT_CASE(3) OPT_CASE(4) OPT_CASE(5) OPT_CASE(6)
    OPT_CASE(7) OPT_CASE(8) OPT_CASE(9) OPT_CASE(10) OPT_CASE(11) OPT_CASE(12)
#undef OPT_CASE
  default: return;
  }
}

/// Dst (Pairs slots) = the bf16 pairs of Src[0:K] (zeros past K).
OPT_TARGET_BF16 void convertRowBf16(const float *Src, int64_t K, uint32_t *Dst) {
  int64_t Kk = 0;
  for (; Kk + 32 <= K; Kk += 32, Dst += 16) {
    const __m512bh V = _mm512_cvtne2ps_pbh(_mm512_loadu_ps(Src + Kk + 16), _mm512_loadu_ps(Src + Kk));
    _mm512_storeu_si512(Dst, (__m512i)V);
  }
  if (Kk < K) {
    const int64_t Left = K - Kk;
    const __mmask16 L = static_cast<__mmask16>(Left >= 16 ? 0xFFFFu : (1u << Left) - 1u);
    const __mmask16 H = static_cast<__mmask16>(Left <= 16 ? 0u : (1u << (Left - 16)) - 1u);
    const __m512bh V = _mm512_cvtne2ps_pbh(_mm512_maskz_loadu_ps(H, Src + Kk + 16), _mm512_maskz_loadu_ps(L, Src + Kk));
    const int64_t Slots = (Left + 1) / 2;
    _mm512_mask_storeu_epi32(Dst, static_cast<__mmask16>((1u << Slots) - 1u), (__m512i)V);
  }
}

/// Dst (ceil(Kc / 2) x 32 slots) = the bf16 pairs of the float32 panel Src (Kc x 32, k-major).
OPT_TARGET_BF16 void convertPanelBf16(const float *Src, int64_t Kc, uint32_t *Dst) {
  // cvtne2ps gives [row 2p's 16 columns, row 2p+1's]; the permute interleaves them per column.
  const __m512i Interleave = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7,
                                              22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
  for (int64_t K = 0; K < Kc; K += 2, Src += 64, Dst += 32) {
    const bool Odd = K + 1 >= Kc;
    const __m512 E0 = _mm512_load_ps(Src), E1 = _mm512_load_ps(Src + 16);
    const __m512 O0 = Odd ? _mm512_setzero_ps() : _mm512_load_ps(Src + 32);
    const __m512 O1 = Odd ? _mm512_setzero_ps() : _mm512_load_ps(Src + 48);
    _mm512_storeu_si512(Dst, _mm512_permutexvar_epi16(Interleave, (__m512i)_mm512_cvtne2ps_pbh(O0, E0)));
    _mm512_storeu_si512(Dst + 16, _mm512_permutexvar_epi16(Interleave, (__m512i)_mm512_cvtne2ps_pbh(O1, E1)));
  }
}

#pragma GCC diagnostic pop
#undef OPT_UNROLL

/// 64-byte aligned scratch of one worker, kept between runs.
template <typename T> T *scratch(std::vector<T> &V, size_t N) {
  if (V.size() < N + 64 / sizeof(T))
    V.resize(N + 64 / sizeof(T));
  const uintptr_t P = reinterpret_cast<uintptr_t>(V.data());
  return reinterpret_cast<T *>((P + 63) & ~uintptr_t{63});
}

/// The tile epilogue of a GEMM epilogue for the tile at rows R0, columns J0.
GemmTileEpilogue tileEpilogue(const GemmEpilogue &Ep, int64_t R0, int64_t J0) {
  GemmTileEpilogue T;
  T.Bias = Ep.RowBias ? Ep.RowBias + R0 : nullptr;
  T.ColBias = Ep.ColBias ? Ep.ColBias + J0 : nullptr;
  T.Act = Ep.Act, T.Gelu = Ep.Gelu;
  return T;
}

/// Where column J of C starts and its row stride (C itself, or a part of Ep->Split).
float *columnOf(float *C, int64_t Ldc, const GemmEpilogue *Ep, int64_t J, int64_t &Stride) {
  const GemmColumnSplit *Split = Ep ? Ep->Split : nullptr;
  if (!Split) {
    Stride = Ldc;
    return C + J;
  }
  size_t Part = 0;
  while (Part + 1 < Split->Parts && J >= Split->Begin[Part + 1])
    ++Part;
  Stride = Split->Ldc[Part];
  return Split->C[Part] + (J - Split->Begin[Part]);
}

/// K == 0: C = the epilogue of zeros.
void emptyProduct(int64_t M, int64_t N, float *C, int64_t Ldc, const GemmEpilogue *Ep) {
  for (int64_t I = 0; I < M; ++I)
    for (int64_t J = 0; J < N; ++J) {
      int64_t Stride;
      float V = 0;
      if (Ep && Ep->RowBias)
        V += Ep->RowBias[I];
      if (Ep && Ep->ColBias)
        V += Ep->ColBias[J];
      if (Ep)
        V = Ep->Act(V);
      if (Ep && Ep->Gelu)
        approx::geluErfF32(&V, &V, 1);
      columnOf(C, Ldc, Ep, J, Stride)[I * Stride] = V;
    }
}

/// Row blocks x column blocks of tiles, enough to balance the threads (as Gemm.cpp's driver).
struct TaskGrid {
  int64_t PanelsM, PanelsN, TasksM, TasksN;
  TaskGrid(int64_t M, int64_t N, int64_t BlockM, int64_t BlockN, int Threads) {
    PanelsM = ceilDiv(M, kBf16DotMR), PanelsN = ceilDiv(N, kBf16DotNR);
    TasksN = ceilDiv(PanelsN, BlockN), TasksM = ceilDiv(PanelsM, BlockM);
    while (Threads > 1 && (TasksM * TasksN) % Threads != 0 && TasksM * TasksN < 8 * Threads && TasksM < PanelsM)
      ++TasksM;
  }
  /// Panels [P0, P1) x [Q0, Q1) of task T.
  void bounds(size_t T, int64_t &P0, int64_t &P1, int64_t &Q0, int64_t &Q1) const {
    const int64_t Tm = static_cast<int64_t>(T) % TasksM, Tn = static_cast<int64_t>(T) / TasksM;
    P0 = Tm * PanelsM / TasksM, P1 = (Tm + 1) * PanelsM / TasksM;
    Q0 = Tn * PanelsN / TasksN, Q1 = (Tn + 1) * PanelsN / TasksN;
  }
};

/// The MR-row panels [P0, P1) of A (bf16 pairs, rows Pairs apart; A0 = panel P0 at the K block's
/// first pair) times one Pc-pair B panel into the columns of CQ; the epilogue on the last K block.
void rowPanels(int64_t P0, int64_t P1, int64_t M, const uint32_t *A0, int64_t Pairs, const uint32_t *Bp, int64_t Pc,
               float *CQ, int64_t LdcQ, int64_t Col, int64_t Nr, bool Accumulate, bool Last, const GemmEpilogue *Ep) {
  for (int64_t P = P0; P < P1; ++P) {
    const int64_t Mr = std::min<int64_t>(kBf16DotMR, M - P * kBf16DotMR);
    GemmTileEpilogue TileEp;
    if (Last && Ep)
      TileEp = tileEpilogue(*Ep, P * kBf16DotMR, Col);
    bf16Rows(Pc, A0 + (P - P0) * kBf16DotMR * Pairs, Pairs, Bp, CQ + P * kBf16DotMR * LdcQ, LdcQ, Mr, Nr, 1.0f, 0.0f,
             Accumulate, Last && Ep ? &TileEp : nullptr);
  }
}

} // namespace
#endif

void gemmBf16DotRowsA(int64_t M, int64_t K, const float *A, int64_t Lda, const Bf16DotB &B, float *C, int64_t Ldc,
                      const Parallel &Par, const GemmEpilogue *Ep) {
  const int64_t N = B.N;
  if (M == 0 || N == 0)
    return;
#ifdef OPT_BF16DOT_X86
  if (K == 0)
    return emptyProduct(M, N, C, Ldc, Ep);
  const int64_t MR = kBf16DotMR, NR = kBf16DotNR, Pairs = ceilDiv(K, 2), Npad = ceilDiv(N, NR) * NR;
  const TaskGrid Grid(M, N, 8, 4, std::max(1, Par.threads()));
  Par.forRange(static_cast<size_t>(Grid.TasksM * Grid.TasksN), 1, [&](size_t Begin, size_t End) {
    thread_local std::vector<uint32_t> Rows; // the task's rows of A as bf16 pairs
    for (size_t T = Begin; T < End; ++T) {
      int64_t P0, P1, Q0, Q1;
      Grid.bounds(T, P0, P1, Q0, Q1);
      const int64_t R0 = P0 * MR, R1 = std::min(M, P1 * MR);
      uint32_t *Ab = scratch(Rows, static_cast<size_t>((R1 - R0) * Pairs));
      for (int64_t I = R0; I < R1; ++I)
        convertRowBf16(A + I * Lda, K, Ab + (I - R0) * Pairs);
      for (int64_t K0 = 0; K0 < K; K0 += B.Kc) {
        const int64_t Kc = std::min(B.Kc, K - K0), Pc = ceilDiv(Kc, 2);
        const bool Last = K0 + Kc >= K;
        for (int64_t Q = Q0; Q < Q1; ++Q) {
          const uint32_t *Bp = B.Slots.data() + K0 / 2 * Npad + Q * Pc * NR;
          const int64_t Nr = std::min(NR, N - Q * NR);
          int64_t LdcQ;
          float *CQ = columnOf(C, Ldc, Ep, Q * NR, LdcQ);
          rowPanels(P0, P1, M, Ab + K0 / 2, Pairs, Bp, Pc, CQ, LdcQ, Q * NR, Nr, K0 > 0, Last, Ep);
        }
      }
    }
  });
#else
  (void)A, (void)Lda, (void)C, (void)Ldc, (void)Par, (void)K, (void)Ep;
#endif
}

void gemmBf16DotRowsB(const Bf16DotA &A, const GemmRowsB &B, float *C, int64_t Ldc, const Parallel &Par,
                      const GemmEpilogue *Ep) {
  const int64_t M = A.M, N = B.N, K = A.K;
  if (M == 0 || N == 0)
    return;
#ifdef OPT_BF16DOT_X86
  if (K == 0)
    return emptyProduct(M, N, C, Ldc, Ep);
  const int64_t MR = kBf16DotMR, NR = kBf16DotNR, Pairs = A.pairsPerRow();
  // Every row panel in one task (A is the weights: each task then converts each of its B panels
  // once per K block), column blocks of 4 panels.
  const TaskGrid Grid(M, N, ceilDiv(M, MR), 4, std::max(1, Par.threads()));
  const int64_t Kc = bf16DotKc(K);
  Par.forRange(static_cast<size_t>(Grid.TasksM * Grid.TasksN), 1, [&](size_t Begin, size_t End) {
    thread_local std::vector<float> Wide;    // one K block of a column panel, float32
    thread_local std::vector<uint32_t> Pair; // the same as bf16 pairs
    float *F = scratch(Wide, static_cast<size_t>(Kc * NR));
    uint32_t *Bp = scratch(Pair, static_cast<size_t>(ceilDiv(Kc, 2) * NR));
    for (size_t T = Begin; T < End; ++T) {
      int64_t P0, P1, Q0, Q1;
      Grid.bounds(T, P0, P1, Q0, Q1);
      for (int64_t K0 = 0; K0 < K; K0 += Kc) {
        const int64_t Kb = std::min(Kc, K - K0), Pc = ceilDiv(Kb, 2);
        const bool Last = K0 + Kb >= K;
        for (int64_t Q = Q0; Q < Q1; ++Q) {
          const int64_t Nr = std::min(NR, N - Q * NR);
          copyRowsBPanel(B, K0, Kb, Q * NR, Nr, NR, F);
          convertPanelBf16(F, Kb, Bp);
          int64_t LdcQ;
          float *CQ = columnOf(C, Ldc, Ep, Q * NR, LdcQ);
          rowPanels(P0, P1, M, A.Slots.data() + P0 * MR * Pairs + K0 / 2, Pairs, Bp, Pc, CQ, LdcQ, Q * NR, Nr, K0 > 0,
                    Last, Ep);
        }
      }
    }
  });
#else
  (void)B, (void)C, (void)Ldc, (void)Par, (void)K, (void)Ep;
#endif
}

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
