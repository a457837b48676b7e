// AVX-512 and AVX2 sliding-window plane kernels (see PlaneWindow.h). AVX-512: stride 1 reads each
// tap's 16 outputs with one masked unaligned load; stride 2 loads 32 consecutive inputs and keeps
// the even ones with one two-source permute. AVX2: the same with 8 outputs per vector (below). The
// 3x3 kernel (MobileNet, EfficientNet) is unrolled at compile time.
#include "backends/native/ops/common/PlaneWindow.h"
#include "core/CpuFeatures.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#define OPT_DW_X86 1
#endif

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

namespace {

constexpr int64_t kLanes = 16;

#ifdef OPT_DW_X86

/// Lanes of a 16-wide load starting at input column Base that lie in [0, W) (and, for the
/// output side, below Limit lanes).
inline __mmask16 columnMask(int64_t Base, int64_t W, int64_t Limit) {
  uint32_t M = 0;
  for (int64_t J = 0; J < kLanes && J < Limit; ++J)
    M |= (Base + J >= 0 && Base + J < W) ? (1u << J) : 0u;
  return static_cast<__mmask16>(M);
}

/// Out-of-range input rows are skipped; out-of-range columns are masked off in the loads (AVX-512
/// masked loads do not fault on masked lanes), so there is no padded copy. Masks[(Block * KW +
/// Kw) * 2 + Half] are precomputed per geometry.
///
/// RowsAtOnce output rows of one 16-column block are accumulated together: a single row's taps
/// form one dependent FMA chain (latency-bound), R rows give R independent chains.
template <bool IsMax, int SW, int KHc, int KWc, int RowsAtOnce>
__attribute__((target("avx512f,fma"))) inline void dwBlockAvx512(const DepthwiseGeometry &G, const __mmask16 *BM,
                                                                const float *In, const float *K, float Bias,
                                                                float *Out, int64_t Oh, int64_t Ow0, int64_t KhLo,
                                                                int64_t KhHi) {
  const int64_t KW = KWc > 0 ? KWc : G.KW;
  const int64_t DH = G.DH, DW = G.DW, W = G.W;
  const __m512i Even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  // Lanes outside the plane read as the padding value: 0 for a convolution, -inf for max pooling.
  const __m512 Fill = IsMax ? _mm512_set1_ps(-INFINITY) : _mm512_setzero_ps();
  __m512 Acc[RowsAtOnce];
  __mmask16 Nan[RowsAtOnce]; // max pooling: lanes that saw a NaN (the result is NaN there)
  for (int R = 0; R < RowsAtOnce; ++R)
    Acc[R] = IsMax ? Fill : _mm512_set1_ps(Bias), Nan[R] = 0;
  const int64_t RowStep = G.SH * W;
  const float *Base = In + (Oh * G.SH - G.PH) * W + Ow0 * SW - G.PW;
  for (int64_t Kh = KhLo; Kh < KhHi; ++Kh) {
    const float *Row = Base + Kh * DH * W;
    for (int64_t Kw = 0; Kw < KW; ++Kw) {
      const __m512 Kv = IsMax ? Fill : _mm512_set1_ps(K[Kh * KW + Kw]);
      const __mmask16 M0 = BM[Kw * 2], M1 = BM[Kw * 2 + 1];
      for (int R = 0; R < RowsAtOnce; ++R) {
        const float *Src = Row + R * RowStep + Kw * DW;
        __m512 X;
        if (SW == 1)
          X = _mm512_mask_loadu_ps(Fill, M0, Src);
        else
          X = _mm512_permutex2var_ps(_mm512_mask_loadu_ps(Fill, M0, Src), Even,
                                     _mm512_mask_loadu_ps(Fill, M1, Src + kLanes));
        if (IsMax) {
          Nan[R] |= _mm512_cmp_ps_mask(X, X, _CMP_UNORD_Q);
          Acc[R] = _mm512_max_ps(Acc[R], X);
        } else {
          Acc[R] = _mm512_fmadd_ps(Kv, X, Acc[R]);
        }
      }
    }
  }
  const Act512 Av(G.Act);
  const int64_t Left = G.OW - Ow0;
  const __mmask16 StoreMask = Left >= kLanes ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << Left) - 1u);
  for (int R = 0; R < RowsAtOnce; ++R) {
    __m512 V = Acc[R];
    if (IsMax)
      V = _mm512_mask_mov_ps(V, Nan[R], _mm512_set1_ps(NAN));
    if (!IsMax && Av.on())
      V = Av(V);
    _mm512_mask_storeu_ps(Out + (Oh + R) * G.OW + Ow0, StoreMask, V);
  }
}

