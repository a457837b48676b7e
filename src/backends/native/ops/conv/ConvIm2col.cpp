// Conv as im2col + the blocked SGEMM (2-D, any group): a 1x1 stride-1 conv reads its input
// planes as the GEMM's B, small output planes take the transposed GEMM, strided convs read
// phase planes (on AVX2: a channels-last padded copy, runTaps). Weights packed once at creation.
#include <algorithm>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "backends/native/ops/common/GemmBf16Dot.h"
#include "backends/native/ops/common/RowPipeline.h"
#include "backends/native/ops/common/ThreadScratch.h"
#include "backends/native/ops/common/Transpose256.h"
#include "backends/native/ops/common/VecMath256.h"
#include "backends/native/ops/common/PackedWeights.h"
#include "backends/native/ops/conv/ConvCommon.h"
#include "core/CpuFeatures.h"
#include "ir/FusedOps.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace conv {

namespace {

#define OPT_TAPS_UNROLL _Pragma("GCC unroll 8")

#if defined(__x86_64__)
bool avx512PackAvailable() { return cpuFeatures().AVX512F; }

/// Dst[j] = Src[j * SW] for j in [Lo, Hi), 0 for the other j < Len (SW 1 or 2). Lanes outside
/// [Lo, Hi) are masked off in the loads, which do not fault there, so Src may point before or
/// past its row there (the padding of the im2col row).
__attribute__((target("avx512f"))) void packSegmentAvx512(float *Dst, const float *Src, int64_t Len, int64_t Lo,
                                                          int64_t Hi, int64_t SW) {
  const __m512i Even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  const auto rangeMask = [](int64_t A, int64_t B) -> uint64_t { // bits [A, B), 0 <= A, B <= 32
    return B > A ? (((B >= 64 ? ~0ull : (1ull << B)) - 1ull) & ~((1ull << A) - 1ull)) : 0ull;
  };
  for (int64_t J0 = 0; J0 < Len; J0 += 16) {
    const int64_t N = std::min<int64_t>(16, Len - J0);
    const int64_t A = std::min<int64_t>(std::max<int64_t>(Lo - J0, 0), N), B = std::max<int64_t>(std::min<int64_t>(Hi - J0, N), A);
    __m512 V;
    if (SW == 1) {
      V = _mm512_maskz_loadu_ps(static_cast<__mmask16>(rangeMask(A, B)), Src + J0);
    } else { // inputs 2A .. 2B-2 of the 32 starting at Src + 2 * J0, then the even lanes
      const uint64_t M = rangeMask(2 * A, 2 * B - 1);
      const float *S = Src + 2 * J0;
      V = _mm512_permutex2var_ps(_mm512_maskz_loadu_ps(static_cast<__mmask16>(M & 0xFFFF), S), Even,
                                 _mm512_maskz_loadu_ps(static_cast<__mmask16>((M >> 16) & 0xFFFF), S + 16));
    }
    _mm512_mask_storeu_ps(Dst + J0, static_cast<__mmask16>((1u << N) - 1u), V);
  }
}

/// One col^T panel of runTransposed: Dst[k * MR + i] = Base[TapOff[k] + Pix[i]] for k < Kc and
/// the Valid <= MR <= 16 pixels i (zeros for the others). A panel's pixels lie in two or three
/// output rows, within 32 floats of the first: one or two masked loads and a permute per k.
/// Returns false (nothing written) when they do not.
__attribute__((target("avx512f"))) bool gatherPixelsAvx512(float *Dst, const float *Base, const int64_t *TapOff,
                                                           int64_t Kc, const int64_t *Pix, int64_t Valid,
                                                           int64_t MR) {
  alignas(64) int32_t Idx[16] = {};
  int64_t Span = 0;
  for (int64_t I = 0; I < Valid; ++I) {
    const int64_t D = Pix[I] - Pix[0];
    if (D < 0 || D >= 32)
      return false;
    Idx[I] = static_cast<int32_t>(D);
    Span = std::max(Span, D + 1);
  }
  const __m512i Index = _mm512_load_si512(Idx);
  const __mmask16 Lanes = static_cast<__mmask16>((1u << Valid) - 1u), Store = static_cast<__mmask16>((1u << MR) - 1u);
  const __mmask16 Lo = static_cast<__mmask16>(Span >= 16 ? 0xFFFFu : (1u << Span) - 1u);
  const __mmask16 Hi = static_cast<__mmask16>(Span <= 16 ? 0u : Span >= 32 ? 0xFFFFu : (1u << (Span - 16)) - 1u);
  for (int64_t K = 0; K < Kc; ++K, Dst += MR) {
    const float *W = Base + TapOff[K] + Pix[0];
    const __m512 V = _mm512_maskz_permutex2var_ps(Lanes, _mm512_maskz_loadu_ps(Lo, W), Index,
                                                  _mm512_maskz_loadu_ps(Hi, W + 16));
    _mm512_mask_storeu_ps(Dst, Store, V);
  }
  return true;
}

// --- AVX2 siblings of the packs above (CPUs without AVX-512: Zen 3, most CI hosts) -----------------
bool avx2PackAvailable() { return cpuFeatures().AVX2; }

/// packSegmentAvx512 with 8 lanes: Dst[j] = Src[j * SW] for j in [Lo, Hi), 0 for the other j < Len
/// (SW 1 or 2; stride 2 loads 16 inputs and keeps the even ones). Masked-off lanes are not read.
__attribute__((target("avx2"))) void packSegmentAvx2(float *Dst, const float *Src, int64_t Len, int64_t Lo, int64_t Hi,
                                                     int64_t SW) {
  for (int64_t J0 = 0; J0 < Len; J0 += 8) {
    const int64_t N = std::min<int64_t>(8, Len - J0);
    const int64_t A = std::min<int64_t>(std::max<int64_t>(Lo - J0, 0), N), B = std::max<int64_t>(std::min<int64_t>(Hi - J0, N), A);
    __m256 V;
    if (A == 0 && B == 8) { // a whole vector inside the row (most of them): plain loads
      if (SW == 1) {
        V = _mm256_loadu_ps(Src + J0);
      } else { // inputs 0 .. 14: evens 0-6 from the first load, 8-14 (odd lanes) from the second
        const float *S = Src + 2 * J0;
        const __m256 E = _mm256_shuffle_ps(_mm256_loadu_ps(S), _mm256_loadu_ps(S + 7), 0xD8);
        V = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(E), 0xD8));
      }
    } else if (SW == 1) {
      V = _mm256_maskload_ps(Src + J0, vec256::laneRange256(A, B));
    } else { // inputs 2A .. 2B-2 of the 16 starting at Src + 2 * J0, then the even ones in order
      const float *S = Src + 2 * J0;
      const __m256 L0 = _mm256_maskload_ps(S, vec256::laneRange256(2 * A, 2 * B - 1));
      const __m256 L1 = _mm256_maskload_ps(S + 8, vec256::laneRange256(2 * A - 8, 2 * B - 9));
      V = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(L0, L1, 0x88)), 0xD8));
    }
    if (N == 8)
      _mm256_storeu_ps(Dst + J0, V);
    else
      _mm256_maskstore_ps(Dst + J0, vec256::laneRange256(0, N), V);
  }
}

/// One k of an MR-float (MR <= 8) panel row at Dst. Whole: a plain 8-float store, whose lanes past
/// MR fall on the next k's row (written right after by the same loop); else a masked store (the
/// panel's last k: its next floats belong to another task's panel or lie past the buffer). Zen 3's
/// 256-bit masked store costs about ten plain ones; gathering col^T panels with one per k took ~10%
/// of a 512-channel stride-2 3x3 conv on a 7x7 plane.
__attribute__((target("avx2"), always_inline)) inline void storePanelRowAvx2(float *Dst, __m256 V, __m256i Store,
                                                                           bool Whole) {
  if (Whole)
    _mm256_storeu_ps(Dst, V);
  else
    _mm256_maskstore_ps(Dst, Store, V);
}

