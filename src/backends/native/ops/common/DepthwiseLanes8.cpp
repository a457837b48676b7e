// The 8-lane depthwise convolution (see DepthwiseLanes8.h).
#include "backends/native/ops/common/DepthwiseLanes8.h"

#include <algorithm>
#include <cmath>

#include "backends/native/ops/common/SimdDispatch.h"
#include "backends/native/ops/common/Transpose256.h"
#include "core/CpuFeatures.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

namespace {

constexpr int64_t kLanes = kDwLanes8;

#if defined(OPT_SIMD_X86) && defined(OPT_HAVE_VECMATH256)
#define OPT_DWB2_HAVE 1
#define OPT_DWB2_TARGET __attribute__((target("avx2,fma")))
#define OPT_DWB2_INLINE __attribute__((target("avx2,fma"), always_inline)) inline

/// The fused activation in registers: a clamp (NaN passes: the value is max/min's second
/// operand) or Act256's SiLU / Sigmoid / HardSwish / HardSigmoid.
struct Epilogue256 {
  bool ClampOnly;
  __m256 Lo, Hi;
  Act256 Other;
  OPT_DWB2_INLINE explicit Epilogue256(const FusedAct &A)
      : ClampOnly(A.clampOnly()), Lo(_mm256_set1_ps(A.Kind == ActKind::Clamp ? A.Min : -INFINITY)),
        Hi(_mm256_set1_ps(A.Kind == ActKind::Clamp ? A.Max : INFINITY)), Other(A) {}
  OPT_DWB2_INLINE __m256 operator()(__m256 V) const {
    return ClampOnly ? _mm256_min_ps(Hi, _mm256_max_ps(Lo, V)) : Other(V);
  }
};

/// Stores one pixel at Dst, the padded layout's position of column Col of a row, and moves both to
/// the next pixel of the plane (past the border columns, Skip floats, after column W - 1).
OPT_DWB2_INLINE void putPixel(__m256 V, int64_t W, int64_t Skip, float *&Dst, int64_t &Col) {
  _mm256_store_ps(Dst, V);
  Dst += kLanes;
  if (++Col == W)
    Col = 0, Dst += Skip;
}

/// Packs input rows [Ih0, Ih1) of Cv (<= 8) channels (planes Plane apart, from X) into Buf rows
/// [0, Ih1 - Ih0) of the padded layout; rows outside the plane and the border columns are zeros.
OPT_DWB2_TARGET void packRows(const DwLanes8Geometry &G, const float *X, int64_t Plane, int64_t Cv, int64_t Ih0,
                              int64_t Ih1, float *Buf) {
  const int64_t RowFloats = G.Wp * kLanes;
  const __m256 Z = _mm256_setzero_ps();
  const int64_t Lo = std::max<int64_t>(Ih0, 0), Hi = std::min<int64_t>(Ih1, G.H);
  for (int64_t Ih = Ih0; Ih < Ih1; ++Ih) {
    float *Row = Buf + (Ih - Ih0) * RowFloats;
    if (Ih < Lo || Ih >= Hi) {
      for (int64_t P = 0; P < G.Wp; ++P)
        _mm256_store_ps(Row + P * kLanes, Z);
      continue;
    }
    for (int64_t P = 0; P < G.PL; ++P)
      _mm256_store_ps(Row + P * kLanes, Z);
    for (int64_t P = G.PL + G.W; P < G.Wp; ++P)
      _mm256_store_ps(Row + P * kLanes, Z);
  }
  if (Hi <= Lo)
    return;
  // The rows inside the plane are contiguous in each channel: transpose them 8 pixels at a time.
  // Dst walks the padded layout pixel by pixel, skipping the border columns at each row's end. (A
  // store loop over a variable count of consecutive pixels became a memcpy of the transposed block
  // from the stack, rep movsq: 34% of MobileNetV2's 14x14 stride-2 layer.)
  const int64_t First = Lo * G.W, Count = (Hi - Lo) * G.W, Skip = (G.Wp - G.W) * kLanes;
  float *Dst = Buf + (Lo - Ih0) * RowFloats + G.PL * kLanes; // destination of pixel First + P0
  int64_t Col = 0;
  __m256 R[8];
  int64_t P0 = 0;
  if (Cv == kLanes) { // full channel blocks (all but a layer's last): no per-channel checks
    for (; P0 + kLanes <= Count; P0 += kLanes) {
      vec256::loadTransposed8x8(X + First + P0, Plane, R);
      _Pragma("GCC unroll 8") for (int J = 0; J < kLanes; ++J) putPixel(R[J], G.W, Skip, Dst, Col);
    }
  } else { // a partial group: zeros for the channels past Cv (the fused 1x1 + depthwise op's 12-channel
           // blocks are groups of 8 + 4: per-pixel stores here took 22% of MobileNetV3-Small's
           // features.2)
    for (; P0 + kLanes <= Count; P0 += kLanes) {
      _Pragma("GCC unroll 8") for (int C = 0; C < kLanes; ++C) R[C] =
          C < Cv ? _mm256_loadu_ps(X + C * Plane + First + P0) : Z;
      vec256::transpose8x8(R);
      _Pragma("GCC unroll 8") for (int J = 0; J < kLanes; ++J) putPixel(R[J], G.W, Skip, Dst, Col);
    }
  }
  for (; P0 < Count; P0 += kLanes) {
    const int64_t N = std::min<int64_t>(kLanes, Count - P0);
    const __m256i M = vec256::lanesBelow256(N);
    for (int64_t C = 0; C < kLanes; ++C)
      R[C] = C < Cv ? _mm256_maskload_ps(X + C * Plane + First + P0, M) : Z;
    vec256::transpose8x8(R);
    for (int64_t J = 0; J < N; ++J)
      putPixel(R[J], G.W, Skip, Dst, Col);
  }
}

/// U output pixels [Ow0, Ow0 + U) of one row: Rows is the packed row of the row's first tap row.
/// The KW weights of a kernel row stay in registers; each input pixel is loaded once per kernel
/// row and feeds the (up to KW) accumulators whose window covers it.
template <int KW, int SW, int U>
OPT_DWB2_INLINE void rowRun(const DwLanes8Geometry &G, const float *Rows, const float *Wt, __m256 Bias,
                            const Epilogue256 &E, bool Act, float *Out, int64_t Ow0) {
  __m256 Acc[U];
  _Pragma("GCC unroll 8") for (int I = 0; I < U; ++I) Acc[I] = Bias;
  const int64_t RowFloats = G.Wp * kLanes;
  constexpr int NC = (U - 1) * SW + KW; // input pixels the run reads per kernel row
  for (int64_t Kh = 0; Kh < G.KH; ++Kh) {
    const float *R = Rows + Kh * RowFloats + Ow0 * SW * kLanes;
    const float *Wr = Wt + Kh * KW * kLanes;
    __m256 Wk[KW];
    _Pragma("GCC unroll 8") for (int Kw = 0; Kw < KW; ++Kw) Wk[Kw] = _mm256_load_ps(Wr + Kw * kLanes);
    _Pragma("GCC unroll 32") for (int C = 0; C < NC; ++C) {
      const __m256 X = _mm256_load_ps(R + C * kLanes);
      _Pragma("GCC unroll 8") for (int Kw = 0; Kw < KW; ++Kw) {
        const int D = C - Kw;
        if (D >= 0 && D % SW == 0 && D / SW < U)
          Acc[D / SW] = _mm256_fmadd_ps(Wk[Kw], X, Acc[D / SW]);
      }
    }
  }
  _Pragma("GCC unroll 8") for (int I = 0; I < U; ++I)
      _mm256_store_ps(Out + (Ow0 + I) * kLanes, Act ? E(Acc[I]) : Acc[I]);
}

/// Output pixels per run: U accumulators + KW weights + 1 input within the 16 ymm registers.
template <int KW>
constexpr int runPixels() {
  return KW <= 5 ? 8 : 6;
}

/// One output row (OW pixels) into Out ([OW][8]); Rows: the packed row of its first tap row.
template <int KW, int SW>
OPT_DWB2_TARGET void outputRow(const DwLanes8Geometry &G, const float *Rows, const float *Wt, const float *BiasV,
                               const FusedAct &A, float *Out) {
  constexpr int U = runPixels<KW>();
  const __m256 Bias = _mm256_load_ps(BiasV);
  const Epilogue256 E(A);
  const bool Act = A.on();
  int64_t Ow = 0;
  for (; Ow + U <= G.OW; Ow += U)
    rowRun<KW, SW, U>(G, Rows, Wt, Bias, E, Act, Out, Ow);
  switch (G.OW - Ow) {
#define OPT_TAIL(N)                                                                                                    \
  case N:                                                                                                              \
    if (N < U)                                                                                                         \
      rowRun<KW, SW, (N < U ? N : 1)>(G, Rows, Wt, Bias, E, Act, Out, Ow);                                             \
    break;
    OPT_TAIL(1) OPT_TAIL(2) OPT_TAIL(3) OPT_TAIL(4) OPT_TAIL(5) OPT_TAIL(6) OPT_TAIL(7)
#undef OPT_TAIL
  default: break;
  }
}

/// Out ([Pixels][8]) back to Cv channel planes: pixel p of channel c to Y[c * Plane + p].
OPT_DWB2_TARGET void unpackPixels(const float *Out, int64_t Pixels, int64_t Cv, float *Y, int64_t Plane) {
  __m256 R[8];
  int64_t P0 = 0;
  if (Cv == kLanes && Pixels >= kLanes) {
    // Full blocks; a partial last block is the overlapping block of the last 8 pixels (it stores
    // some outputs twice, with the same values) instead of 8 masked stores (slow on Zen 3).
    for (;; P0 += kLanes) {
      P0 = std::min(P0, Pixels - kLanes);
      _Pragma("GCC unroll 8") for (int J = 0; J < kLanes; ++J) R[J] = _mm256_load_ps(Out + (P0 + J) * kLanes);
      vec256::storeTransposed8x8(R, Y + P0, Plane);
      if (P0 + kLanes == Pixels)
        return;
    }
  }
  for (; P0 < Pixels; P0 += kLanes) {
    const int64_t N = std::min<int64_t>(kLanes, Pixels - P0);
    for (int64_t J = 0; J < kLanes; ++J)
      R[J] = J < N ? _mm256_load_ps(Out + (P0 + J) * kLanes) : _mm256_setzero_ps();
    vec256::transpose8x8(R);
    if (N == kLanes) {
      for (int64_t C = 0; C < Cv; ++C)
        _mm256_storeu_ps(Y + C * Plane + P0, R[C]);
    } else {
      const __m256i M = vec256::lanesBelow256(N);
      for (int64_t C = 0; C < Cv; ++C)
        _mm256_maskstore_ps(Y + C * Plane + P0, M, R[C]);
    }
  }
}

using RowFn = void (*)(const DwLanes8Geometry &, const float *, const float *, const float *, const FusedAct &,
                       float *);

RowFn rowFnFor(int64_t KW, int64_t SW) {
#define OPT_KW(K)                                                                                                      \
  if (KW == K)                                                                                                         \
    return SW == 1 ? &outputRow<K, 1> : &outputRow<K, 2>;
  OPT_KW(3) OPT_KW(5) OPT_KW(7)
#undef OPT_KW
  return nullptr;
}

#endif // OPT_DWB2_HAVE


} // namespace

