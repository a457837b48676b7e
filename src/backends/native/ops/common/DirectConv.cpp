// AVX-512 and AVX2 direct convolution for few input channels (see DirectConv.h). The input vectors
// are loaded with the depthwise plane kernel's column masks (border lanes read as zero, no padded
// copy); stride 2 keeps the even lanes of 32 consecutive inputs with one two-source permute
// (AVX2: of 16, with an in-lane shuffle and a cross-lane permute).
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

// ---- AVX2 + FMA. A 16-pixel block is two 8-wide vectors; the tile is 2 vectors x 6 output
// channels (12 accumulators, 2 tap vectors and a broadcast in 16 registers): per tap 2 loads and
// 6 broadcasts feed 12 FMAs, so the two FMA pipes, not the load ports, bound it.
#define OPT_DIRECT_AVX2 __attribute__((target("avx2,fma")))
#define OPT_DIRECT_AVX2_INLINE __attribute__((target("avx2,fma"), always_inline)) inline

OPT_DIRECT_AVX2_INLINE __m256i laneBits8(unsigned Bits) {
  const __m256i B = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
  return _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32(static_cast<int>(Bits)), B), B);
}

/// Src[0], Src[SW], ..., Src[7 * SW]; Masked: lanes outside M0 / M1 (the plan's bits) read 0.
template <bool Masked> OPT_DIRECT_AVX2_INLINE __m256 load8Avx2(const float *P, unsigned Bits) {
  return Masked ? _mm256_maskload_ps(P, laneBits8(Bits)) : _mm256_loadu_ps(P);
}

template <int SW, bool Masked>
OPT_DIRECT_AVX2_INLINE __m256 tapAvx2(const float *Src, const uint8_t *Bits) {
  if (SW == 1)
    return load8Avx2<Masked>(Src, Masked ? Bits[0] : 0xFF);
  const __m256 A = load8Avx2<Masked>(Src, Masked ? Bits[0] : 0xFF);
  const __m256 B = load8Avx2<Masked>(Src + 8, Masked ? Bits[1] : 0xFF);
  const __m256 Even = _mm256_shuffle_ps(A, B, _MM_SHUFFLE(2, 0, 2, 0)); // [a0 a2 b0 b2 | a4 a6 b4 b6]
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(Even), _MM_SHUFFLE(3, 1, 2, 0)));
}

/// [x0 x1 y0 y1 | x2 x3 y2 y3] (an in-lane shuffle of two loads) as [x0 x1 x2 x3 y0 y1 y2 y3].
OPT_DIRECT_AVX2_INLINE __m256 laneOrderAvx2(__m256 V) {
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(V), _MM_SHUFFLE(3, 1, 2, 0)));
}

/// The 2 x KW tap vectors of one kernel row for a 16-pixel block whose loads all lie inside the
/// row (horizontal stride 2, dilation 1): tap kw's even lanes of 16 consecutive inputs per 8
/// outputs, and tap kw + 1 from the odd lanes of the same two loads (its inputs, one column on)
/// instead of two loads of its own.
OPT_DIRECT_AVX2_INLINE void rowTapsS2Avx2(const float *Row, int64_t KW, __m256 *BT) {
  for (int64_t Kw = 0; Kw < KW; Kw += 2)
    for (int Half = 0; Half < 2; ++Half) {
      const float *Src = Row + Kw + Half * 16;
      const __m256 A = _mm256_loadu_ps(Src), B = _mm256_loadu_ps(Src + 8);
      BT[2 * Kw + Half] = laneOrderAvx2(_mm256_shuffle_ps(A, B, _MM_SHUFFLE(2, 0, 2, 0)));
      if (Kw + 1 < KW)
        BT[2 * (Kw + 1) + Half] = laneOrderAvx2(_mm256_shuffle_ps(A, B, _MM_SHUFFLE(3, 1, 3, 1)));
    }
}

/// One vector of outputs: Left lanes valid; Spill: a whole store may run past them (onto output
/// rows this call writes later).
OPT_DIRECT_AVX2_INLINE void storeAvx2(float *Out, __m256 V, int64_t Left, bool Spill) {
  if (Left >= 8 || Spill)
    _mm256_storeu_ps(Out, V);
  else if (Left > 0)
    _mm256_maskstore_ps(Out, vec256::lanesBelow256(Left), V);
}