/// gatherPixelsAvx512 for MR <= 8: a panel's pixels are at most two runs of consecutive plane
/// columns (the end of one output row, the start of the next), each a masked load per k. Returns
/// false (nothing written) when they are not.
__attribute__((target("avx2"))) bool gatherPixelsAvx2(float *Dst, const float *Base, const int64_t *TapOff, int64_t Kc,
                                                      const int64_t *Pix, int64_t Valid, int64_t MR) {
  if (MR > 8 || Valid < 1)
    return false;
  int64_t Split = Valid, Off1 = 0;
  for (int64_t I = 1; I < Valid; ++I) {
    if (Split == Valid ? Pix[I] == Pix[0] + I : Pix[I] == Off1 + I)
      continue;
    if (Split != Valid)
      return false;
    Split = I, Off1 = Pix[I] - I;
  }
  const __m256i First = vec256::laneRange256(0, Split), Second = vec256::laneRange256(Split, Valid);
  const __m256i Store = vec256::laneRange256(0, MR);
  for (int64_t K = 0; K < Kc; ++K, Dst += MR) {
    const float *Row = Base + TapOff[K];
    __m256 V = _mm256_maskload_ps(Row + Pix[0], First);
    if (Split < Valid)
      V = _mm256_or_ps(V, _mm256_maskload_ps(Row + Off1, Second));
    storePanelRowAvx2(Dst, V, Store, K + 1 < Kc || MR == 8);
  }
  return true;
}

/// Dst[k * MR + i] = Src[k * Lds + i] for the Valid <= MR <= 8 first i, zeros up to MR (a col^T
/// panel of the pointwise transposed GEMM): one masked load and store per k instead of a memcpy
/// call and a fill.
__attribute__((target("avx2"))) void copyRowsPaddedAvx2(const float *Src, int64_t Lds, int64_t Kc, int64_t Valid,
                                                        int64_t MR, float *Dst) {
  const __m256i Load = vec256::laneRange256(0, Valid), Store = vec256::laneRange256(0, MR);
  for (int64_t K = 0; K < Kc; ++K, Src += Lds, Dst += MR)
    storePanelRowAvx2(Dst, _mm256_maskload_ps(Src, Load), Store, K + 1 < Kc || MR == 8);
}

/// Y[c][p] = In[p][c] for c < Cols, p < Pixels (In's rows Ldi apart, Y's Ldy): the product of the
/// transposed GEMM back into output planes, 8 x 8 blocks transposed in registers (the scalar loop
/// read In a column at a time, one cache line per element).
__attribute__((target("avx2"))) void transposeToPlanesAvx2(const float *In, int64_t Ldi, int64_t Pixels, int64_t Cols,
                                                           float *Y, int64_t Ldy) {
  int64_t C0 = 0;
  for (; C0 + 8 <= Cols; C0 += 8) {
    int64_t P0 = 0;
    for (; P0 + 8 <= Pixels; P0 += 8) {
      __m256 R[8];
      for (int I = 0; I < 8; ++I)
        R[I] = _mm256_loadu_ps(In + (P0 + I) * Ldi + C0);
      vec256::transpose8x8(R);
      for (int J = 0; J < 8; ++J)
        _mm256_storeu_ps(Y + (C0 + J) * Ldy + P0, R[J]);
    }
    for (; P0 < Pixels; ++P0)
      for (int64_t C = C0; C < C0 + 8; ++C)
        Y[C * Ldy + P0] = In[P0 * Ldi + C];
  }
  for (; C0 < Cols; ++C0)
    for (int64_t P = 0; P < Pixels; ++P)
      Y[C0 * Ldy + P] = In[P * Ldi + C0];
}

/// One tile of the tap-broadcast convolution (ConvIm2colKernel::runTaps) over one K block: R <= 6
/// output pixels x 16 output channels, C^T[i][j] += sum_k X[PixOff[i] + TapOff[k]] * W^T[k][j] for
/// k < Kc. A is never packed: pixel i's im2col row is read in place from the zero-padded input
/// planes (a tap k is a constant offset from the pixel's window origin, whatever the stride), one
/// broadcast per pixel and k; B is the K block's 16-column panel of the packed W^T (in L1 for all
/// the tiles of a chunk). Per k the same 2 loads + 6 broadcasts + 12 FMAs as the 6x16 GEMM tile,
/// without the phase planes' second copy into B panels. Partial sums go through Part (R x 16,
/// in L1) between K blocks; the last block adds the bias, applies the fused activation and stores
/// the tile transposed into Y's planes (channel j's pixels P0 .. P0 + R - 1 are consecutive there).
template <int R>
__attribute__((target("avx2,fma"))) void tapsTileAvx2(const float *X, const int64_t *PixOff, const int64_t *TapOff,
                                                      int64_t Kc, const float *B, const float *BNext, float *Part,
                                                      bool First, bool Last, const float *Bias, int64_t Cols, const FusedAct &Act, float *Y,
                                                      int64_t Ldy) {
  __m256 Acc0[R], Acc1[R];
  const float *Px[R];
  OPT_TAPS_UNROLL for (int I = 0; I < R; ++I) {
    Acc0[I] = First ? _mm256_setzero_ps() : _mm256_load_ps(Part + 16 * I);
    Acc1[I] = First ? _mm256_setzero_ps() : _mm256_load_ps(Part + 16 * I + 8);
    Px[I] = X + PixOff[I];
  }
  for (int64_t Kk = 0; Kk < Kc; ++Kk, B += 16) {
    const int64_t Off = TapOff[Kk];
    const __m256 B0 = _mm256_loadu_ps(B), B1 = _mm256_loadu_ps(B + 8);
    if (BNext) // the next W^T panel (a line per k) from L3 or memory while this one computes
      _mm_prefetch(reinterpret_cast<const char *>(BNext + 16 * Kk), _MM_HINT_T0);
    OPT_TAPS_UNROLL for (int I = 0; I < R; ++I) {
      const __m256 Av = _mm256_broadcast_ss(Px[I] + Off);
      Acc0[I] = _mm256_fmadd_ps(Av, B0, Acc0[I]), Acc1[I] = _mm256_fmadd_ps(Av, B1, Acc1[I]);
    }
  }
  if (!Last) {
    OPT_TAPS_UNROLL for (int I = 0; I < R; ++I) {
      _mm256_store_ps(Part + 16 * I, Acc0[I]);
      _mm256_store_ps(Part + 16 * I + 8, Acc1[I]);
    }
    return;
  }
  // Bias lanes past Cols (the last channel panel) are not read.
  const __m256 Bias0 = Bias ? _mm256_maskload_ps(Bias, vec256::laneRange256(0, Cols)) : _mm256_setzero_ps();
  const __m256 Bias1 = Bias ? _mm256_maskload_ps(Bias + 8, vec256::laneRange256(0, Cols - 8)) : _mm256_setzero_ps();
  const Act256 Av(Act);
  OPT_TAPS_UNROLL for (int I = 0; I < R; ++I) {
    __m256 V0 = _mm256_add_ps(Acc0[I], Bias0), V1 = _mm256_add_ps(Acc1[I], Bias1);
    if (Av.on())
      V0 = Av(V0), V1 = Av(V1);
    _mm256_store_ps(Part + 16 * I, V0);
    _mm256_store_ps(Part + 16 * I + 8, V1);
  }
  for (int64_t J = 0; J < Cols; ++J) {
    float *Yc = Y + J * Ldy;
    OPT_TAPS_UNROLL for (int I = 0; I < R; ++I) Yc[I] = Part[16 * I + J];
  }
}

/// tapsTileAvx2 for R = Rows (1 .. 6).
void tapsTileRowsAvx2(int64_t Rows, const float *X, const int64_t *PixOff, const int64_t *TapOff, int64_t Kc,
                      const float *B, const float *BNext, float *Part, bool First, bool Last, const float *Bias,
                      int64_t Cols, const FusedAct &Act, float *Y, int64_t Ldy) {
  switch (Rows) {
#define OPT_CASE(N)                                                                                                    \
  case N: return tapsTileAvx2<N>(X, PixOff, TapOff, Kc, B, BNext, Part, First, Last, Bias, Cols, Act, Y, Ldy);
    OPT_CASE(1) OPT_CASE(2) OPT_CASE(3) OPT_CASE(4) OPT_CASE(5) OPT_CASE(6)
#undef OPT_CASE
  default: return;
  }
}
#else
void tapsTileRowsAvx2(int64_t, const float *, const int64_t *, const int64_t *, int64_t, const float *, const float *,
                      float *, bool, bool, const float *, int64_t, const FusedAct &, float *, int64_t) {}
