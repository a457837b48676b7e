// Depthwise Conv with channels in vector lanes (AVX-512): EfficientNet's 5x5 and ConvNeXt's 7x7
// layers. Per 16 channels, the input rows a strip of output rows reads are transposed into a
// zero-padded pixel-major buffer ([row][column][16 channels], 64-byte pixels), so every tap of
// every output pixel is one aligned vector load and one FMA with full lanes whatever the plane's
// width (a 7x7 plane fills 7 of 16 lanes when vectorized along rows) and without masks; a run of
// U output pixels of a row keeps its U accumulators and the KW weights of a kernel row in
// registers and loads each input pixel once per kernel row. The outputs go back to NCHW through
// the same 16x16 transpose.
#include <algorithm>
#include <memory>
#include <vector>

#include "backends/native/ops/common/PackedWeights.h"
#include "backends/native/ops/common/PlaneWindow.h"
#include "backends/native/ops/common/SimdDispatch.h"
#include "backends/native/ops/conv/ConvCommon.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace conv {

namespace {

constexpr int64_t kLanes = 16;
/// Output pixels of a row accumulated together (U accumulators + KW weights + 1 input <= 32 zmm).
constexpr int kMaxRun = 8;

/// The sizes of one run in the padded layout: padded column of output ow's tap kw is ow * SW + kw.
struct BlockedGeometry {
  int64_t H, W, OH, OW, KH, KW, SH, SW, PT, PL;
  int64_t Wp; ///< padded row width in pixels
};

/// What happens to an accumulator (bias included) before it is stored: the fused activation (a
/// clamp: Relu, Clip, NaN passes through; SiLU, Sigmoid, HardSwish, HardSigmoid).
struct DwEpilogue {
  FusedAct Act;
};

#ifdef OPT_SIMD_X86
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#define OPT_DWB_TARGET __attribute__((target("avx512f,fma")))

OPT_DWB_TARGET inline __m512 applyEpilogue(const DwEpilogue &E, __m512 V, __m512 Lo, __m512 Hi) {
  if (E.Act.clampOnly())
    return E.Act.on() ? _mm512_min_ps(Hi, _mm512_max_ps(Lo, V)) : V;
  return Act512(E.Act)(V);
}

inline __mmask16 lanesBelow(int64_t N) {
  return N >= kLanes ? static_cast<__mmask16>(0xFFFF) : N <= 0 ? static_cast<__mmask16>(0)
                                                                : static_cast<__mmask16>((1u << N) - 1u);
}

OPT_DWB_TARGET inline __m512 lo64(__m512 A, __m512 B) {
  return _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(A), _mm512_castps_pd(B)));
}
OPT_DWB_TARGET inline __m512 hi64(__m512 A, __m512 B) {
  return _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(A), _mm512_castps_pd(B)));
}

/// R[i] (row i, 16 lanes) becomes column i.
OPT_DWB_TARGET inline void transpose16x16(__m512 R[16]) {
  __m512 T[16];
  for (int I = 0; I < 8; ++I) {
    T[2 * I] = _mm512_unpacklo_ps(R[2 * I], R[2 * I + 1]);
    T[2 * I + 1] = _mm512_unpackhi_ps(R[2 * I], R[2 * I + 1]);
  }
  for (int I = 0; I < 4; ++I) {
    R[4 * I + 0] = lo64(T[4 * I + 0], T[4 * I + 2]);
    R[4 * I + 1] = hi64(T[4 * I + 0], T[4 * I + 2]);
    R[4 * I + 2] = lo64(T[4 * I + 1], T[4 * I + 3]);
    R[4 * I + 3] = hi64(T[4 * I + 1], T[4 * I + 3]);
  }
  // R[4q + j] now holds, in each 128-bit lane k, column j of rows 4q..4q+3 for columns 4k + j.
  for (int J = 0; J < 4; ++J) {
    T[J] = _mm512_shuffle_f32x4(R[J], R[4 + J], 0x88);      // lanes 0,2 of rows 0-3 | 4-7
    T[4 + J] = _mm512_shuffle_f32x4(R[J], R[4 + J], 0xDD);  // lanes 1,3
    T[8 + J] = _mm512_shuffle_f32x4(R[8 + J], R[12 + J], 0x88);
    T[12 + J] = _mm512_shuffle_f32x4(R[8 + J], R[12 + J], 0xDD);
  }
  for (int J = 0; J < 4; ++J) {
    R[J] = _mm512_shuffle_f32x4(T[J], T[8 + J], 0x88);
    R[4 + J] = _mm512_shuffle_f32x4(T[4 + J], T[12 + J], 0x88);
    R[8 + J] = _mm512_shuffle_f32x4(T[J], T[8 + J], 0xDD);
    R[12 + J] = _mm512_shuffle_f32x4(T[4 + J], T[12 + J], 0xDD);
  }
}

