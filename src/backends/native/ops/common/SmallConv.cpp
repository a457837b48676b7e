// Direct 2-D convolution of small layers (see SmallConv.h).
#include "backends/native/ops/common/SmallConv.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

#include "backends/native/ops/common/FusedActivation.h"
#include "backends/native/ops/common/PackedWeights.h"
#include "backends/native/ops/common/SimdDispatch.h"
#include "backends/native/ops/common/VecMath256.h"
#include "backends/native/ops/common/VecMath512.h"
#include "core/CpuFeatures.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

namespace {

constexpr int64_t CB = SmallConvRowCB, PB = SmallConvPixelCB;

/// Layout of the zero-padded image: rows of Wp floats, OH + KH - 1 rows per channel. A row holds
/// every 16-pixel vector of an output row shifted by any kw, so the tile loads never leave it.
/// Lanes: 16 (AVX-512) or 8 (AVX2).
struct PaddedLayout {
  int64_t VPR, Hp, Wp;
  explicit PaddedLayout(const SmallConvGeometry &G, int64_t Lanes = 16)
      : VPR((G.OW + Lanes - 1) / Lanes), Hp(G.OH + G.KH - 1), Wp(VPR * Lanes + G.KW - 1) {}
};

/// Where a tile writes: its first channel's plane at Yb, channel planes Plane floats apart, output
/// row Oh at row Oh - Row0 of a plane. Y itself (Yb at the tile's channel, Plane = OH * OW, Row0 =
/// 0), or a band of rows of the tile's channels that a fused max pool reads next.
struct TileOut {
  float *Yb;
  int64_t Plane, Row0;
};

} // namespace

namespace {
void packBlocks(const float *Wt, int64_t M, int64_t Steps, int64_t Width, float *D) {
  const int64_t Blocks = (M + Width - 1) / Width;
  for (int64_t B = 0; B < Blocks; ++B)
    for (int64_t S = 0; S < Steps; ++S)
      for (int64_t I = 0; I < Width; ++I) {
        const int64_t Co = B * Width + I;
        *D++ = Co < M ? Wt[Co * Steps + S] : 0.0f;
      }
}

void packBlocksCached(const KernelCreateInfo &I, size_t Input, const std::string &Layout, int64_t Width,
                      AlignedFloats &Out) {
  const ConstData &W = *I.Inputs[Input].Const;
  const int64_t M = W.Dims[0], Steps = W.Dims[1] * W.Dims[2] * W.Dims[3];
  const size_t Floats = static_cast<size_t>(std::max<int64_t>(1, (M + Width - 1) / Width * Steps * Width));
  packFloatsCached(packedWeightsKey(I, Input, Layout + "/b" + std::to_string(Width)), Floats, Out,
                   [&](float *D) { packBlocks(W.as<float>(), M, Steps, Width, D); });
}
} // namespace

void packSmallConvWeights(const KernelCreateInfo &I, size_t Input, const std::string &Layout, bool ForRows,
                          bool ForPixels, SmallConvWeights &Out) {
  if (ForRows)
    packBlocksCached(I, Input, Layout, CB, Out.Rows);
  if (ForPixels)
    packBlocksCached(I, Input, Layout, PB, Out.Pixels);
}

#ifdef OPT_SIMD_X86

