// AVX-512 kernels of the row pipelines (see RowPipeline.h), and the AVX2 + FMA pointwise run. The
// AVX-512 pointwise run is a 12-channel x 32-pixel register tile whose pixel vectors load straight
// from the input channels' rows (a run of pixels is contiguous in NCHW); the AVX2 one takes a
// panel's 12 channels as two 6-channel x 16-pixel tiles. The depthwise rows accumulate 8-16
// independent 16-pixel vectors (several blocks and output rows) at once so the FMA chains overlap,
// loading each input row once per block and taking the side taps from lane shifts (stride 1), or
// from a split even/odd layout of the rows (stride 2), so no load straddles two cache lines.
#include "backends/native/ops/common/RowPipeline.h"

#include <algorithm>

#include "backends/native/ops/common/PackedWeights.h"
#include "backends/native/ops/common/SimdDispatch.h"
#include "backends/native/ops/common/Transpose256.h"
#include "backends/native/ops/common/VecMath256.h"
#include "backends/native/ops/common/VecMath512.h"
#include "core/CpuFeatures.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

namespace {
constexpr int64_t kLanes = 16;
constexpr int64_t MR = kRowPipelineMR;

#ifdef OPT_SIMD_X86
// GCC 12 flags the _mm512_undefined_*() pass-through operands inside min/max/alignr intrinsics
// (unused: every lane is written).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

inline __mmask16 lanesBelow(int64_t N) {
  return N >= kLanes ? static_cast<__mmask16>(0xFFFF) : N <= 0 ? static_cast<__mmask16>(0)
                                                                : static_cast<__mmask16>((1u << N) - 1u);
}

template <int R, bool Half>
__attribute__((target("avx512f,fma"), always_inline)) inline void
pointwiseTile(const float *Panel, int64_t K, const float *X, int64_t Ldx, __mmask16 M0, __mmask16 M1,
              const float *Bias, const FusedAct &Act, float *Out, int64_t Ldo, const float *Res) {
  __m512 Acc0[R], Acc1[R]; // start from the bias: no add in the write-back
  _Pragma("GCC unroll 12") for (int I = 0; I < R; ++I) Acc0[I] = Acc1[I] = Bias ? _mm512_set1_ps(Bias[I]) : _mm512_setzero_ps();
  _Pragma("GCC unroll 2") for (int64_t Kk = 0; Kk < K; ++Kk) {
    const float *Row = X + Kk * Ldx;
    const __m512 B0 = _mm512_maskz_loadu_ps(M0, Row);
    const __m512 B1 = Half ? B0 : _mm512_maskz_loadu_ps(M1, Row + kLanes);
    const float *A = Panel + Kk * MR;
    _Pragma("GCC unroll 12") for (int I = 0; I < R; ++I) {
      const __m512 Av = _mm512_set1_ps(A[I]);
      Acc0[I] = _mm512_fmadd_ps(Av, B0, Acc0[I]);
      if (!Half)
        Acc1[I] = _mm512_fmadd_ps(Av, B1, Acc1[I]);
    }
  }
  const bool Clamp = Act.Kind == ActKind::Clamp, Other = !Act.clampOnly();
  __m512 LoV = _mm512_set1_ps(Act.Min), HiV = _mm512_set1_ps(Act.Max);
  // Kept here: hoisted out of the caller's tile loop they would hold two registers through the
  // k loop, and the 24 accumulators + 2 pixel vectors + 1 broadcast then spill.
  __asm__ volatile("" : "+v"(LoV), "+v"(HiV));
  _Pragma("GCC unroll 12") for (int I = 0; I < R; ++I) {
    __m512 V0 = Acc0[I], V1 = Acc1[I];
    if (Res) { // a fused residual, after the bias and before the clamp
      V0 = _mm512_add_ps(V0, _mm512_maskz_loadu_ps(M0, Res + I * Ldo));
      if (!Half)
        V1 = _mm512_add_ps(V1, _mm512_maskz_loadu_ps(M1, Res + I * Ldo + kLanes));
    }
    if (Clamp) // the value second: NaN passes through
      V0 = _mm512_min_ps(HiV, _mm512_max_ps(LoV, V0)), V1 = _mm512_min_ps(HiV, _mm512_max_ps(LoV, V1));
    if (Other) { // sigmoid, SiLU, hard sigmoid / swish: in registers too
      const Act512 Av(Act);
      V0 = Av(V0), V1 = Av(V1);
    }
    _mm512_mask_storeu_ps(Out + I * Ldo, M0, V0);
    if (!Half)
      _mm512_mask_storeu_ps(Out + I * Ldo + kLanes, M1, V1);
  }
}

template <int R>
__attribute__((target("avx512f,fma"))) void pointwiseRun(const float *Panel, int64_t K, const float *X, int64_t Ldx,
                                                         int64_t N, const float *Bias, const FusedAct &Act,
                                                         float *Out, int64_t Ldo, const float *Res) {
  int64_t J = 0;
  const __mmask16 All = static_cast<__mmask16>(0xFFFF);
  for (; J + 2 * kLanes <= N; J += 2 * kLanes)
    pointwiseTile<R, false>(Panel, K, X + J, Ldx, All, All, Bias, Act, Out + J, Ldo, Res ? Res + J : nullptr);
  const int64_t Left = N - J;
  if (Left > kLanes)
    pointwiseTile<R, false>(Panel, K, X + J, Ldx, All, lanesBelow(Left - kLanes), Bias, Act, Out + J, Ldo,
                            Res ? Res + J : nullptr);
  else if (Left > 0)
    pointwiseTile<R, true>(Panel, K, X + J, Ldx, lanesBelow(Left), 0, Bias, Act, Out + J, Ldo,
                           Res ? Res + J : nullptr);
}

/// U (row, block) units of 16 outputs accumulated together: unit u is output row UR[u] (of the
/// call's rows), column block UB[u].
template <int SW, int KHc, int KWc, int U>
__attribute__((target("avx512f,fma"), always_inline)) inline void
dwUnits(const DepthwiseGeometry &G, const __mmask16 *Masks, const float *const *Rows, const float *K, float Bias,
        float *Out, const int64_t *UR, const int64_t *UB) {
  const int64_t KH = KHc > 0 ? KHc : G.KH, KW = KWc > 0 ? KWc : G.KW;
  const __m512i Even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  __m512 Acc[U];
  int64_t Col[U];
  _Pragma("GCC unroll 8") for (int Un = 0; Un < U; ++Un) {
    Acc[Un] = _mm512_set1_ps(Bias);
    Col[Un] = UB[Un] * kLanes * SW - G.PW;
  }
  for (int64_t Kh = 0; Kh < KH; ++Kh) {
    for (int64_t Kw = 0; Kw < KW; ++Kw) {
      const __m512 Kv = _mm512_set1_ps(K[Kh * KW + Kw]);
      _Pragma("GCC unroll 8") for (int Un = 0; Un < U; ++Un) {
        const float *Src = Rows[UR[Un] * G.SH + Kh] + Col[Un] + Kw;
        const __mmask16 *M = Masks + (UB[Un] * KW + Kw) * 2;
        __m512 X;
        if (SW == 1)
          X = _mm512_maskz_loadu_ps(M[0], Src);
        else
          X = _mm512_permutex2var_ps(_mm512_maskz_loadu_ps(M[0], Src), Even, _mm512_maskz_loadu_ps(M[1], Src + kLanes));
        Acc[Un] = _mm512_fmadd_ps(Kv, X, Acc[Un]);
      }
    }
  }
  const Act512 Av(G.Act);
  _Pragma("GCC unroll 8") for (int Un = 0; Un < U; ++Un) {
    __m512 V = Acc[Un];
    if (Av.on())
      V = Av(V);
    const int64_t Ow0 = UB[Un] * kLanes;
    _mm512_mask_storeu_ps(Out + UR[Un] * G.OW + Ow0, lanesBelow(G.OW - Ow0), V);
  }
}

template <int SW, int KHc, int KWc>
__attribute__((target("avx512f,fma"))) void dwRows(const DepthwiseGeometry &G, const __mmask16 *Masks,
                                                   const float *const *Rows, int64_t R, const float *K, float Bias,
                                                   float *Out) {
  constexpr int MaxU = 8;
  const int64_t Blocks = (G.OW + kLanes - 1) / kLanes, Units = Blocks * R;
  int64_t UR[MaxU], UB[MaxU];
  for (int64_t U0 = 0; U0 < Units; U0 += MaxU) {
    const int64_t N = std::min<int64_t>(MaxU, Units - U0);
    for (int64_t I = 0; I < N; ++I)
      UR[I] = (U0 + I) / Blocks, UB[I] = (U0 + I) % Blocks;
    switch (N) {
#define OPT_CASE(C)                                                                                                    \
  case C: dwUnits<SW, KHc, KWc, C>(G, Masks, Rows, K, Bias, Out, UR, UB); break;
      OPT_CASE(1) OPT_CASE(2) OPT_CASE(3) OPT_CASE(4) OPT_CASE(5) OPT_CASE(6) OPT_CASE(7) OPT_CASE(8)
#undef OPT_CASE
    default: break;
    }
  }
}

/// The 3x3 rows: RU output rows x NB column blocks (the whole row) accumulated together. Only
/// the first and the last block load with masks (the plane's left and right edges); the caller
/// checked that every block between them reads inside the row for every tap.
template <int SW, int NB, int RU>
__attribute__((target("avx512f,fma"))) void dw3x3Tile(const DepthwiseGeometry &G, const __mmask16 *Masks,
                                                      const float *const *Rows, const float *K, float Bias,
                                                      float *Out) {
  const __m512i Even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  const float *Rp[RU][3];
  _Pragma("GCC unroll 8") for (int R = 0; R < RU; ++R) _Pragma("GCC unroll 3") for (int Kh = 0; Kh < 3; ++Kh)
      Rp[R][Kh] = Rows[R * G.SH + Kh] - G.PW;
  __m512 Acc[RU][NB];
  _Pragma("GCC unroll 8") for (int R = 0; R < RU; ++R) _Pragma("GCC unroll 8") for (int B = 0; B < NB; ++B)
      Acc[R][B] = _mm512_set1_ps(Bias);
  const __mmask16 *ML = Masks, *MRt = Masks + (NB - 1) * 3 * 2;
  _Pragma("GCC unroll 3") for (int Kh = 0; Kh < 3; ++Kh) {
    _Pragma("GCC unroll 3") for (int Kw = 0; Kw < 3; ++Kw) {
      const __m512 Kv = _mm512_set1_ps(K[Kh * 3 + Kw]);
      _Pragma("GCC unroll 8") for (int R = 0; R < RU; ++R) {
        _Pragma("GCC unroll 8") for (int B = 0; B < NB; ++B) {
          const float *Src = Rp[R][Kh] + B * kLanes * SW + Kw;
          const bool Edge = B == 0 || B == NB - 1;
          const __mmask16 *M = B == 0 ? ML + Kw * 2 : MRt + Kw * 2;
          __m512 X;
          if (SW == 1) {
            X = Edge ? _mm512_maskz_loadu_ps(M[0], Src) : _mm512_loadu_ps(Src);
          } else {
            const __m512 X0 = Edge ? _mm512_maskz_loadu_ps(M[0], Src) : _mm512_loadu_ps(Src);
            const __m512 X1 = Edge ? _mm512_maskz_loadu_ps(M[1], Src + kLanes) : _mm512_loadu_ps(Src + kLanes);
            X = _mm512_permutex2var_ps(X0, Even, X1);
          }
          Acc[R][B] = _mm512_fmadd_ps(Kv, X, Acc[R][B]);
        }
      }
    }
  }
  const Act512 Av(G.Act);
  const __mmask16 Last = lanesBelow(G.OW - (NB - 1) * kLanes);
  _Pragma("GCC unroll 8") for (int R = 0; R < RU; ++R) _Pragma("GCC unroll 8") for (int B = 0; B < NB; ++B) {
      __m512 V = Acc[R][B];
      if (Av.on())
        V = Av(V);
      if (B == NB - 1)
        _mm512_mask_storeu_ps(Out + R * G.OW + B * kLanes, Last, V);
      else
        _mm512_storeu_ps(Out + R * G.OW + B * kLanes, V);
    }
}

/// The last Rem (< the full tile's rows) rows, as one tile of Rem rows.
template <int SW, int NB, int Max>
__attribute__((target("avx512f,fma"))) inline void dw3x3Tail(const DepthwiseGeometry &G, const __mmask16 *Masks,
                                                             const float *const *Rows, int64_t Rem, const float *K,
                                                             float Bias, float *Out) {
  if constexpr (Max >= 1) {
    if (Rem == Max)
      dw3x3Tile<SW, NB, Max>(G, Masks, Rows, K, Bias, Out);
    else
      dw3x3Tail<SW, NB, Max - 1>(G, Masks, Rows, Rem, K, Bias, Out);
  }
}

template <int SW, int NB>
__attribute__((target("avx512f,fma"))) void dw3x3Rows(const DepthwiseGeometry &G, const __mmask16 *Masks,
                                                      const float *const *Rows, int64_t R, const float *K,
                                                      float Bias, float *Out) {
  constexpr int RU = NB >= 8 ? 1 : 8 / NB;
  int64_t Row = 0;
  for (; Row + RU <= R; Row += RU)
    dw3x3Tile<SW, NB, RU>(G, Masks, Rows + Row * G.SH, K, Bias, Out + Row * G.OW);
  if (Row < R)
    dw3x3Tail<SW, NB, RU - 1>(G, Masks, Rows + Row * G.SH, R - Row, K, Bias, Out + Row * G.OW);
}

/// Whether every column block but the first and the last reads inside the row for every tap.
bool interiorBlocksFull(const DepthwiseGeometry &G, const uint16_t *Masks) {
  const int64_t Blocks = (G.OW + kLanes - 1) / kLanes;
  for (int64_t B = 1; B + 1 < Blocks; ++B)
    for (int64_t Kw = 0; Kw < G.KW; ++Kw)
      for (int64_t Half = 0; Half < (G.SW == 2 ? 2 : 1); ++Half)
        if (Masks[(B * G.KW + Kw) * 2 + Half] != 0xFFFF)
          return false;
  // The unmasked loads of an interior block may read up to 31 floats past its first column;
  // those must lie inside the row too (they do whenever the masks above are full).
  return true;
}

/// RU output rows x NB column blocks of a planned 3x3 row (every tap a run of 16 floats at
/// Off[kw] + ow): masked loads only in the first and the last block.
template <int NB, int RU>
__attribute__((target("avx512f,fma"))) void dw3x3UnitTile(const Dw3x3RowPlan &P, const float *const *Rows,
                                                          const float *K, float Bias, float *Out) {
  __m512 Acc[RU][NB];
  _Pragma("GCC unroll 8") for (int R = 0; R < RU; ++R) _Pragma("GCC unroll 8") for (int B = 0; B < NB; ++B)
      Acc[R][B] = _mm512_set1_ps(Bias);
  const __mmask16 *ML = reinterpret_cast<const __mmask16 *>(P.Masks.data());
  const __mmask16 *MRt = ML + (NB - 1) * 3;
  _Pragma("GCC unroll 3") for (int Kw = 0; Kw < 3; ++Kw) {
    const int64_t Off = P.Off[Kw];
    _Pragma("GCC unroll 3") for (int Kh = 0; Kh < 3; ++Kh) {
      const __m512 Kv = _mm512_set1_ps(K[Kh * 3 + Kw]);
      _Pragma("GCC unroll 8") for (int R = 0; R < RU; ++R) {
        const float *Row = Rows[R * P.SH + Kh] + Off;
        _Pragma("GCC unroll 8") for (int B = 0; B < NB; ++B) {
          const float *Src = Row + B * kLanes;
          const __m512 X = B == 0 ? _mm512_maskz_loadu_ps(ML[Kw], Src)
                           : B == NB - 1 ? _mm512_maskz_loadu_ps(MRt[Kw], Src)
                                         : _mm512_loadu_ps(Src);
          Acc[R][B] = _mm512_fmadd_ps(Kv, X, Acc[R][B]);
        }
      }
    }
  }
  const Act512 Av(P.Act);
  const __mmask16 Last = lanesBelow(P.OW - (NB - 1) * kLanes);
  _Pragma("GCC unroll 8") for (int R = 0; R < RU; ++R) _Pragma("GCC unroll 8") for (int B = 0; B < NB; ++B) {
      __m512 V = Acc[R][B];
      if (Av.on())
        V = Av(V);
      if (B == NB - 1)
        _mm512_mask_storeu_ps(Out + R * P.OW + B * kLanes, Last, V);
      else
        _mm512_storeu_ps(Out + R * P.OW + B * kLanes, V);
    }
}

/// The shifted form (P.Shifted) of dw3x3UnitTile: input row i of the tile is loaded once per block
/// (the last block masked to the row, zeros past it) and its left and right neighbours come from
/// lane shifts across the adjacent blocks, so no load straddles two cache lines for the side taps;
/// the row feeds every output row of the tile whose window holds it.
template <int NB, int RU>
__attribute__((target("avx512f,fma"))) void dw3x3ShiftTile(const Dw3x3RowPlan &P, const float *const *Rows,
                                                           const float *K, float Bias, float *Out) {
  __m512 Acc[RU][NB];
  _Pragma("GCC unroll 8") for (int R = 0; R < RU; ++R) _Pragma("GCC unroll 8") for (int B = 0; B < NB; ++B)
      Acc[R][B] = _mm512_set1_ps(Bias);
  const __m512i Zero = _mm512_setzero_si512();
  _Pragma("GCC unroll 10") for (int I = 0; I < RU + 2; ++I) {
    const float *Row = Rows[I];
    __m512i V[NB];
    _Pragma("GCC unroll 8") for (int B = 0; B < NB; ++B) V[B] =
        B == NB - 1 ? _mm512_castps_si512(_mm512_maskz_loadu_ps(P.LastLanes, Row + B * kLanes))
                    : _mm512_castps_si512(_mm512_loadu_ps(Row + B * kLanes));
    _Pragma("GCC unroll 8") for (int B = 0; B < NB; ++B) {
      const __m512 L = _mm512_castsi512_ps(_mm512_alignr_epi32(V[B], B > 0 ? V[B - 1] : Zero, 15));
      const __m512 C = _mm512_castsi512_ps(V[B]);
      const __m512 Rt = _mm512_castsi512_ps(_mm512_alignr_epi32(B + 1 < NB ? V[B + 1] : Zero, V[B], 1));
      _Pragma("GCC unroll 8") for (int R = 0; R < RU; ++R) {
        const int Kh = I - R;
        if (Kh < 0 || Kh > 2)
          continue;
        Acc[R][B] = _mm512_fmadd_ps(_mm512_set1_ps(K[Kh * 3]), L, Acc[R][B]);
        Acc[R][B] = _mm512_fmadd_ps(_mm512_set1_ps(K[Kh * 3 + 1]), C, Acc[R][B]);
        Acc[R][B] = _mm512_fmadd_ps(_mm512_set1_ps(K[Kh * 3 + 2]), Rt, Acc[R][B]);
      }
    }
  }
  const Act512 Av(P.Act);
  const __mmask16 Last = lanesBelow(P.OW - (NB - 1) * kLanes);
  _Pragma("GCC unroll 8") for (int R = 0; R < RU; ++R) _Pragma("GCC unroll 8") for (int B = 0; B < NB; ++B) {
      __m512 V = Acc[R][B];
      if (Av.on())
        V = Av(V);
      if (B == NB - 1)
        _mm512_mask_storeu_ps(Out + R * P.OW + B * kLanes, Last, V);
      else
        _mm512_storeu_ps(Out + R * P.OW + B * kLanes, V);
    }
}

template <int NB, int Max>
__attribute__((target("avx512f,fma"))) inline void dw3x3ShiftTail(const Dw3x3RowPlan &P, const float *const *Rows,
                                                                  int64_t Rem, const float *K, float Bias, float *Out) {
  if constexpr (Max >= 1) {
    if (Rem == Max)
      dw3x3ShiftTile<NB, Max>(P, Rows, K, Bias, Out);
    else
      dw3x3ShiftTail<NB, Max - 1>(P, Rows, Rem, K, Bias, Out);
  }
}

template <int NB, int Max>
__attribute__((target("avx512f,fma"))) inline void dw3x3UnitTail(const Dw3x3RowPlan &P, const float *const *Rows,
                                                                 int64_t Rem, const float *K, float Bias, float *Out) {
  if constexpr (Max >= 1) {
    if (Rem == Max)
      dw3x3UnitTile<NB, Max>(P, Rows, K, Bias, Out);
    else
      dw3x3UnitTail<NB, Max - 1>(P, Rows, Rem, K, Bias, Out);
  }
}

/// Stride-2 3x3 rows on split rows (P.Split2, one column of padding each side): output column
/// 16b + j reads input columns 32b + 2j - 1, 2j, 2j + 1, i.e. odd column j - 1, even column j and
/// odd column j of block b; the first comes from a lane shift across the odd vectors of blocks b -
/// 1 and b. Input row i feeds every output row r of the tile with i - r * SH in [0, 3).
template <int NB, int RU>
__attribute__((target("avx512f,fma"))) void dw3x3Split2Tile(const Dw3x3RowPlan &P, const float *const *Rows,
                                                            const float *K, float Bias, float *Out) {
  constexpr int SH = 2; // the caller checked P.SH == 2
  __m512 Acc[RU][NB];
  _Pragma("GCC unroll 8") for (int R = 0; R < RU; ++R) _Pragma("GCC unroll 8") for (int B = 0; B < NB; ++B)
      Acc[R][B] = _mm512_set1_ps(Bias);
  const __m512i Zero = _mm512_setzero_si512();
  const __mmask16 LastE = lanesBelow(P.LastEven), LastO = lanesBelow(P.LastOdd);
  _Pragma("GCC unroll 17") for (int I = 0; I < (RU - 1) * SH + 3; ++I) {
    const float *Row = Rows[I];
    __m512 E[NB];
    __m512i O[NB];
    _Pragma("GCC unroll 8") for (int B = 0; B < NB; ++B) {
      const float *Chunk = Row + B * 2 * kLanes;
      if (B == NB - 1) {
        E[B] = _mm512_maskz_loadu_ps(LastE, Chunk);
        O[B] = _mm512_castps_si512(_mm512_maskz_loadu_ps(LastO, Chunk + P.LastEven));
      } else {
        E[B] = _mm512_loadu_ps(Chunk);
        O[B] = _mm512_castps_si512(_mm512_loadu_ps(Chunk + kLanes));
      }
    }
    _Pragma("GCC unroll 8") for (int B = 0; B < NB; ++B) {
      const __m512 L = _mm512_castsi512_ps(_mm512_alignr_epi32(O[B], B > 0 ? O[B - 1] : Zero, 15));
      const __m512 Rt = _mm512_castsi512_ps(O[B]);
      _Pragma("GCC unroll 8") for (int R = 0; R < RU; ++R) {
        const int Kh = I - R * SH;
        if (Kh < 0 || Kh > 2)
          continue;
        Acc[R][B] = _mm512_fmadd_ps(_mm512_set1_ps(K[Kh * 3]), L, Acc[R][B]);
        Acc[R][B] = _mm512_fmadd_ps(_mm512_set1_ps(K[Kh * 3 + 1]), E[B], Acc[R][B]);
        Acc[R][B] = _mm512_fmadd_ps(_mm512_set1_ps(K[Kh * 3 + 2]), Rt, Acc[R][B]);
      }
    }
  }
  const Act512 Av(P.Act);
  const __mmask16 Last = lanesBelow(P.OW - (NB - 1) * kLanes);
  _Pragma("GCC unroll 8") for (int R = 0; R < RU; ++R) _Pragma("GCC unroll 8") for (int B = 0; B < NB; ++B) {
      __m512 V = Acc[R][B];
      if (Av.on())
        V = Av(V);
      if (B == NB - 1)
        _mm512_mask_storeu_ps(Out + R * P.OW + B * kLanes, Last, V);
      else
        _mm512_storeu_ps(Out + R * P.OW + B * kLanes, V);
    }
}

template <int NB, int Max>
__attribute__((target("avx512f,fma"))) inline void dw3x3Split2Tail(const Dw3x3RowPlan &P, const float *const *Rows,
                                                                   int64_t Rem, const float *K, float Bias,
                                                                   float *Out) {
  if constexpr (Max >= 1) {
    if (Rem == Max)
      dw3x3Split2Tile<NB, Max>(P, Rows, K, Bias, Out);
    else
      dw3x3Split2Tail<NB, Max - 1>(P, Rows, Rem, K, Bias, Out);
  }
}

template <int NB>
__attribute__((target("avx512f,fma"))) void dw3x3UnitRows(const Dw3x3RowPlan &P, const float *const *Rows, int64_t R,
                                                          const float *K, float Bias, float *Out) {
  if (P.Split2) { // up to 8 accumulators beside the even and odd vectors of a row
    constexpr int SU = NB >= 8 ? 1 : 8 / NB;
    int64_t Row = 0;
    for (; Row + SU <= R; Row += SU)
      dw3x3Split2Tile<NB, SU>(P, Rows + Row * 2, K, Bias, Out + Row * P.OW);
    if (Row < R)
      dw3x3Split2Tail<NB, SU - 1>(P, Rows + Row * 2, R - Row, K, Bias, Out + Row * P.OW);
    return;
  }
  if (P.Shifted) { // up to 16 accumulators: each loaded row serves up to 3 output rows
    constexpr int SU = NB >= 16 ? 1 : (16 / NB > 8 ? 8 : 16 / NB);
    int64_t Row = 0;
    for (; Row + SU <= R; Row += SU)
      dw3x3ShiftTile<NB, SU>(P, Rows + Row, K, Bias, Out + Row * P.OW);
    if (Row < R)
      dw3x3ShiftTail<NB, SU - 1>(P, Rows + Row, R - Row, K, Bias, Out + Row * P.OW);
    return;
  }
  constexpr int RU = NB >= 8 ? 1 : 8 / NB;
  int64_t Row = 0;
  for (; Row + RU <= R; Row += RU)
    dw3x3UnitTile<NB, RU>(P, Rows + Row * P.SH, K, Bias, Out + Row * P.OW);
  if (Row < R)
    dw3x3UnitTail<NB, RU - 1>(P, Rows + Row * P.SH, R - Row, K, Bias, Out + Row * P.OW);
}

__attribute__((target("avx512f"))) void deinterleaveRow(const float *Src, int64_t W, float *Dst) {
  const __m512i Even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  const __m512i Odd = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
  for (int64_t J = 0; J < W; J += 2 * kLanes) {
    const int64_t N = std::min<int64_t>(2 * kLanes, W - J), NE = (N + 1) / 2;
    const __m512 A = _mm512_maskz_loadu_ps(lanesBelow(N), Src + J);
    const __m512 B = _mm512_maskz_loadu_ps(lanesBelow(N - kLanes), Src + J + kLanes);
    _mm512_mask_storeu_ps(Dst + J, lanesBelow(NE), _mm512_permutex2var_ps(A, Even, B));
    _mm512_mask_storeu_ps(Dst + J + NE, lanesBelow(N / 2), _mm512_permutex2var_ps(A, Odd, B));
  }
}

/// Rows R (<= 12) pixels x 32 columns: pixel i's value of input channel k is broadcast from X (a
/// pixel row is a run of the channel's plane), the 32 columns load from the transposed weights.
template <int R, bool Prefetch>
__attribute__((target("avx512f,fma"))) inline void transposedTile(const float *X, int64_t Ldx, int64_t K,
                                                                  const float *WT, int64_t Ldw, __mmask16 M0,
                                                                  __mmask16 M1, const float *ColBias, const FusedAct &Act,
                                                                  float *Out, int64_t Ldo,
                                                                  const float *Next) {
  const __m512 Bias0 = ColBias ? _mm512_maskz_loadu_ps(M0, ColBias) : _mm512_setzero_ps();
  const __m512 Bias1 = ColBias ? _mm512_maskz_loadu_ps(M1, ColBias + kLanes) : _mm512_setzero_ps();
  __m512 Acc0[R], Acc1[R];
  _Pragma("GCC unroll 12") for (int I = 0; I < R; ++I) Acc0[I] = Bias0, Acc1[I] = Bias1;
  _Pragma("GCC unroll 2") for (int64_t Kk = 0; Kk < K; ++Kk) {
    const __m512 B0 = _mm512_maskz_loadu_ps(M0, WT + Kk * Ldw), B1 = _mm512_maskz_loadu_ps(M1, WT + Kk * Ldw + kLanes);
    if (Prefetch) // the next block's weight row (4 lines), while this one computes
      _Pragma("GCC unroll 4") for (int L = 0; L < 4; ++L)
          _mm_prefetch(reinterpret_cast<const char *>(Next + Kk * Ldw + L * kLanes), _MM_HINT_T0);
    const float *A = X + Kk * Ldx;
    _Pragma("GCC unroll 12") for (int I = 0; I < R; ++I) {
      const __m512 Av = _mm512_set1_ps(A[I]);
      Acc0[I] = _mm512_fmadd_ps(Av, B0, Acc0[I]);
      Acc1[I] = _mm512_fmadd_ps(Av, B1, Acc1[I]);
    }
  }
  const bool Clamp = Act.Kind == ActKind::Clamp, Other = !Act.clampOnly();
  __m512 LoV = _mm512_set1_ps(Act.Min), HiV = _mm512_set1_ps(Act.Max);
  __asm__ volatile("" : "+v"(LoV), "+v"(HiV)); // see pointwiseTile
  _Pragma("GCC unroll 12") for (int I = 0; I < R; ++I) {
    __m512 V0 = Acc0[I], V1 = Acc1[I];
    if (Clamp)
      V0 = _mm512_min_ps(HiV, _mm512_max_ps(LoV, V0)), V1 = _mm512_min_ps(HiV, _mm512_max_ps(LoV, V1));
    if (Other) { // sigmoid, SiLU, hard sigmoid / swish: in registers too
      const Act512 Av(Act);
      V0 = Av(V0), V1 = Av(V1);
    }
    _mm512_mask_storeu_ps(Out + I * Ldo, M0, V0);
    _mm512_mask_storeu_ps(Out + I * Ldo + kLanes, M1, V1);
  }
}

template <int R>
__attribute__((target("avx512f,fma"))) void transposedPanel(const float *X, int64_t Ldx, int64_t K, const float *WT,
                                                            int64_t Ldw, int64_t Cols, const float *ColBias,
                                                            const FusedAct &Act, float *Out, int64_t Ldo,
                                                            const float *Next) {
  for (int64_t C0 = 0; C0 < Cols; C0 += 2 * kLanes) {
    const __mmask16 M0 = lanesBelow(Cols - C0), M1 = lanesBelow(Cols - C0 - kLanes);
    const float *Bias = ColBias ? ColBias + C0 : nullptr;
    if (Next && C0 == 0)
      transposedTile<R, true>(X, Ldx, K, WT + C0, Ldw, M0, M1, Bias, Act, Out + C0, Ldo, Next);
    else
      transposedTile<R, false>(X, Ldx, K, WT + C0, Ldw, M0, M1, Bias, Act, Out + C0, Ldo, nullptr);
  }
}

__attribute__((target("avx512f,fma"))) void depthwiseChannels(const DepthwiseGeometry &G,
                                                              const DepthwiseTapList &Taps, const float *In,
                                                              int64_t Ldi, const float *KT, int64_t Ldk,
                                                              const float *Bias, int64_t Cols, float *Out,
                                                              int64_t Ldo) {
  const Act512 Av(G.Act);
  const int64_t OutPixels = static_cast<int64_t>(Taps.Begin.size()) - 1;
  for (int64_t C0 = 0; C0 < Cols; C0 += 4 * kLanes) {
    const int64_t Groups = std::min<int64_t>(4, (Cols - C0) / kLanes);
    __m512 B[4];
    for (int64_t Gp = 0; Gp < Groups; ++Gp)
      B[Gp] = Bias ? _mm512_loadu_ps(Bias + C0 + Gp * kLanes) : _mm512_setzero_ps();
    for (int64_t O = 0; O < OutPixels; ++O) {
      __m512 Acc[4] = {B[0], B[1], B[2], B[3]};
      for (int32_t T = Taps.Begin[O]; T < Taps.Begin[O + 1]; ++T) {
        const float *Src = In + Taps.Pixel[T] * Ldi + C0;
        const float *Wt = KT + Taps.Tap[T] * Ldk + C0;
        if (Groups == 4) {
          _Pragma("GCC unroll 4") for (int Gp = 0; Gp < 4; ++Gp) Acc[Gp] =
              _mm512_fmadd_ps(_mm512_loadu_ps(Wt + Gp * kLanes), _mm512_loadu_ps(Src + Gp * kLanes), Acc[Gp]);
        } else {
          for (int64_t Gp = 0; Gp < Groups; ++Gp)
            Acc[Gp] = _mm512_fmadd_ps(_mm512_loadu_ps(Wt + Gp * kLanes), _mm512_loadu_ps(Src + Gp * kLanes), Acc[Gp]);
        }
      }
      for (int64_t Gp = 0; Gp < Groups; ++Gp) {
        __m512 V = Acc[Gp];
        if (Av.on())
          V = Av(V);
        _mm512_storeu_ps(Out + O * Ldo + C0 + Gp * kLanes, V);
      }
    }
  }
}


__attribute__((target("avx512f"))) void transposeToPlanes(const float *In, int64_t Ldi, int64_t Pixels, int64_t Cols,
                                                          float *Y, int64_t Ldy) {
  for (int64_t C0 = 0; C0 < Cols; C0 += kLanes) {
    const __mmask16 CM = lanesBelow(Cols - C0);
    const int64_t Cn = std::min<int64_t>(kLanes, Cols - C0);
    for (int64_t P0 = 0; P0 < Pixels; P0 += kLanes) {
      const int64_t Pn = std::min<int64_t>(kLanes, Pixels - P0);
      __m512 R[16];
      for (int64_t I = 0; I < 16; ++I)
        R[I] = I < Pn ? _mm512_maskz_loadu_ps(CM, In + (P0 + I) * Ldi + C0) : _mm512_setzero_ps();
      vec512::transpose16x16(R);
      const __mmask16 PM = lanesBelow(Pn);
      for (int64_t I = 0; I < Cn; ++I)
        _mm512_mask_storeu_ps(Y + (C0 + I) * Ldy + P0, PM, R[I]);
    }
  }
}

__attribute__((target("avx512f"))) void copyRowsPadded(const float *Src, int64_t Lds, int64_t Rows, int64_t Valid,
                                                       int64_t Width, float *Out) {
  const __mmask16 Load = lanesBelow(Valid), Store = lanesBelow(Width);
  for (int64_t R = 0; R < Rows; ++R)
    _mm512_mask_storeu_ps(Out + R * Width, Store, _mm512_maskz_loadu_ps(Load, Src + R * Lds));
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif

#if defined(OPT_SIMD_X86) && defined(OPT_HAVE_VECMATH256)
// --- AVX2 + FMA pointwise run: 6 channels x 16 pixels per register tile ---------------------------
constexpr int64_t kLanes256 = 8, kTile256 = 2 * kLanes256;

/// Which pixels of the tile are real: all 16 (Full), 9..16 (Tail: both vectors masked), 1..8 (Half:
/// only the first vector computed).
enum class Cols256 { Full, Tail, Half };

/// Which part of the input channels a call covers: Accumulate starts from the partial sums already in
/// Out (a later chunk of channels) instead of the bias; Finish (the last chunk) adds the residual
/// and applies the activation, otherwise the partial sums are stored as they are.
struct KChunk256 {
  bool Accumulate, Finish;
};

/// R (<= 6) channels of a 12-row packed panel (A: the panel plus the half's first row) against 16
/// pixels starting at X (row k at X + k * Ldx); M0 / M1 the lanes of the two pixel vectors (Tail,
/// Half). Accumulators start from the bias (or Out: C.Accumulate); residual, clamp and activation
/// before the store (C.Finish). Prefetch (a panel's first pass over a whole block): row k's line
/// 16 pixels on, the next block's input (read in place, a line or two from each of up to 192 rows
/// far apart; from L3 or memory on the first panel). Zen 3, 1 thread, minima of alternated runs:
/// SqueezeNet's 32 from 256 channels on 27x27 149 -> 141 us (144 prefetching 2 blocks ahead),
/// 16 from 64 on 55x55 85 -> 77 (72 at 2 blocks, but EfficientNet-B0's 16 from 32 on 112x112
/// 185 -> 198 in the model at 2, 184 at 1).
template <int R, Cols256 Mode, bool Prefetch = false>
__attribute__((target("avx2,fma"), always_inline)) inline void
pointwiseTile256(const float *A, int64_t K, const float *X, int64_t Ldx, __m256i M0, __m256i M1, const float *Bias,
                 const FusedAct &Act, float *Out, int64_t Ldo, const float *Res, KChunk256 C) {
  constexpr bool Half = Mode == Cols256::Half, Full = Mode == Cols256::Full;
  __m256 Acc0[R], Acc1[R];
  if (C.Accumulate) {
    _Pragma("GCC unroll 6") for (int I = 0; I < R; ++I) {
      const float *Row = Out + I * Ldo;
      Acc0[I] = Full ? _mm256_loadu_ps(Row) : _mm256_maskload_ps(Row, M0);
      Acc1[I] = Half ? Acc0[I] : Full ? _mm256_loadu_ps(Row + kLanes256) : _mm256_maskload_ps(Row + kLanes256, M1);
    }
  } else {
    _Pragma("GCC unroll 6") for (int I = 0; I < R; ++I) Acc0[I] = Acc1[I] =
        Bias ? _mm256_broadcast_ss(Bias + I) : _mm256_setzero_ps();
  }
  _Pragma("GCC unroll 2") for (int64_t Kk = 0; Kk < K; ++Kk) {
    const float *Row = X + Kk * Ldx;
    if (Prefetch)
      _mm_prefetch(reinterpret_cast<const char *>(Row + kTile256), _MM_HINT_T0);
    const __m256 B0 = Full ? _mm256_loadu_ps(Row) : _mm256_maskload_ps(Row, M0);
    const __m256 B1 = Half ? B0 : Full ? _mm256_loadu_ps(Row + kLanes256) : _mm256_maskload_ps(Row + kLanes256, M1);
    const float *Ak = A + Kk * MR;
    _Pragma("GCC unroll 6") for (int I = 0; I < R; ++I) {
      const __m256 Av = _mm256_broadcast_ss(Ak + I);
      Acc0[I] = _mm256_fmadd_ps(Av, B0, Acc0[I]);
      if (!Half)
        Acc1[I] = _mm256_fmadd_ps(Av, B1, Acc1[I]);
    }
  }
  const bool Clamp = Act.Kind == ActKind::Clamp, Other = !Act.clampOnly();
  __m256 LoV = _mm256_set1_ps(Act.Min), HiV = _mm256_set1_ps(Act.Max);
  // Kept here (as in the AVX-512 tile): hoisted into the caller's block loop they would hold two
  // registers through the k loop, and 12 accumulators + 2 pixel vectors + 1 broadcast then spill.
  __asm__ volatile("" : "+x"(LoV), "+x"(HiV));
  _Pragma("GCC unroll 6") for (int I = 0; I < R; ++I) {
    __m256 V0 = Acc0[I], V1 = Acc1[I];
    float *Row = Out + I * Ldo;
    if (!C.Finish) { // partial sums of a chunk of the input channels
      if (Full) {
        _mm256_storeu_ps(Row, V0), _mm256_storeu_ps(Row + kLanes256, V1);
      } else {
        _mm256_maskstore_ps(Row, M0, V0);
        if (!Half)
          _mm256_maskstore_ps(Row + kLanes256, M1, V1);
      }
      continue;
    }
    if (Res) { // a fused residual, after the bias and before the clamp
      const float *Rr = Res + I * Ldo;
      V0 = _mm256_add_ps(V0, Full ? _mm256_loadu_ps(Rr) : _mm256_maskload_ps(Rr, M0));
      if (!Half)
        V1 = _mm256_add_ps(V1, Full ? _mm256_loadu_ps(Rr + kLanes256) : _mm256_maskload_ps(Rr + kLanes256, M1));
    }
    if (Clamp) // the value second: NaN passes through
      V0 = _mm256_min_ps(HiV, _mm256_max_ps(LoV, V0)), V1 = _mm256_min_ps(HiV, _mm256_max_ps(LoV, V1));
    if (Other) { // sigmoid, SiLU, hard sigmoid / swish: in registers too
      const Act256 Av(Act);
      V0 = Av(V0);
      if (!Half)
        V1 = Av(V1);
    }
    if (Full) {
      _mm256_storeu_ps(Row, V0), _mm256_storeu_ps(Row + kLanes256, V1);
    } else {
      _mm256_maskstore_ps(Row, M0, V0);
      if (!Half)
        _mm256_maskstore_ps(Row + kLanes256, M1, V1);
    }
  }
}

/// One 16-pixel block of a panel: its first R0 channels, then the next R1 (0..6), the block's
/// input rows still in L1 for the second pass. Prefetch: the first pass fetches the next block's
/// rows (the block's first panel).
template <int R0, int R1, Cols256 Mode, bool Prefetch = Mode == Cols256::Full>
__attribute__((target("avx2,fma"), always_inline)) inline void
pointwiseBlock256(const float *Panel, int64_t K, const float *X, int64_t Ldx, __m256i M0, __m256i M1,
                  const float *Bias, const FusedAct &Act, float *Out, int64_t Ldo, const float *Res, KChunk256 C) {
  pointwiseTile256<R0, Mode, Prefetch>(Panel, K, X, Ldx, M0, M1, Bias, Act, Out, Ldo, Res, C);
  if (R1 > 0)
    pointwiseTile256<(R1 > 0 ? R1 : 1), Mode>(Panel + R0, K, X, Ldx, M0, M1, Bias ? Bias + R0 : nullptr, Act,
                                             Out + R0 * Ldo, Ldo, Res ? Res + R0 * Ldo : nullptr, C);
}

/// One chunk of the input channels over the N pixels, block by block. Pair: a second whole panel
/// (12 channels, Next floats after the first, its rows of Out / Res and its bias 12 on) takes each
/// block right after the first, from the rows the first panel brought into L1.
template <int R0, int R1, bool Pair = false>
__attribute__((target("avx2,fma"))) void pointwiseChunk256(const float *Panel, int64_t K, const float *X, int64_t Ldx,
                                                           int64_t N, const float *Bias, const FusedAct &Act,
                                                           float *Out, int64_t Ldo, const float *Res, KChunk256 C,
                                                           int64_t Next = 0) {
  const __m256i All = _mm256_set1_epi32(-1);
  const float *Bias2 = Pair && Bias ? Bias + MR : nullptr;
  const auto Res2 = [&](int64_t J) { return Res ? Res + MR * Ldo + J : nullptr; };
  int64_t J = 0;
  for (; J + kTile256 <= N; J += kTile256) {
    pointwiseBlock256<R0, R1, Cols256::Full>(Panel, K, X + J, Ldx, All, All, Bias, Act, Out + J, Ldo,
                                              Res ? Res + J : nullptr, C);
    if (Pair)
      pointwiseBlock256<6, 6, Cols256::Full, false>(Panel + Next, K, X + J, Ldx, All, All, Bias2, Act,
                                                    Out + MR * Ldo + J, Ldo, Res2(J), C);
  }
  const int64_t Left = N - J;
  if (Left > kLanes256) {
    const __m256i M1 = vec256::lanesBelow256(Left - kLanes256);
    pointwiseBlock256<R0, R1, Cols256::Tail>(Panel, K, X + J, Ldx, All, M1, Bias, Act, Out + J, Ldo,
                                              Res ? Res + J : nullptr, C);
    if (Pair)
      pointwiseBlock256<6, 6, Cols256::Tail>(Panel + Next, K, X + J, Ldx, All, M1, Bias2, Act, Out + MR * Ldo + J,
                                             Ldo, Res2(J), C);
  } else if (Left > 0) {
    const __m256i M0 = vec256::lanesBelow256(Left);
    pointwiseBlock256<R0, R1, Cols256::Half>(Panel, K, X + J, Ldx, M0, All, Bias, Act, Out + J, Ldo,
                                              Res ? Res + J : nullptr, C);
    if (Pair)
      pointwiseBlock256<6, 6, Cols256::Half>(Panel + Next, K, X + J, Ldx, M0, All, Bias2, Act, Out + MR * Ldo + J,
                                             Ldo, Res2(J), C);
  }
}

/// Over kOneChunkK256 input channels they are taken in chunks of at most kChunkK256: a 16-pixel
/// block's rows of one chunk (64 bytes each) and the panel's part (48 bytes per channel) stay in
/// L1 for both 6-channel passes; all K of them would not past ~200 channels. Later chunks add to
/// the partial sums in Out. Zen 3, 1 thread, one-Conv models, minima of alternated runs: ResNet-50's
/// 128 from 512 on 28x28 1.098 -> 1.082 ms with chunks of 128 instead of 171 (96: 1.100); 1024 from
/// 256 on 14x14 as one chunk of 256 1.111 -> 1.168 against two of 128.
constexpr int64_t kChunkK256 = 128, kOneChunkK256 = 192;

template <int R0, int R1, bool Pair = false>
__attribute__((target("avx2,fma"))) void pointwiseRun256(const float *Panel, int64_t K, const float *X, int64_t Ldx,
                                                         int64_t N, const float *Bias, const FusedAct &Act, float *Out,
                                                         int64_t Ldo, const float *Res) {
  const int64_t Chunks = K <= kOneChunkK256 ? 1 : (K + kChunkK256 - 1) / kChunkK256;
  const int64_t Step = std::max<int64_t>(1, (K + Chunks - 1) / Chunks);
  for (int64_t K0 = 0; K0 < K || K0 == 0; K0 += Step) {
    const int64_t Kn = std::min(Step, K - K0);
    const KChunk256 C{K0 > 0, K0 + Kn >= K};
    pointwiseChunk256<R0, R1, Pair>(Panel + K0 * MR, Kn, X + K0 * Ldx, Ldx, N, K0 > 0 ? nullptr : Bias, Act, Out,
                                    Ldo, Res, C, K * MR);
  }
}

// --- AVX2 + FMA channels-in-lanes pointwise for small planes: 6 pixels x 16 channels per tile -------
constexpr int kTransposedRows256 = 6;

/// R (<= 6) pixels x NV (1 or 2) vectors of 8 output channels: pixel i's value of input channel k
/// broadcast from X's row k, the channels loaded from the transposed weights. Next (or null): the
/// next block's weight rows (NextLd floats per k), a line per k prefetched while this tile computes.
/// Row k's line 16 pixels on is prefetched too: X's chunk is read a tile of 6 pixels at a time,
/// one line from each of up to 128 rows, and on the first block it comes from memory or the
/// other core's cache (written by the op before, split between the threads).
template <int R, int NV>
__attribute__((target("avx2,fma"), always_inline)) inline void
transposedTile256(const float *X, int64_t Ldx, int64_t K, const float *WT, int64_t Ldw, const float *ColBias,
                  bool Accumulate, float *Out, int64_t Ldo, const float *Next, int64_t NextLd) {
  __m256 Acc[R][NV];
  if (Accumulate) {
    _Pragma("GCC unroll 6") for (int I = 0; I < R; ++I) _Pragma("GCC unroll 2") for (int V = 0; V < NV; ++V)
        Acc[I][V] = _mm256_loadu_ps(Out + I * Ldo + V * kLanes256);
  } else {
    _Pragma("GCC unroll 2") for (int V = 0; V < NV; ++V) {
      const __m256 B = ColBias ? _mm256_loadu_ps(ColBias + V * kLanes256) : _mm256_setzero_ps();
      _Pragma("GCC unroll 6") for (int I = 0; I < R; ++I) Acc[I][V] = B;
    }
  }
  _Pragma("GCC unroll 2") for (int64_t Kk = 0; Kk < K; ++Kk) {
    __m256 B[NV];
    _Pragma("GCC unroll 2") for (int V = 0; V < NV; ++V) B[V] = _mm256_loadu_ps(WT + Kk * Ldw + V * kLanes256);
    if (Next)
      _mm_prefetch(reinterpret_cast<const char *>(Next + Kk * NextLd), _MM_HINT_T0);
    const float *A = X + Kk * Ldx;
    _mm_prefetch(reinterpret_cast<const char *>(A + 16), _MM_HINT_T0);
    _Pragma("GCC unroll 6") for (int I = 0; I < R; ++I) {
      const __m256 Av = _mm256_broadcast_ss(A + I);
      _Pragma("GCC unroll 2") for (int V = 0; V < NV; ++V) Acc[I][V] = _mm256_fmadd_ps(Av, B[V], Acc[I][V]);
    }
  }
  _Pragma("GCC unroll 6") for (int I = 0; I < R; ++I) _Pragma("GCC unroll 2") for (int V = 0; V < NV; ++V)
      _mm256_storeu_ps(Out + I * Ldo + V * kLanes256, Acc[I][V]);
}

/// All pixels against one block of NV x 8 channels in ceil(Pixels / 6) tiles (pixelTileStart).
template <int NV>
__attribute__((target("avx2,fma"))) void transposedBlock256(const float *X, int64_t Ldx, int64_t Pixels, int64_t K,
                                                            const float *WT, int64_t Ldw, const float *ColBias,
                                                            bool Accumulate, float *Out, int64_t Ldo,
                                                            const float *Next, int64_t NextLd) {
  const int64_t Tiles = (Pixels + kTransposedRows256 - 1) / kTransposedRows256;
  for (int64_t T = 0; T < Tiles; ++T) {
    const int64_t P0 = pixelTileStart(T, Pixels), Rows = pixelTileStart(T + 1, Pixels) - P0;
    const float *Pf = T == 0 ? Next : nullptr;
    switch (Rows) {
#define OPT_CASE(C)                                                                                                    \
  case C:                                                                                                              \
    transposedTile256<C, NV>(X + P0, Ldx, K, WT, Ldw, ColBias, Accumulate, Out + P0 * Ldo, Ldo, Pf, NextLd);           \
    break;
      OPT_CASE(1) OPT_CASE(2) OPT_CASE(3) OPT_CASE(4) OPT_CASE(5) OPT_CASE(6)
#undef OPT_CASE
    default: break;
    }
  }
}

__attribute__((target("avx2,fma"))) void transposeActBlocks256(const float *In, int64_t Ldi, int64_t Pixels,
                                                               int64_t Cols, const FusedAct &Act, const float *Res,
                                                               float *Y, int64_t Ldy) {
  const Act256 Av(Act);
  for (int64_t C0 = 0; C0 < Cols; C0 += kLanes256) {
    const int64_t Cn = std::min<int64_t>(kLanes256, Cols - C0);
    for (int64_t P0 = 0; P0 < Pixels; P0 += kLanes256) {
      const int64_t Pn = std::min<int64_t>(kLanes256, Pixels - P0);
      const __m256i PM = vec256::lanesBelow256(Pn);
      __m256 R[8];
      _Pragma("GCC unroll 8") for (int I = 0; I < 8; ++I) R[I] =
          I < Pn ? _mm256_loadu_ps(In + (P0 + I) * Ldi + C0) : _mm256_setzero_ps();
      vec256::transpose8x8(R); // R[j]: channel j of the 8 pixels
      _Pragma("GCC unroll 8") for (int J = 0; J < 8; ++J) {
        if (J >= Cn)
          break;
        __m256 V = R[J];
        float *Dst = Y + (C0 + J) * Ldy + P0;
        const bool Full = Pn == kLanes256;
        if (Res) {
          const float *Rr = Res + (C0 + J) * Ldy + P0;
          V = _mm256_add_ps(V, Full ? _mm256_loadu_ps(Rr) : _mm256_maskload_ps(Rr, PM));
        }
        V = Av(V);
        if (Full)
          _mm256_storeu_ps(Dst, V);
        else
          _mm256_maskstore_ps(Dst, PM, V);
      }
    }
  }
}
#endif
} // namespace

bool rowPipelineAvx512Supported() {
#ifdef OPT_SIMD_X86
  static const bool Cpu = cpuFeatures().avx512Fma();
  return Cpu;
#else
  return false;
#endif
}

bool rowPipelineAvx2Supported() {
#if defined(OPT_SIMD_X86) && defined(OPT_HAVE_VECMATH256)
  return simdAvx2();
#else
  return false;
#endif
}

void pointwiseRunAvx2(const float *Panel, int64_t Rows, int64_t K, const float *X, int64_t Ldx, int64_t N,
                      const float *Bias, const FusedAct &Act, float *Out, int64_t Ldo, const float *Res) {
#if defined(OPT_SIMD_X86) && defined(OPT_HAVE_VECMATH256)
  switch (Rows) {
#define OPT_CASE(C, R0, R1)                                                                                            \
  case C: return pointwiseRun256<R0, R1>(Panel, K, X, Ldx, N, Bias, Act, Out, Ldo, Res);
    OPT_CASE(1, 1, 0) OPT_CASE(2, 2, 0) OPT_CASE(3, 3, 0) OPT_CASE(4, 4, 0) OPT_CASE(5, 5, 0) OPT_CASE(6, 6, 0)
    // 7 to 9 channels as two passes of at least 3 (6 + 1 / 6 + 2 leave a pass of 2 or 4
    // accumulators, whose FMA latency then sets its pace).
    OPT_CASE(7, 4, 3) OPT_CASE(8, 4, 4) OPT_CASE(9, 5, 4) OPT_CASE(10, 6, 4) OPT_CASE(11, 6, 5) OPT_CASE(12, 6, 6)
#undef OPT_CASE
  case 2 * MR: return pointwiseRun256<6, 6, true>(Panel, K, X, Ldx, N, Bias, Act, Out, Ldo, Res);
  default: return;
  }
#else
  (void)Panel, (void)Rows, (void)K, (void)X, (void)Ldx, (void)N, (void)Bias, (void)Act;
  (void)Out, (void)Ldo, (void)Res;
#endif
}

bool pointwiseAvx2PairsPanels(int64_t K, int64_t Plane) {
#if defined(OPT_SIMD_X86) && defined(OPT_HAVE_VECMATH256)
  return K > kOneChunkK256 && Plane >= 56 * 56;
#else
  (void)K, (void)Plane;
  return false;
#endif
}

void pointwiseTransposedAvx2(const float *X, int64_t Ldx, int64_t Pixels, int64_t K0, int64_t K, const float *WT,
                             int64_t Kp, int64_t Cols, const float *ColBias, bool Accumulate, float *Out) {
#if defined(OPT_SIMD_X86) && defined(OPT_HAVE_VECMATH256)
  for (int64_t C0 = 0; C0 < Cols; C0 += kTile256) {
    const float *Bias = ColBias ? ColBias + C0 : nullptr;
    const float *Panel = WT + C0 * Kp;
    float *Block = Out + C0 * Pixels;
    // The next block's rows of this chunk (from memory: W is streamed once per run), prefetched by
    // this block's first tile.
    const int64_t NextLd = std::min<int64_t>(kTile256, Cols - C0 - kTile256);
    const float *Next = NextLd > 0 ? WT + (C0 + kTile256) * Kp + K0 * NextLd : nullptr;
    if (Cols - C0 >= kTile256)
      transposedBlock256<2>(X, Ldx, Pixels, K, Panel + K0 * kTile256, kTile256, Bias, Accumulate, Block, kTile256,
                            Next, NextLd);
    else
      transposedBlock256<1>(X, Ldx, Pixels, K, Panel + K0 * kLanes256, kLanes256, Bias, Accumulate, Block,
                            kLanes256, Next, NextLd);
  }
#else
  (void)X, (void)Ldx, (void)Pixels, (void)K0, (void)K, (void)WT, (void)Kp, (void)Cols, (void)ColBias, (void)Accumulate;
  (void)Out;
#endif
}

void transposeToPlanesActAvx2(const float *In, int64_t Ldi, int64_t Pixels, int64_t Cols, const FusedAct &Act,
                              const float *Res, float *Y, int64_t Ldy) {
#if defined(OPT_SIMD_X86) && defined(OPT_HAVE_VECMATH256)
  transposeActBlocks256(In, Ldi, Pixels, Cols, Act, Res, Y, Ldy);
#else
  (void)In, (void)Ldi, (void)Pixels, (void)Cols, (void)Act, (void)Res, (void)Y, (void)Ldy;
#endif
}

std::vector<float> packTransposedWeightsAvx2(const float *W, int64_t M, int64_t K) {
  const int64_t Mpad = (M + 7) / 8 * 8;
  std::vector<float> P(static_cast<size_t>(std::max<int64_t>(1, Mpad * K)), 0.0f);
  for (int64_t C0 = 0; C0 < Mpad; C0 += 16) {
    const int64_t Width = std::min<int64_t>(16, Mpad - C0);
    for (int64_t Kk = 0; Kk < K; ++Kk)
      for (int64_t I = 0; I < Width && C0 + I < M; ++I)
        P[static_cast<size_t>(C0 * K + Kk * Width + I)] = W[(C0 + I) * K + Kk];
  }
  return P;
}

std::vector<float> packPointwiseWeights(const float *W, int64_t M, int64_t K) {
  const int64_t Panels = (M + MR - 1) / MR;
  std::vector<float> P(static_cast<size_t>(std::max<int64_t>(1, Panels * MR * K)), 0.0f);
  for (int64_t Pn = 0; Pn < Panels; ++Pn)
    for (int64_t Kk = 0; Kk < K; ++Kk)
      for (int64_t I = 0; I < MR && Pn * MR + I < M; ++I)
        P[static_cast<size_t>((Pn * K + Kk) * MR + I)] = W[(Pn * MR + I) * K + Kk];
  return P;
}

AlignedFloats packPointwiseWeightsCached(const KernelCreateInfo &I, size_t Input, const std::string &Layout) {
  const ConstData &W = *I.Inputs[Input].Const;
  const int64_t M = W.Dims[0], K = W.Dims[1];
  const size_t Floats = static_cast<size_t>(std::max<int64_t>(1, (M + MR - 1) / MR * MR * K));
  const std::string Key = packedWeightsKey(I, Input, Layout);
  AlignedFloats Out;
  if (borrowPackedFloats(Key, Floats, Out))
    return Out;
  const std::vector<float> P = packPointwiseWeights(W.as<float>(), M, K);
  Out.resize(P.size());
  std::copy(P.begin(), P.end(), Out.data());
  storePackedFloats(Key, Out);
  return Out;
}

AlignedFloats packTransposedWeightsAvx2Cached(const KernelCreateInfo &I, size_t Input, const std::string &Layout) {
  const ConstData &W = *I.Inputs[Input].Const;
  const int64_t M = W.Dims[0], K = W.Dims[1];
  const size_t Floats = static_cast<size_t>(std::max<int64_t>(1, (M + 7) / 8 * 8 * K));
  const std::string Key = packedWeightsKey(I, Input, Layout);
  AlignedFloats Out;
  if (borrowPackedFloats(Key, Floats, Out))
    return Out;
  const std::vector<float> P = packTransposedWeightsAvx2(W.as<float>(), M, K);
  Out.resize(P.size());
  std::copy(P.begin(), P.end(), Out.data());
  storePackedFloats(Key, Out);
  return Out;
}

void pointwiseRunAvx512(const float *Panel, int64_t Rows, int64_t K, const float *X, int64_t Ldx, int64_t N,
                        const float *Bias, const FusedAct &Act, float *Out, int64_t Ldo, const float *Res) {
#ifdef OPT_SIMD_X86
  switch (Rows) {
#define OPT_CASE(C)                                                                                                    \
  case C: return pointwiseRun<C>(Panel, K, X, Ldx, N, Bias, Act, Out, Ldo, Res);
    OPT_CASE(1) OPT_CASE(2) OPT_CASE(3) OPT_CASE(4) OPT_CASE(5) OPT_CASE(6)
    OPT_CASE(7) OPT_CASE(8) OPT_CASE(9) OPT_CASE(10) OPT_CASE(11) OPT_CASE(12)
#undef OPT_CASE
  default: return;
  }
#else
  (void)Panel, (void)Rows, (void)K, (void)X, (void)Ldx, (void)N, (void)Bias, (void)Act;
  (void)Out, (void)Ldo, (void)Res;
#endif
}

Dw3x3RowPlan planDw3x3Rows(const DepthwiseGeometry &G, bool Deinterleaved) {
  Dw3x3RowPlan P;
  if (G.KH != 3 || G.KW != 3 || G.DH != 1 || G.DW != 1 || G.SW != (Deinterleaved ? 2 : 1))
    return P;
  P.OW = G.OW, P.SH = G.SH, P.Blocks = (G.OW + kLanes - 1) / kLanes;
  P.Act = G.Act;
  if (P.Blocks < 1 || P.Blocks > 8)
    return P;
  if (Deinterleaved) { // split rows: one column of padding on each side, vertical stride 2
    if (G.PW != 1 || G.OW != (G.W + 1) / 2 || G.SH != 2)
      return P;
    const int64_t N = G.W - (P.Blocks - 1) * 2 * kLanes; // columns of the last block, 1..32
    P.LastEven = (N + 1) / 2, P.LastOdd = N / 2;
    P.Split2 = P.Ok = true;
    return P;
  }
  for (int64_t Kw = 0; Kw < 3; ++Kw)
    P.Off[Kw] = Kw - G.PW;
  P.Masks.assign(static_cast<size_t>(P.Blocks * 3), 0);
  bool InteriorFull = true;
  for (int64_t B = 0; B < P.Blocks; ++B)
    for (int64_t Kw = 0; Kw < 3; ++Kw) {
      uint32_t M = 0;
      for (int64_t J = 0; J < kLanes; ++J) {
        const int64_t Ow = B * kLanes + J, Col = Ow + P.Off[Kw];
        if (Ow < G.OW && Col >= 0 && Col < G.W)
          M |= 1u << J;
      }
      P.Masks[static_cast<size_t>(B * 3 + Kw)] = static_cast<uint16_t>(M);
      if (B > 0 && B + 1 < P.Blocks && M != 0xFFFF)
        InteriorFull = false;
    }
  P.Ok = InteriorFull;
  P.Shifted = G.PW == 1 && G.OW == G.W;
  const int64_t LastCols = G.W - (P.Blocks - 1) * kLanes; // the row's columns in the last block
  P.LastLanes = static_cast<uint16_t>(LastCols >= kLanes ? 0xFFFFu : LastCols <= 0 ? 0u : (1u << LastCols) - 1u);
  return P;
}

void depthwise3x3RowsAvx512(const Dw3x3RowPlan &P, const float *const *Rows, int64_t R, const float *K, float Bias,
                            float *Out) {
#ifdef OPT_SIMD_X86
  switch (P.Blocks) {
#define OPT_CASE(NB)                                                                                                   \
  case NB: return dw3x3UnitRows<NB>(P, Rows, R, K, Bias, Out);
    OPT_CASE(1) OPT_CASE(2) OPT_CASE(3) OPT_CASE(4) OPT_CASE(5) OPT_CASE(6) OPT_CASE(7) OPT_CASE(8)
#undef OPT_CASE
  default: return;
  }
#else
  (void)P, (void)Rows, (void)R, (void)K, (void)Bias, (void)Out;
#endif
}

void deinterleaveRowsAvx512(const float *X, int64_t Ldx, int64_t K, int64_t Rows, int64_t W, float *Out) {
#ifdef OPT_SIMD_X86
  for (int64_t Kk = 0; Kk < K; ++Kk)
    for (int64_t R = 0; R < Rows; ++R)
      deinterleaveRow(X + Kk * Ldx + R * W, W, Out + (Kk * Rows + R) * W);
#else
  (void)X, (void)Ldx, (void)K, (void)Rows, (void)W, (void)Out;
#endif
}

void pointwiseTransposedAvx512(const float *X, int64_t Ldx, int64_t Pixels, int64_t K, const float *WT, int64_t Ldw,
                               int64_t Cols, const float *ColBias, const FusedAct &Act, float *Out,
                               int64_t Ldo, const float *Next) {
#ifdef OPT_SIMD_X86
  int64_t P0 = 0;
  for (; P0 + MR <= Pixels; P0 += MR)
    transposedPanel<12>(X + P0, Ldx, K, WT, Ldw, Cols, ColBias, Act, Out + P0 * Ldo, Ldo,
                        P0 == 0 ? Next : nullptr);
  switch (Pixels - P0) {
#define OPT_CASE(C)                                                                                                    \
  case C:                                                                                                              \
    return transposedPanel<C>(X + P0, Ldx, K, WT, Ldw, Cols, ColBias, Act, Out + P0 * Ldo, Ldo,             \
                              P0 == 0 ? Next : nullptr);
    OPT_CASE(1) OPT_CASE(2) OPT_CASE(3) OPT_CASE(4) OPT_CASE(5) OPT_CASE(6)
    OPT_CASE(7) OPT_CASE(8) OPT_CASE(9) OPT_CASE(10) OPT_CASE(11)
#undef OPT_CASE
  default: return;
  }
#else
  (void)X, (void)Ldx, (void)Pixels, (void)K, (void)WT, (void)Ldw, (void)Cols, (void)ColBias, (void)Act;
  (void) (void)Out, (void)Ldo, (void)Next;
#endif
}

void copyRowsPaddedAvx512(const float *Src, int64_t Lds, int64_t Rows, int64_t Valid, int64_t Width, float *Out) {
#ifdef OPT_SIMD_X86
  copyRowsPadded(Src, Lds, Rows, Valid, Width, Out);
#else
  (void)Src, (void)Lds, (void)Rows, (void)Valid, (void)Width, (void)Out;
#endif
}

DepthwiseTapList listDepthwiseTaps(const DepthwiseGeometry &G) {
  DepthwiseTapList L;
  L.Begin.reserve(static_cast<size_t>(G.OH * G.OW + 1));
  L.Begin.push_back(0);
  for (int64_t Oh = 0; Oh < G.OH; ++Oh)
    for (int64_t Ow = 0; Ow < G.OW; ++Ow) {
      for (int64_t Kh = 0; Kh < G.KH; ++Kh)
        for (int64_t Kw = 0; Kw < G.KW; ++Kw) {
          const int64_t Ih = Oh * G.SH - G.PH + Kh * G.DH, Iw = Ow * G.SW - G.PW + Kw * G.DW;
          if (Ih >= 0 && Ih < G.H && Iw >= 0 && Iw < G.W) {
            L.Tap.push_back(static_cast<int32_t>(Kh * G.KW + Kw));
            L.Pixel.push_back(static_cast<int32_t>(Ih * G.W + Iw));
          }
        }
      L.Begin.push_back(static_cast<int32_t>(L.Tap.size()));
    }
  return L;
}

void depthwiseChannelsAvx512(const DepthwiseGeometry &G, const DepthwiseTapList &Taps, const float *In, int64_t Ldi,
                             const float *KT, int64_t Ldk, const float *Bias, int64_t Cols, float *Out, int64_t Ldo) {
#ifdef OPT_SIMD_X86
  depthwiseChannels(G, Taps, In, Ldi, KT, Ldk, Bias, Cols, Out, Ldo);
#else
  (void)G, (void)Taps, (void)In, (void)Ldi, (void)KT, (void)Ldk, (void)Bias, (void)Cols, (void)Out, (void)Ldo;
#endif
}

void transposeToPlanesAvx512(const float *In, int64_t Ldi, int64_t Pixels, int64_t Cols, float *Y, int64_t Ldy) {
#ifdef OPT_SIMD_X86
  transposeToPlanes(In, Ldi, Pixels, Cols, Y, Ldy);
#else
  (void)In, (void)Ldi, (void)Pixels, (void)Cols, (void)Y, (void)Ldy;
#endif
}

void depthwiseRowsAvx512(const DepthwiseGeometry &G, const uint16_t *Masks, const float *const *Rows, int64_t R,
                         const float *K, float Bias, float *Out) {
#ifdef OPT_SIMD_X86
  const __mmask16 *M = reinterpret_cast<const __mmask16 *>(Masks);
  const bool K3 = G.KH == 3 && G.KW == 3;
  const int64_t Blocks = (G.OW + kLanes - 1) / kLanes;
  if (K3 && Blocks <= 8 && interiorBlocksFull(G, Masks)) {
    switch (Blocks * 2 + (G.SW == 2 ? 1 : 0)) {
#define OPT_CASE(NB)                                                                                                     case NB * 2: return dw3x3Rows<1, NB>(G, M, Rows, R, K, Bias, Out);                                                     case NB * 2 + 1: return dw3x3Rows<2, NB>(G, M, Rows, R, K, Bias, Out);
      OPT_CASE(1) OPT_CASE(2) OPT_CASE(3) OPT_CASE(4) OPT_CASE(5) OPT_CASE(6) OPT_CASE(7) OPT_CASE(8)
#undef OPT_CASE
    default: break;
    }
  }
  if (G.SW == 1)
    K3 ? dwRows<1, 3, 3>(G, M, Rows, R, K, Bias, Out) : dwRows<1, 0, 0>(G, M, Rows, R, K, Bias, Out);
  else
    K3 ? dwRows<2, 3, 3>(G, M, Rows, R, K, Bias, Out) : dwRows<2, 0, 0>(G, M, Rows, R, K, Bias, Out);
#else
  (void)G, (void)Masks, (void)Rows, (void)R, (void)K, (void)Bias, (void)Out;
#endif
}

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