/// Packs input rows [Ih0, Ih1) (clamped to the plane) of Cv (<= 16) channels (planes Plane apart,
/// from X) into Buf rows [0, Ih1 - Ih0) of the padded layout; rows outside the plane and the border
/// columns are zeros.
OPT_DWB_TARGET void packRows(const BlockedGeometry &G, const float *X, int64_t Plane, int64_t Cv, int64_t Ih0,
                             int64_t Ih1, float *Buf) {
  const int64_t RowFloats = G.Wp * kLanes;
  const __m512 Z = _mm512_setzero_ps();
  const int64_t Lo = std::max<int64_t>(Ih0, 0), Hi = std::min<int64_t>(Ih1, G.H);
  for (int64_t Ih = Ih0; Ih < Ih1; ++Ih) {
    float *Row = Buf + (Ih - Ih0) * RowFloats;
    if (Ih < Lo || Ih >= Hi) {
      for (int64_t P = 0; P < G.Wp; ++P)
        _mm512_store_ps(Row + P * kLanes, Z);
      continue;
    }
    for (int64_t P = 0; P < G.PL; ++P)
      _mm512_store_ps(Row + P * kLanes, Z);
    for (int64_t P = G.PL + G.W; P < G.Wp; ++P)
      _mm512_store_ps(Row + P * kLanes, Z);
  }
  if (Hi <= Lo)
    return;
  // The rows inside the plane are contiguous in each channel: transpose them 16 pixels at a time.
  const int64_t First = Lo * G.W, Count = (Hi - Lo) * G.W;
  int64_t Row = Lo - Ih0, Col = 0; // destination of pixel First + P0
  __m512 R[16];
  for (int64_t P0 = 0; P0 < Count; P0 += kLanes) {
    const int64_t N = std::min<int64_t>(kLanes, Count - P0);
    const __mmask16 M = lanesBelow(N);
    for (int64_t C = 0; C < kLanes; ++C)
      R[C] = C < Cv ? _mm512_maskz_loadu_ps(M, X + C * Plane + First + P0) : Z;
    transpose16x16(R);
    for (int64_t J = 0; J < N; ++J) {
      _mm512_store_ps(Buf + Row * RowFloats + (G.PL + Col) * kLanes, R[J]);
      if (++Col == G.W)
        Col = 0, ++Row;
    }
  }
}

/// U output pixels [Ow0, Ow0 + U) of one row: Rows is the packed row of the row's first tap row.
template <int KW, int SW, int U>
OPT_DWB_TARGET inline void rowRun(const BlockedGeometry &G, const float *Rows, const float *Wt, __m512 Bias,
                                  const DwEpilogue &E, __m512 Lo, __m512 Hi, float *Out, int64_t Ow0) {
  __m512 Acc[U];
  _Pragma("GCC unroll 8") for (int I = 0; I < U; ++I) Acc[I] = Bias;
  const int64_t RowFloats = G.Wp * kLanes;
  constexpr int NC = (U - 1) * SW + KW; // input pixels the run reads per kernel row
  for (int64_t Kh = 0; Kh < G.KH; ++Kh) {
    const float *R = Rows + Kh * RowFloats + Ow0 * SW * kLanes;
    const float *Wr = Wt + Kh * KW * kLanes;
    __m512 Wk[KW];
    _Pragma("GCC unroll 8") for (int Kw = 0; Kw < KW; ++Kw) Wk[Kw] = _mm512_load_ps(Wr + Kw * kLanes);
    _Pragma("GCC unroll 32") for (int C = 0; C < NC; ++C) {
      const __m512 X = _mm512_load_ps(R + C * kLanes);
      _Pragma("GCC unroll 8") for (int Kw = 0; Kw < KW; ++Kw) {
        const int D = C - Kw;
        if (D >= 0 && D % SW == 0 && D / SW < U)
          Acc[D / SW] = _mm512_fmadd_ps(Wk[Kw], X, Acc[D / SW]);
      }
    }
  }
  _Pragma("GCC unroll 8") for (int I = 0; I < U; ++I) _mm512_store_ps(Out + (Ow0 + I) * kLanes,
                                                                      applyEpilogue(E, Acc[I], Lo, Hi));
}