namespace {

/// One register tile: CB output channels x V output vectors (slots). Slot v covers output pixels
/// [Ow[v], Ow[v] + 16) of output row Oh[v], of which Mask[v] are stored.
/// Channel Co0 + c of output row Oh is written at Yb + c * Out.Plane + (Oh - Out.Row0) * G.OW.
template <int V>
__attribute__((target("avx512f"))) void smallTile(const SmallConvGeometry &G, const PaddedLayout &L,
                                                   const float *Wb, const float *Bias, int64_t Co0, const float *Xp,
                                                   const int64_t *Oh, const int64_t *Ow, const TileOut &Out) {
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
  const Act512 Av(G.Act);
  for (int C = 0; C < CB; ++C) {
    const int64_t Co = Co0 + C;
    if (Co >= G.M)
      break;
    const __m512 Bv = _mm512_set1_ps(Bias ? Bias[Co] : 0.0f);
    for (int S = 0; S < V; ++S) {
      __m512 R = _mm512_add_ps(Acc[C][S], Bv);
      if (Av.on()) // a clamp passes NaN through, as in the reference
        R = Av(R);
      const int64_t Lanes = std::min<int64_t>(16, G.OW - Ow[S]);
      const __mmask16 K = static_cast<__mmask16>((1u << Lanes) - 1u);
      _mm512_mask_storeu_ps(Out.Yb + C * Out.Plane + (Oh[S] - Out.Row0) * G.OW + Ow[S], K, R);
    }
  }
}

/// What a pixel tile does with its sums: Store them (bias, clamp, scatter into Out), or pool them
/// 2x2 (PoolFirst: the max of each pixel pair into Pairs; PoolSecond, the next row: the max of
/// its pairs and Pairs, then bias, clamp and a scatter of the pooled pixels into Out's planes).
enum class PixelMode { Store, PoolFirst, PoolSecond };

/// One pixel tile: P consecutive output pixels of row Oh from column Ow0, x PB output channels from
/// Co0 (two vectors of 16). Each step loads two weight vectors and broadcasts P input pixels into
/// them; the P x 32 results are scattered into the NCHW output (one channel plane per lane), or
/// pooled (Mode; Pairs holds the first row's 16-float pair maxima, P / 2 x 2 vectors).
#if defined(__GNUC__) && !defined(__clang__)
#define OPT_NO_PREDICTIVE_COMMONING __attribute__((optimize("no-predictive-commoning")))
#else
#define OPT_NO_PREDICTIVE_COMMONING
#endif
// GCC's predictive commoning would carry Row[Kw + I] over to the next kw as Row[Kw + 1 + I - 1]
// through stack slots (the 28 accumulators leave no register for them): keep the plain broadcasts.
template <int P, PixelMode Mode = PixelMode::Store>
OPT_NO_PREDICTIVE_COMMONING __attribute__((target("avx512f"))) void pixelTile(const SmallConvGeometry &G, const PaddedLayout &L, const float *Wb,
                                                  const float *Bias, int64_t Co0, const float *Xp, int64_t Oh,
                                                  int64_t Ow0, const TileOut &Out, float *Pairs = nullptr) {
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
  if (Mode != PixelMode::Store) {
    // Pixel pairs (2j, 2j + 1) of both vectors: bias and clamp commute with the max (one bias per
    // channel; both monotone, NaN passing through), so they wait for the pooled value.
    constexpr int Q = P / 2;
#pragma GCC unroll 16
    for (int J = 0; J < Q; ++J)
      for (int V = 0; V < 2; ++V) {
        const __m512 Mx = vec512::nanMax512(Acc[2 * J][V], Acc[2 * J + 1][V]);
        if (Mode == PixelMode::PoolFirst)
          _mm512_store_ps(Pairs + (2 * J + V) * 16, Mx);
        else
          Acc[J][V] = vec512::nanMax512(_mm512_load_ps(Pairs + (2 * J + V) * 16), Mx);
      }
    if (Mode == PixelMode::PoolFirst)
      return;
  }
  const __m512i Lane = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                          _mm512_set1_epi32(static_cast<int>(Out.Plane)));
  const Act512 Av(G.Act);
  // Pooled: pixel Ow0 / 2 + j of pooled row Oh / 2 (rows OW / 2 wide).
  constexpr bool Pooled = Mode == PixelMode::PoolSecond;
  constexpr int NOut = Pooled ? P / 2 : P;
  const int64_t RowW = Pooled ? G.OW / 2 : G.OW, Row = Pooled ? Oh / 2 : Oh, Col = Pooled ? Ow0 / 2 : Ow0;
#pragma GCC unroll 2
  for (int V = 0; V < 2; ++V) {
    const int64_t C0 = Co0 + V * 16;
    if (C0 >= G.M)
      break;
    const int64_t Lanes = std::min<int64_t>(16, G.M - C0);
    const __mmask16 K = static_cast<__mmask16>((1u << Lanes) - 1u);
    const __m512 Bv = Bias ? _mm512_maskz_loadu_ps(K, Bias + C0) : _mm512_setzero_ps();
    float *Dst = Out.Yb + V * 16 * Out.Plane + (Row - Out.Row0) * RowW + Col;
#pragma GCC unroll 16
    for (int I = 0; I < NOut; ++I) {
      __m512 R = _mm512_add_ps(Acc[I][V], Bv);
      if (Av.on())
        R = Av(R);
      _mm512_mask_i32scatter_ps(Dst + I, K, Lane, R, 4);
    }
  }
}

