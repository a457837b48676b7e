// Winograd F(4x4, 3x3) and F(2x2, 3x3) (see Winograd.h). Lavin & Gray's matrices, interpolation
// points 0, +-1, +-2, inf (F(4x4)) and 0, +-1, inf (F(2x2)). Work is split into tasks of (a chunk of
// tile rows, a block of output channels): each task transforms its tiles' input (all channels)
// into thread-local V[P][tiles][Cp] (P = 36 or 16 points), runs the P GEMMs V[p] x U[p] into
// M[P][tiles][cols], and transforms M into the output. A chunk is sized so V stays in L2 and U's
// blocks stream through once per chunk.
#include "backends/native/ops/common/Winograd.h"

#include "backends/native/ops/common/PackedWeights.h"
#include "backends/native/ops/common/ThreadScratch.h"
#include "backends/native/ops/common/Transpose256.h"
#include "backends/native/ops/common/VecMath512.h"

#include <algorithm>
#include <cmath>

#if defined(__x86_64__)
#include <immintrin.h>
#define OPT_WINOGRAD_X86 1
#endif

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

namespace {

/// Output channels per packed U block: two 32-column microkernel panels. Tasks split a layer's
/// output channels at these boundaries when it has too few tiles to feed every thread.
constexpr int64_t kSplitCols = 64;

int64_t ceilDiv(int64_t A, int64_t B) { return (A + B - 1) / B; }

/// Input channels per transform vector (Cp, V's row length, is a multiple): AVX2 8, else 16.
int64_t channelLanes(GemmIsa Transforms) { return Transforms == GemmIsa::Avx2 ? 8 : 16; }

// B^T d (one dimension of the input transform), for Tile + 2 values at stride S.
template <int Tile, typename T> inline void inputTransform1D(const T *D, int64_t S, T *Out, int64_t OS) {
  if (Tile == 2) {
    const T D0 = D[0], D1 = D[S], D2 = D[2 * S], D3 = D[3 * S];
    Out[0] = D0 - D2;
    Out[OS] = D1 + D2;
    Out[2 * OS] = D2 - D1;
    Out[3 * OS] = D1 - D3;
    return;
  }
  const T D0 = D[0], D1 = D[S], D2 = D[2 * S], D3 = D[3 * S], D4 = D[4 * S], D5 = D[5 * S];
  Out[0] = 4 * D0 - 5 * D2 + D4;
  Out[OS] = (D3 + D4) - 4 * (D1 + D2);
  Out[2 * OS] = (D4 - D3) + 4 * (D1 - D2);
  Out[3 * OS] = (D4 - D2) + 2 * (D3 - D1);
  Out[4 * OS] = (D4 - D2) - 2 * (D3 - D1);
  Out[5 * OS] = 4 * D1 - 5 * D3 + D5;
}

// A^T m (one dimension of the output transform): Tile + 2 values at stride S to Tile.
template <int Tile, typename T> inline void outputTransform1D(const T *M, int64_t S, T *Out, int64_t OS) {
  if (Tile == 2) {
    const T M1 = M[S], M2 = M[2 * S];
    Out[0] = M[0] + M1 + M2;
    Out[OS] = M1 - M2 - M[3 * S];
    return;
  }
  const T M0 = M[0], M1 = M[S], M2 = M[2 * S], M3 = M[3 * S], M4 = M[4 * S], M5 = M[5 * S];
  const T P12 = M1 + M2, N12 = M1 - M2, P34 = M3 + M4, N34 = M3 - M4;
  Out[0] = M0 + P12 + P34;
  Out[OS] = N12 + 2 * N34;
  Out[2 * OS] = P12 + 4 * P34;
  Out[3 * OS] = N12 + 8 * N34 + M5;
}

/// Tile layout of one image: TW tiles per row, tile t covers output rows Tile * (t / TW) ..
/// + Tile - 1.
struct TileGrid {
  int64_t TH, TW;
  TileGrid(const WinogradGeometry &G, int64_t Tile) : TH(ceilDiv(G.OH, Tile)), TW(ceilDiv(G.OW, Tile)) {}
};

// --- Portable transforms -------------------------------------------------------------------------

/// V[p][r][c] for tiles T0 .. T0 + Rows - 1 (row stride Cp; channels C .. Cp - 1 are zero).
template <int Tile>
void inputTilesPortable(const float *X, int64_t C, int64_t Cp, const WinogradGeometry &G, const TileGrid &TG,
                        int64_t T0, int64_t Rows, float *V) {
  constexpr int N = Tile + 2, Points = N * N;
  const int64_t InPlane = G.H * G.W;
  for (int64_t R = 0; R < Rows; ++R) {
    const int64_t T = T0 + R, Ih0 = T / TG.TW * Tile - G.PadTop, Iw0 = T % TG.TW * Tile - G.PadLeft;
    for (int64_t Ch = 0; Ch < Cp; ++Ch) {
      float D[Points], S[Points], Out[Points];
      for (int64_t I = 0; I < N; ++I)
        for (int64_t J = 0; J < N; ++J) {
          const int64_t Ih = Ih0 + I, Iw = Iw0 + J;
          D[I * N + J] = Ch < C && Ih >= 0 && Ih < G.H && Iw >= 0 && Iw < G.W ? X[Ch * InPlane + Ih * G.W + Iw] : 0.0f;
        }
      for (int64_t I = 0; I < N; ++I)
        inputTransform1D<Tile>(D + I * N, 1, S + I * N, 1); // rows
      for (int64_t J = 0; J < N; ++J)
        inputTransform1D<Tile>(S + J, N, Out + J, N); // columns
      for (int64_t P = 0; P < Points; ++P)
        V[(P * Rows + R) * Cp + Ch] = Out[P];
    }
  }
}

/// Output channels Col0 .. Col0 + Cols - 1 of tiles T0 .. from M[p][r][j] (row stride Cols).
template <int Tile>
void outputTilesPortable(const float *M, int64_t Cols, int64_t Col0, int64_t K, const WinogradGeometry &G,
                         const TileGrid &TG, int64_t T0, int64_t Rows, const WinogradEpilogue &Ep, float *Y) {
  constexpr int N = Tile + 2, Points = N * N;
  const int64_t OutPlane = G.OH * G.OW;
  for (int64_t R = 0; R < Rows; ++R) {
    const int64_t T = T0 + R, Oh0 = T / TG.TW * Tile, Ow0 = T % TG.TW * Tile;
    for (int64_t J = 0; J < Cols && Col0 + J < K; ++J) {
      const int64_t Ch = Col0 + J;
      float Mv[Points], Q[N * Tile], O[Tile * Tile];
      for (int64_t P = 0; P < Points; ++P)
        Mv[P] = M[(P * Rows + R) * Cols + J];
      for (int64_t I = 0; I < N; ++I)
        outputTransform1D<Tile>(Mv + I * N, 1, Q + I * Tile, 1); // rows: N x Tile
      for (int64_t Jj = 0; Jj < Tile; ++Jj)
        outputTransform1D<Tile>(Q + Jj, Tile, O + Jj, Tile); // columns: Tile x Tile
      const float Bias = Ep.Bias ? Ep.Bias[Ch] : 0.0f;
      for (int64_t I = 0; I < Tile && Oh0 + I < G.OH; ++I)
        for (int64_t Jj = 0; Jj < Tile && Ow0 + Jj < G.OW; ++Jj) {
          const int64_t Off = Ch * OutPlane + (Oh0 + I) * G.OW + Ow0 + Jj;
          float Vv = O[I * Tile + Jj] + Bias;
          if (Ep.Residual)
            Vv += Ep.Residual[Off];
          Vv = Ep.Act(Vv);
          Y[Off] = Vv;
        }
    }
  }
}

// --- AVX-512 transforms: 16 channels per vector; input and output pass through 16-channel pixel -
// vectors (16 x 16 transposes): per-vector gathers / scatters from NCHW measured ~15% slower
// overall (C=K=64 56x56: 1.12 vs 0.99 ms).

#ifdef OPT_WINOGRAD_X86
// GCC 12 flags the _mm512_undefined_ps() inside _mm512_max_ps/_mm512_min_ps as maybe-uninitialized
// (a false positive, as in Gemm.cpp).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

template <int Tile>
__attribute__((target("avx512f"), always_inline)) inline void inputTransform1DAvx512(const __m512 *D, int S,
                                                                                    __m512 *Out, int OS) {
  if (Tile == 2) {
    const __m512 D1 = D[S], D2 = D[2 * S];
    Out[0] = _mm512_sub_ps(D[0], D2);
    Out[OS] = _mm512_add_ps(D1, D2);
    Out[2 * OS] = _mm512_sub_ps(D2, D1);
    Out[3 * OS] = _mm512_sub_ps(D1, D[3 * S]);
    return;
  }
  const __m512 D0 = D[0], D1 = D[S], D2 = D[2 * S], D3 = D[3 * S], D4 = D[4 * S], D5 = D[5 * S];
  const __m512 Four = _mm512_set1_ps(4.0f), Five = _mm512_set1_ps(5.0f), Two = _mm512_set1_ps(2.0f);
  const __m512 D42 = _mm512_sub_ps(D4, D2), D31 = _mm512_sub_ps(D3, D1);
  Out[0] = _mm512_fmadd_ps(Four, D0, _mm512_fnmadd_ps(Five, D2, D4));
  Out[OS] = _mm512_fnmadd_ps(Four, _mm512_add_ps(D1, D2), _mm512_add_ps(D3, D4));
  Out[2 * OS] = _mm512_fmadd_ps(Four, _mm512_sub_ps(D1, D2), _mm512_sub_ps(D4, D3));
  Out[3 * OS] = _mm512_fmadd_ps(Two, D31, D42);
  Out[4 * OS] = _mm512_fnmadd_ps(Two, D31, D42);
  Out[5 * OS] = _mm512_fmadd_ps(Four, D1, _mm512_fnmadd_ps(Five, D3, D5));
}

template <int Tile>
__attribute__((target("avx512f"), always_inline)) inline void outputTransform1DAvx512(const __m512 *M, int S,
                                                                                     __m512 *Out, int OS) {
  if (Tile == 2) {
    const __m512 M1 = M[S], M2 = M[2 * S];
    Out[0] = _mm512_add_ps(_mm512_add_ps(M[0], M1), M2);
    Out[OS] = _mm512_sub_ps(_mm512_sub_ps(M1, M2), M[3 * S]);
    return;
  }
  const __m512 M0 = M[0], M1 = M[S], M2 = M[2 * S], M3 = M[3 * S], M4 = M[4 * S], M5 = M[5 * S];
  const __m512 P12 = _mm512_add_ps(M1, M2), N12 = _mm512_sub_ps(M1, M2);
  const __m512 P34 = _mm512_add_ps(M3, M4), N34 = _mm512_sub_ps(M3, M4);
  Out[0] = _mm512_add_ps(_mm512_add_ps(M0, P12), P34);
  Out[OS] = _mm512_fmadd_ps(_mm512_set1_ps(2.0f), N34, N12);
  Out[2 * OS] = _mm512_fmadd_ps(_mm512_set1_ps(4.0f), P34, P12);
  Out[3 * OS] = _mm512_add_ps(_mm512_fmadd_ps(_mm512_set1_ps(8.0f), N34, N12), M5);
}


inline __mmask16 laneMask(int64_t Lo, int64_t Hi) { // lanes j with Lo <= j < Hi, 0 <= j < 16
  Lo = std::max<int64_t>(Lo, 0), Hi = std::min<int64_t>(Hi, 16);
  return Hi <= Lo ? 0 : static_cast<__mmask16>(((1u << Hi) - 1u) & ~((1u << Lo) - 1u));
}

/// Input rows Ih0 .. Ih0 + Rows - 1 (zeros outside the image) of all channels, columns -PadLeft ..
/// Wp - 1 - PadLeft, into Xb[cb][r][q][16] (16 channels per pixel, zero past C): the tiles then
/// load whole vectors where NCHW would need a gather per vector.
__attribute__((target("avx512f"))) void packInputAvx512(const float *X, int64_t C, int64_t Cp,
                                                        const WinogradGeometry &G, int64_t Ih0, int64_t Rows,
                                                        int64_t Wp, float *Xb) {
  const int64_t InPlane = G.H * G.W;
  for (int64_t C0 = 0; C0 < Cp; C0 += 16) {
    const int64_t Nc = std::min<int64_t>(16, C - C0);
    for (int64_t R = 0; R < Rows; ++R) {
      float *Dst = Xb + ((C0 / 16) * Rows + R) * Wp * 16;
      const int64_t Ih = Ih0 + R;
      if (Ih < 0 || Ih >= G.H) {
        for (int64_t Q = 0; Q < Wp; ++Q)
          _mm512_store_ps(Dst + Q * 16, _mm512_setzero_ps());
        continue;
      }
      const float *Src = X + C0 * InPlane + Ih * G.W;
      for (int64_t Q0 = 0; Q0 < Wp; Q0 += 16) {
        const int64_t Iw0 = Q0 - G.PadLeft;
        const __mmask16 Cols = laneMask(-Iw0, G.W - Iw0);
        __m512 B[16];
        for (int64_t Ch = 0; Ch < 16; ++Ch)
          B[Ch] = Ch < Nc && Cols ? _mm512_maskz_loadu_ps(Cols, Src + Ch * InPlane + Iw0) : _mm512_setzero_ps();
        vec512::transpose16x16(B);
        const int64_t N = std::min<int64_t>(16, Wp - Q0);
        for (int64_t J = 0; J < N; ++J)
          _mm512_store_ps(Dst + (Q0 + J) * 16, B[J]);
      }
    }
  }
}

/// V[p][r][c] for tile rows Th0 .. Th0 + TileRows - 1 (r = (th - Th0) * TW + tw) from the packed
/// input (its row 0 is input row Tile * Th0 - PadTop).
template <int Tile>
__attribute__((target("avx512f"))) void inputTilesAvx512(const float *Xb, int64_t Cp, int64_t TW, int64_t TileRows,
                                                         int64_t Wp, float *V) {
  constexpr int N = Tile + 2;
  const int64_t Rows = TileRows * TW, XRows = Tile * TileRows + 2;
  for (int64_t R = 0; R < Rows; ++R) {
    const int64_t Th = R / TW, Tw = R % TW;
    for (int64_t C0 = 0; C0 < Cp; C0 += 16) {
      const float *Src = Xb + (((C0 / 16) * XRows + Tile * Th) * Wp + Tile * Tw) * 16;
      __m512 D[N * N], S[N * N];
      for (int I = 0; I < N; ++I)
        for (int J = 0; J < N; ++J)
          D[I * N + J] = _mm512_load_ps(Src + (I * Wp + J) * 16);
      for (int I = 0; I < N; ++I)
        inputTransform1DAvx512<Tile>(D + I * N, 1, S + I * N, 1);
      float *Dst = V + R * Cp + C0;
      for (int J = 0; J < N; ++J) {
        __m512 Out[N];
        inputTransform1DAvx512<Tile>(S + J, N, Out, 1);
        for (int I = 0; I < N; ++I)
          _mm512_store_ps(Dst + (I * N + J) * Rows * Cp, Out[I]);
      }
    }
  }
}

/// Output transform of M[p][r][j] (Cols columns, output channels Col0 ..) plus the bias into
/// Yb[j / 16][Tile * th + i][Tile * tw + jj][16] (Wo = Tile * TW columns per row).
template <int Tile>
__attribute__((target("avx512f"))) void outputTilesAvx512(const float *M, int64_t Cols, int64_t Col0, int64_t K,
                                                          int64_t TW, int64_t TileRows, const float *Bias,
                                                          float *Yb) {
  constexpr int N = Tile + 2;
  const int64_t Rows = TileRows * TW, Wo = Tile * TW, YRows = Tile * TileRows;
  for (int64_t R = 0; R < Rows; ++R) {
    const int64_t Th = R / TW, Tw = R % TW;
    for (int64_t J0 = 0; J0 < Cols && Col0 + J0 < K; J0 += 16) {
      const __m512 B = Bias ? _mm512_maskz_loadu_ps(laneMask(0, K - Col0 - J0), Bias + Col0 + J0) : _mm512_setzero_ps();
      __m512 Mv[N * N], Q[N * Tile], O[Tile * Tile];
      const float *Src = M + R * Cols + J0;
      for (int P = 0; P < N * N; ++P)
        Mv[P] = _mm512_load_ps(Src + P * Rows * Cols);
      for (int I = 0; I < N; ++I)
        outputTransform1DAvx512<Tile>(Mv + I * N, 1, Q + I * Tile, 1);
      for (int J = 0; J < Tile; ++J)
        outputTransform1DAvx512<Tile>(Q + J, Tile, O + J, Tile);
      float *Dst = Yb + (((J0 / 16) * YRows + Tile * Th) * Wo + Tile * Tw) * 16;
      for (int I = 0; I < Tile; ++I)
        for (int J = 0; J < Tile; ++J)
          _mm512_store_ps(Dst + (I * Wo + J) * 16, _mm512_add_ps(O[I * Tile + J], B));
    }
  }
}

/// Yb (output rows Oh0 .. Oh0 + YRows - 1, channels Col0 .. Col0 + Cols - 1) into NCHW Y, adding
/// the residual and clamping on the way.
__attribute__((target("avx512f"))) void unpackOutputAvx512(const float *Yb, int64_t Cols, int64_t Col0, int64_t K,
                                                           const WinogradGeometry &G, int64_t Oh0, int64_t YRows,
                                                           int64_t Wo, const WinogradEpilogue &Ep, float *Y) {
  const int64_t OutPlane = G.OH * G.OW;
  const Act512 Av(Ep.Act);
  for (int64_t J0 = 0; J0 < Cols && Col0 + J0 < K; J0 += 16) {
    const int64_t Nk = std::min<int64_t>(16, K - Col0 - J0);
    for (int64_t R = 0; R < YRows && Oh0 + R < G.OH; ++R) {
      const float *Src = Yb + ((J0 / 16) * YRows + R) * Wo * 16;
      for (int64_t Ow0 = 0; Ow0 < G.OW; Ow0 += 16) {
        const int64_t Nw = std::min<int64_t>(16, G.OW - Ow0);
        const __mmask16 Wm = laneMask(0, Nw);
        __m512 B[16];
        for (int64_t J = 0; J < 16; ++J)
          B[J] = J < Nw ? _mm512_load_ps(Src + (Ow0 + J) * 16) : _mm512_setzero_ps();
        vec512::transpose16x16(B);
        const int64_t Off = (Col0 + J0) * OutPlane + (Oh0 + R) * G.OW + Ow0;
        for (int64_t Ch = 0; Ch < Nk; ++Ch) {
          __m512 V = B[Ch];
          if (Ep.Residual)
            V = _mm512_add_ps(V, _mm512_maskz_loadu_ps(Wm, Ep.Residual + Off + Ch * OutPlane));
          if (Av.on()) // in registers; a clamp keeps NaN (the value operand second)
            V = Av(V);
          _mm512_mask_storeu_ps(Y + Off + Ch * OutPlane, Wm, V);
        }
      }
    }
  }
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif

// --- AVX2 + FMA transforms: AVX-512's layout and steps with 8 channels per vector (8 x 8
// transposes between NCHW rows and 8-channel pixel vectors; masked loads and stores for the
// plane's edges and channel tails).

#if defined(OPT_WINOGRAD_X86) && defined(OPT_HAVE_VECMATH256)
#define OPT_WINOGRAD_AVX2 1
#define OPT_WINO_AVX2 __attribute__((target("avx2,fma")))
#define OPT_WINO_AVX2_INLINE __attribute__((target("avx2,fma"), always_inline)) inline

template <int Tile> OPT_WINO_AVX2_INLINE void inputTransform1DAvx2(const __m256 *D, int S, __m256 *Out, int OS) {
  if (Tile == 2) {
    const __m256 D1 = D[S], D2 = D[2 * S];
    Out[0] = _mm256_sub_ps(D[0], D2);
    Out[OS] = _mm256_add_ps(D1, D2);
    Out[2 * OS] = _mm256_sub_ps(D2, D1);
    Out[3 * OS] = _mm256_sub_ps(D1, D[3 * S]);
    return;
  }
  const __m256 D0 = D[0], D1 = D[S], D2 = D[2 * S], D3 = D[3 * S], D4 = D[4 * S], D5 = D[5 * S];
  const __m256 Four = _mm256_set1_ps(4.0f), Five = _mm256_set1_ps(5.0f), Two = _mm256_set1_ps(2.0f);
  const __m256 D42 = _mm256_sub_ps(D4, D2), D31 = _mm256_sub_ps(D3, D1);
  Out[0] = _mm256_fmadd_ps(Four, D0, _mm256_fnmadd_ps(Five, D2, D4));
  Out[OS] = _mm256_fnmadd_ps(Four, _mm256_add_ps(D1, D2), _mm256_add_ps(D3, D4));
  Out[2 * OS] = _mm256_fmadd_ps(Four, _mm256_sub_ps(D1, D2), _mm256_sub_ps(D4, D3));
  Out[3 * OS] = _mm256_fmadd_ps(Two, D31, D42);
  Out[4 * OS] = _mm256_fnmadd_ps(Two, D31, D42);
  Out[5 * OS] = _mm256_fmadd_ps(Four, D1, _mm256_fnmadd_ps(Five, D3, D5));
}

template <int Tile> OPT_WINO_AVX2_INLINE void outputTransform1DAvx2(const __m256 *M, int S, __m256 *Out, int OS) {
  if (Tile == 2) {
    const __m256 M1 = M[S], M2 = M[2 * S];
    Out[0] = _mm256_add_ps(_mm256_add_ps(M[0], M1), M2);
    Out[OS] = _mm256_sub_ps(_mm256_sub_ps(M1, M2), M[3 * S]);
    return;
  }
  const __m256 M0 = M[0], M1 = M[S], M2 = M[2 * S], M3 = M[3 * S], M4 = M[4 * S], M5 = M[5 * S];
  const __m256 P12 = _mm256_add_ps(M1, M2), N12 = _mm256_sub_ps(M1, M2);
  const __m256 P34 = _mm256_add_ps(M3, M4), N34 = _mm256_sub_ps(M3, M4);
  Out[0] = _mm256_add_ps(_mm256_add_ps(M0, P12), P34);
  Out[OS] = _mm256_fmadd_ps(_mm256_set1_ps(2.0f), N34, N12);
  Out[2 * OS] = _mm256_fmadd_ps(_mm256_set1_ps(4.0f), P34, P12);
  Out[3 * OS] = _mm256_add_ps(_mm256_fmadd_ps(_mm256_set1_ps(8.0f), N34, N12), M5);
}

/// packInputAvx512 with 8 channels per pixel: Xb[cb][r][q][8] (zero past C and outside the image).
OPT_WINO_AVX2 void packInputAvx2(const float *X, int64_t C, int64_t Cp, const WinogradGeometry &G, int64_t Ih0,
                                 int64_t Rows, int64_t Wp, float *Xb) {
  const int64_t InPlane = G.H * G.W;
  for (int64_t C0 = 0; C0 < Cp; C0 += 8) {
    const int64_t Nc = std::min<int64_t>(8, C - C0);
    for (int64_t R = 0; R < Rows; ++R) {
      float *Dst = Xb + ((C0 / 8) * Rows + R) * Wp * 8;
      const int64_t Ih = Ih0 + R;
      if (Ih < 0 || Ih >= G.H) {
        for (int64_t Q = 0; Q < Wp; ++Q)
          _mm256_store_ps(Dst + Q * 8, _mm256_setzero_ps());
        continue;
      }
      const float *Src = X + C0 * InPlane + Ih * G.W;
      for (int64_t Q0 = 0; Q0 < Wp; Q0 += 8) {
        const int64_t Iw0 = Q0 - G.PadLeft;
        const int64_t Lo = std::max<int64_t>(0, -Iw0), Hi = std::min<int64_t>(8, G.W - Iw0);
        __m256 B[8];
        if (Lo == 0 && Hi == 8 && Nc == 8) {
          vec256::loadTransposed8x8(Src + Iw0, InPlane, B);
        } else {
          if (Lo == 0 && Hi == 8) {
            for (int64_t Ch = 0; Ch < 8; ++Ch)
              B[Ch] = Ch < Nc ? _mm256_loadu_ps(Src + Ch * InPlane + Iw0) : _mm256_setzero_ps();
          } else if (Lo < Hi) { // masked lanes are not read: Src + Iw0 may point before the row
            const __m256i Cols = vec256::laneRange256(Lo, Hi);
            for (int64_t Ch = 0; Ch < 8; ++Ch)
              B[Ch] = Ch < Nc ? _mm256_maskload_ps(Src + Ch * InPlane + Iw0, Cols) : _mm256_setzero_ps();
          } else {
            for (int64_t Ch = 0; Ch < 8; ++Ch)
              B[Ch] = _mm256_setzero_ps();
          }
          vec256::transpose8x8(B);
        }
        // A whole block's 8 stores unrolled, so B stays in registers (a loop over a variable count
        // of consecutive stores became a memcpy of B spilled to the stack, as in the depthwise
        // kernel's packRows); only a row's last partial block takes the loop.
        float *Out = Dst + Q0 * 8;
        if (Q0 + 8 <= Wp) {
          _Pragma("GCC unroll 8") for (int J = 0; J < 8; ++J) _mm256_store_ps(Out + J * 8, B[J]);
        } else {
          for (int64_t J = 0; J < Wp - Q0; ++J)
            _mm256_store_ps(Out + J * 8, B[J]);
        }
      }
    }
  }
}

/// inputTilesAvx512 on the 8-channel packed input.
template <int Tile>
OPT_WINO_AVX2 void inputTilesAvx2(const float *Xb, int64_t Cp, int64_t TW, int64_t TileRows, int64_t Wp, float *V) {
  constexpr int N = Tile + 2;
  const int64_t Rows = TileRows * TW, XRows = Tile * TileRows + 2;
  for (int64_t R = 0; R < Rows; ++R) {
    const int64_t Th = R / TW, Tw = R % TW;
    for (int64_t C0 = 0; C0 < Cp; C0 += 8) {
      const float *Src = Xb + (((C0 / 8) * XRows + Tile * Th) * Wp + Tile * Tw) * 8;
      __m256 S[N * N];
      for (int I = 0; I < N; ++I) {
        __m256 D[N];
        for (int J = 0; J < N; ++J)
          D[J] = _mm256_load_ps(Src + (I * Wp + J) * 8);
        inputTransform1DAvx2<Tile>(D, 1, S + I * N, 1);
      }
      float *Dst = V + R * Cp + C0;
      for (int J = 0; J < N; ++J) {
        __m256 Out[N];
        inputTransform1DAvx2<Tile>(S + J, N, Out, 1);
        for (int I = 0; I < N; ++I)
          _mm256_store_ps(Dst + (I * N + J) * Rows * Cp, Out[I]);
      }
    }
  }
}

/// outputTilesAvx512 with 8 channels per vector: Yb[j / 8][Tile * th + i][Tile * tw + jj][8].
template <int Tile>
OPT_WINO_AVX2 void outputTilesAvx2(const float *M, int64_t Cols, int64_t Col0, int64_t K, int64_t TW, int64_t TileRows,
                                   const float *Bias, float *Yb) {
  constexpr int N = Tile + 2;
  const int64_t Rows = TileRows * TW, Wo = Tile * TW, YRows = Tile * TileRows;
  for (int64_t R = 0; R < Rows; ++R) {
    const int64_t Th = R / TW, Tw = R % TW;
    for (int64_t J0 = 0; J0 < Cols && Col0 + J0 < K; J0 += 8) {
      const __m256 B = Bias ? _mm256_maskload_ps(Bias + Col0 + J0, vec256::lanesBelow256(K - Col0 - J0))
                            : _mm256_setzero_ps();
      __m256 Q[N * Tile];
      const float *Src = M + R * Cols + J0;
      for (int I = 0; I < N; ++I) {
        __m256 Mv[N];
        for (int J = 0; J < N; ++J)
          Mv[J] = _mm256_load_ps(Src + (I * N + J) * Rows * Cols);
        outputTransform1DAvx2<Tile>(Mv, 1, Q + I * Tile, 1);
      }
      float *Dst = Yb + (((J0 / 8) * YRows + Tile * Th) * Wo + Tile * Tw) * 8;
      for (int J = 0; J < Tile; ++J) {
        __m256 O[Tile];
        outputTransform1DAvx2<Tile>(Q + J, Tile, O, 1);
        for (int I = 0; I < Tile; ++I)
          _mm256_store_ps(Dst + (I * Wo + J) * 8, _mm256_add_ps(O[I], B));
      }
    }
  }
}

/// unpackOutputAvx512 with 8 x 8 transposes: Yb into NCHW Y, the residual added and the
/// activation applied in registers (Act256; a clamp keeps NaN).
OPT_WINO_AVX2 void unpackOutputAvx2(const float *Yb, int64_t Cols, int64_t Col0, int64_t K, const WinogradGeometry &G,
                                    int64_t Oh0, int64_t YRows, int64_t Wo, const WinogradEpilogue &Ep, float *Y) {
  const int64_t OutPlane = G.OH * G.OW;
  const Act256 Av(Ep.Act);
  for (int64_t J0 = 0; J0 < Cols && Col0 + J0 < K; J0 += 8) {
    const int64_t Nk = std::min<int64_t>(8, K - Col0 - J0);
    for (int64_t R = 0; R < YRows && Oh0 + R < G.OH; ++R) {
      const float *Src = Yb + ((J0 / 8) * YRows + R) * Wo * 8;
      for (int64_t Ow0 = 0; Ow0 < G.OW; Ow0 += 8) {
        const int64_t Nw = std::min<int64_t>(8, G.OW - Ow0);
        const __m256i Wm = vec256::lanesBelow256(Nw);
        __m256 B[8];
        for (int64_t J = 0; J < 8; ++J)
          B[J] = J < Nw ? _mm256_load_ps(Src + (Ow0 + J) * 8) : _mm256_setzero_ps();
        vec256::transpose8x8(B);
        float *Dst = Y + (Col0 + J0) * OutPlane + (Oh0 + R) * G.OW + Ow0;
        const float *Res = Ep.Residual ? Ep.Residual + (Dst - Y) : nullptr;
        for (int64_t Ch = 0; Ch < Nk; ++Ch) {
          __m256 V = B[Ch];
          if (Nw == 8) {
            if (Res)
              V = _mm256_add_ps(V, _mm256_loadu_ps(Res + Ch * OutPlane));
            if (Av.on())
              V = Av(V);
            _mm256_storeu_ps(Dst + Ch * OutPlane, V);
          } else {
            if (Res)
              V = _mm256_add_ps(V, _mm256_maskload_ps(Res + Ch * OutPlane, Wm));
            if (Av.on())
              V = Av(V);
            _mm256_maskstore_ps(Dst + Ch * OutPlane, Wm, V);
          }
        }
      }
    }
  }
}
#undef OPT_WINO_AVX2
#undef OPT_WINO_AVX2_INLINE
#endif

} // namespace

namespace {

/// The weight transform G g G^T of 16 3x3 kernels at once (lanes: 16 output channels): In[t][l] is
/// tap t of kernel l; Out[p][l] point p. G is F(2x2)'s or F(4x4)'s 4x3 / 6x3 matrix. Plain lane
/// loops, vectorized by the ISA the caller is compiled for.
template <int N>
__attribute__((always_inline)) inline void transformWeights16(const float (*G)[3], const float (*In)[16],
                                                       float (*Out)[16]) {
  float Tmp[N][3][16];
  for (int I = 0; I < N; ++I)
    for (int J = 0; J < 3; ++J)
      for (int L = 0; L < 16; ++L)
        Tmp[I][J][L] = G[I][0] * In[J][L] + G[I][1] * In[3 + J][L] + G[I][2] * In[6 + J][L];
  for (int I = 0; I < N; ++I)
    for (int J = 0; J < N; ++J)
      for (int L = 0; L < 16; ++L)
        Out[I * N + J][L] = Tmp[I][0][L] * G[J][0] + Tmp[I][1][L] * G[J][1] + Tmp[I][2][L] * G[J][2];
}

constexpr float kG4[6][3] = {{1.0f / 4, 0, 0},
                             {-1.0f / 6, -1.0f / 6, -1.0f / 6},
                             {-1.0f / 6, 1.0f / 6, -1.0f / 6},
                             {1.0f / 24, 1.0f / 12, 1.0f / 6},
                             {1.0f / 24, -1.0f / 12, 1.0f / 6},
                             {0, 0, 1}};
constexpr float kG2[4][3] = {{1, 0, 0}, {0.5f, 0.5f, 0.5f}, {0.5f, -0.5f, 0.5f}, {0, 0, 1}};

void transformWeightsPortable(int Tile, const float (*In)[16], float (*Out)[16]) {
  Tile == 2 ? transformWeights16<4>(kG2, In, Out) : transformWeights16<6>(kG4, In, Out);
}
#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx512f"))) void transformWeightsAvx512(int Tile, const float (*In)[16], float (*Out)[16]) {
  Tile == 2 ? transformWeights16<4>(kG2, In, Out) : transformWeights16<6>(kG4, In, Out);
}
__attribute__((target("avx2,fma"))) void transformWeightsAvx2(int Tile, const float (*In)[16], float (*Out)[16]) {
  Tile == 2 ? transformWeights16<4>(kG2, In, Out) : transformWeights16<6>(kG4, In, Out);
}
/// The weight transform of 16 kernels in registers: the 9 taps of the kernels at W + Idx[l] * 4
/// bytes (lanes in Lanes; the rest zero) gathered, G g G^T, and each point's 16 values stored with
/// a streaming store to Dst[p] + Off: the transformed weights fill fresh memory the load does not
/// read again, so their lines are not read for ownership first. (Scalar gathers into an array then
/// vector loads of it stalled on store forwarding: the transform was ~40% of ResNet-18's load.)
template <int N>
__attribute__((target("avx512f"), always_inline)) inline void gatherTransformStream(const float (*G)[3], const float *W,
                                                                                  __m512i Idx, __mmask16 Lanes,
                                                                                  float *const *Dst, int64_t Off) {
  __m512 In[9];
  for (int T = 0; T < 9; ++T)
    In[T] = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), Lanes, Idx, W + T, 4);
  __m512 Tmp[N][3];
  for (int I = 0; I < N; ++I)
    for (int J = 0; J < 3; ++J)
      Tmp[I][J] = _mm512_fmadd_ps(_mm512_set1_ps(G[I][2]), In[6 + J],
                                  _mm512_fmadd_ps(_mm512_set1_ps(G[I][1]), In[3 + J],
                                                  _mm512_mul_ps(_mm512_set1_ps(G[I][0]), In[J])));
  for (int I = 0; I < N; ++I)
    for (int J = 0; J < N; ++J)
      _mm512_stream_ps(Dst[I * N + J] + Off,
                       _mm512_fmadd_ps(Tmp[I][2], _mm512_set1_ps(G[J][2]),
                                       _mm512_fmadd_ps(Tmp[I][1], _mm512_set1_ps(G[J][1]),
                                                       _mm512_mul_ps(Tmp[I][0], _mm512_set1_ps(G[J][0])))));
}
__attribute__((target("avx512f"))) void transformStreamAvx512(int Tile, const float *W, int64_t RowStride,
                                                              int64_t Rows, float *const *Dst, int64_t Off) {
  const __m512i Idx = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                         _mm512_set1_epi32(static_cast<int>(RowStride)));
  const __mmask16 Lanes = static_cast<__mmask16>(Rows >= 16 ? 0xFFFF : (1u << Rows) - 1u);
  Tile == 2 ? gatherTransformStream<4>(kG2, W, Idx, Lanes, Dst, Off)
            : gatherTransformStream<6>(kG4, W, Idx, Lanes, Dst, Off);
}
void streamFence() { _mm_sfence(); }
#else
void transformWeightsAvx512(int Tile, const float (*In)[16], float (*Out)[16]) {
  transformWeightsPortable(Tile, In, Out);
}
void transformWeightsAvx2(int Tile, const float (*In)[16], float (*Out)[16]) {
  transformWeightsPortable(Tile, In, Out);
}
void transformStreamAvx512(int, const float *, int64_t, int64_t, float *const *, int64_t) {}
void streamFence() {}
#endif

} // namespace