/// Output channels [M0, M0 + J) of one 16-pixel block from its gathered taps ([tap][2] vectors).
template <int J>
OPT_DIRECT_AVX2_INLINE void channelGroupAvx2(const __m256 *Taps, int64_t NTaps, const float *PackedW, int64_t M0, const float *Bias, const Act256 &Av, float *Out,
                                             int64_t OutPlane, int64_t Left, bool Spill) {
  // Fully unrolled so the accumulators stay in registers (GCC 12 otherwise keeps the arrays on
  // the stack and stores them at every tap).
  __m256 A0[J], A1[J];
#pragma GCC unroll 8
  for (int K = 0; K < J; ++K)
    A0[K] = A1[K] = _mm256_set1_ps(Bias ? Bias[M0 + K] : 0.0f);
  const float *Wp = PackedW + M0 * NTaps; // this group's [tap][J] block (packDirectConvWeightsAvx2)
  for (int64_t T = 0; T < NTaps; ++T, Wp += J) {
    const __m256 X0 = Taps[2 * T], X1 = Taps[2 * T + 1];
#pragma GCC unroll 8
    for (int K = 0; K < J; ++K) {
      const __m256 Wv = _mm256_broadcast_ss(Wp + K);
      A0[K] = _mm256_fmadd_ps(Wv, X0, A0[K]);
      A1[K] = _mm256_fmadd_ps(Wv, X1, A1[K]);
    }
  }
#pragma GCC unroll 8
  for (int K = 0; K < J; ++K) {
    float *O = Out + (M0 + K) * OutPlane;
    storeAvx2(O, Av.on() ? Av(A0[K]) : A0[K], Left, Spill);
    if (Left > 8)
      storeAvx2(O + 8, Av.on() ? Av(A1[K]) : A1[K], Left - 8, Spill);
  }
}

/// Output channels [M0, M0 + J) of output row Oh over a chunk's NB blocks (from Ow0c on), whose
/// gathered taps lie block after block in Taps. Whole-vector stores may spill onto the next
/// output rows of the call's range [.., Oh1) (written later).
template <int J>
OPT_DIRECT_AVX2_INLINE void chunkGroupAvx2(const DirectConvGeometry &D, const __m256 *Taps, int64_t NB, int64_t Ow0c,
                                           int64_t Oh, int64_t Oh1, const float *PackedW, int64_t M0,
                                           const float *Bias, const Act256 &Av, float *Y) {
  const DepthwiseGeometry &G = D.G;
  const int64_t NTaps = D.C * G.KH * G.KW;
  for (int64_t B = 0; B < NB; ++B) {
    const int64_t Ow0 = Ow0c + 16 * B;
    const int64_t Left = std::min<int64_t>(16, G.OW - Ow0);
    const bool Spill = Oh * G.OW + Ow0 + 16 <= Oh1 * G.OW;
    channelGroupAvx2<J>(Taps + 2 * NTaps * B, NTaps, PackedW, M0, Bias, Av, Y + Oh * G.OW + Ow0,
                        G.OH * G.OW, Left, Spill);
  }
}

/// Tap vectors gathered per chunk of an output row (16 KB: half of L1).
constexpr int64_t kDirectTapBufVectors = 512;
static_assert(2 * kDirectConvMaxTapsAvx2 <= kDirectTapBufVectors, "a chunk holds at least one block's taps");

