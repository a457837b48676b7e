// Direct 2-D convolution of small layers (see SmallConv.h).
#include "backends/native/ops/common/SmallConv.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

#include "backends/native/ops/common/SimdDispatch.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

namespace {

constexpr int64_t CB = SmallConvRowCB, PB = SmallConvPixelCB;

/// Layout of the zero-padded image: rows of Wp floats, OH + KH - 1 rows per channel. A row holds
/// every 16-pixel vector of an output row shifted by any kw, so the tile loads never leave it.
struct PaddedLayout {
  int64_t VPR, Hp, Wp;
  explicit PaddedLayout(const SmallConvGeometry &G)
      : VPR((G.OW + 15) / 16), Hp(G.OH + G.KH - 1), Wp(VPR * 16 + G.KW - 1) {}
};

} // namespace

namespace {
void packBlocks(const float *Wt, int64_t M, int64_t Steps, int64_t Width, AlignedFloats &Out) {
  const int64_t Blocks = (M + Width - 1) / Width;
  Out.resize(static_cast<size_t>(std::max<int64_t>(1, Blocks * Steps * Width)));
  float *D = Out.data();
  for (int64_t B = 0; B < Blocks; ++B)
    for (int64_t S = 0; S < Steps; ++S)
      for (int64_t I = 0; I < Width; ++I) {
        const int64_t Co = B * Width + I;
        *D++ = Co < M ? Wt[Co * Steps + S] : 0.0f;
      }
}
} // namespace

void packSmallConvWeights(const float *Wt, int64_t M, int64_t C, int64_t KH, int64_t KW, bool ForRows,
                           bool ForPixels, SmallConvWeights &Out) {
  if (ForRows)
    packBlocks(Wt, M, C * KH * KW, CB, Out.Rows);
  if (ForPixels)
    packBlocks(Wt, M, C * KH * KW, PB, Out.Pixels);
}

#ifdef OPT_SIMD_X86