Winograd3x3::Winograd3x3(const GemmMicroKernel &MK, GemmIsa Transforms, const float *Wt, int64_t K, int64_t C,
                         int Tile, const std::string &CacheKey)
    : MK(MK), Transforms(Transforms), Tile(Tile == 2 ? 2 : 4), Points((this->Tile + 2) * (this->Tile + 2)), K(K),
      C(C), Cp(ceilDiv(C, channelLanes(Transforms)) * channelLanes(Transforms)), Kp(ceilDiv(K, 16) * 16),
      Splits(ceilDiv(ceilDiv(K, 16) * 16, kSplitCols)) {
  // U[p * Splits + s] is packB's layout of the Cp x Cols matrix U[p][ci][Col0 + j] (KC-row blocks
  // of NR-column panels, zero past C, K and Cols), written straight from the transform: 16 output
  // channels at a time per input channel, so each point's write is 16 contiguous floats of one
  // panel row, and the weights are read in file order per channel. (Going through transposed
  // intermediates and packB was ~85% of ResNet-18's load: 155-270 ms.)
  const int64_t NR = MK.NR, KC = GemmKC;
  U.resize(static_cast<size_t>(Points * Splits));
  // Columns of split S rounded up to whole NR-column panels.
  const auto splitPadded = [&](int64_t S) { return ceilDiv(std::min(kSplitCols, Kp - S * kSplitCols), NR) * NR; };
  alignas(64) float In[9][16], T[36][16];
  // Every U in one block, each starting on a cache line: a few huge-page faults instead of a heap
  // block (and thousands of 4 KiB faults) per point and split.
  std::vector<size_t> Offset(U.size() + 1, 0);
  for (int64_t S = 0; S < Splits; ++S) {
    const int64_t Npad = splitPadded(S);
    for (int64_t P = 0; P < Points; ++P) {
      const size_t I = static_cast<size_t>(P * Splits + S);
      Offset[I + 1] = static_cast<size_t>(std::max<int64_t>(16, ceilDiv(Npad * Cp, 16) * 16));
    }
  }
  for (size_t I = 0; I < U.size(); ++I)
    Offset[I + 1] += Offset[I];
  // The packed-weights cache (a compiled folder's packed.bin): the whole block under one key that
  // names this layout (tile, panel width, KC, split width), borrowed on a hit with no transform.
  const std::string Key = CacheKey.empty() ? std::string()
                                           : CacheKey + "/F" + std::to_string(this->Tile) + "/nr" + std::to_string(NR) +
                                                 "/kc" + std::to_string(KC) + "/split" + std::to_string(kSplitCols);
  if (!Key.empty() && borrowPackedFloats(Key, Offset.back(), Store)) {
    for (int64_t S = 0; S < Splits; ++S)
      for (int64_t P = 0; P < Points; ++P) {
        const size_t I = static_cast<size_t>(P * Splits + S);
        U[I].K = Cp, U[I].N = std::min(kSplitCols, Kp - S * kSplitCols);
        U[I].Data.borrow(Store.data() + Offset[I], Offset[I + 1] - Offset[I]);
      }
    return;
  }
  Store.resize(Offset.back());
  std::vector<float *> Dst(static_cast<size_t>(Points));
  // AVX-512 gathers the taps of 16 kernels with 32-bit offsets: rows must stay within 2 GiB.
  const bool Gather =
      Transforms == GemmIsa::Avx512 && C * 9 * 16 * static_cast<int64_t>(sizeof(float)) < (int64_t{1} << 31);
  for (int64_t S = 0; S < Splits; ++S) {
    const int64_t Col0 = S * kSplitCols, Cols = std::min(kSplitCols, Kp - Col0), Npad = splitPadded(S);
    for (int64_t P = 0; P < Points; ++P) {
      const size_t I = static_cast<size_t>(P * Splits + S);
      PackedB &B = U[I];
      B.K = Cp, B.N = Cols;
      B.Data.borrow(Store.data() + Offset[I], Offset[I + 1] - Offset[I]);
      if (Npad > Cols) // the last panel's padding columns
        for (int64_t Ci = 0; Ci < Cp; ++Ci) {
          const int64_t K0 = Ci / KC * KC, Kc = std::min(KC, Cp - K0);
          float *Row = B.Data.data() + K0 * Npad + (Cols / NR) * Kc * NR + (Ci - K0) * NR;
          std::fill(Row + Cols % NR, Row + NR, 0.0f);
        }
    }
    for (int64_t P = 0; P < Points; ++P)
      Dst[static_cast<size_t>(P)] = U[static_cast<size_t>(P * Splits + S)].Data.data();
    for (int64_t J0 = 0; J0 < Cols; J0 += 16) {
      const int64_t Panel = J0 / NR, InPanel = J0 % NR;
      for (int64_t Ci = 0; Ci < Cp; ++Ci) {
        const int64_t K0 = Ci / KC * KC, Kc = std::min(KC, Cp - K0);
        const int64_t Off = K0 * Npad + Panel * Kc * NR + (Ci - K0) * NR + InPanel;
        if (Gather) {
          const int64_t Ko0 = Col0 + J0;
          const int64_t Rows = Ci < C ? std::max<int64_t>(0, std::min<int64_t>(16, K - Ko0)) : 0;
          transformStreamAvx512(this->Tile, Wt + (std::min(Ko0, K - 1) * C + std::min(Ci, C - 1)) * 9, C * 9, Rows,
                                Dst.data(), Off);
          continue;
        }
        for (int64_t J = 0; J < 16; ++J) {
          const int64_t Ko = Col0 + J0 + J;
          if (Ko < K && Ci < C) {
            const float *W9 = Wt + (Ko * C + Ci) * 9;
            for (int Tap = 0; Tap < 9; ++Tap)
              In[Tap][J] = W9[Tap];
          } else {
            for (int Tap = 0; Tap < 9; ++Tap)
              In[Tap][J] = 0.0f;
          }
        }
        (Transforms == GemmIsa::Avx512 ? transformWeightsAvx512
         : Transforms == GemmIsa::Avx2 ? transformWeightsAvx2
                                       : transformWeightsPortable)(this->Tile, In, T);
        for (int64_t P = 0; P < Points; ++P)
          std::memcpy(Dst[static_cast<size_t>(P)] + Off, T[P], 16 * sizeof(float));
      }
    }
  }
  if (Gather)
    streamFence();
  if (!Key.empty())
    storePackedFloats(Key, Store);
}