using PixelTileFn = void (*)(const SmallConvGeometry &, const PaddedLayout &, const float *, const float *, int64_t,
                             const float *, int64_t, int64_t, const TileOut &, float *);

/// Pixels per pixel tile: 14 x 2 = 28 accumulators and the two weight vectors fit the registers.
constexpr int64_t PT = 14;

template <int... Ps> constexpr std::array<PixelTileFn, sizeof...(Ps)> pixelTiles(std::integer_sequence<int, Ps...>) {
  return {{&pixelTile<Ps + 1>...}};
}

/// The pooling pixel tiles of 2, 4, ..., PT pixels (entry i: 2i + 2), for both rows of a pair.
template <int... Is> struct PooledTiles {
  std::array<PixelTileFn, sizeof...(Is)> First{{&pixelTile<2 * Is + 2, PixelMode::PoolFirst>...}};
  std::array<PixelTileFn, sizeof...(Is)> Second{{&pixelTile<2 * Is + 2, PixelMode::PoolSecond>...}};
};
template <int... Is> PooledTiles<Is...> pooledTiles(std::integer_sequence<int, Is...>) { return {}; }

/// Tile height (slots per tile) of the row tiles: CB x 3 = 24 accumulators, 3 input vectors and a
/// broadcast weight fit the 32 vector registers.
constexpr int64_t VT = 3;

/// smallTile for NS (1 to VT) slots.
void rowTile(const SmallConvGeometry &G, const PaddedLayout &L, const float *Wb, const float *Bias, int64_t Co0,
             const float *Xp, int64_t NS, const int64_t *Oh, const int64_t *Ow, const TileOut &Out) {
  if (NS == 3)
    smallTile<3>(G, L, Wb, Bias, Co0, Xp, Oh, Ow, Out);
  else if (NS == 2)
    smallTile<2>(G, L, Wb, Bias, Co0, Xp, Oh, Ow, Out);
  else
    smallTile<1>(G, L, Wb, Bias, Co0, Xp, Oh, Ow, Out);
}

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
        const TileOut Out{Y + B * PB * G.OH * G.OW, G.OH * G.OW, 0};
        Tiles[static_cast<size_t>(NP - 1)](G, L, W.Pixels.data() + B * Steps * PB, Bias, B * PB, Xp, Oh, Ow0, Out,
                                           nullptr);
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
      const TileOut Out{Y + B * CB * G.OH * G.OW, G.OH * G.OW, 0};
      rowTile(G, L, W.Rows.data() + B * Steps * CB, Bias, B * CB, Xp, NS, Oh, Ow, Out);
    }
  });
}