void transposeToPlanesAvx2(const float *, int64_t, int64_t, int64_t, float *, int64_t) {}
bool avx512PackAvailable() { return false; }
bool avx2PackAvailable() { return false; }
void packSegmentAvx512(float *, const float *, int64_t, int64_t, int64_t, int64_t) {}
void packSegmentAvx2(float *, const float *, int64_t, int64_t, int64_t, int64_t) {}
bool gatherPixelsAvx512(float *, const float *, const int64_t *, int64_t, const int64_t *, int64_t, int64_t) {
  return false;
}
bool gatherPixelsAvx2(float *, const float *, const int64_t *, int64_t, const int64_t *, int64_t, int64_t) {
  return false;
}
void copyRowsPaddedAvx2(const float *, int64_t, int64_t, int64_t, int64_t, float *) {}
#endif

/// The zero-padded input of a group-1 2-D convolution split into SH x SW phase planes of Rq x Wq
/// (phase (ph, pw) of channel c holds padded pixels (r * SH + ph, w * SW + pw)). Output pixel
/// (oh, ow) and tap (kh, kw) read phase plane (c, kh * DH % SH, kw * DW % SW) at row oh + kh * DH /
/// SH, column ow + kw * DW / SW, so with rows of Wq columns every tap is a constant offset.
struct PhasePlanes {
  int64_t H, Wd, OH, OW, KH, KW, DH, DW, SH, SW, PH, PW, Wq, Rq, PlaneQ, Phases, InPlane;

  PhasePlanes(const ConvRun &R, const WindowAttrs &W) {
    H = R.G.In[0], Wd = R.G.In[1], OH = R.G.Out[0], OW = R.G.Out[1];
    KH = W.Kernel[0], KW = W.Kernel[1], DH = W.Dilations[0], DW = W.Dilations[1];
    SH = W.Strides[0], SW = W.Strides[1], PH = R.G.PadBegin[0], PW = R.G.PadBegin[1];
    Wq = OW + (KW - 1) * DW / SW, Rq = OH + (KH - 1) * DH / SH;
    PlaneQ = Rq * Wq, Phases = SH * SW, InPlane = R.InPlane;
  }

  /// tapOffset of every im2col row, k < KDim: the taps of channel 0 plus a whole channel's phase
  /// planes per channel (one division per tap, not per row).
  void tapOffsets(int64_t KDim, int64_t *Out) const {
    const int64_t Taps = KH * KW, Channel = SH * SW * PlaneQ;
    for (int64_t T = 0; T < Taps && T < KDim; ++T)
      Out[T] = tapOffset(T);
    for (int64_t K = Taps; K < KDim; ++K)
      Out[K] = Out[K - Taps] + Channel;
  }

  /// Offset of im2col row k = (c, kh, kw) from the start of the planes.
  int64_t tapOffset(int64_t K) const {
    const int64_t C = K / (KH * KW), Khd = (K / KW) % KH * DH, Kwd = K % KW * DW;
    return ((C * SH + Khd % SH) * SW + Kwd % SW) * PlaneQ + Khd / SH * Wq + Kwd / SW;
  }

  /// Whether some tap reads phase plane (Ph, Pw) (tapOffset: kh * DH % SH, kw * DW % SW).
  bool phaseRead(int64_t Ph, int64_t Pw) const {
    bool Row = false, Col = false;
    for (int64_t Kh = 0; Kh < KH && !Row; ++Kh)
      Row = Kh * DH % SH == Ph;
    for (int64_t Kw = 0; Kw < KW && !Col; ++Kw)
      Col = Kw * DW % SW == Pw;
    return Row && Col;
  }

  /// Writes the C channels of image Xn into Pd, the zero padding included (Pd need not be
  /// cleared first: a separate clearing pass cost as much as the copy). Phase planes that no tap
  /// reads are left as they are.
  void fill(const float *Xn, float *Pd, int64_t C, const Parallel &Par) const {
    // The scalar strided copy cost ~0.9 ms per ResNet-18 run.
    const bool FastStride2 = SW == 2 && avx512PackAvailable(), Stride2Avx2 = SW == 2 && !FastStride2 && avx2PackAvailable();
    Par.forRange(static_cast<size_t>(C * Phases), 4, [&](size_t Lo, size_t Hi) {
      for (size_t CP = Lo; CP < Hi; ++CP) {
        const int64_t Ch = static_cast<int64_t>(CP) / Phases, Ph = static_cast<int64_t>(CP) % Phases / SW,
                      Pw = static_cast<int64_t>(CP) % SW;
        if (!phaseRead(Ph, Pw)) // e.g. 3 of the 4 phases of a 1x1 stride-2 conv: no tap reads them
          continue;
        // Columns w of this phase with an input pixel: 0 <= w * SW + Pw - PW < Wd.
        const int64_t W0 = std::min(Wq, std::max<int64_t>(0, (PW - Pw + SW - 1) / SW));
        const int64_t W1 = std::max(W0, std::min(Wq, (Wd - 1 + PW - Pw) / SW + 1));
        for (int64_t Rr = 0; Rr < Rq; ++Rr) {
          const int64_t Ih = Rr * SH + Ph - PH;
          float *D = Pd + static_cast<int64_t>(CP) * PlaneQ + Rr * Wq;
          if (Ih < 0 || Ih >= H || W1 <= W0) {
            std::fill(D, D + Wq, 0.0f);
            continue;
          }
          if (FastStride2) { // D[w] = row[w * 2 + Pw - PW] for w in [W0, W1), zeros around
            packSegmentAvx512(D, Xn + Ch * InPlane + Ih * Wd + Pw - PW, Wq, W0, W1, 2);
            continue;
          }
          if (Stride2Avx2) {
            packSegmentAvx2(D, Xn + Ch * InPlane + Ih * Wd + Pw - PW, Wq, W0, W1, 2);
            continue;
          }
          std::fill(D, D + W0, 0.0f);
          std::fill(D + W1, D + Wq, 0.0f);
          const float *In = Xn + Ch * InPlane + Ih * Wd + (W0 * SW + Pw - PW);
          if (SW == 1)
            std::memcpy(D + W0, In, static_cast<size_t>(W1 - W0) * sizeof(float));
          else
            for (int64_t Wc = W0; Wc < W1; ++Wc)
              D[Wc] = In[(Wc - W0) * SW];
        }
      }
    });
  }
};

/// Whether ConvIm2colKernel::runTaps takes this convolution (with the AVX2 tile): group 1, 2-D,
/// stride 2 both ways (ResNet's 3x3 downsampling convs; a stride-1 3x3 goes to Winograd).
bool tapsEligible(const ConvAttrs &A) {
  return A.Group == 1 && A.W.Strides.size() == 2 && A.W.Strides[0] == 2 && A.W.Strides[1] == 2 && avx2PackAvailable();
}

/// Tiles (up to 6 pixels each) per chunk of runTaps.
constexpr int64_t kTapsChunkTiles = 40;

/// Convolutions whose output plane has at most this many pixels take the transposed GEMM (see
/// ConvIm2colKernel::runTransposed) when their weights are constant.
constexpr int64_t kTransposedMaxPlane = 64;

/// 2-D convolution as GEMM per (image, group): Y[Mg, OH*OW] = W[Mg, Cg*KH*KW] * col[Cg*KH*KW, OH*OW].
/// The im2col matrix is never materialized: each task packs a narrow block of its columns straight
/// from the input into the microkernel's panel layout (small enough to stay in cache), multiplies,
/// and adds the bias while the block is hot. A 1x1 stride-1 conv takes the same path with plain
/// row copies.
class ConvIm2colKernel : public Kernel {
public:
  ConvIm2colKernel(std::string Name, const GemmMicroKernel &MK, ConvAttrs A, std::vector<PackedA> PackedW,
                   std::unique_ptr<PackedB> PackedWT = nullptr, std::unique_ptr<Bf16DotA> Bf16W = nullptr,
                   bool Taps = false)
      : Name(std::move(Name)), MK(MK), A(std::move(A)), PackedW(std::move(PackedW)), PackedWT(std::move(PackedWT)),
        Bf16W(std::move(Bf16W)), Taps(Taps) {}