namespace {
/// Bytes of F(4x4)'s transformed weights for C -> K channels.
int64_t f4WeightBytes(int64_t C, int64_t K) { return 36 * C * K * static_cast<int64_t>(sizeof(float)); }
} // namespace

int Winograd3x3::tileFor(int64_t C, int64_t K, int64_t OH, int64_t OW, GemmIsa Isa) {
  // Single-conv models, 1 thread, min of 100 runs (ms), Emerald Rapids: im2col GEMM / F(2x2) / F(4x4)
  //   C=K=64 56x56   2.0 /   -   / 0.72    128 28x28  1.75 /   -   / 0.67
  //   256 14x14     1.9 / 0.96 / 0.90     128 14x14  0.60 / 0.22 / 0.24-0.31
  //   128 10x10    0.28 / 0.12 / 0.15     512 7x7    1.87 / 1.33-1.42 / 1.95
  //   256 7x7      0.46 / 0.33 / 0.50     32 112x112 2.5 / - / 0.92; 16 112x112 0.76 / - / 0.49
  // and inside ResNet-18 (weights no longer in cache), per conv: layer3 (256 14x14) F(2x2)
  // 1.11-1.23 vs F(4x4) 1.13-1.34; layer4 (512 7x7) F(2x2) 1.8-2.1 vs GEMM 2.2-2.6 vs F(4x4) 2.7+.
  // F(4x4) needs enough 4x4 tiles to fill the GEMM's rows and to waste little of the padded
  // plane; small planes take F(2x2), whose U (16 points, not 36) also streams faster.
  // Small convolutions gain nothing against the transforms' fixed costs (16->16 channels, 1 thread,
  // min us, GEMM / Winograd: 12x12 8 / 11, 20x20 23 / 26-34, 32->32 7x7 10 / 9-13; 24->24 28x28
  // 68 / 55, 16->32 56x56 223 / 147): at least 2M multiply-adds.
  if (C < 16 || K < 16 || C * K * OH * OW * 9 < (int64_t{1} << 21))
    return 0;
  if (ceilDiv(OH, 4) * ceilDiv(OW, 4) >= 36)
    return 4;
  if (OH * OW < 49)
    return 0;
  // AVX2 (Zen 3, 2 vCPUs, 1 thread, single-conv models, min ms of 3 x 30 runs, im2col GEMM / F(2x2) /
  // F(4x4)): 256 14x14 2.88 / 1.46 / 1.44; 256 7x7 0.80 / 0.46 / 0.33; 128 14x14 0.73 / 0.36 /
  // 0.33; 192<-48 13x13 0.35 / 0.26 / 0.23; 512 7x7 3.27 / 2.24 / 2.43. F(4x4) wins on small planes
  // too until its U (36 C K floats, 38 MiB at 512 x 512) no longer fits the L3 (32 MiB).
  if (Isa == GemmIsa::Avx2 && f4WeightBytes(C, K) <= (int64_t{16} << 20))
    return 4;
  return 2;
}