/// The 2x2 stride-2 max pool fused into the convolution. Pixel tiles pool in registers: a tile of
/// row 2r keeps the max of its pixel pairs, the same tile of row 2r + 1 takes the max with them
/// and scatters the pooled pixels (a quarter of the unfused scatters). Row tiles write a band of
/// whole rows of one channel block into L1 (tasks of three row pairs when a pair is not a multiple
/// of the tile's three slots, so no tile is left partly empty), pooled from there with vectors.
/// Either way the full-size output is never written to memory and read back.
__attribute__((target("avx512f"))) void smallConvPoolAvx512(const SmallConvGeometry &G, const SmallConvWeights &W,
                                                             const float *Bias, const float *X, float *Y,
                                                             const Parallel &Pool) {
  const int64_t POH = G.OH / 2, POW = G.OW / 2, PPlane = POH * POW;
  if (POH <= 0 || POW <= 0 || G.M == 0)
    return;
  const PaddedLayout L(G);
  const float *Xp = padImage(G, L, X);
  const int64_t Steps = G.C * G.KH * G.KW;
  if (smallConvPixelTiles(G.OW, G.M)) {
    static const auto Tiles = pooledTiles(std::make_integer_sequence<int, PT / 2>());
    const int64_t Cols = 2 * POW, PerRow = (Cols + PT - 1) / PT, Blocks = (G.M + PB - 1) / PB;
    const int64_t Tasks = Blocks * POH, TaskFmas = 2 * PerRow * 2 * PT * Steps;
    const Parallel &Par = poolFor(Tasks * TaskFmas, Pool);
    Par.forRange(static_cast<size_t>(Tasks), grainFor(TaskFmas), [&](size_t Begin, size_t End) {
      alignas(64) float Pairs[PT / 2 * 2 * 16];
      for (size_t T = Begin; T < End; ++T) {
        const int64_t B = static_cast<int64_t>(T) / POH, Pr = static_cast<int64_t>(T) % POH;
        const float *Wb = W.Pixels.data() + B * Steps * PB;
        const TileOut Out{Y + B * PB * PPlane, PPlane, 0};
        for (int64_t Ow0 = 0; Ow0 < Cols; Ow0 += PT) {
          const size_t I = static_cast<size_t>(std::min(PT, Cols - Ow0) / 2 - 1); // PT is even
          Tiles.First[I](G, L, Wb, Bias, B * PB, Xp, 2 * Pr, Ow0, Out, Pairs);
          Tiles.Second[I](G, L, Wb, Bias, B * PB, Xp, 2 * Pr + 1, Ow0, Out, Pairs);
        }
      }
    });
    return;
  }
  const int64_t PairsPerTask = (2 * L.VPR) % VT == 0 ? 1 : VT;
  const int64_t Groups = (POH + PairsPerTask - 1) / PairsPerTask, Blocks = (G.M + CB - 1) / CB;
  const int64_t Tasks = Blocks * Groups, TaskFmas = 2 * PairsPerTask * L.VPR * CB * Steps;
  const int64_t BandRows = 2 * PairsPerTask;
  const Parallel &Par = poolFor(Tasks * TaskFmas, Pool);
  Par.forRange(static_cast<size_t>(Tasks), grainFor(TaskFmas), [&](size_t Begin, size_t End) {
    thread_local AlignedFloats Band; // [CB channels][BandRows rows][OW]
    if (Band.size() < static_cast<size_t>(CB * BandRows * G.OW))
      Band.resize(static_cast<size_t>(CB * BandRows * G.OW));
    for (size_t T = Begin; T < End; ++T) {
      const int64_t B = static_cast<int64_t>(T) / Groups, Pr0 = static_cast<int64_t>(T) % Groups * PairsPerTask;
      const int64_t NPairs = std::min(PairsPerTask, POH - Pr0), Row0 = 2 * Pr0;
      const TileOut BandOut{Band.data(), BandRows * G.OW, Row0};
      const int64_t Slots = 2 * NPairs * L.VPR;
      for (int64_t S0 = 0; S0 < Slots; S0 += VT) {
        const int64_t NS = std::min(VT, Slots - S0);
        int64_t Oh[VT], Ow[VT];
        for (int64_t S = 0; S < NS; ++S)
          Oh[S] = Row0 + (S0 + S) / L.VPR, Ow[S] = (S0 + S) % L.VPR * 16;
        rowTile(G, L, W.Rows.data() + B * Steps * CB, Bias, B * CB, Xp, NS, Oh, Ow, BandOut);
      }
      const int64_t Channels = std::min(CB, G.M - B * CB);
      for (int64_t C = 0; C < Channels; ++C)
        vec512::maxPool2x2Plane512(Band.data() + C * BandOut.Plane, G.OW, Y + (B * CB + C) * PPlane + Pr0 * POW,
                                   NPairs, POW);
    }
  });
}