  Status run(const KernelContext &Ctx) const override {
    ASSIGN_OR_RETURN(const ConvRun R, planConv(Name.c_str(), A, Ctx));
    const float *X = Ctx.Inputs[0].data<float>(), *Wt = Ctx.Inputs[1].data<float>(), *B = biasOf(Ctx);
    float *Y = Ctx.Outputs[0].data<float>();
    const int64_t KDim = R.Cg * R.Taps, Cols = R.OutPlane;
    if (Cols == 0 || R.Mg == 0)
      return Status::ok();
    if (Bf16W) { // bf16 compute (group 1): the phased GEMM with the bf16 dot-product kernel
      if (Bf16W->M != R.M || Bf16W->K != KDim)
        return runError(Name.c_str(), "shapes differ from the packed weights");
      return runPhased(R, X, B, Y, nullptr, Ctx.Par);
    }
    if (Taps && PackedWT)
      return runTaps(R, X, B, Y, *PackedWT, Ctx.Par);
    if (A.Group == 1 && PackedWT && R.OutPlane <= kTransposedMaxPlane)
      return isPlainPointwise(A.W) ? runTransposedPointwise(R, X, B, Y, *PackedWT, Ctx.Par)
                                   : runTransposed(R, X, B, Y, *PackedWT, Ctx.Par);
    std::vector<PackedA> LocalW;
    const std::vector<PackedA> *Weights = &PackedW;
    if (PackedW.empty()) { // weights were not constant (or packed transposed) at creation
      LocalW.resize(static_cast<size_t>(A.Group));
      for (int64_t G = 0; G < A.Group; ++G)
        packA(MK, R.Mg, KDim, MatrixRef{Wt + G * R.Mg * KDim, KDim, 1}, LocalW[G]);
      Weights = &LocalW;
    }
    if (A.Group == 1)
      return runPhased(R, X, B, Y, &(*Weights)[0], Ctx.Par);
    // Column block: a multiple of NR, at least 4 panels, packed size about 256 KiB (L2-resident
    // together with the packed weights).
    const int64_t TargetPanels = std::max<int64_t>(4, 65536 / std::max<int64_t>(KDim, 1) / MK.NR);
    const int64_t BlockCols = std::min(((Cols + MK.NR - 1) / MK.NR) * MK.NR, TargetPanels * MK.NR);
    const int64_t Blocks = (Cols + BlockCols - 1) / BlockCols;
    const int64_t Tasks = R.N * A.Group * Blocks;
    // Too few column blocks to feed every thread (small late-layer planes: 7x7, 14x14): run the
    // blocks in order and split each GEMM over the pool instead.
    const bool SplitGemm = Ctx.Par.threads() > 1 && Tasks < 2 * static_cast<int64_t>(Ctx.Par.threads());
    const Parallel Serial;
    const Parallel &GemmPar = SplitGemm ? Ctx.Par : Serial;
    const auto Blocks_ = [&](size_t Lo, size_t Hi) {
      PackedB PB;
      PB.Data.resize(static_cast<size_t>(std::max<int64_t>(1, KDim * BlockCols)));
      for (size_t T = Lo; T < Hi; ++T) {
        const int64_t Blk = static_cast<int64_t>(T) % Blocks, NG = static_cast<int64_t>(T) / Blocks;
        const int64_t N = NG / A.Group, G = NG % A.Group;
        const int64_t J0 = Blk * BlockCols, NCols = std::min(BlockCols, Cols - J0);
        packColumns(R, X + (N * R.C + G * R.Cg) * R.InPlane, J0, NCols, PB);
        float *Yg = Y + (N * R.M + G * R.Mg) * R.OutPlane;
        // Bias and the fused activation are applied in the microkernel's write-back.
        GemmEpilogue Ep;
        Ep.RowBias = B ? B + G * R.Mg : nullptr;
        Ep.Act = A.Act;
        gemmPacked(MK, (*Weights)[G], PB, 1.0f, 0.0f, Yg + J0, Cols, GemmPar, &Ep);
      }
    };
    if (SplitGemm)
      Blocks_(0, static_cast<size_t>(Tasks));
    else
      Ctx.Par.forRange(static_cast<size_t>(Tasks), 1, Blocks_);
    return Status::ok();
  }

private:
  /// Group-1 convolution with a small output plane (late CNN layers: 7x7 = 49 pixels) as the
  /// transposed product Y^T[pixels, M] = col^T[pixels, K] x W^T[K, M]: the pixels become the GEMM's
  /// rows (MR-row panels: 49 pixels fill 91% of 9 panels) and the output channels its columns
  /// (full NR-wide panels), where Y = W x col would fill only 49 of 64 columns. The weights are
  /// packed transposed once at creation; col^T panels are gathered from the phase planes (exact
  /// pixels, no extended columns); bias and activation are applied while transposing C into Y.
  Status runTransposed(const ConvRun &R, const float *X, const float *B, float *Y, const PackedB &WT,
                       const Parallel &Pool) const {
    const PhasePlanes L(R, A.W);
    const int64_t MR = MK.MR, Pixels = R.OutPlane, KDim = R.Cg * L.KH * L.KW, M = R.M;
    const int64_t Panels = (Pixels + MR - 1) / MR, Mpad = Panels * MR;
    const Parallel &Par = Pool.ifWorth(R.N * M * KDim * Pixels);
    // The calling thread's scratch (ThreadScratch.h); the workers use these pointers.
    ScratchFrame Scratch;
    float *const PaddedData = Scratch.take<float>(static_cast<size_t>(R.C * L.Phases * L.PlaneQ)); // fill() writes all of it
    float *const ProductData = Scratch.take<float>(static_cast<size_t>(Pixels * M));
    int64_t *const TapOff = Scratch.take<int64_t>(static_cast<size_t>(KDim + Mpad)), *const PixOff = TapOff + KDim;
    L.tapOffsets(KDim, TapOff);
    for (int64_t P = 0; P < Mpad; ++P) // padding rows of the last panel repeat pixel 0 (never stored)
      PixOff[P] = P < Pixels ? P / L.OW * L.Wq + P % L.OW : 0;
    // col^T panels, on the same stack: a fresh 1 MB allocation per run would be mapped and faulted
    // in again every time.
    PackedA Col;
    Col.M = Pixels, Col.K = KDim;
    const size_t ColSize = static_cast<size_t>(std::max<int64_t>(1, Mpad * KDim));
    Col.Data.borrow(Scratch.take<float>(ColSize), ColSize);
    for (int64_t N = 0; N < R.N; ++N) {
      L.fill(X + N * R.C * R.InPlane, PaddedData, R.C, Par);
      // col^T panels in packA's layout: K blocks of GemmKC, then MR pixels per k.
      const int64_t KBlocks = (KDim + GemmKC - 1) / GemmKC;
      float *ColData = Col.Data.data();
      Par.forRange(static_cast<size_t>(KBlocks * Panels), 4, [&](size_t Lo, size_t Hi) {
        for (size_t T = Lo; T < Hi; ++T) {
          const int64_t K0 = static_cast<int64_t>(T) / Panels * GemmKC, P = static_cast<int64_t>(T) % Panels;
          const int64_t Kc = std::min(GemmKC, KDim - K0);
          float *Panel = ColData + K0 * Mpad + P * Kc * MR;
          const int64_t *Pix = PixOff + P * MR;
          const int64_t Valid = std::min(MR, Pixels - P * MR);
          if (FastPack && MR <= 16 && gatherPixelsAvx512(Panel, PaddedData, TapOff + K0, Kc, Pix, Valid, MR))
            continue;
          if (!FastPack && Avx2Pack && gatherPixelsAvx2(Panel, PaddedData, TapOff + K0, Kc, Pix, Valid, MR))
            continue;
          for (int64_t Kk = 0; Kk < Kc; ++Kk) {
            const float *Src = PaddedData + TapOff[K0 + Kk];
            for (int64_t I = 0; I < MR; ++I)
              Panel[Kk * MR + I] = Src[Pix[I]];
          }
        }
      });
      // Bias (per column of the product) and a clamp go into the GEMM's write-back; other
      // activations run vectorized on the output planes after the transposition.
      GemmEpilogue Ep;
      Ep.ColBias = B;
      const bool ActInGemm = A.Act.clampOnly();
      if (ActInGemm)
        Ep.Act = A.Act;
      gemmPacked(MK, Col, WT, 1.0f, 0.0f, ProductData, M, Par, &Ep);
      float *Yn = Y + N * M * Pixels;
      Par.forRange(static_cast<size_t>(M), 16, [&](size_t Lo, size_t Hi) {
        const int64_t C0 = static_cast<int64_t>(Lo), Cn = static_cast<int64_t>(Hi - Lo);
        if (MK.Isa == GemmIsa::Avx512 && rowPipelineAvx512Supported())
          transposeToPlanesAvx512(ProductData + C0, M, Pixels, Cn, Yn + C0 * Pixels, Pixels);
        else if (MK.Isa == GemmIsa::Avx2)
          transposeToPlanesAvx2(ProductData + C0, M, Pixels, Cn, Yn + C0 * Pixels, Pixels);
        else
          for (int64_t Ch = C0; Ch < C0 + Cn; ++Ch)
            for (int64_t P = 0; P < Pixels; ++P)
              Yn[Ch * Pixels + P] = ProductData[P * M + Ch];
        if (!ActInGemm)
          for (int64_t Ch = C0; Ch < C0 + Cn; ++Ch)
            A.applyAct(Yn + Ch * Pixels, static_cast<size_t>(Pixels));
      });
    }
    return Status::ok();
  }