void Winograd3x3::run(const float *X, const WinogradGeometry &G, float *Y, const WinogradEpilogue &Ep,
                      const Parallel &Par) const {
  if (Tile == 2)
    runTiles<2>(X, G, Y, Ep, Par);
  else
    runTiles<4>(X, G, Y, Ep, Par);
}

template <int TileT>
void Winograd3x3::runTiles(const float *X, const WinogradGeometry &G, float *Y, const WinogradEpilogue &Ep,
                           const Parallel &Par) const {
  const TileGrid TG(G, TileT);
  const int64_t Tiles = TG.TH * TG.TW;
  if (Tiles == 0 || K == 0)
    return;
  const int64_t Threads = std::max(1, Par.threads());
  // Chunks are whole tile rows. When U fits in L2 (Points x Cp x Kp floats up to 1 MiB: 64 channels)
  // about 28 tiles a chunk keep V and M in L1/L2 too (C=K=64 56x56: 0.87 -> 0.72 ms; 32 112x112:
  // 1.4 -> 0.97); a larger U streams once per chunk, so chunks get as large as V up to about 1 MiB
  // allows (128 28x28: 1 chunk 0.68 ms, 28 tiles 0.75, 7 tiles 1.1; 256 14x14: 0.80 vs 1.1 at 14).
  // Those are Emerald Rapids' (2 MiB L2) numbers; Zen 3's L2 is 512 KiB, where the 576 KiB U of
  // F(4x4) at 64 channels does not stay: on 1 thread it is taken as streaming (2 chunks of 98
  // tiles instead of 7 of 28): C=K=64 56x56 1.01-1.02 vs 1.08-1.09 ms (min of 6-10 alternations x
  // 60 runs). On 2 threads the 28-tile chunks stay (the 2 chunks' 0.9 MiB V per thread measured
  // 0.99-1.13x slower inside ResNet-50).
  const int64_t L2Bytes =
      Transforms == GemmIsa::Avx2 && Par.threads() <= 1 ? (int64_t{512} << 10) : (int64_t{1} << 20);
  const bool UInL2 = Points * Cp * Kp * 4 <= L2Bytes;
  const int64_t Budget = std::max<int64_t>(TG.TW, UInL2 ? 28 : 262144 / (Points * Cp));
  int64_t Chunks = std::min(TG.TH, ceilDiv(Tiles, Budget)), Groups = 1;
  if (Threads > 1 && !UInL2 && Chunks < Threads && Splits >= Threads) {
    // U streams from L3: threads split the output channels (each reads its share of U once and
    // transforms the input again, ~5%) rather than the tiles (7 tile rows of a 28x28 layer split
    // 3 + 4, and every thread streams all of U).
    Groups = Threads;
    if (Splits % Threads != 0) {
      // Blocks that do not divide among the threads (3 over 2: one thread got 1, the other 2, so
      // the op took 2/3 of the work's time): one group per block and the tile rows in Threads
      // chunks, equal tasks that the pool's claiming balances. SqueezeNet's 48 -> 192 13x13 expand3x3 at 2
      // threads (Sequential, min us of 8-10 alternations): 197-208 -> 184-186.
      Groups = Splits;
      Chunks = std::min(TG.TH, Threads);
    }
  } else {
    if (Threads > 1 && Chunks % Threads != 0 && TG.TH >= Threads && Tiles >= Threads * MK.MR)
      Chunks = std::min(TG.TH, ceilDiv(Chunks, Threads) * Threads);
    if (Chunks < Threads) // too few chunks for the threads: split the output channels too
      Groups = std::min(Splits, ceilDiv(Threads, Chunks));
  }
  const int64_t Tasks = Chunks * Groups;
  const int64_t MaxTileRows = ceilDiv(TG.TH, Chunks), MaxRows = MaxTileRows * TG.TW;
  const int64_t MaxCols = std::min(Kp, ceilDiv(Splits, Groups) * kSplitCols);
  const int64_t Wp = TileT * TG.TW + 2, Wo = TileT * TG.TW;
  Par.forRange(static_cast<size_t>(Tasks), 1, [&](size_t Lo, size_t Hi) {
    // This worker's tile buffers, on its scratch stack (ThreadScratch.h; the GEMM's panel goes on top).
    ScratchFrame Scratch;
    float *const VData = Scratch.take<float>(static_cast<size_t>(Points * MaxRows * Cp));
    float *const MData = Scratch.take<float>(static_cast<size_t>(Points * MaxRows * MaxCols));
    [[maybe_unused]] float *const XData =
        Transforms != GemmIsa::Portable ? Scratch.take<float>(static_cast<size_t>(Cp * (TileT * MaxTileRows + 2) * Wp)) : nullptr;
    [[maybe_unused]] float *const YData =
        Transforms != GemmIsa::Portable ? Scratch.take<float>(static_cast<size_t>(MaxCols * TileT * MaxTileRows * Wo)) : nullptr;
    const Parallel Serial;
    for (size_t Task = Lo; Task < Hi; ++Task) {
      const int64_t Chunk = static_cast<int64_t>(Task) / Groups, Group = static_cast<int64_t>(Task) % Groups;
      const int64_t Th0 = Chunk * TG.TH / Chunks, TileRows = (Chunk + 1) * TG.TH / Chunks - Th0;
      const int64_t T0 = Th0 * TG.TW, Rows = TileRows * TG.TW;
      const int64_t S0 = Group * Splits / Groups, S1 = (Group + 1) * Splits / Groups;
      const int64_t Col0 = S0 * kSplitCols, Cols = std::min(Kp, S1 * kSplitCols) - Col0;
      if (Rows == 0 || Cols <= 0)
        continue;
      float *V = VData, *M = MData;
#ifdef OPT_WINOGRAD_X86
      if (Transforms == GemmIsa::Avx512) {
        packInputAvx512(X, C, Cp, G, TileT * Th0 - G.PadTop, TileT * TileRows + 2, Wp, XData);
        inputTilesAvx512<TileT>(XData, Cp, TG.TW, TileRows, Wp, V);
      } else
#endif
#ifdef OPT_WINOGRAD_AVX2
      if (Transforms == GemmIsa::Avx2) {
        packInputAvx2(X, C, Cp, G, TileT * Th0 - G.PadTop, TileT * TileRows + 2, Wp, XData);
        inputTilesAvx2<TileT>(XData, Cp, TG.TW, TileRows, Wp, V);
      } else
#endif
        inputTilesPortable<TileT>(X, C, Cp, G, TG, T0, Rows, V);
      for (int64_t P = 0; P < Points; ++P)
        for (int64_t S = S0; S < S1; ++S)
          gemmRowsA(MK, Rows, Cp, V + P * Rows * Cp, Cp, U[static_cast<size_t>(P * Splits + S)], 1.0f, 0.0f,
                    M + P * Rows * Cols + (S * kSplitCols - Col0), Cols, Serial);
#ifdef OPT_WINOGRAD_X86
      if (Transforms == GemmIsa::Avx512) {
        outputTilesAvx512<TileT>(M, Cols, Col0, K, TG.TW, TileRows, Ep.Bias, YData);
        unpackOutputAvx512(YData, Cols, Col0, K, G, TileT * Th0, TileT * TileRows, Wo, Ep, Y);
      } else
#endif
#ifdef OPT_WINOGRAD_AVX2
      if (Transforms == GemmIsa::Avx2) {
        outputTilesAvx2<TileT>(M, Cols, Col0, K, TG.TW, TileRows, Ep.Bias, YData);
        unpackOutputAvx2(YData, Cols, Col0, K, G, TileT * Th0, TileT * TileRows, Wo, Ep, Y);
      } else
#endif
        outputTilesPortable<TileT>(M, Cols, Col0, K, G, TG, T0, Rows, Ep, Y);
    }
  });
}

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