template <bool IsMax, int SW, int KHc, int KWc>
__attribute__((target("avx512f,fma"))) void dwRowsAvx512(const DepthwiseGeometry &G, const __mmask16 *Masks,
                                                         const float *In, const float *K, float Bias, float *Out) {
  const int64_t KH = KHc > 0 ? KHc : G.KH, KW = KWc > 0 ? KWc : G.KW;
  const int64_t DH = G.DH;
  // Taps of output row Oh whose input row is inside the plane.
  const auto tapRows = [&](int64_t Oh, int64_t &Lo, int64_t &Hi) {
    const int64_t Ih0 = Oh * G.SH - G.PH;
    Lo = Ih0 >= 0 ? 0 : (-Ih0 + DH - 1) / DH;
    Hi = std::min<int64_t>(KH, Ih0 >= G.H ? 0 : (G.H - 1 - Ih0) / DH + 1);
  };
  constexpr int Group = 4;
  for (int64_t Oh = 0; Oh < G.OH;) {
    int64_t Lo, Hi, LoLast, HiLast;
    tapRows(Oh, Lo, Hi);
    if (Oh + Group <= G.OH) {
      tapRows(Oh + Group - 1, LoLast, HiLast);
      if (Lo == 0 && Hi == KH && LoLast == 0 && HiLast == KH) { // every row of the group is interior
        for (int64_t Ow0 = 0, Blk = 0; Ow0 < G.OW; Ow0 += kLanes, ++Blk)
          dwBlockAvx512<IsMax, SW, KHc, KWc, Group>(G, Masks + Blk * KW * 2, In, K, Bias, Out, Oh, Ow0, 0, KH);
        Oh += Group;
        continue;
      }
    }
    for (int64_t Ow0 = 0, Blk = 0; Ow0 < G.OW; Ow0 += kLanes, ++Blk)
      dwBlockAvx512<IsMax, SW, KHc, KWc, 1>(G, Masks + Blk * KW * 2, In, K, Bias, Out, Oh, Ow0, Lo, Hi);
    ++Oh;
  }
}


// ---- AVX2 + FMA: 8 outputs per vector. AVX2 has no mask registers: a border block's loads take
// a lane mask (vmaskmovps does not fault on masked-off lanes) expanded from the plan's bits, the
// interior blocks plain loads. Stride 2 loads 16 consecutive inputs and keeps the even ones (one
// in-lane shuffle; the accumulators are put in order once, before the store: dwBlockS2Avx2).

constexpr int64_t kLanes8 = 8;

/// Bits of an 8-wide load starting at input column Base that lie in [0, W) and below Limit lanes.
inline uint8_t columnBits8(int64_t Base, int64_t W, int64_t Limit) {
  uint32_t M = 0;
  for (int64_t J = 0; J < kLanes8 && J < Limit; ++J)
    M |= (Base + J >= 0 && Base + J < W) ? (1u << J) : 0u;
  return static_cast<uint8_t>(M);
}

__attribute__((target("avx2,fma"), always_inline)) inline __m256i laneMask8(unsigned Bits) {
  const __m256i B = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
  return _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32(static_cast<int>(Bits)), B), B);
}

/// 8 consecutive inputs; Masked: lanes outside M read as 0.
template <bool Masked>
__attribute__((target("avx2,fma"), always_inline)) inline __m256 load8(const float *P, __m256i M) {
  return Masked ? _mm256_maskload_ps(P, M) : _mm256_loadu_ps(P);
}