/// AVX2 row tile: CH256 (4) output channels x VT256 (3) vectors of 8 consecutive output pixels of
/// a row (slot v: row Oh[v], columns [Ow[v], Ow[v] + 8)); NS slots are stored, the others repeat
/// slot 0. 12 accumulators, 3 input vectors and a broadcast weight fill the 16 registers; 12 FMAs
/// per 3 loads + 4 broadcasts, so FMA-bound. Named accumulators: with an array of them GCC 12 kept
/// every accumulator in memory, stored after each FMA (150-180 us for MNIST's conv2 against ~60
/// in registers). It reads the AVX-512 tile's Rows blocks (8 channels per step): Wb points at
/// channel Co0 % 8 of the first step, the next step 8 floats on.
constexpr int CH256 = 4;
constexpr int64_t VT256 = 3;

__attribute__((target("avx2,fma"))) void rowTile256(const SmallConvGeometry &G, const PaddedLayout &L,
                                                    const float *Wb, const float *Bias, int64_t Co0, const float *Xp,
                                                    int64_t NS, const int64_t *Oh, const int64_t *Ow,
                                                    const TileOut &Out) {
  __m256 A00 = _mm256_setzero_ps(), A01 = A00, A02 = A00, A10 = A00, A11 = A00, A12 = A00;
  __m256 A20 = A00, A21 = A00, A22 = A00, A30 = A00, A31 = A00, A32 = A00;
  const float *B0 = Xp + Oh[0] * L.Wp + Ow[0];
  const float *B1 = NS > 1 ? Xp + Oh[1] * L.Wp + Ow[1] : B0;
  const float *B2 = NS > 2 ? Xp + Oh[2] * L.Wp + Ow[2] : B0;
  const int64_t Plane = L.Hp * L.Wp;
  for (int64_t Ci = 0; Ci < G.C; ++Ci)
    for (int64_t Kh = 0; Kh < G.KH; ++Kh) {
      const int64_t Off = Ci * Plane + Kh * L.Wp;
      for (int64_t Kw = 0; Kw < G.KW; ++Kw, Wb += CB) {
        const __m256 X0 = _mm256_loadu_ps(B0 + Off + Kw), X1 = _mm256_loadu_ps(B1 + Off + Kw),
                     X2 = _mm256_loadu_ps(B2 + Off + Kw);
        __m256 Wc = _mm256_broadcast_ss(Wb);
        A00 = _mm256_fmadd_ps(Wc, X0, A00), A01 = _mm256_fmadd_ps(Wc, X1, A01), A02 = _mm256_fmadd_ps(Wc, X2, A02);
        Wc = _mm256_broadcast_ss(Wb + 1);
        A10 = _mm256_fmadd_ps(Wc, X0, A10), A11 = _mm256_fmadd_ps(Wc, X1, A11), A12 = _mm256_fmadd_ps(Wc, X2, A12);
        Wc = _mm256_broadcast_ss(Wb + 2);
        A20 = _mm256_fmadd_ps(Wc, X0, A20), A21 = _mm256_fmadd_ps(Wc, X1, A21), A22 = _mm256_fmadd_ps(Wc, X2, A22);
        Wc = _mm256_broadcast_ss(Wb + 3);
        A30 = _mm256_fmadd_ps(Wc, X0, A30), A31 = _mm256_fmadd_ps(Wc, X1, A31), A32 = _mm256_fmadd_ps(Wc, X2, A32);
      }
    }
  const __m256 Acc[CH256][VT256] = {{A00, A01, A02}, {A10, A11, A12}, {A20, A21, A22}, {A30, A31, A32}};
  const Act256 Av(G.Act);
  for (int C = 0; C < CH256; ++C) {
    const int64_t Co = Co0 + C;
    if (Co >= G.M)
      break;
    const __m256 Bv = _mm256_set1_ps(Bias ? Bias[Co] : 0.0f);
    for (int64_t S = 0; S < NS; ++S) {
      __m256 R = _mm256_add_ps(Acc[C][S], Bv);
      if (Av.on()) // a clamp passes NaN through, as in the reference
        R = Av(R);
      float *Dst = Out.Yb + C * Out.Plane + (Oh[S] - Out.Row0) * G.OW + Ow[S];
      const int64_t Lanes = G.OW - Ow[S];
      if (Lanes >= 8)
        _mm256_storeu_ps(Dst, R);
      else
        _mm256_maskstore_ps(Dst, vec256::lanesBelow256(Lanes), R);
    }
  }
}