/// One output row (OW pixels) into Out ([OW][16]); Rows: the packed row of its first tap row.
template <int KW, int SW>
OPT_DWB_TARGET void outputRow(const BlockedGeometry &G, const float *Rows, const float *Wt, const float *BiasV,
                              const DwEpilogue &E, float *Out) {
  const __m512 Bias = _mm512_load_ps(BiasV);
  const __m512 Lo = _mm512_set1_ps(E.Act.Min), Hi = _mm512_set1_ps(E.Act.Max);
  int64_t Ow = 0;
  for (; Ow + kMaxRun <= G.OW; Ow += kMaxRun)
    rowRun<KW, SW, kMaxRun>(G, Rows, Wt, Bias, E, Lo, Hi, Out, Ow);
  switch (G.OW - Ow) {
#define OPT_TAIL(N)                                                                                                    \
  case N: rowRun<KW, SW, N>(G, Rows, Wt, Bias, E, Lo, Hi, Out, Ow); break;
    OPT_TAIL(1) OPT_TAIL(2) OPT_TAIL(3) OPT_TAIL(4) OPT_TAIL(5) OPT_TAIL(6) OPT_TAIL(7)
#undef OPT_TAIL
  default: break;
  }
}

/// Out ([Pixels][16]) back to Cv channel planes: pixel p of channel c to Y[c * Plane + p].
OPT_DWB_TARGET void unpackPixels(const float *Out, int64_t Pixels, int64_t Cv, float *Y, int64_t Plane) {
  __m512 R[16];
  for (int64_t P0 = 0; P0 < Pixels; P0 += kLanes) {
    const int64_t N = std::min<int64_t>(kLanes, Pixels - P0);
    for (int64_t J = 0; J < kLanes; ++J)
      R[J] = J < N ? _mm512_load_ps(Out + (P0 + J) * kLanes) : _mm512_setzero_ps();
    transpose16x16(R);
    const __mmask16 M = lanesBelow(N);
    for (int64_t C = 0; C < Cv; ++C)
      _mm512_mask_storeu_ps(Y + C * Plane + P0, M, R[C]);
  }
}

using RowFn = void (*)(const BlockedGeometry &, const float *, const float *, const float *, const DwEpilogue &,
                       float *);