  /// runTransposed for a 1x1 stride-1 unpadded convolution (MobileNetV2's 7x7 projections): the
  /// input already is col (no phase planes), and each task takes a range of pixel panels end to
  /// end, one fan-out in all: it gathers its rows of col^T from X, multiplies them by all of W^T
  /// (bias and clamp in the GEMM's write-back, per column), and transposes its pixels into Y. A
  /// 7x7 plane is 4 full 12-pixel panels and a 1-pixel one (whose tile costs about 1/8 of a full
  /// one), where Y = W x col fills 49 of 64 columns.
  Status runTransposedPointwise(const ConvRun &R, const float *X, const float *B, float *Y, const PackedB &WT,
                                const Parallel &Pool) const {
    const int64_t MR = MK.MR, Pixels = R.OutPlane, KDim = R.C, M = R.M;
    const int64_t Panels = (Pixels + MR - 1) / MR, KBlocks = (KDim + GemmKC - 1) / GemmKC;
    const Parallel Serial;
    const Parallel &Par = Pool.ifWorth(R.N * M * KDim * Pixels);
    GemmEpilogue Ep;
    Ep.ColBias = B;
    Ep.Act = A.Act;
    // One task per thread and image, each a range of panels of about equal cost: a full panel
    // costs 1, the last one its share of rows (at least 1/8: loads, not FMAs, bound a thin tile).
    // 5 panels of a 7x7 plane on 2 threads: 2 + 2.1, where equal panel counts gave 3 + 1.1.
    const int64_t Tasks = std::max<int64_t>(1, std::min<int64_t>(Panels, Par.threads()));
    const int64_t LastRows = Pixels - (Panels - 1) * MR;
    const double LastCost = std::max(0.125, static_cast<double>(LastRows) / static_cast<double>(MR));
    std::vector<int64_t> Bounds(static_cast<size_t>(Tasks + 1), Panels);
    Bounds[0] = 0;
    for (int64_t T = 1, P = 0; T < Tasks; ++T) { // where T / Tasks of the cost is reached
      const double Target = (static_cast<double>(Panels - 1) + LastCost) * static_cast<double>(T) / Tasks;
      while (P < Panels && static_cast<double>(P) + 0.5 < Target) // the nearest panel boundary
        ++P;
      Bounds[static_cast<size_t>(T)] = std::max(Bounds[static_cast<size_t>(T - 1)], std::min(P, Panels));
    }
    Par.forRange(static_cast<size_t>(R.N * Tasks), 1, [&](size_t Lo, size_t Hi) {
      ScratchFrame Scratch; // this worker's col^T rows and product, on its scratch stack
      PackedA ColT;
      float *ColBuf = nullptr, *Prod = nullptr;
      size_t ColCap = 0, ProdCap = 0;
      for (size_t T = Lo; T < Hi; ++T) {
        // Panels [P0, P1) of image N.
        const int64_t N = static_cast<int64_t>(T) / Tasks, Ti = static_cast<int64_t>(T) % Tasks;
        const int64_t P0 = Bounds[static_cast<size_t>(Ti)], P1 = Bounds[static_cast<size_t>(Ti + 1)];
        if (P1 <= P0)
          continue;
        const int64_t Row0 = P0 * MR, Rows = std::min(Pixels, P1 * MR) - Row0, Mpad = (P1 - P0) * MR;
        const float *Xn = X + N * KDim * Pixels;
        ColT.M = Rows, ColT.K = KDim;
        const size_t ColSize = static_cast<size_t>(std::max<int64_t>(1, Mpad * KDim));
        if (ColCap < ColSize) // sized by the first task, grown if a later one has more panels
          ColBuf = Scratch.take<float>(ColSize), ColCap = ColSize;
        ColT.Data.borrow(ColBuf, ColSize);
        float *Col = ColBuf;
        // packA's layout: K blocks of GemmKC, then MR pixels per k (zeros past the last pixel).
        for (int64_t Kb = 0; Kb < KBlocks; ++Kb) {
          const int64_t K0 = Kb * GemmKC, Kc = std::min(GemmKC, KDim - K0);
          for (int64_t P = 0; P < P1 - P0; ++P) {
            float *Panel = Col + K0 * Mpad + P * Kc * MR;
            const int64_t Valid = std::min(MR, Rows - P * MR);
            const float *Src = Xn + K0 * Pixels + Row0 + P * MR;
            if (MK.Isa == GemmIsa::Avx512 && MR <= 16 && rowPipelineAvx512Supported()) {
              copyRowsPaddedAvx512(Src, Pixels, Kc, Valid, MR, Panel);
              continue;
            }
            if (MK.Isa == GemmIsa::Avx2 && MR <= 8) {
              copyRowsPaddedAvx2(Src, Pixels, Kc, Valid, MR, Panel);
              continue;
            }
            for (int64_t Kk = 0; Kk < Kc; ++Kk, Src += Pixels) {
              std::memcpy(Panel + Kk * MR, Src, static_cast<size_t>(Valid) * sizeof(float));
              std::fill(Panel + Kk * MR + Valid, Panel + (Kk + 1) * MR, 0.0f);
            }
          }
        }
        if (ProdCap < static_cast<size_t>(Rows * M))
          Prod = Scratch.take<float>(static_cast<size_t>(Rows * M)), ProdCap = static_cast<size_t>(Rows * M);
        gemmPacked(MK, ColT, WT, 1.0f, 0.0f, Prod, M, Serial, &Ep);
        float *Yn = Y + N * M * Pixels + Row0;
        if (MK.Isa == GemmIsa::Avx512 && rowPipelineAvx512Supported()) { // 16x16 blocks in registers
          transposeToPlanesAvx512(Prod, M, Rows, M, Yn, Pixels);
          continue;
        }
        if (MK.Isa == GemmIsa::Avx2) { // 8x8 blocks
          transposeToPlanesAvx2(Prod, M, Rows, M, Yn, Pixels);
          continue;
        }
        for (int64_t Ch = 0; Ch < M; ++Ch)
          for (int64_t I = 0; I < Rows; ++I)
            Yn[Ch * Pixels + I] = Prod[I * M + Ch];
      }
    });
    return Status::ok();
  }

