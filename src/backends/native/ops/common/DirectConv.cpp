// AVX-512 direct convolution for few input channels (see DirectConv.h). The input vectors are
// loaded with the depthwise plane kernel's column masks (border lanes read as zero, no padded
// copy); stride 2 keeps the even lanes of 32 consecutive inputs with one two-source permute.
#include "backends/native/ops/common/DirectConv.h"
#include "core/CpuFeatures.h"

#include <algorithm>

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#define OPT_DIRECT_X86 1
#endif

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

namespace {
constexpr int64_t kLanes = 16;

#ifdef OPT_DIRECT_X86
// GCC 12 flags the _mm512_undefined_ps() inside _mm512_max_ps/_mm512_min_ps as maybe-uninitialized.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

/// Output channels [M0, M0 + G) of one 16-pixel block from its gathered taps.
template <int G>
__attribute__((target("avx512f,fma"), always_inline)) inline void
channelGroup(const __m512 *Taps, int64_t NTaps, const float *PackedW, int64_t M, int64_t M0, const float *Bias,
             const Act512 &Av, float *Out, int64_t OutPlane, __mmask16 Store) {
  __m512 Acc[G];
  for (int J = 0; J < G; ++J)
    Acc[J] = _mm512_set1_ps(Bias ? Bias[M0 + J] : 0.0f);
  const float *Wp = PackedW + M0;
  for (int64_t T = 0; T < NTaps; ++T, Wp += M) {
    const __m512 X = Taps[T];
    for (int J = 0; J < G; ++J)
      Acc[J] = _mm512_fmadd_ps(_mm512_set1_ps(Wp[J]), X, Acc[J]);
  }
  for (int J = 0; J < G; ++J) {
    __m512 V = Acc[J];
    if (Av.on())
      V = Av(V);
    _mm512_mask_storeu_ps(Out + (M0 + J) * OutPlane, Store, V);
  }
}

template <int SW>
__attribute__((target("avx512f,fma"))) void rowsAvx512(const DirectConvGeometry &D, const __mmask16 *Masks,
                                                       const float *X, const float *PackedW, const float *Bias,
                                                       float *Y, int64_t Oh0, int64_t Oh1) {
  const DepthwiseGeometry &G = D.G;
  const int64_t C = D.C, M = D.M, Plane = G.H * G.W, OutPlane = G.OH * G.OW, KH = G.KH, KW = G.KW;
  const int64_t NTaps = C * KH * KW;
  const __m512i Even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  const __m512 Zero = _mm512_setzero_ps();
  const Act512 Av(G.Act);
  alignas(64) __m512 Taps[kDirectConvMaxTaps];
  for (int64_t Oh = Oh0; Oh < Oh1; ++Oh) {
    for (int64_t Ow0 = 0, Blk = 0; Ow0 < G.OW; Ow0 += kLanes, ++Blk) {
      const __mmask16 *BM = Masks + Blk * KW * 2;
      int64_t T = 0;
      for (int64_t Ch = 0; Ch < C; ++Ch)
        for (int64_t Kh = 0; Kh < KH; ++Kh) {
          const int64_t Ih = Oh * G.SH - G.PH + Kh * G.DH;
          if (Ih < 0 || Ih >= G.H) {
            for (int64_t Kw = 0; Kw < KW; ++Kw)
              Taps[T++] = Zero;
            continue;
          }
          const float *Row = X + Ch * Plane + Ih * G.W + Ow0 * SW - G.PW;
          for (int64_t Kw = 0; Kw < KW; ++Kw) {
            const float *Src = Row + Kw * G.DW;
            if (SW == 1)
              Taps[T++] = _mm512_maskz_loadu_ps(BM[Kw * 2], Src);
            else
              Taps[T++] = _mm512_permutex2var_ps(_mm512_maskz_loadu_ps(BM[Kw * 2], Src), Even,
                                                 _mm512_maskz_loadu_ps(BM[Kw * 2 + 1], Src + kLanes));
          }
        }
      const int64_t Left = G.OW - Ow0;
      const __mmask16 Store = Left >= kLanes ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << Left) - 1u);
      float *Out = Y + Oh * G.OW + Ow0;
      int64_t M0 = 0;
      for (; M0 + 16 <= M; M0 += 16)
        channelGroup<16>(Taps, NTaps, PackedW, M, M0, Bias, Av, Out, OutPlane, Store);
      for (; M0 + 4 <= M; M0 += 4)
        channelGroup<4>(Taps, NTaps, PackedW, M, M0, Bias, Av, Out, OutPlane, Store);
      for (; M0 < M; ++M0)
        channelGroup<1>(Taps, NTaps, PackedW, M, M0, Bias, Av, Out, OutPlane, Store);
    }
  }
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif
} // namespace

bool directConvAvx512Supported(const DepthwiseGeometry &G, int64_t C) {
#ifdef OPT_DIRECT_X86
  static const bool Cpu = cpuFeatures().avx512Fma();
  return Cpu && (G.SW == 1 || G.SW == 2) && G.SH >= 1 && G.DH >= 1 && G.DW >= 1 && G.KH >= 1 && G.KW >= 1 &&
         C >= 1 && C * G.KH * G.KW <= kDirectConvMaxTaps;
#else
  (void)G, (void)C;
  return false;
#endif
}

std::vector<float> packDirectConvWeights(const float *W, int64_t M, int64_t Taps) {
  std::vector<float> P(static_cast<size_t>(M * Taps));
  for (int64_t Mi = 0; Mi < M; ++Mi)
    for (int64_t T = 0; T < Taps; ++T)
      P[static_cast<size_t>(T * M + Mi)] = W[Mi * Taps + T];
  return P;
}

void directConvRowsAvx512(const DirectConvGeometry &D, const DepthwisePlan &Plan, const float *X,
                          const float *PackedW, const float *Bias, float *Y, int64_t Oh0, int64_t Oh1) {
#ifdef OPT_DIRECT_X86
  const __mmask16 *Masks = reinterpret_cast<const __mmask16 *>(Plan.Masks.data());
  if (D.G.SW == 1)
    rowsAvx512<1>(D, Masks, X, PackedW, Bias, Y, Oh0, Oh1);
  else
    rowsAvx512<2>(D, Masks, X, PackedW, Bias, Y, Oh0, Oh1);
#else
  (void)D, (void)Plan, (void)X, (void)PackedW, (void)Bias, (void)Y, (void)Oh0, (void)Oh1;
#endif
}

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