/// Rows x NB finished accumulators to the output (Scrambled: lanes in stride 2's shuffle order
/// [0 1 4 5 2 3 6 7], put right first): the activation in registers, masked stores past the row's
/// end.
template <bool Scrambled, int Rows, int NB>
__attribute__((target("avx2,fma"), always_inline)) inline void storeBlockAvx2(const DepthwiseGeometry &G,
                                                                           __m256 (&Acc)[Rows][NB],
                                                                           float *Out,
                                                                           int64_t Oh, int64_t Ow0, const Act256 &Av) {
  const int64_t Left = G.OW - Ow0;
  for (int R = 0; R < Rows; ++R)
    for (int B = 0; B < NB; ++B) {
      __m256 V = Acc[R][B];
      if (Av.on()) // in registers; a clamp lets NaN pass (Act256)
        V = Av(V);
      if (Scrambled)
        V = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(V), _MM_SHUFFLE(3, 1, 2, 0)));
      float *Dst = Out + (Oh + R) * G.OW + Ow0 + B * kLanes8;
      if (Left - B * kLanes8 >= kLanes8)
        _mm256_storeu_ps(Dst, V);
      else
        _mm256_maskstore_ps(Dst, laneMask8((1u << (Left - B * kLanes8)) - 1u), V);
    }
}

/// Stride 1: Rows output rows of NB adjacent 8-column blocks (Masked: one border block), each tap
/// one unaligned load: Rows * NB independent accumulation chains (one chain would wait on the FMA
/// latency at every tap).
template <int SW, int KWc, int Rows, int NB, bool Masked>
__attribute__((target("avx2,fma"))) inline void dwBlockAvx2(const DepthwiseGeometry &G, const uint8_t *BM,
                                                           const float *In, const float *K, float Bias, float *Out,
                                                           int64_t Oh, int64_t Ow0, int64_t KhLo, int64_t KhHi,
                                                           const Act256 &Av) {
  static_assert(SW == 1, "stride 2 runs dwBlockS2Avx2");
  const int64_t KW = KWc > 0 ? KWc : G.KW;
  const int64_t DH = G.DH, DW = G.DW, W = G.W;
  __m256 Acc[Rows][NB];
  for (int R = 0; R < Rows; ++R)
    for (int B = 0; B < NB; ++B)
      Acc[R][B] = _mm256_set1_ps(Bias);
  const int64_t RowStep = G.SH * W;
  const float *Base = In + (Oh * G.SH - G.PH) * W + Ow0 * SW - G.PW;
  const __m256i Ones = _mm256_set1_epi32(-1);
  for (int64_t Kh = KhLo; Kh < KhHi; ++Kh) {
    const float *Row = Base + Kh * DH * W;
    for (int64_t Kw = 0; Kw < KW; ++Kw) {
      const __m256 Kv = _mm256_set1_ps(K[Kh * KW + Kw]);
      const __m256i M0 = Masked ? laneMask8(BM[Kw * 2]) : Ones;
      for (int R = 0; R < Rows; ++R)
        for (int B = 0; B < NB; ++B) {
          const __m256 X = load8<Masked>(Row + R * RowStep + Kw * DW + B * kLanes8, M0);
          Acc[R][B] = _mm256_fmadd_ps(Kv, X, Acc[R][B]);
        }
    }
  }
  storeBlockAvx2<false, Rows, NB>(G, Acc, Out, Oh, Ow0, Av);
}