DwLanes8Geometry dwLanes8Geometry(int64_t H, int64_t W, int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t SH,
                                  int64_t SW, int64_t PT, int64_t PL) {
  return {H, W, OH, OW, KH, KW, SH, SW, PT, PL, std::max((OW - 1) * SW + KW, PL + W)};
}

/// Whether depthwiseLanes8Strip computes a depthwise window of kernel (KH, KW), strides (SH, SW) and
/// dilations (DH, DW) on this CPU.
bool depthwiseLanes8Supported(int64_t KH, int64_t KW, int64_t SH, int64_t SW, int64_t DH, int64_t DW) {
#ifdef OPT_DWB2_HAVE
  static const bool Cpu = cpuFeatures().avx2Fma();
  return Cpu && (KW == 3 || KW == 5 || KW == 7) && KH >= 1 && KH <= 16 && (SH == 1 || SH == 2) &&
         (SW == 1 || SW == 2) && DH == 1 && DW == 1;
#else
  (void)KH, (void)KW, (void)SH, (void)SW, (void)DH, (void)DW;
  return false;
#endif
}

/// Output rows per work item: the padded input rows of a strip stay within ~160 KiB (in L2; the
/// KH rows a row reads are in L1), at least 4 rows, and enough items (channel blocks x strips)
/// for the pool.
int64_t depthwiseLanes8StripRows(const DwLanes8Geometry &G, int64_t Items, int Threads) {
  const int64_t RowBytes = G.Wp * kLanes * 4;
  int64_t Rows = std::max<int64_t>(4, ((160 * 1024) / RowBytes - G.KH) / G.SH + 1);
  const int64_t Want = Threads > 1 ? 8 * Threads : 1;
  const int64_t Strips = (G.OH + Rows - 1) / Rows;
  if (Items * Strips < Want)
    Rows = std::max<int64_t>(2, G.OH / std::max<int64_t>(1, (Want + Items - 1) / Items));
  return std::min(Rows, G.OH);
}