template <int SW>
OPT_DIRECT_AVX2 void rowsAvx2(const DirectConvGeometry &D, const DepthwisePlan &Plan, const float *X,
                              const float *PackedW, const float *Bias, float *Y, int64_t Oh0, int64_t Oh1) {
  const DepthwiseGeometry &G = D.G;
  const int64_t C = D.C, M = D.M, Plane = G.H * G.W, KH = G.KH, KW = G.KW;
  const int64_t NTaps = C * KH * KW, Blocks8 = (G.OW + 7) / 8;
  const __m256 Zero = _mm256_setzero_ps();
  const Act256 Av(G.Act);
  // The taps of several 16-pixel blocks of a row are gathered first, then each group of output
  // channels runs over all of them: the stores walk J output planes along a row instead of all M
  // planes per block (SqueezeNet's 3 -> 64 stem wrote 64 interleaved streams of 64-byte pieces,
  // more than the prefetchers track: the store misses stalled the FMAs).
  alignas(32) __m256 Taps[kDirectTapBufVectors];
  const int64_t ChunkBlocks = std::max<int64_t>(1, kDirectTapBufVectors / (2 * NTaps));
  for (int64_t Oh = Oh0; Oh < Oh1; ++Oh) {
    for (int64_t Ow0c = 0; Ow0c < G.OW; Ow0c += 16 * ChunkBlocks) {
      const int64_t NB = std::min(ChunkBlocks, (G.OW - Ow0c + 15) / 16);
      for (int64_t B = 0; B < NB; ++B) {
        const int64_t Ow0 = Ow0c + 16 * B;
        __m256 *BT = Taps + 2 * NTaps * B;
        // The block's two 8-pixel halves: interior (plain loads), at a border (the plan's masks)
        // or past the row's end (zeros).
        int Kind[2];
        for (int Half = 0; Half < 2; ++Half) {
          const int64_t Blk = Ow0 / 8 + Half;
          Kind[Half] = Blk >= Blocks8 ? 2 : Plan.Interior8[static_cast<size_t>(Blk)] ? 0 : 1;
        }
        int64_t T = 0;
        for (int64_t Ch = 0; Ch < C; ++Ch)
          for (int64_t Kh = 0; Kh < KH; ++Kh) {
            const int64_t Ih = Oh * G.SH - G.PH + Kh * G.DH;
            if (Ih < 0 || Ih >= G.H) {
              for (int64_t Kw = 0; Kw < KW; ++Kw, ++T)
                BT[2 * T] = BT[2 * T + 1] = Zero;
              continue;
            }
            const float *Row = X + Ch * Plane + Ih * G.W + Ow0 * SW - G.PW;
            if (SW == 2 && G.DW == 1 && Kind[0] == 0 && Kind[1] == 0) {
              rowTapsS2Avx2(Row, KW, BT + 2 * T);
              T += KW;
              continue;
            }
            for (int64_t Kw = 0; Kw < KW; ++Kw, ++T)
              for (int Half = 0; Half < 2; ++Half) {
                const float *Src = Row + Kw * G.DW + Half * 8 * SW;
                if (Kind[Half] == 0)
                  BT[2 * T + Half] = tapAvx2<SW, false>(Src, nullptr);
                else if (Kind[Half] == 1)
                  BT[2 * T + Half] =
                      tapAvx2<SW, true>(Src, &Plan.Masks8[static_cast<size_t>(((Ow0 / 8 + Half) * KW + Kw) * 2)]);
                else
                  BT[2 * T + Half] = Zero;
              }
          }
      }
      int64_t M0 = 0;
      for (; M0 + 6 <= M; M0 += 6)
        chunkGroupAvx2<6>(D, Taps, NB, Ow0c, Oh, Oh1, PackedW, M0, Bias, Av, Y);
      if (M0 + 4 <= M)
        chunkGroupAvx2<4>(D, Taps, NB, Ow0c, Oh, Oh1, PackedW, M0, Bias, Av, Y), M0 += 4;
      if (M0 + 2 <= M)
        chunkGroupAvx2<2>(D, Taps, NB, Ow0c, Oh, Oh1, PackedW, M0, Bias, Av, Y), M0 += 2;
      if (M0 < M)
        chunkGroupAvx2<1>(D, Taps, NB, Ow0c, Oh, Oh1, PackedW, M0, Bias, Av, Y);
    }
  }
}
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

bool directConvAvx2Supported(const DepthwiseGeometry &G, int64_t C) {
#ifdef OPT_DIRECT_X86
  static const bool Cpu = cpuFeatures().avx2Fma();
  return Cpu && (G.SW == 1 || G.SW == 2) && G.SH >= 1 && G.DH >= 1 && G.DW >= 1 && G.KH >= 1 && G.KW >= 1 &&
         C >= 1 && C * G.KH * G.KW <= kDirectConvMaxTapsAvx2;
#else
  (void)G, (void)C;
  return false;
#endif
}

void packDirectConvWeights(const float *W, int64_t M, int64_t Taps, float *Out) {
  for (int64_t Mi = 0; Mi < M; ++Mi)
    for (int64_t T = 0; T < Taps; ++T)
      Out[T * M + Mi] = W[Mi * Taps + T];
}

int directConvAvx2GroupWidth(int64_t M, int64_t M0) {
  const int64_t Left = M - M0;
  return Left >= 6 ? 6 : Left >= 4 ? 4 : Left >= 2 ? 2 : 1;
}

void packDirectConvWeightsAvx2(const float *W, int64_t M, int64_t Taps, float *Out) {
  for (int64_t M0 = 0; M0 < M;) {
    const int J = directConvAvx2GroupWidth(M, M0);
    float *G = Out + M0 * Taps;
    for (int64_t T = 0; T < Taps; ++T)
      for (int K = 0; K < J; ++K)
        G[T * J + K] = W[(M0 + K) * Taps + T];
    M0 += J;
  }
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

void directConvRowsAvx2(const DirectConvGeometry &D, const DepthwisePlan &Plan, const float *X, const float *PackedW,
                        const float *Bias, float *Y, int64_t Oh0, int64_t Oh1) {
#ifdef OPT_DIRECT_X86
  if (D.G.SW == 1)
    rowsAvx2<1>(D, Plan, X, PackedW, Bias, Y, Oh0, Oh1);
  else
    rowsAvx2<2>(D, Plan, X, PackedW, Bias, Y, Oh0, Oh1);
#else
  (void)D, (void)Plan, (void)X, (void)PackedW, (void)Bias, (void)Y, (void)Oh0, (void)Oh1;
#endif
}

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