namespace {

/// One register tile: CB output channels x V output vectors (slots). Slot v covers output pixels
/// [Ow[v], Ow[v] + 16) of output row Oh[v], of which Mask[v] are stored.
template <int V>
__attribute__((target("avx512f"))) void smallTile(const SmallConvGeometry &G, const PaddedLayout &L,
                                                   const float *Wb, const float *Bias, int64_t Co0, const float *Xp,
                                                   const int64_t *Oh, const int64_t *Ow, float *Y) {
  __m512 Acc[CB][V];
  for (int C = 0; C < CB; ++C)
    for (int S = 0; S < V; ++S)
      Acc[C][S] = _mm512_setzero_ps();
  const float *Base[V];
  for (int S = 0; S < V; ++S)
    Base[S] = Xp + Oh[S] * L.Wp + Ow[S];
  const int64_t Plane = L.Hp * L.Wp;
  for (int64_t Ci = 0; Ci < G.C; ++Ci)
    for (int64_t Kh = 0; Kh < G.KH; ++Kh) {
      const int64_t Off = Ci * Plane + Kh * L.Wp;
      for (int64_t Kw = 0; Kw < G.KW; ++Kw, Wb += CB) {
        __m512 X[V];
        for (int S = 0; S < V; ++S)
          X[S] = _mm512_loadu_ps(Base[S] + Off + Kw);
        for (int C = 0; C < CB; ++C) {
          const __m512 Wc = _mm512_set1_ps(Wb[C]);
          for (int S = 0; S < V; ++S)
            Acc[C][S] = _mm512_fmadd_ps(Wc, X[S], Acc[C][S]);
        }
      }
    }
  const __m512 Lo = _mm512_set1_ps(G.ActMin), Hi = _mm512_set1_ps(G.ActMax);
  const int64_t OutPlane = G.OH * G.OW;
  for (int C = 0; C < CB; ++C) {
    const int64_t Co = Co0 + C;
    if (Co >= G.M)
      break;
    const __m512 Bv = _mm512_set1_ps(Bias ? Bias[Co] : 0.0f);
    for (int S = 0; S < V; ++S) {
      __m512 R = _mm512_add_ps(Acc[C][S], Bv);
      if (G.HasAct) // max/min return their second operand for a NaN: it passes through, as in the reference
        R = _mm512_mask_min_ps(R, 0xFFFF, Hi, _mm512_mask_max_ps(R, 0xFFFF, Lo, R));
      const int64_t Lanes = std::min<int64_t>(16, G.OW - Ow[S]);
      const __mmask16 K = static_cast<__mmask16>((1u << Lanes) - 1u);
      _mm512_mask_storeu_ps(Y + Co * OutPlane + Oh[S] * G.OW + Ow[S], K, R);
    }
  }
}

/// One pixel tile: P consecutive output pixels of row Oh from column Ow0, x PB output channels from
/// Co0 (two vectors of 16). Each step loads two weight vectors and broadcasts P input pixels into
/// them; the P x 32 results are scattered into the NCHW output (one channel plane per lane).
#if defined(__GNUC__) && !defined(__clang__)
#define OPT_NO_PREDICTIVE_COMMONING __attribute__((optimize("no-predictive-commoning")))
#else
#define OPT_NO_PREDICTIVE_COMMONING
#endif
// GCC's predictive commoning would carry Row[Kw + I] over to the next kw as Row[Kw + 1 + I - 1]
// through stack slots (the 28 accumulators leave no register for them): keep the plain broadcasts.
template <int P>
OPT_NO_PREDICTIVE_COMMONING __attribute__((target("avx512f"))) void pixelTile(const SmallConvGeometry &G, const PaddedLayout &L, const float *Wb,
                                                  const float *Bias, int64_t Co0, const float *Xp, int64_t Oh,
                                                  int64_t Ow0, float *Y) {
  __m512 Acc[P][2];
#pragma GCC unroll 16
  for (int I = 0; I < P; ++I)
    Acc[I][0] = Acc[I][1] = _mm512_setzero_ps();
  const float *Base = Xp + Oh * L.Wp + Ow0;
  const int64_t Plane = L.Hp * L.Wp;
  for (int64_t Ci = 0; Ci < G.C; ++Ci)
    for (int64_t Kh = 0; Kh < G.KH; ++Kh) {
      const float *Row = Base + Ci * Plane + Kh * L.Wp;
      for (int64_t Kw = 0; Kw < G.KW; ++Kw, Wb += PB) {
        const __m512 W0 = _mm512_load_ps(Wb), W1 = _mm512_load_ps(Wb + 16);
#pragma GCC unroll 16
        for (int I = 0; I < P; ++I) {
          const __m512 X = _mm512_set1_ps(Row[Kw + I]);
          Acc[I][0] = _mm512_fmadd_ps(X, W0, Acc[I][0]);
          Acc[I][1] = _mm512_fmadd_ps(X, W1, Acc[I][1]);
        }
      }
    }
  const int64_t OutPlane = G.OH * G.OW;
  const __m512i Lane = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                          _mm512_set1_epi32(static_cast<int>(OutPlane)));
  const __m512 Lo = _mm512_set1_ps(G.ActMin), Hi = _mm512_set1_ps(G.ActMax);
#pragma GCC unroll 2
  for (int V = 0; V < 2; ++V) {
    const int64_t C0 = Co0 + V * 16;
    if (C0 >= G.M)
      break;
    const int64_t Lanes = std::min<int64_t>(16, G.M - C0);
    const __mmask16 K = static_cast<__mmask16>((1u << Lanes) - 1u);
    const __m512 Bv = Bias ? _mm512_maskz_loadu_ps(K, Bias + C0) : _mm512_setzero_ps();
    float *Dst = Y + C0 * OutPlane + Oh * G.OW + Ow0;
#pragma GCC unroll 16
    for (int I = 0; I < P; ++I) {
      __m512 R = _mm512_add_ps(Acc[I][V], Bv);
      if (G.HasAct)
        R = _mm512_mask_min_ps(R, 0xFFFF, Hi, _mm512_mask_max_ps(R, 0xFFFF, Lo, R));
      _mm512_mask_i32scatter_ps(Dst + I, K, Lane, R, 4);
    }
  }
}

using PixelTileFn = void (*)(const SmallConvGeometry &, const PaddedLayout &, const float *, const float *, int64_t,
                             const float *, int64_t, int64_t, float *);

/// Pixels per pixel tile: 14 x 2 = 28 accumulators and the two weight vectors fit the registers.
constexpr int64_t PT = 14;

template <int... Ps> constexpr std::array<PixelTileFn, sizeof...(Ps)> pixelTiles(std::integer_sequence<int, Ps...>) {
  return {{&pixelTile<Ps + 1>...}};
}

/// Tile height (slots per tile) of the row tiles: CB x 3 = 24 accumulators, 3 input vectors and a
/// broadcast weight fit the 32 vector registers.
constexpr int64_t VT = 3;

/// Copies image X into the zero-padded layout L (thread-local scratch) and returns it.
float *padImage(const SmallConvGeometry &G, const PaddedLayout &L, const float *X) {
  thread_local std::vector<float> Scratch;
  Scratch.assign(static_cast<size_t>(G.C * L.Hp * L.Wp), 0.0f);
  float *Xp = Scratch.data();
  for (int64_t C = 0; C < G.C; ++C)
    for (int64_t R = 0; R < L.Hp; ++R) {
      const int64_t Ih = R - G.PH;
      if (Ih < 0 || Ih >= G.H)
        continue;
      // Input columns [0, W) land at padded columns [PW, PW + W), cut to the row.
      const int64_t Lo = std::max<int64_t>(0, -G.PW), Hi = std::min<int64_t>(G.W, L.Wp - G.PW);
      if (Hi > Lo)
        std::memcpy(Xp + (C * L.Hp + R) * L.Wp + Lo + G.PW, X + (C * G.H + Ih) * G.W + Lo,
                    static_cast<size_t>(Hi - Lo) * sizeof(float));
    }
  return Xp;
}

