// Direct 2-D convolution (see ConvDirect.h).
#include "backends/native/ops/common/ConvDirect.h"

#include <algorithm>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define OPT_DIRECT_X86 1
#endif

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

namespace {

constexpr int64_t CB = DirectConvCB;

/// Layout of the zero-padded image: rows of Wp floats, OH + KH - 1 rows per channel. A row holds
/// every 16-pixel vector of an output row shifted by any kw, so the tile loads never leave it.
struct PaddedLayout {
  int64_t VPR, Hp, Wp;
  explicit PaddedLayout(const DirectConvGeometry &G)
      : VPR((G.OW + 15) / 16), Hp(G.OH + G.KH - 1), Wp(VPR * 16 + G.KW - 1) {}
};

} // namespace

int64_t directConvScratchFloats(const DirectConvGeometry &G) {
  const PaddedLayout L(G);
  return G.C * L.Hp * L.Wp;
}

void packDirectConvWeights(const float *Wt, int64_t M, int64_t C, int64_t KH, int64_t KW, AlignedFloats &Out) {
  const int64_t Blocks = (M + CB - 1) / CB, Steps = C * KH * KW;
  Out.resize(static_cast<size_t>(std::max<int64_t>(1, Blocks * Steps * CB)));
  float *D = Out.data();
  for (int64_t B = 0; B < Blocks; ++B)
    for (int64_t S = 0; S < Steps; ++S)
      for (int64_t I = 0; I < CB; ++I) {
        const int64_t Co = B * CB + I;
        *D++ = Co < M ? Wt[Co * Steps + S] : 0.0f;
      }
}

#ifdef OPT_DIRECT_X86

namespace {

/// One register tile: CB output channels x V output vectors (slots). Slot v covers output pixels
/// [Ow[v], Ow[v] + 16) of output row Oh[v], of which Mask[v] are stored.
template <int V>
__attribute__((target("avx512f"))) void directTile(const DirectConvGeometry &G, const PaddedLayout &L,
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

/// Tile height (slots per tile): CB x 3 = 24 accumulators, 3 input vectors and a broadcast weight
/// fit the 32 vector registers.
constexpr int64_t VT = 3;

__attribute__((target("avx512f"))) void directConvAvx512(const DirectConvGeometry &G, const float *Packed,
                                                         const float *Bias, const float *X, float *Y,
                                                         const Parallel &Par) {
  const PaddedLayout L(G);
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
  const int64_t Slots = G.OH * L.VPR, SlotTiles = (Slots + VT - 1) / VT;
  const int64_t Blocks = (G.M + CB - 1) / CB, Steps = G.C * G.KH * G.KW;
  const int64_t Tasks = Blocks * SlotTiles;
  // At least 32K FMAs (~10 us) per chunk, so a small layer stays on the calling thread, and
  // otherwise chunks small enough for the pool's stealing to even out the threads.
  const size_t Grain = static_cast<size_t>(std::max<int64_t>(1, 32768 / std::max<int64_t>(1, CB * VT * Steps)));
  Par.forRange(static_cast<size_t>(Tasks), Grain, [&](size_t Begin, size_t End) {
    for (size_t T = Begin; T < End; ++T) {
      const int64_t B = static_cast<int64_t>(T) / SlotTiles, Tile = static_cast<int64_t>(T) % SlotTiles;
      const int64_t S0 = Tile * VT, NS = std::min(VT, Slots - S0);
      int64_t Oh[VT], Ow[VT];
      for (int64_t S = 0; S < NS; ++S)
        Oh[S] = (S0 + S) / L.VPR, Ow[S] = (S0 + S) % L.VPR * 16;
      const float *Wb = Packed + B * Steps * CB;
      if (NS == 3)
        directTile<3>(G, L, Wb, Bias, B * CB, Xp, Oh, Ow, Y);
      else if (NS == 2)
        directTile<2>(G, L, Wb, Bias, B * CB, Xp, Oh, Ow, Y);
      else
        directTile<1>(G, L, Wb, Bias, B * CB, Xp, Oh, Ow, Y);
    }
  });
}

} // namespace

bool directConvAvailable() { return __builtin_cpu_supports("avx512f"); }

void directConv(const DirectConvGeometry &G, const float *Packed, const float *Bias, const float *X, float *Y,
                const Parallel &Par) {
  directConvAvx512(G, Packed, Bias, X, Y, Par);
}

#else

bool directConvAvailable() { return false; }
void directConv(const DirectConvGeometry &, const float *, const float *, const float *, float *, const Parallel &) {}

#endif

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