  /// Group-1 convolution on phase planes. The input is zero-padded once and split into SH x SW
  /// phase planes of Rq x Wq (phase (ph, pw) holds padded pixels (r * SH + ph, w * SW + pw)). Then
  /// im2col element (k = (c, kh, kw), p = (oh, ow)) is the plane element at TapOff[k] + oh * Wq +
  /// ow: the GEMM reads B in place through those two offset tables (runs of an output row are
  /// contiguous), one K-block panel at a time into L1, and writes Y directly. A 1x1 stride-1
  /// convolution without padding has Wq == OW and reads the input as it is.
  Status runPhased(const ConvRun &R, const float *X, const float *B, float *Y, const PackedA *Wp_,
                   const Parallel &Pool) const {
    const PhasePlanes L(R, A.W);
    const int64_t H = L.H, Wd = L.Wd, OW = L.OW, KH = L.KH, KW = L.KW, SH = L.SH, SW = L.SW;
    const int64_t PH = L.PH, PW = L.PW, Wq = L.Wq, Rq = L.Rq;
    // Stride 1, no padding and one kernel column: the slices lie inside X (with KW > 1 the last
    // slice would run (KW - 1) * DW past it), so X is used as it is.
    const bool Direct = SH == 1 && SW == 1 && KW == 1 && Wq == Wd && Rq == H && PH == 0 && PW == 0;
    const int64_t NR = MK.NR, Cols = R.OutPlane, KDim = R.Cg * KH * KW;
    // A convolution below Parallel::kMinParallelWork multiply-adds runs on the calling thread:
    // splitting it would cost more than it saves (MNIST-sized layers).
    const Parallel Serial;
    const Parallel &Par = Pool.ifWorth(R.N * R.M * KDim * Cols);
    // Reads stay inside the phase planes (only output pixels' columns are read); the slack is a
    // margin kept from the layout with extended rows.
    const int64_t Phases = L.Phases, PlaneQ = L.PlaneQ, Slack = Direct ? 0 : 2 * Wq + NR;
    // Scratch of the calling thread (ThreadScratch.h). The lambdas below run on other workers too:
    // they use the pointers taken here.
    ScratchFrame Scratch;
    float *PaddedData = nullptr;
    if (!Direct) { // fill() writes the planes; the slack past them is cleared here
      const size_t Planes = static_cast<size_t>(R.C * Phases * PlaneQ);
      PaddedData = Scratch.take<float>(Planes + static_cast<size_t>(Slack));
      std::fill(PaddedData + Planes, PaddedData + Planes + Slack, 0.0f);
    }
    // Output pixel p = (oh, ow) is column oh * Wq + ow of a phase-plane row; when Wq == OW that is p.
    const bool Gaps = Wq != OW;
    int64_t *PixelOffsets = nullptr;
    if (Gaps) {
      PixelOffsets = Scratch.take<int64_t>(static_cast<size_t>(Cols));
      for (int64_t P = 0; P < Cols; ++P)
        PixelOffsets[P] = P / OW * Wq + P % OW;
    }
    const int64_t *const PixOff = PixelOffsets;
    GemmEpilogue Ep;
    Ep.RowBias = B;
    Ep.Act = A.Act;
    // Column blocks of about 4 NR-wide panels, as many as a multiple of the threads, the panels
    // spread evenly over them (7 blocks of 4 on 2 threads would leave one idle for a quarter).
    const int64_t Panels = (Cols + NR - 1) / NR, Threads = std::max(1, Par.threads());
    const int64_t TargetPanels = std::max<int64_t>(4, 65536 / std::max<int64_t>(KDim, 1) / NR);
    int64_t Blocks = (Panels + TargetPanels - 1) / TargetPanels;
    if (Threads > 1)
      Blocks = std::min(Panels, (Blocks + Threads - 1) / Threads * Threads);
    // Too few panels to give every thread an even share of columns (3 panels on 2 threads): split
    // each block's GEMM by rows instead. Otherwise one fan-out over the blocks (each fan-out is a
    // fork-join, which costs as much as a small convolution's block).
    const bool SplitGemm = Threads > 1 && Panels < 2 * Threads;
    const Parallel &GemmPar = SplitGemm ? Par : Serial;
    // Where im2col row k starts in Src, computed once (tapOffset divides; per row and block it
    // cost more than the copy it addresses).
    // In the Direct case the one phase plane per channel is X's own plane (PlaneQ == InPlane), so
    // the same offsets address X: channel c's plane plus the tap's row (kh * DH * Wd). Taking
    // K * InPlane there was right for 1x1 kernels only and read other channels' planes for KH > 1
    // (openWakeWord's 3x1 convolutions).
    int64_t *const TapOffsets = Scratch.take<int64_t>(static_cast<size_t>(KDim));
    L.tapOffsets(KDim, TapOffsets);
    const int64_t *const TapOff = TapOffsets;
    for (int64_t N = 0; N < R.N; ++N) {
      const float *Xn = X + N * R.C * R.InPlane;
      if (!Direct) // padding a small input is cheaper than a fan-out
        L.fill(Xn, PaddedData, R.C, R.C * R.InPlane < (int64_t{1} << 16) ? Serial : Par);
      const float *Src = Direct ? Xn : PaddedData;
      float *Out = Y + N * R.M * R.OutPlane;
      const auto Blocks_ = [&](size_t Lo, size_t Hi) {
        for (size_t T = Lo; T < Hi; ++T) {
          const int64_t Blk = static_cast<int64_t>(T);
          const int64_t J0 = Blk * Panels / Blocks * NR, NCols = std::min(Cols, (Blk + 1) * Panels / Blocks * NR) - J0;
          // im2col element (k, p) is Src[TapOff[k] + PixOff[p]]: the GEMM reads it in place, a
          // K-block panel at a time, and writes Y directly.
          const GemmRowsB Im2col{Gaps ? Src : Src + J0, TapOff, NCols, Gaps ? PixOff + J0 : nullptr};
          if (Bf16W)
            gemmBf16DotRowsB(*Bf16W, Im2col, Out + J0, Cols, GemmPar, &Ep);
          else
            gemmPackedRowsB(MK, *Wp_, Im2col, 1.0f, 0.0f, Out + J0, Cols, GemmPar, &Ep);
        }
      };
      if (SplitGemm)
        Blocks_(0, static_cast<size_t>(Blocks));
      else
        Par.forRange(static_cast<size_t>(Blocks), 1, Blocks_);
    }
    return Status::ok();
  }

