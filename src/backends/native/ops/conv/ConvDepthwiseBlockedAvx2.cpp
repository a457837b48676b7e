// Depthwise Conv with channels in vector lanes, AVX2 + FMA: the 8-lane sibling of
// ConvDepthwiseBlocked.cpp (MobileNet's and EfficientNet's 3x3 and 5x5 layers, ConvNeXt's 7x7).
// Along rows, a 7-pixel plane fills 7 of 8 lanes and every output row is one dependent chain of
// KH * KW FMAs (latency-bound); here, per 8 channels, the input rows of a strip of output rows are
// transposed into a zero-padded pixel-major buffer ([row][column][8 channels], 32-byte pixels), so
// each tap of each output pixel is one aligned load and one full-width FMA, a run of U output
// pixels keeps U independent accumulators, and the fused activation (clamp, SiLU, HardSwish, ...)
// is applied in registers before the outputs go back to NCHW through the same 8x8 transpose.
#include <algorithm>
#include <memory>
#include <vector>

#include "backends/native/ops/common/PackedWeights.h"
#include "backends/native/ops/common/PlaneWindow.h"
#include "backends/native/ops/common/SimdDispatch.h"
#include "backends/native/ops/common/ThreadScratch.h"
#include "backends/native/ops/common/Transpose256.h"
#include "backends/native/ops/conv/ConvCommon.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace conv {