/// AVX2 pixel tile (rows narrower than two vectors, smallConvPixelTiles): 16 output channels in
/// two 8-lane vectors x PT256 (6) output pixels taken in row-major order across output rows (pixel
/// p: row Oh[p], column Ow[p]), so no lane is idle whatever the row width (MNIST's conv2, 14 wide:
/// the row tiles run 16 lanes per row, 12.5% idle, plus 2 of 30 empty slots). 12 accumulators, 2
/// weight vectors and one broadcast input pixel fill 15 registers; 12 FMAs per 2 loads + 6
/// broadcasts. NP pixels are stored (the others repeat pixel 0); the lanes go out channel by
/// channel (NCHW), skipping channels past M. Reads the Pixels blocks (32 channels per step): Wb
/// points at channel Co0 % 32 of the first step, the next step 32 floats on.
constexpr int64_t PT256 = 6;

template <int KWT> // KWT > 0: the kernel width, fixed (its tap loop unrolled); 0: G.KW
__attribute__((target("avx2,fma"))) void pixelTile256(const SmallConvGeometry &G, const PaddedLayout &L,
                                                      const float *Wb, const float *Bias, int64_t Co0, const float *Xp,
                                                      int64_t NP, const int64_t *Oh, const int64_t *Ow, float *Y) {
  __m256 A00 = _mm256_setzero_ps(), A01 = A00, A02 = A00, A03 = A00, A04 = A00, A05 = A00;
  __m256 A10 = A00, A11 = A00, A12 = A00, A13 = A00, A14 = A00, A15 = A00;
  const float *P[PT256];
  for (int64_t I = 0; I < PT256; ++I)
    P[I] = Xp + (I < NP ? Oh[I] * L.Wp + Ow[I] : Oh[0] * L.Wp + Ow[0]);
  const float *P0 = P[0], *P1 = P[1], *P2 = P[2], *P3 = P[3], *P4 = P[4], *P5 = P[5];
  // One loop over the C * KH input rows a tile reads: KH rows Wp apart, then the next channel's.
  const int64_t KW = KWT > 0 ? KWT : G.KW, ChannelSkip = (L.Hp - G.KH) * L.Wp;
  int64_t Off = 0;
  for (int64_t Ci = 0; Ci < G.C; ++Ci, Off += ChannelSkip)
    for (int64_t Kh = 0; Kh < G.KH; ++Kh, Off += L.Wp) {
#pragma GCC unroll 8
      for (int64_t Kw = 0; Kw < KW; ++Kw, Wb += PB) {
        const __m256 W0 = _mm256_loadu_ps(Wb), W1 = _mm256_loadu_ps(Wb + 8);
        __m256 Xv = _mm256_broadcast_ss(P0 + Off + Kw);
        A00 = _mm256_fmadd_ps(W0, Xv, A00), A10 = _mm256_fmadd_ps(W1, Xv, A10);
        Xv = _mm256_broadcast_ss(P1 + Off + Kw);
        A01 = _mm256_fmadd_ps(W0, Xv, A01), A11 = _mm256_fmadd_ps(W1, Xv, A11);
        Xv = _mm256_broadcast_ss(P2 + Off + Kw);
        A02 = _mm256_fmadd_ps(W0, Xv, A02), A12 = _mm256_fmadd_ps(W1, Xv, A12);
        Xv = _mm256_broadcast_ss(P3 + Off + Kw);
        A03 = _mm256_fmadd_ps(W0, Xv, A03), A13 = _mm256_fmadd_ps(W1, Xv, A13);
        Xv = _mm256_broadcast_ss(P4 + Off + Kw);
        A04 = _mm256_fmadd_ps(W0, Xv, A04), A14 = _mm256_fmadd_ps(W1, Xv, A14);
        Xv = _mm256_broadcast_ss(P5 + Off + Kw);
        A05 = _mm256_fmadd_ps(W0, Xv, A05), A15 = _mm256_fmadd_ps(W1, Xv, A15);
      }
    }
  const __m256 Acc[2][PT256] = {{A00, A01, A02, A03, A04, A05}, {A10, A11, A12, A13, A14, A15}};
  const Act256 Av(G.Act);
  const int64_t OPlane = G.OH * G.OW;
  alignas(32) float Lanes[PT256][8];
  for (int H = 0; H < 2; ++H) {
    const int64_t C0 = Co0 + 8 * H, NC = std::min<int64_t>(8, G.M - C0);
    if (NC <= 0)
      break;
    alignas(32) float Bv[8] = {};
    if (Bias)
      for (int64_t C = 0; C < NC; ++C)
        Bv[C] = Bias[C0 + C];
    const __m256 B = _mm256_load_ps(Bv);
    for (int64_t I = 0; I < NP; ++I) {
      __m256 R = _mm256_add_ps(Acc[H][I], B);
      if (Av.on()) // a clamp passes NaN through, as in the reference
        R = Av(R);
      _mm256_store_ps(Lanes[I], R);
    }
    for (int64_t C = 0; C < NC; ++C) {
      float *Dst = Y + (C0 + C) * OPlane;
      for (int64_t I = 0; I < NP; ++I)
        Dst[Oh[I] * G.OW + Ow[I]] = Lanes[I][C];
    }
  }
}