RowFn rowFnFor(int64_t KW, int64_t SW) {
#define OPT_KW(K)                                                                                                      \
  if (KW == K)                                                                                                         \
    return SW == 1 ? &outputRow<K, 1> : &outputRow<K, 2>;
  OPT_KW(3) OPT_KW(5) OPT_KW(7)
#undef OPT_KW
  return nullptr;
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif // OPT_SIMD_X86

/// Whether the blocked kernel computes a depthwise window of kernel (KH, KW), strides (SH, SW)
/// and dilations (DH, DW) on this CPU.
bool blockedSupported(int64_t KH, int64_t KW, int64_t SH, int64_t SW, int64_t DH, int64_t DW) {
#ifdef OPT_SIMD_X86
  static const bool Cpu = cpuFeatures().avx512Fma();
  return Cpu && (KW == 3 || KW == 5 || KW == 7) && KH >= 1 && KH <= 16 && (SH == 1 || SH == 2) &&
         (SW == 1 || SW == 2) && DH == 1 && DW == 1;
#else
  (void)KH, (void)KW, (void)SH, (void)SW, (void)DH, (void)DW;
  return false;
#endif
}

#ifdef OPT_SIMD_X86
/// Output rows per work item: the padded input rows of a strip stay within ~160 KiB (in L2; the
/// KH rows a row reads are in L1; 48 KiB measured 400 vs 360 us on ConvNeXt's 56x56 layers), at
/// least 4 rows, and enough items (channel blocks x strips) for the pool.
int64_t stripRows(const BlockedGeometry &G, int64_t Items, int Threads) {
  const int64_t RowBytes = G.Wp * kLanes * 4;
  int64_t Rows = std::max<int64_t>(4, ((160 * 1024) / RowBytes - G.KH) / G.SH + 1);
  // Enough items that 2+ threads balance (a 9-block layer splits 5/4 otherwise).
  const int64_t Want = Threads > 1 ? 8 * Threads : 1;
  const int64_t Strips = (G.OH + Rows - 1) / Rows;
  if (Items * Strips < Want)
    Rows = std::max<int64_t>(2, G.OH / std::max<int64_t>(1, (Want + Items - 1) / Items));
  return std::min(Rows, G.OH);
}
#endif

class ConvDepthwiseBlockedKernel : public Kernel {
public:
  ConvDepthwiseBlockedKernel(ConvAttrs A, int64_t C, AlignedFloats PackedW)
      : A(std::move(A)), C(C), Wt(std::move(PackedW)) {}

  Status run(const KernelContext &Ctx) const override {
#ifdef OPT_SIMD_X86
    ASSIGN_OR_RETURN(const ConvRun R, planConv("f32_conv__depthwise_blocked_avx512", A, Ctx));
    if (R.M != C || R.C != C)
      return runError("f32_conv__depthwise_blocked_avx512", "channels changed since creation");
    const float *X = Ctx.Inputs[0].data<float>(), *Bp = biasOf(Ctx);
    float *Y = Ctx.Outputs[0].data<float>();
    if (R.OutPlane == 0 || R.N * R.M == 0)
      return Status::ok();
    BlockedGeometry G;
    G.H = R.G.In[0], G.W = R.G.In[1], G.OH = R.G.Out[0], G.OW = R.G.Out[1];
    G.KH = A.W.Kernel[0], G.KW = A.W.Kernel[1], G.SH = A.W.Strides[0], G.SW = A.W.Strides[1];
    G.PT = R.G.PadBegin[0], G.PL = R.G.PadBegin[1];
    G.Wp = std::max((G.OW - 1) * G.SW + G.KW, G.PL + G.W);
    const RowFn Row = rowFnFor(G.KW, G.SW);
    if (!Row)
      return runError("f32_conv__depthwise_blocked_avx512", "kernel width not supported");
    DwEpilogue E;
    E.Act = A.Act;
    const int64_t CB = (C + kLanes - 1) / kLanes, Items = R.N * CB;
    const int64_t SR = stripRows(G, Items, Ctx.Par.threads());
    const int64_t Strips = (G.OH + SR - 1) / SR;
    const int64_t InRows = (SR - 1) * G.SH + G.KH, Taps = G.KH * G.KW;
    // Under ~256K multiply-adds the fan-out costs more than it saves.
    const Parallel Serial;
    const Parallel &Par = R.N * C * R.OutPlane * Taps < (int64_t{1} << 18) ? Serial : Ctx.Par;
    Par.forRange(static_cast<size_t>(Items * Strips), 1, [&](size_t Lo, size_t Hi) {
      thread_local AlignedFloats Buf; // packed input rows of the strip, then its outputs
      const size_t InFloats = static_cast<size_t>(InRows * G.Wp * kLanes);
      const size_t Need = InFloats + static_cast<size_t>(SR * G.OW * kLanes);
      if (Buf.size() < Need)
        Buf.resize(Need);
      float *In = Buf.data(), *Out = Buf.data() + InFloats;
      for (size_t T = Lo; T < Hi; ++T) {
        const int64_t S = static_cast<int64_t>(T) % Strips, Item = static_cast<int64_t>(T) / Strips;
        const int64_t N = Item / CB, B = Item % CB, C0 = B * kLanes, Cv = std::min<int64_t>(kLanes, C - C0);
        const int64_t Oh0 = S * SR, Oh1 = std::min(G.OH, Oh0 + SR);
        const int64_t Ih0 = Oh0 * G.SH - G.PT, Ih1 = (Oh1 - 1) * G.SH - G.PT + G.KH;
        packRows(G, X + (N * C + C0) * R.InPlane, R.InPlane, Cv, Ih0, Ih1, In);
        const float *Wb = Wt.data() + B * Taps * kLanes;
        alignas(64) float Bv[kLanes] = {};
        if (Bp)
          std::copy(Bp + C0, Bp + C0 + Cv, Bv);
        for (int64_t Oh = Oh0; Oh < Oh1; ++Oh)
          Row(G, In + (Oh - Oh0) * G.SH * G.Wp * kLanes, Wb, Bv, E, Out + (Oh - Oh0) * G.OW * kLanes);
        unpackPixels(Out, (Oh1 - Oh0) * G.OW, Cv, Y + (N * C + C0) * R.OutPlane + Oh0 * G.OW, R.OutPlane);
      }
    });
    return Status::ok();
#else
    (void)Ctx;
    return runError("f32_conv__depthwise_blocked_avx512", "not built for x86");
#endif
  }

private:
  ConvAttrs A;
  int64_t C;
  AlignedFloats Wt;   ///< [C / 16][KH * KW][16], zero past C
};

} // namespace