  /// Group-1 strided convolution on AVX2 (ResNet's 3x3 stride-2 downsampling convs) as the
  /// transposed product Y^T[pixels, M] = col^T[pixels, K] x W^T[K, M] with col^T read in place:
  /// the input is copied once, transposed to channels last, into a zero-padded image, where pixel
  /// p's window starts at PixOff[p] and tap k = (kh, kw, c) is TapOff[k] further (W^T's rows are
  /// packed in that order), and tapsTileAvx2 broadcasts each pixel's elements straight from there
  /// (no phase planes, no B-panel copies). Work: balanced pixel chunks of up to kTapsChunkTiles
  /// tiles, times the output channels' 16-wide panels in one group per thread; a chunk's input is
  /// reused by every panel of the group, each panel of W^T streamed once per chunk. Small planes
  /// (ResNet-50's 14x14 -> 7x7, 512 channels) take this path too: one chunk, the output channels
  /// split between the threads.
  Status runTaps(const ConvRun &R, const float *X, const float *B, float *Y, const PackedB &WT,
                 const Parallel &Pool) const {
    const WindowAttrs &W = A.W;
    const int64_t H = R.G.In[0], Wd = R.G.In[1], OH = R.G.Out[0], OW = R.G.Out[1];
    const int64_t KH = W.Kernel[0], KW = W.Kernel[1], DH = W.Dilations[0], DW = W.Dilations[1];
    const int64_t SH = W.Strides[0], SW = W.Strides[1], PH = R.G.PadBegin[0], PW = R.G.PadBegin[1];
    const int64_t Hp = (OH - 1) * SH + (KH - 1) * DH + 1, Wp = (OW - 1) * SW + (KW - 1) * DW + 1;
    const int64_t PlaneP = Hp * Wp, C = R.C, M = R.M, KDim = C * KH * KW, Pixels = R.OutPlane;
    if (WT.K != KDim || WT.N != M || WT.Kc != GemmKC)
      return runError(Name.c_str(), "shapes differ from the packed weights");
    // Tiles of at most 6 pixels (pixelTileStart: a 7x7 plane is 4 x 6 + 5 x 5 pixels, not 8 x 6 + 1).
    constexpr int64_t TileP = 6, NR = 16;
    const int64_t Tiles = (Pixels + TileP - 1) / TileP, Panels = (M + NR - 1) / NR, Npad = Panels * NR;
    const Parallel &Par = Pool.ifWorth(R.N * M * KDim * Pixels);
    ScratchFrame Scratch; // the calling thread's (ThreadScratch.h); the workers use these pointers
    float *const Pd = Scratch.take<float>(static_cast<size_t>(std::max<int64_t>(1, C * PlaneP)));
    int64_t *const TapOff = Scratch.take<int64_t>(static_cast<size_t>(KDim + Pixels)), *const PixOff = TapOff + KDim;
    // Channels last: tap k = (kh, kw, c) is element c of padded pixel (kh * DH, kw * DW) past the
    // window origin, so the 16 broadcasts of consecutive k for one pixel read one cache line.
    for (int64_t K = 0; K < KDim; ++K) {
      const int64_t T = K / C, Ch = K % C;
      TapOff[K] = (T / KW * DH * Wp + T % KW * DW) * C + Ch;
    }
    for (int64_t P = 0; P < Pixels; ++P)
      PixOff[P] = (P / OW * SH * Wp + P % OW * SW) * C;
    // Chunks of up to kTapsChunkTiles tiles: their partial sums (15 KiB) and a K block's W^T panel
    // (12 KiB) stay in L1 while each tile takes its K block's rows of the input (from L2).
    // Chunks are balanced: a 14x14 plane (33 tiles) was a chunk of 32 and one of a single tile that
    // streamed all of W^T again for 6 pixels (and at 2 threads left one thread that tile).
    const int64_t Chunks = (Tiles + kTapsChunkTiles - 1) / kTapsChunkTiles;
    const int64_t ChunkTiles = (Tiles + Chunks - 1) / Chunks;
    const int64_t Groups = std::max<int64_t>(1, std::min<int64_t>(Panels, Par.threads()));
    // Rows of the padded plane: input row r - PH (zeros outside), columns [PW, PW + Copy) copied.
    const int64_t Col0 = std::min(PW, Wp), Copy = std::max<int64_t>(0, std::min(Wd, Wp - Col0));
    for (int64_t N = 0; N < R.N; ++N) {
      const float *Xn = X + N * C * R.InPlane;
      // Padded row Rr (input row Rr - PH, zeros outside): Wp pixels of C channels each.
      Par.forRange(static_cast<size_t>(Hp), 4, [&](size_t Lo, size_t Hi) {
        for (size_t Rr = Lo; Rr < Hi; ++Rr) {
          float *D = Pd + static_cast<int64_t>(Rr) * Wp * C;
          const int64_t Ih = static_cast<int64_t>(Rr) - PH;
          if (Ih < 0 || Ih >= H || Copy == 0) {
            std::fill(D, D + Wp * C, 0.0f);
            continue;
          }
          std::fill(D, D + Col0 * C, 0.0f);
          transposeToPlanesAvx2(Xn + Ih * Wd, R.InPlane, C, Copy, D + Col0 * C, C);
          std::fill(D + (Col0 + Copy) * C, D + Wp * C, 0.0f);
        }
      });
      float *Yn = Y + N * M * Pixels;
      Par.forRange(static_cast<size_t>(Chunks * Groups), 1, [&](size_t Lo, size_t Hi) {
        alignas(32) float Part[kTapsChunkTiles * TileP * NR];
        for (size_t T = Lo; T < Hi; ++T) {
          const int64_t Chunk = static_cast<int64_t>(T) / Groups, G = static_cast<int64_t>(T) % Groups;
          const int64_t T0 = Chunk * ChunkTiles, T1 = std::min(Tiles, T0 + ChunkTiles);
          for (int64_t Q = G * Panels / Groups; Q < (G + 1) * Panels / Groups; ++Q) {
            const int64_t Cols = std::min(NR, M - Q * NR);
            for (int64_t K0 = 0; K0 < KDim; K0 += GemmKC) {
              const int64_t Kc = std::min(GemmKC, KDim - K0);
              const float *Panel = WT.Data.data() + K0 * Npad + Q * Kc * NR;
              // The panel after this one (this column panel's next K block, or the next column
              // panel's first), prefetched by the chunk's first tile.
              const float *Next = K0 + Kc < KDim ? WT.Data.data() + (K0 + Kc) * Npad + Q * std::min(GemmKC, KDim - K0 - Kc) * NR
                                  : Q + 1 < Panels ? WT.Data.data() + (Q + 1) * std::min(GemmKC, KDim) * NR
                                                   : nullptr;
              for (int64_t Tl = T0; Tl < T1; ++Tl) {
                const int64_t P0 = pixelTileStart(Tl, Pixels), Rows = pixelTileStart(Tl + 1, Pixels) - P0;
                tapsTileRowsAvx2(Rows, Pd, PixOff + P0, TapOff + K0, Kc, Panel, Tl == T0 ? Next : nullptr, Part + (Tl - T0) * TileP * NR, K0 == 0,
                                 K0 + Kc >= KDim, B ? B + Q * NR : nullptr, Cols, A.Act, Yn + Q * NR * Pixels + P0,
                                 Pixels);
              }
            }
          }
        }
      });
    }
    return Status::ok();
  }

  /// Packs columns [J0, J0 + NCols) of this group's im2col matrix into PB (the layout of packB).
  void packColumns(const ConvRun &R, const float *Xg, int64_t J0, int64_t NCols, PackedB &PB) const {
    const WindowAttrs &W = A.W;
    const int64_t H = R.G.In[0], Wd = R.G.In[1], OW = R.G.Out[1];
    const int64_t KH = W.Kernel[0], KW = W.Kernel[1], SH = W.Strides[0], SW = W.Strides[1];
    const int64_t DH = W.Dilations[0], DW = W.Dilations[1], PH = R.G.PadBegin[0], PW = R.G.PadBegin[1];
    const int64_t NR = MK.NR, KDim = R.Cg * KH * KW, Panels = (NCols + NR - 1) / NR, Npad = Panels * NR;
    constexpr int64_t KC = GemmKC;
    PB.K = KDim;
    PB.N = NCols;
    float *Dst = PB.Data.data();
    // A panel's NR columns are output pixels; split them into segments that lie in one output
    // row. Within a segment a tap reads input pixels Iw0, Iw0 + SW, ... of one input row, so each
    // (segment, tap) is a clipped strided copy (a memcpy when SW == 1) plus zero fill at the edges.
    struct Segment {
      int64_t J0, J1, Row, Col; // panel columns [J0, J1), input row/col of column J0's window origin
    };
    std::vector<Segment> Segs;
    Segs.reserve(4);
    // Per k: the input plane's offset, the tap's row offset and column tap (divisions done once).
    struct Tap {
      int64_t PlaneOff, RowOff, Kw;
    };
    std::vector<Tap> Taps(static_cast<size_t>(KDim));
    for (int64_t K = 0; K < KDim; ++K)
      Taps[K] = {(K / (KH * KW)) * R.InPlane, ((K / KW) % KH) * DH, K % KW};
    // Per (segment, column tap): first input column and the valid range [Lo, Hi) of the segment's
    // columns, 0 <= Iw0 + j * SW < Wd.
    struct SegTap {
      int64_t Iw0, Lo, Hi;
    };
    std::vector<SegTap> SegTaps;
    const bool Fast = FastPack && SW <= 2 && NR <= 32, FastAvx2 = !Fast && Avx2Pack && SW <= 2;
    for (int64_t P = 0; P < Panels; ++P) {
      const int64_t Width = std::min(NR, NCols - P * NR);
      Segs.clear();
      for (int64_t J = 0; J < Width;) {
        const int64_t Pos = J0 + P * NR + J, Oh = Pos / OW, Ow = Pos % OW;
        const int64_t Len = std::min(Width - J, OW - Ow);
        Segs.push_back({J, J + Len, Oh * SH - PH, Ow * SW - PW});
        J += Len;
      }
      SegTaps.resize(Segs.size() * static_cast<size_t>(KW));
      for (size_t Si = 0; Si < Segs.size(); ++Si)
        for (int64_t Kw = 0; Kw < KW; ++Kw) {
          const Segment &S = Segs[Si];
          const int64_t Iw0 = S.Col + Kw * DW, Len = S.J1 - S.J0;
          const int64_t Lo = Iw0 >= 0 ? 0 : std::min(Len, (-Iw0 + SW - 1) / SW);
          const int64_t Hi = Iw0 >= Wd ? 0 : std::min(Len, (Wd - Iw0 + SW - 1) / SW);
          SegTaps[Si * KW + Kw] = {Iw0, Lo, std::max(Lo, Hi)};
        }
      for (int64_t K0 = 0; K0 < KDim; K0 += KC) {
        const int64_t Kc = std::min(KC, KDim - K0);
        float *Panel = Dst + K0 * Npad + P * Kc * NR;
        for (int64_t Kk = 0; Kk < Kc; ++Kk) {
          const Tap &T = Taps[K0 + Kk];
          const float *Plane = Xg + T.PlaneOff;
          float *D = Panel + Kk * NR;
          for (size_t Si = 0; Si < Segs.size(); ++Si) {
            const Segment &S = Segs[Si];
            const SegTap &ST = SegTaps[Si * KW + T.Kw];
            const int64_t Ih = S.Row + T.RowOff, Len = S.J1 - S.J0;
            float *Dj = D + S.J0;
            const bool RowIn = Ih >= 0 && Ih < H;
            const int64_t Lo = RowIn ? ST.Lo : 0, Hi = RowIn ? ST.Hi : 0;
            const float *Src = Plane + (RowIn ? Ih * Wd : 0) + ST.Iw0;
            if (Fast) {
              packSegmentAvx512(Dj, Src, Len, Lo, Hi, SW);
              continue;
            }
            if (FastAvx2) {
              packSegmentAvx2(Dj, Src, Len, Lo, Hi, SW);
              continue;
            }
            std::fill(Dj, Dj + Lo, 0.0f);
            if (SW == 1) {
              if (Hi > Lo)
                std::memcpy(Dj + Lo, Src + Lo, static_cast<size_t>(Hi - Lo) * sizeof(float));
            } else {
              for (int64_t J = Lo; J < Hi; ++J)
                Dj[J] = Src[J * SW];
            }
            std::fill(Dj + Hi, Dj + Len, 0.0f);
          }
          std::fill(D + Width, D + NR, 0.0f);
        }
      }
    }
  }