/// The AVX2 + FMA sibling of smallConvAvx512's row path (every output width: with 8 lanes a 14
/// wide row wastes 2 of 16 lanes, where the AVX-512 pixel tiles avoid wasting 2 of 16 and then
/// pay a scatter). Tasks: half blocks of 4 output channels x tiles of 3 slots.
void smallConvAvx2Impl(const SmallConvGeometry &G, const SmallConvWeights &W, const float *Bias, const float *X,
                       float *Y, const Parallel &Pool) {
  const PaddedLayout L(G, 8);
  const float *Xp = padImage(G, L, X);
  const int64_t Steps = G.C * G.KH * G.KW;
  if (smallConvPixelTiles(G.OW, G.M)) {
    const int64_t Pixels = G.OH * G.OW, PixTiles = (Pixels + PT256 - 1) / PT256;
    const int64_t Halves = (G.M + 15) / 16, Tasks = Halves * PixTiles;
    const int64_t TaskFmas = 2 * PT256 * Steps / 2; // in 16-lane FMAs, as below
    const Parallel &Par = poolFor(Tasks * TaskFmas, Pool);
    Par.forRange(static_cast<size_t>(Tasks), grainFor(TaskFmas), [&](size_t Begin, size_t End) {
      for (size_t T = Begin; T < End; ++T) {
        const int64_t H = static_cast<int64_t>(T) / PixTiles, Tile = static_cast<int64_t>(T) % PixTiles;
        const int64_t P0 = Tile * PT256, NP = std::min(PT256, Pixels - P0), Co0 = H * 16;
        int64_t Oh[PT256], Ow[PT256];
        for (int64_t I = 0; I < NP; ++I)
          Oh[I] = (P0 + I) / G.OW, Ow[I] = (P0 + I) % G.OW;
        (G.KW == 5 ? pixelTile256<5> : G.KW == 3 ? pixelTile256<3> : pixelTile256<0>)(G, L, W.Pixels.data() + Co0 / PB * Steps * PB + Co0 % PB, Bias, Co0, Xp, NP, Oh, Ow, Y);
      }
    });
    return;
  }
  const int64_t Slots = G.OH * L.VPR, SlotTiles = (Slots + VT256 - 1) / VT256;
  const int64_t Quads = (G.M + CH256 - 1) / CH256, Tasks = Quads * SlotTiles;
  // Counted in 16-lane FMAs (two 8-lane ones), the unit of poolFor and grainFor.
  const int64_t TaskFmas = CH256 * VT256 * Steps / 2;
  const Parallel &Par = poolFor(Tasks * TaskFmas, Pool);
  Par.forRange(static_cast<size_t>(Tasks), grainFor(TaskFmas), [&](size_t Begin, size_t End) {
    for (size_t T = Begin; T < End; ++T) {
      const int64_t Q = static_cast<int64_t>(T) / SlotTiles, Tile = static_cast<int64_t>(T) % SlotTiles;
      const int64_t S0 = Tile * VT256, NS = std::min(VT256, Slots - S0), Co0 = Q * CH256;
      int64_t Oh[VT256], Ow[VT256];
      for (int64_t S = 0; S < NS; ++S)
        Oh[S] = (S0 + S) / L.VPR, Ow[S] = (S0 + S) % L.VPR * 8;
      const TileOut Out{Y + Co0 * G.OH * G.OW, G.OH * G.OW, 0};
      rowTile256(G, L, W.Rows.data() + Co0 / CB * Steps * CB + Co0 % CB, Bias, Co0, Xp, NS, Oh, Ow, Out);
    }
  });
}

} // namespace