/// Tasks of at least 32K FMAs (~10 us), small enough for the pool's stealing to even out the
/// threads.
size_t grainFor(int64_t FmasPerTask) {
  return static_cast<size_t>(std::max<int64_t>(1, 32768 / std::max<int64_t>(1, FmasPerTask)));
}

/// A layer of under 16K vector FMAs (~4 us) runs on the calling thread: a second thread's wake-up
/// and join would cost about what it saves. (A threshold of 256K, which kept MNIST's conv2 - 157K -
/// serial, measured worse in bench.py on a quiet host, three runs alternating: MNIST at 2 threads
/// 0.081-0.082 ms, 1.08-1.26x ONNX Runtime, against 0.066-0.072 ms, 0.93-1.03x, with it split.)
const Parallel &poolFor(int64_t TotalFmas, const Parallel &Par) {
  static const Parallel Serial;
  return TotalFmas < (int64_t{1} << 14) ? Serial : Par;
}

__attribute__((target("avx512f"))) void smallConvAvx512(const SmallConvGeometry &G, const SmallConvWeights &W,
                                                         const float *Bias, const float *X, float *Y,
                                                         const Parallel &Pool) {
  const PaddedLayout L(G);
  const float *Xp = padImage(G, L, X);
  const int64_t Steps = G.C * G.KH * G.KW;
  if (smallConvPixelTiles(G.OW, G.M)) {
    static const std::array<PixelTileFn, PT> Tiles = pixelTiles(std::make_integer_sequence<int, PT>());
    const int64_t PerRow = (G.OW + PT - 1) / PT, Blocks = (G.M + PB - 1) / PB;
    const int64_t Tasks = Blocks * G.OH * PerRow;
    const Parallel &Par = poolFor(Tasks * 2 * PT * Steps, Pool);
    Par.forRange(static_cast<size_t>(Tasks), grainFor(2 * PT * Steps), [&](size_t Begin, size_t End) {
      for (size_t T = Begin; T < End; ++T) {
        const int64_t B = static_cast<int64_t>(T) / (G.OH * PerRow), Rest = static_cast<int64_t>(T) % (G.OH * PerRow);
        const int64_t Oh = Rest / PerRow, Ow0 = Rest % PerRow * PT, NP = std::min(PT, G.OW - Ow0);
        Tiles[static_cast<size_t>(NP - 1)](G, L, W.Pixels.data() + B * Steps * PB, Bias, B * PB, Xp, Oh, Ow0, Y);
      }
    });
    return;
  }
  const int64_t Slots = G.OH * L.VPR, SlotTiles = (Slots + VT - 1) / VT;
  const int64_t Blocks = (G.M + CB - 1) / CB;
  const int64_t Tasks = Blocks * SlotTiles;
  const Parallel &Par = poolFor(Tasks * CB * VT * Steps, Pool);
  Par.forRange(static_cast<size_t>(Tasks), grainFor(CB * VT * Steps), [&](size_t Begin, size_t End) {
    for (size_t T = Begin; T < End; ++T) {
      const int64_t B = static_cast<int64_t>(T) / SlotTiles, Tile = static_cast<int64_t>(T) % SlotTiles;
      const int64_t S0 = Tile * VT, NS = std::min(VT, Slots - S0);
      int64_t Oh[VT], Ow[VT];
      for (int64_t S = 0; S < NS; ++S)
        Oh[S] = (S0 + S) / L.VPR, Ow[S] = (S0 + S) % L.VPR * 16;
      const float *Wb = W.Rows.data() + B * Steps * CB;
      if (NS == 3)
        smallTile<3>(G, L, Wb, Bias, B * CB, Xp, Oh, Ow, Y);
      else if (NS == 2)
        smallTile<2>(G, L, Wb, Bias, B * CB, Xp, Oh, Ow, Y);
      else
        smallTile<1>(G, L, Wb, Bias, B * CB, Xp, Oh, Ow, Y);
    }
  });
}

} // namespace

bool smallConvAvailable() { return __builtin_cpu_supports("avx512f"); }

void smallConv(const SmallConvGeometry &G, const SmallConvWeights &W, const float *Bias, const float *X, float *Y,
                const Parallel &Par) {
  smallConvAvx512(G, W, Bias, X, Y, Par);
}

#else

bool smallConvAvailable() { return false; }
void smallConv(const SmallConvGeometry &, const SmallConvWeights &, const float *, const float *, float *,
                const Parallel &) {}

#endif

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