int64_t dwLanes8RowsWork(const DwLanes8Geometry &G, int64_t Rows) {
  const int64_t InRows = std::min(G.H, (Rows - 1) * G.SH + G.KH);
  return Rows * G.OW * G.KH * G.KW + 4 * (InRows * G.W + Rows * G.OW);
}

size_t depthwiseLanes8Grain(const DwLanes8Geometry &G, int64_t Rows, int64_t Items, int Threads) {
  const int64_t ItemWork = std::max<int64_t>(1, kLanes * dwLanes8RowsWork(G, Rows));
  const int64_t Cap = Items / (4 * std::max(Threads, 1));
  return static_cast<size_t>(std::max<int64_t>(1, std::min(Cap, ((int64_t{1} << 16) + ItemWork - 1) / ItemWork)));
}

int64_t dwLanes8InFloats(const DwLanes8Geometry &G, int64_t Rows) { return ((Rows - 1) * G.SH + G.KH) * G.Wp * kLanes; }

int64_t dwLanes8OutFloats(const DwLanes8Geometry &G, int64_t Rows) { return Rows * G.OW * kLanes; }

void packDepthwiseLanes8(const float *W, int64_t C, int64_t Taps, float *Out) {
  const int64_t CB = (C + kLanes - 1) / kLanes;
  std::fill(Out, Out + CB * Taps * kLanes, 0.0f);
  for (int64_t Ch = 0; Ch < C; ++Ch)
    for (int64_t T = 0; T < Taps; ++T)
      Out[((Ch / kLanes) * Taps + T) * kLanes + Ch % kLanes] = W[Ch * Taps + T];
}

void depthwiseLanes8Strip(const DwLanes8Geometry &G, const float *X, int64_t Plane, int64_t Cv, const float *Wt,
                          const float *Bias8, const FusedAct &Act, int64_t Oh0, int64_t Oh1, float *In, float *Out,
                          float *Y, int64_t OutPlane) {
#ifdef OPT_DWB2_HAVE
  const RowFn Row = rowFnFor(G.KW, G.SW);
  if (!Row)
    return;
  packRows(G, X, Plane, Cv, Oh0 * G.SH - G.PT, (Oh1 - 1) * G.SH - G.PT + G.KH, In);
  for (int64_t Oh = Oh0; Oh < Oh1; ++Oh)
    Row(G, In + (Oh - Oh0) * G.SH * G.Wp * kLanes, Wt, Bias8, Act, Out + (Oh - Oh0) * G.OW * kLanes);
  unpackPixels(Out, (Oh1 - Oh0) * G.OW, Cv, Y + Oh0 * G.OW, OutPlane);
#else
  (void)G, (void)X, (void)Plane, (void)Cv, (void)Wt, (void)Bias8, (void)Act, (void)Oh0, (void)Oh1, (void)In;
  (void)Out, (void)Y, (void)OutPlane;
#endif
}

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