namespace {

constexpr int64_t kLanes = 8;
constexpr const char *kName = "f32_conv__depthwise_blocked_avx2";

/// The sizes of one run in the padded layout: padded column of output ow's tap kw is ow * SW + kw.
struct BlockedGeometry {
  int64_t H, W, OH, OW, KH, KW, SH, SW, PT, PL;
  int64_t Wp; ///< padded row width in pixels
};

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
OPT_DWB2_TARGET void packRows(const BlockedGeometry &G, const float *X, int64_t Plane, int64_t Cv, int64_t Ih0,
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
  if (Cv == kLanes) // full channel blocks (all but a layer's last): no per-channel checks
    for (; P0 + kLanes <= Count; P0 += kLanes) {
      vec256::loadTransposed8x8(X + First + P0, Plane, R);
      _Pragma("GCC unroll 8") for (int J = 0; J < kLanes; ++J) putPixel(R[J], G.W, Skip, Dst, Col);
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
OPT_DWB2_INLINE void rowRun(const BlockedGeometry &G, const float *Rows, const float *Wt, __m256 Bias,
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
OPT_DWB2_TARGET void outputRow(const BlockedGeometry &G, const float *Rows, const float *Wt, const float *BiasV,
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

using RowFn = void (*)(const BlockedGeometry &, const float *, const float *, const float *, const FusedAct &,
                       float *);

RowFn rowFnFor(int64_t KW, int64_t SW) {
#define OPT_KW(K)                                                                                                      \
  if (KW == K)                                                                                                         \
    return SW == 1 ? &outputRow<K, 1> : &outputRow<K, 2>;
  OPT_KW(3) OPT_KW(5) OPT_KW(7)
#undef OPT_KW
  return nullptr;
}

/// Output rows per work item: the padded input rows of a strip stay within ~160 KiB (in L2; the
/// KH rows a row reads are in L1), at least 4 rows, and enough items (channel blocks x strips)
/// for the pool.
int64_t stripRows(const BlockedGeometry &G, int64_t Items, int Threads) {
  const int64_t RowBytes = G.Wp * kLanes * 4;
  int64_t Rows = std::max<int64_t>(4, ((160 * 1024) / RowBytes - G.KH) / G.SH + 1);
  const int64_t Want = Threads > 1 ? 8 * Threads : 1;
  const int64_t Strips = (G.OH + Rows - 1) / Rows;
  if (Items * Strips < Want)
    Rows = std::max<int64_t>(2, G.OH / std::max<int64_t>(1, (Want + Items - 1) / Items));
  return std::min(Rows, G.OH);
}
#endif // OPT_SIMD_X86 && OPT_HAVE_VECMATH256

/// Whether the kernel computes a depthwise window of kernel (KH, KW), strides (SH, SW) and
/// dilations (DH, DW) on this CPU.
bool blockedAvx2Supported(int64_t KH, int64_t KW, int64_t SH, int64_t SW, int64_t DH, int64_t DW) {
#ifdef OPT_DWB2_HAVE
  static const bool Cpu = cpuFeatures().avx2Fma();
  return Cpu && (KW == 3 || KW == 5 || KW == 7) && KH >= 1 && KH <= 16 && (SH == 1 || SH == 2) &&
         (SW == 1 || SW == 2) && DH == 1 && DW == 1;
#else
  (void)KH, (void)KW, (void)SH, (void)SW, (void)DH, (void)DW;
  return false;
#endif
}

class ConvDepthwiseBlockedAvx2Kernel : public Kernel {
public:
  ConvDepthwiseBlockedAvx2Kernel(ConvAttrs A, int64_t C, AlignedFloats PackedW)
      : A(std::move(A)), C(C), Wt(std::move(PackedW)) {}

  Status run(const KernelContext &Ctx) const override {
#ifdef OPT_DWB2_HAVE
    ASSIGN_OR_RETURN(const ConvRun R, planConv(kName, A, Ctx));
    if (R.M != C || R.C != C)
      return runError(kName, "channels changed since creation");
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
      return runError(kName, "kernel width not supported");
    const int64_t CB = (C + kLanes - 1) / kLanes, Items = R.N * CB;
    const int64_t SR = stripRows(G, Items, Ctx.Par.threads());
    const int64_t Strips = (G.OH + SR - 1) / SR;
    const int64_t InRows = (SR - 1) * G.SH + G.KH, Taps = G.KH * G.KW;
    // Under ~256K multiply-adds the fan-out costs more than it saves.
    const Parallel Serial;
    const Parallel &Par = R.N * C * R.OutPlane * Taps < (int64_t{1} << 18) ? Serial : Ctx.Par;
    Par.forRange(static_cast<size_t>(Items * Strips), 1, [&](size_t Lo, size_t Hi) {
      // Packed input rows of the strip, then its outputs: on this worker's scratch stack.
      ScratchFrame Scratch;
      float *const In = Scratch.take<float>(static_cast<size_t>(InRows * G.Wp * kLanes));
      float *const Out = Scratch.take<float>(static_cast<size_t>(SR * G.OW * kLanes));
      for (size_t T = Lo; T < Hi; ++T) {
        const int64_t S = static_cast<int64_t>(T) % Strips, Item = static_cast<int64_t>(T) / Strips;
        const int64_t N = Item / CB, B = Item % CB, C0 = B * kLanes, Cv = std::min<int64_t>(kLanes, C - C0);
        const int64_t Oh0 = S * SR, Oh1 = std::min(G.OH, Oh0 + SR);
        const int64_t Ih0 = Oh0 * G.SH - G.PT, Ih1 = (Oh1 - 1) * G.SH - G.PT + G.KH;
        packRows(G, X + (N * C + C0) * R.InPlane, R.InPlane, Cv, Ih0, Ih1, In);
        const float *Wb = Wt.data() + B * Taps * kLanes;
        alignas(32) float Bv[kLanes] = {};
        if (Bp)
          std::copy(Bp + C0, Bp + C0 + Cv, Bv);
        for (int64_t Oh = Oh0; Oh < Oh1; ++Oh)
          Row(G, In + (Oh - Oh0) * G.SH * G.Wp * kLanes, Wb, Bv, A.Act, Out + (Oh - Oh0) * G.OW * kLanes);
        unpackPixels(Out, (Oh1 - Oh0) * G.OW, Cv, Y + (N * C + C0) * R.OutPlane + Oh0 * G.OW, R.OutPlane);
      }
    });
    return Status::ok();
#else
    (void)Ctx;
    return runError(kName, "not built for x86 with AVX2");
#endif
  }

private:
  ConvAttrs A;
  int64_t C;
  AlignedFloats Wt; ///< [C / 8][KH * KW][8], zero past C
};

} // namespace

KernelVariant depthwiseBlockedAvx2Variant() {
  const auto Supports = [](const KernelCreateInfo &I) {
    if (!isDepthwiseConv(I) || !inputIsConst(I, 1))
      return false;
    auto A = attrsFor(I);
    if (!A.isOk() || A->W.Kernel.size() != 2)
      return false;
    // Every plane size, 3x3 included: with the transposes' 128-bit halves it is ahead of the AVX2
    // plane kernel on wide planes too (3x3, 1 thread, Zen 3: 112x112 stride 1 x32 243 -> 160 us,
    // 112x112 stride 2 x96 313 -> 237, 56x56 stride 1 x144 289 -> 181, stride 2 146 -> 90).
    const WindowAttrs &W = A->W;
    return blockedAvx2Supported(W.Kernel[0], W.Kernel[1], W.Strides[0], W.Strides[1], W.Dilations[0], W.Dilations[1]);
  };
  // Below the AVX-512 plane kernel (60): on an AVX-512 CPU those run; above the AVX2 plane kernel (55).
  return {kName, 58, Supports, [](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
            ASSIGN_OR_RETURN(ConvAttrs A, attrsFor(I));
            const ConstData &W = *I.Inputs[1].Const;
            const int64_t C = W.Dims[0], Taps = W.Dims[2] * W.Dims[3], CB = (C + kLanes - 1) / kLanes;
            // Packed once: a compiled folder's packed.bin holds the layout (optimium-compile), so
            // its load borrows it from the mapping instead of copying ConvNeXt-T's 18 7x7 layers.
            const size_t Floats = static_cast<size_t>(CB * Taps * kLanes);
            const std::string Key = packedWeightsKey(I, 1, std::string(kName) + "/lanes8");
            AlignedFloats Wt;
            if (!borrowPackedFloats(Key, Floats, Wt)) {
              Wt.resize(Floats);
              std::fill(Wt.data(), Wt.data() + Floats, 0.0f);
              const float *Wp = W.as<float>();
              for (int64_t Ch = 0; Ch < C; ++Ch)
                for (int64_t T = 0; T < Taps; ++T)
                  Wt.data()[((Ch / kLanes) * Taps + T) * kLanes + Ch % kLanes] = Wp[Ch * Taps + T];
              storePackedFloats(Key, Wt);
            }
            markConstConsumed(I, 1);
            return makeKernel<ConvDepthwiseBlockedAvx2Kernel>(std::move(A), C, std::move(Wt));
          }};
}

} // namespace conv
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
