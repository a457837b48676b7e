// AVX-512 sliding-window plane kernels (see PlaneWindow.h). Stride 1 reads each tap's 16 outputs with
// one masked unaligned load; stride 2 loads 32 consecutive inputs and keeps the even ones with one
// two-source permute. The 3x3 kernel (MobileNet, EfficientNet) is unrolled at compile time.
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

#endif

} // namespace

bool depthwiseAvx512Supported(const DepthwiseGeometry &G) {
#ifdef OPT_DW_X86
  static const bool Cpu = cpuFeatures().avx512Fma();
  return Cpu && (G.SW == 1 || G.SW == 2) && G.SH >= 1 && G.DH >= 1 && G.DW >= 1 && G.KH >= 1 && G.KW >= 1;
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

namespace {
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

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