KernelVariant depthwiseBlockedVariant() {
  const auto Supports = [](const KernelCreateInfo &I) {
    if (!isDepthwiseConv(I) || !inputIsConst(I, 1))
      return false;
    auto A = attrsFor(I);
    if (!A.isOk() || A->W.Kernel.size() != 2)
      return false;
    const WindowAttrs &W = A->W;
    // 3x3: only strided or on planes at most 16 wide (EfficientNet-B0, 1 thread: 112x112 stride 2
    // 393 -> 276 us, 28x28 stride 2 46 -> 36, 14x14 49 -> 42, 7x7 44 -> 32); the stride-1 ones
    // on larger planes stay on the flat-plane kernel (112x112: 161 vs 184 us here, 56x56: 189 vs 200).
    const TensorShape &XS = I.Inputs[0].Shape;
    const bool Narrow = XS[3].isConst() && XS[3].value() <= 16;
    return (W.Kernel[1] >= 5 || W.Strides[1] == 2 || Narrow) &&
           blockedSupported(W.Kernel[0], W.Kernel[1], W.Strides[0], W.Strides[1], W.Dilations[0], W.Dilations[1]);
  };
  return {"f32_conv__depthwise_blocked_avx512", 70, Supports,
          [](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
            ASSIGN_OR_RETURN(ConvAttrs A, attrsFor(I));
            const ConstData &W = *I.Inputs[1].Const;
            const int64_t C = W.Dims[0], Taps = W.Dims[2] * W.Dims[3], CB = (C + kLanes - 1) / kLanes;
            // A compiled folder's packed.bin holds the layout (the load borrows it).
            AlignedFloats Wt;
            packFloatsCached(packedWeightsKey(I, 1, "f32_conv__depthwise_blocked_avx512/lanes16"),
                             static_cast<size_t>(CB * Taps * kLanes), Wt, [&](float *Out) {
                               const float *Wp = W.as<float>();
                               for (int64_t Ch = 0; Ch < C; ++Ch)
                                 for (int64_t T = 0; T < Taps; ++T)
                                   Out[((Ch / kLanes) * Taps + T) * kLanes + Ch % kLanes] = Wp[Ch * Taps + T];
                             });
            markConstConsumed(I, 1);
            return makeKernel<ConvDepthwiseBlockedKernel>(std::move(A), C, std::move(Wt));
          }};
}

} // namespace conv
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