  std::string Name;
  const GemmMicroKernel &MK;
  ConvAttrs A;
  std::vector<PackedA> PackedW; ///< one per group; empty when the weights are not constant
  std::unique_ptr<PackedB> PackedWT; ///< W^T for runTransposed (small output planes), else null
  std::unique_ptr<Bf16DotA> Bf16W; ///< bf16 compute: W as bf16 rows (group 1; then the others are empty)
  const bool Taps = false; ///< group-1 strided conv on AVX2: runTaps with PackedWT (W^T)
  const bool FastPack = avx512PackAvailable();
  const bool Avx2Pack = avx2PackAvailable(); ///< packSegmentAvx2 / gatherPixelsAvx2 where AVX-512 is not there
};

} // namespace

KernelVariant im2colVariant(GemmIsa Isa, int Priority) {
  const GemmMicroKernel &MK = gemmMicroKernel(Isa);
  const std::string Name = std::string("f32_conv__im2col_gemm_") + MK.Name;
  return {Name, Priority, [Isa](const KernelCreateInfo &I) { return convTypesOk(I) && is2D(I) && gemmIsaAvailable(Isa); },
          [Name, &MK, Isa](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
            ASSIGN_OR_RETURN(ConvAttrs A, attrsFor(I));
            std::vector<PackedA> Packed;
            std::unique_ptr<PackedB> PackedT;
            bool Taps = false;
            if (inputIsConst(I, 1)) {
              const ConstData &Wt = *I.Inputs[1].Const;
              const int64_t Mg = Wt.Dims[0] / A.Group, KDim = product(Wt.Dims, 1, Wt.Dims.size());
              // A small, known output plane takes the transposed GEMM: pack W^T (K x M) instead.
              const TensorShape &YS = I.Outputs[0].Shape;
              const bool SmallPlane = A.Group == 1 && YS.getRank() == 4 && YS[2].isConst() && YS[3].isConst() &&
                                      YS[2].value() * YS[3].value() <= kTransposedMaxPlane && Mg >= 32;
              // Stride-2 convolutions on AVX2 read col^T in place (runTaps), with W^T packed as
              // the transposed GEMM's.
              Taps = Isa == GemmIsa::Avx2 && tapsEligible(A);
              // A hit in the host's packed-weights cache borrows the packing (PackedWeights.h).
              if (SmallPlane || Taps) {
                PackedT.reset(new PackedB);
                // runTaps' W^T has its rows in another order: its own key, so a compiled folder
                // packed before the channels-last layout misses and packs again at load.
                const std::string Key =
                    packedWeightsKey(I, 1, Name + (Taps ? "/wt/hwc/kc" : "/wt/kc") + std::to_string(GemmKC));
                if (!borrowPackedB(Key, MK, KDim, Mg, GemmKC, /*Bf16=*/false, *PackedT)) {
                  if (Taps) { // W^T rows in runTaps' tap order k = (kh, kw, c)
                    const int64_t C = Wt.Dims[1], KHW = KDim / std::max<int64_t>(C, 1);
                    std::vector<float> Reordered(static_cast<size_t>(Mg * KDim));
                    const float *Src = Wt.as<float>();
                    for (int64_t M = 0; M < Mg; ++M)
                      for (int64_t Ch = 0; Ch < C; ++Ch)
                        for (int64_t T = 0; T < KHW; ++T)
                          Reordered[static_cast<size_t>(M * KDim + T * C + Ch)] = Src[M * KDim + Ch * KHW + T];
                    packB(MK, KDim, Mg, MatrixRef{Reordered.data(), 1, KDim}, *PackedT, Parallel());
                  } else {
                    packB(MK, KDim, Mg, MatrixRef{Wt.as<float>(), 1, KDim}, *PackedT, Parallel());
                  }
                  storePackedB(Key, *PackedT);
                }
              } else {
                Packed.resize(static_cast<size_t>(A.Group));
                for (int64_t G = 0; G < A.Group; ++G) {
                  const std::string Key =
                      packedWeightsKey(I, 1, Name + "/g" + std::to_string(G) + "/kc" + std::to_string(GemmKC));
                  if (!borrowPackedA(Key, MK, Mg, KDim, GemmKC, Packed[G])) {
                    packA(MK, Mg, KDim, MatrixRef{Wt.as<float>() + G * Mg * KDim, KDim, 1}, Packed[G]);
                    storePackedA(Key, Packed[G]);
                  }
                }
              }
              markConstConsumed(I, 1); // run() reads the packed copies only
            }
            return makeKernel<ConvIm2colKernel>(Name, MK, std::move(A), std::move(Packed), std::move(PackedT), nullptr,
                                                Taps);
          }};
}

KernelVariant im2colBf16Variant() {
  const std::string Name = std::string("f32_conv__im2col_bf16c_") + kBf16DotName;
  KernelVariant V{Name, 38,
                  [](const KernelCreateInfo &I) {
                    if (!hasComputeBf16(I.N) || !bf16DotAvailable() || !convTypesOk(I) || !is2D(I) ||
                        !inputIsConst(I, 1) || !gemmIsaAvailable(GemmIsa::Avx512))
                      return false;
                    auto A = attrsFor(I);
                    return A.isOk() && A->Group == 1;
                  },
                  [Name](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
                    ASSIGN_OR_RETURN(ConvAttrs A, attrsFor(I));
                    const ConstData &Wt = *I.Inputs[1].Const;
                    const int64_t M = Wt.Dims[0], KDim = product(Wt.Dims, 1, Wt.Dims.size());
                    std::unique_ptr<Bf16DotA> W(new Bf16DotA);
                    packBf16DotA(M, KDim, MatrixRef{Wt.as<float>(), KDim, 1}, *W, packedWeightsKey(I, 1, Name + "/rows"));
                    markConstConsumed(I, 1);
                    return makeKernel<ConvIm2colKernel>(Name, gemmMicroKernel(GemmIsa::Avx512), std::move(A),
                                                        std::vector<PackedA>(), nullptr, std::move(W));
                  }};
  return V;
}

} // namespace conv
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