/// Stride 2: each (row, block) takes its taps in turn from 16 consecutive inputs (two loads) whose
/// even lanes it keeps with one in-lane shuffle, in the order [0 1 4 5 2 3 6 7] (outputs); the
/// accumulators stay in that order and are put right once before the store (one cross-lane permute
/// per output vector instead of one per tap). With dilation 1, an odd tap's inputs are the odd
/// lanes of the previous tap's loads (column + 1), so 3x3 takes 4 loads and 3 shuffles per row
/// instead of 6 loads and 6 shuffles. Lanes outside the plane read as 0 either way: a lane's
/// validity depends on its input column only, and the odd lanes the previous loads hold sit below
/// its 2 * Valid limit exactly when the even lanes of this tap's own load would.
template <int KWc, int Rows, int NB, bool Masked>
__attribute__((target("avx2,fma"))) inline void dwBlockS2Avx2(const DepthwiseGeometry &G, const uint8_t *BM,
                                                             const float *In, const float *K, float Bias, float *Out,
                                                             int64_t Oh, int64_t Ow0, int64_t KhLo, int64_t KhHi,
                                                             const Act256 &Av) {
  const int64_t KW = KWc > 0 ? KWc : G.KW;
  const int64_t DH = G.DH, DW = G.DW, W = G.W;
  const bool Reuse = DW == 1;
  __m256 Acc[Rows][NB];
  for (int R = 0; R < Rows; ++R)
    for (int B = 0; B < NB; ++B)
      Acc[R][B] = _mm256_set1_ps(Bias);
  const int64_t RowStep = G.SH * W;
  const float *Base = In + (Oh * G.SH - G.PH) * W + Ow0 * 2 - G.PW;
  const __m256i Ones = _mm256_set1_epi32(-1);
  for (int64_t Kh = KhLo; Kh < KhHi; ++Kh) {
    const float *Row = Base + Kh * DH * W;
    const float *KRow = K + Kh * KW;
    for (int R = 0; R < Rows; ++R)
      for (int B = 0; B < NB; ++B) {
        const float *Src = Row + R * RowStep + B * 2 * kLanes8;
        __m256 A = _mm256_setzero_ps(), Bv = A;
        for (int64_t Kw = 0; Kw < KW; ++Kw) {
          __m256 X;
          if (Reuse && (Kw & 1)) {
            X = _mm256_shuffle_ps(A, Bv, _MM_SHUFFLE(3, 1, 3, 1));
          } else {
            const __m256i M0 = Masked ? laneMask8(BM[Kw * 2]) : Ones, M1 = Masked ? laneMask8(BM[Kw * 2 + 1]) : Ones;
            A = load8<Masked>(Src + Kw * DW, M0);
            Bv = load8<Masked>(Src + Kw * DW + kLanes8, M1);
            X = _mm256_shuffle_ps(A, Bv, _MM_SHUFFLE(2, 0, 2, 0));
          }
          Acc[R][B] = _mm256_fmadd_ps(_mm256_set1_ps(KRow[Kw]), X, Acc[R][B]);
        }
      }
  }
  storeBlockAvx2<true, Rows, NB>(G, Acc, Out, Oh, Ow0, Av);
}

/// The block kernel of horizontal stride SW.
template <int SW, int KWc, int Rows, int NB, bool Masked>
__attribute__((target("avx2,fma"), always_inline)) inline void dwBlockStrideAvx2(
    const DepthwiseGeometry &G, const uint8_t *BM, const float *In, const float *K, float Bias, float *Out, int64_t Oh,
    int64_t Ow0, int64_t KhLo, int64_t KhHi, const Act256 &Av) {
  if constexpr (SW == 2) // (no dead stride-2 instance of dwBlockAvx2)
    dwBlockS2Avx2<KWc, Rows, NB, Masked>(G, BM, In, K, Bias, Out, Oh, Ow0, KhLo, KhHi, Av);
  else
    dwBlockAvx2<SW, KWc, Rows, NB, Masked>(G, BM, In, K, Bias, Out, Oh, Ow0, KhLo, KhHi, Av);
}

/// Output rows [Oh, Oh + Rows) over every column block: interior blocks two at a time.
template <int SW, int KWc, int Rows>
__attribute__((target("avx2,fma"))) inline void dwRowGroupAvx2(const DepthwiseGeometry &G, const DepthwisePlan &P,
                                                              const float *In, const float *K, float Bias, float *Out,
                                                              int64_t Oh, int64_t KhLo, int64_t KhHi,
                                                              const Act256 &Av) {
  const int64_t KW = G.KW, Blocks = (G.OW + kLanes8 - 1) / kLanes8;
  for (int64_t Blk = 0; Blk < Blocks;) {
    const uint8_t *BM = P.Masks8.data() + Blk * KW * 2;
    if (P.Interior8[static_cast<size_t>(Blk)] && Blk + 1 < Blocks && P.Interior8[static_cast<size_t>(Blk + 1)]) {
      dwBlockStrideAvx2<SW, KWc, Rows, 2, false>(G, BM, In, K, Bias, Out, Oh, Blk * kLanes8, KhLo, KhHi, Av);
      Blk += 2;
    } else {
      if (P.Interior8[static_cast<size_t>(Blk)])
        dwBlockStrideAvx2<SW, KWc, Rows, 1, false>(G, BM, In, K, Bias, Out, Oh, Blk * kLanes8, KhLo, KhHi, Av);
      else
        dwBlockStrideAvx2<SW, KWc, Rows, 1, true>(G, BM, In, K, Bias, Out, Oh, Blk * kLanes8, KhLo, KhHi, Av);
      ++Blk;
    }
  }
}