bool smallConvAvailable() { return cpuFeatures().AVX512F; }

bool smallConvAvx2Available() { return cpuFeatures().avx2Fma(); }

void smallConvAvx2(const SmallConvGeometry &G, const SmallConvWeights &W, const float *Bias, const float *X, float *Y,
                   const Parallel &Par) {
  smallConvAvx2Impl(G, W, Bias, X, Y, Par);
}

void smallConvMaxPool2x2(const SmallConvGeometry &G, const SmallConvWeights &W, const float *Bias, const float *X,
                         float *Y, const Parallel &Par) {
  smallConvPoolAvx512(G, W, Bias, X, Y, Par);
}

void smallConv(const SmallConvGeometry &G, const SmallConvWeights &W, const float *Bias, const float *X, float *Y,
                const Parallel &Par) {
  smallConvAvx512(G, W, Bias, X, Y, Par);
}

#else

bool smallConvAvailable() { return false; }
bool smallConvAvx2Available() { return false; }
void smallConvAvx2(const SmallConvGeometry &, const SmallConvWeights &, const float *, const float *, float *,
                   const Parallel &) {}
void smallConv(const SmallConvGeometry &, const SmallConvWeights &, const float *, const float *, float *,
                const Parallel &) {}
void smallConvMaxPool2x2(const SmallConvGeometry &, const SmallConvWeights &, const float *, const float *, float *,
                         const Parallel &) {}

#endif

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