template <int SW, int KHc, int KWc>
__attribute__((target("avx2,fma"))) void dwRowsAvx2(const DepthwisePlan &P, const float *In, const float *K, float Bias,
                                                    float *Out) {
  const DepthwiseGeometry &G = P.G;
  const int64_t KH = KHc > 0 ? KHc : G.KH, DH = G.DH;
  // The activation (clamp, SiLU, HardSwish, ...) on each finished vector, before its store (a
  // later pass over the rows measured 7.8% of EfficientNet-B0 at 1 thread on Zen 3).
  const Act256 Av(G.Act);
  const auto tapRows = [&](int64_t Oh, int64_t &L, int64_t &H) {
    const int64_t Ih0 = Oh * G.SH - G.PH;
    L = Ih0 >= 0 ? 0 : (-Ih0 + DH - 1) / DH;
    H = std::min<int64_t>(KH, Ih0 >= G.H ? 0 : (G.H - 1 - Ih0) / DH + 1);
  };
  constexpr int Group = 4;
  for (int64_t Oh = 0; Oh < G.OH;) {
    int64_t L, H, LLast, HLast;
    tapRows(Oh, L, H);
    int64_t Done = 1;
    if (Oh + Group <= G.OH) {
      tapRows(Oh + Group - 1, LLast, HLast);
      if (L == 0 && H == KH && LLast == 0 && HLast == KH) // every row of the group is interior
        Done = Group;
    }
    if (Done == Group)
      dwRowGroupAvx2<SW, KWc, Group>(G, P, In, K, Bias, Out, Oh, 0, KH, Av);
    else
      dwRowGroupAvx2<SW, KWc, 1>(G, P, In, K, Bias, Out, Oh, L, H, Av);
    Oh += Done;
  }
}

#endif

/// The geometries the vector plane kernels take: horizontal stride 1 or 2, the rest positive.
[[maybe_unused]] bool vectorPlaneGeometry(const DepthwiseGeometry &G) {
  return (G.SW == 1 || G.SW == 2) && G.SH >= 1 && G.DH >= 1 && G.DW >= 1 && G.KH >= 1 && G.KW >= 1;
}

} // namespace

bool depthwiseAvx512Supported(const DepthwiseGeometry &G) {
#ifdef OPT_DW_X86
  static const bool Cpu = cpuFeatures().avx512Fma();
  return Cpu && vectorPlaneGeometry(G);
#else
  (void)G;
  return false;
#endif
}

DepthwisePlan planDepthwise(const DepthwiseGeometry &G) {
  DepthwisePlan P;
  P.G = G;
#ifdef OPT_DW_X86
  const int64_t Blocks = (G.OW + kLanes - 1) / kLanes;
  P.Masks.resize(static_cast<size_t>(Blocks * G.KW * 2));
  for (int64_t B = 0; B < Blocks; ++B) {
    const int64_t Ow0 = B * kLanes, Valid = G.OW - Ow0;
    for (int64_t Kw = 0; Kw < G.KW; ++Kw) {
      const int64_t Base = Ow0 * G.SW - G.PW + Kw * G.DW;
      uint16_t *M = &P.Masks[static_cast<size_t>((B * G.KW + Kw) * 2)];
      if (G.SW == 1) {
        M[0] = columnMask(Base, G.W, Valid);
        M[1] = 0;
      } else { // 32 consecutive inputs; output lane j reads input lane 2j
        M[0] = columnMask(Base, G.W, 2 * Valid);
        M[1] = columnMask(Base + kLanes, G.W, 2 * Valid - kLanes);
      }
    }
  }
#endif
  return P;
}

bool depthwiseAvx2Supported(const DepthwiseGeometry &G) {
#ifdef OPT_DW_X86
  static const bool Cpu = cpuFeatures().avx2Fma();
  return Cpu && vectorPlaneGeometry(G);
#else
  (void)G;
  return false;
#endif
}

DepthwisePlan planDepthwiseAvx2(const DepthwiseGeometry &G) {
  DepthwisePlan P;
  P.G = G;
#ifdef OPT_DW_X86
  const int64_t Blocks = (G.OW + kLanes8 - 1) / kLanes8;
  P.Masks8.resize(static_cast<size_t>(Blocks * G.KW * 2));
  P.Interior8.assign(static_cast<size_t>(Blocks), 1);
  for (int64_t B = 0; B < Blocks; ++B) {
    const int64_t Ow0 = B * kLanes8, Valid = G.OW - Ow0;
    for (int64_t Kw = 0; Kw < G.KW; ++Kw) {
      const int64_t Base = Ow0 * G.SW - G.PW + Kw * G.DW;
      uint8_t *M = &P.Masks8[static_cast<size_t>((B * G.KW + Kw) * 2)];
      if (G.SW == 1) {
        M[0] = columnBits8(Base, G.W, Valid), M[1] = 0;
        P.Interior8[static_cast<size_t>(B)] &= M[0] == 0xFF ? 1 : 0;
      } else { // 16 consecutive inputs; output lane j reads input lane 2j
        M[0] = columnBits8(Base, G.W, 2 * Valid), M[1] = columnBits8(Base + kLanes8, G.W, 2 * Valid - kLanes8);
        P.Interior8[static_cast<size_t>(B)] &= M[0] == 0xFF && M[1] == 0xFF ? 1 : 0;
      }
    }
    // A partial last block stores with a mask; its loads must stay inside the plane too.
    if (Valid < kLanes8)
      P.Interior8[static_cast<size_t>(B)] = 0;
  }
#endif
  return P;
}

namespace {
void planeAvx2(const DepthwisePlan &P, const float *In, const float *K, float Bias, float *Out) {
#ifdef OPT_DW_X86
  const DepthwiseGeometry &G = P.G;
  const bool K3 = G.KH == 3 && G.KW == 3;
  if (G.SW == 1) {
    if (K3)
      dwRowsAvx2<1, 3, 3>(P, In, K, Bias, Out);
    else if (G.KH == 5 && G.KW == 5)
      dwRowsAvx2<1, 5, 5>(P, In, K, Bias, Out);
    else
      dwRowsAvx2<1, 0, 0>(P, In, K, Bias, Out);
  } else if (K3) {
    dwRowsAvx2<2, 3, 3>(P, In, K, Bias, Out);
  } else if (G.KH == 5 && G.KW == 5) {
    dwRowsAvx2<2, 5, 5>(P, In, K, Bias, Out);
  } else {
    dwRowsAvx2<2, 0, 0>(P, In, K, Bias, Out);
  }
#else
  (void)P, (void)In, (void)K, (void)Bias, (void)Out;
#endif
}

template <bool IsMax>
void planeAvx512(const DepthwisePlan &P, const float *In, const float *K, float Bias, float *Out) {
#ifdef OPT_DW_X86
  const DepthwiseGeometry &G = P.G;
  const __mmask16 *M = reinterpret_cast<const __mmask16 *>(P.Masks.data());
  const bool K3 = G.KH == 3 && G.KW == 3;
  if (G.SW == 1)
    K3 ? dwRowsAvx512<IsMax, 1, 3, 3>(G, M, In, K, Bias, Out) : dwRowsAvx512<IsMax, 1, 0, 0>(G, M, In, K, Bias, Out);
  else if (K3)
    dwRowsAvx512<IsMax, 2, 3, 3>(G, M, In, K, Bias, Out);
  else if (IsMax && G.KH == 2 && G.KW == 2) // the common 2x2 stride-2 max pooling, unrolled
    dwRowsAvx512<IsMax, 2, 2, 2>(G, M, In, K, Bias, Out);
  else
    dwRowsAvx512<IsMax, 2, 0, 0>(G, M, In, K, Bias, Out);
#else
  (void)P, (void)In, (void)K, (void)Bias, (void)Out;
#endif
}
} // namespace

void depthwisePlaneAvx512(const DepthwisePlan &P, const float *In, const float *K, float Bias, float *Out) {
  planeAvx512<false>(P, In, K, Bias, Out);
}

void maxPoolPlaneAvx512(const DepthwisePlan &P, const float *In, float *Out) {
  planeAvx512<true>(P, In, nullptr, 0.0f, Out);
}

void depthwisePlaneAvx2(const DepthwisePlan &P, const float *In, const float *K, float Bias, float *Out) {
  planeAvx2(P, In, K, Bias, Out);
}

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
