// Conv (f32): 1-D/2-D/3-D convolution with groups, pads/auto_pad, strides, dilations and optional
// bias. The reference handles any spatial rank; the optimized variants are 2-D only: im2col into
// the blocked SGEMM (1x1 stride-1 convs skip im2col: the input already is the GEMM's B), Winograd
// for 3x3 stride-1 convs (common/Winograd.h), and a direct depthwise kernel. Constant weights are
// packed once at creation. A residual fused by passes/FuseConvResidual is input 3.
#include <algorithm>
#include <cmath>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "backends/native/ops/common/SmallConv.h"
#include "backends/native/ops/common/DepthwiseFlat.h"
#include "backends/native/ops/common/DirectConv.h"
#include "backends/native/ops/common/PlaneWindow.h"
#include "backends/native/ops/common/Gemm.h"
#include "backends/native/ops/common/Pooling.h"
#include "backends/native/ops/common/ConvResidual.h"
#include "backends/native/ops/common/RowPipeline.h"
#include "backends/native/ops/common/Winograd.h"
#include "core/CpuFeatures.h"
#include "ir/FusedOps.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

/// Attributes of a Conv node, validated against the input and weight shapes.
struct ConvAttrs {
  WindowAttrs W;
  int64_t Group = 1;
  /// A fused activation clamp (passes/FuseConvActivation: Relu, Clip), applied after the bias.
  bool HasAct = false;
  float ActMin = -INFINITY, ActMax = INFINITY;

  /// Clamps Count values in place (NaN passes through).
  void applyAct(float *Y, size_t Count) const {
    if (!HasAct)
      return;
    const float L = ActMin, H = ActMax;
    for (size_t I = 0; I < Count; ++I) {
      float V = Y[I];
      V = V < L ? L : V;
      Y[I] = V > H ? H : V;
    }
  }
};

/// The weight's spatial dims when they are all known.
bool constSpatial(const TensorShape &Wt, std::vector<int64_t> &Out) {
  Out.clear();
  for (size_t I = 2; I < Wt.getRank(); ++I) {
    if (!Wt[I].isConst())
      return false;
    Out.push_back(Wt[I].value());
  }
  return true;
}

Result<ConvAttrs> parseConvAttrs(const Node &N, const TensorShape &X, const TensorShape &Wt) {
  ConvAttrs A;
  if (X.getRank() < 3)
    return makeError(ErrorCode::Shape, N.describe(), ": input must be [N, C, spatial...], got ", X.toString());
  if (Wt.getRank() != X.getRank())
    return makeError(ErrorCode::Shape, N.describe(), ": weight ", Wt.toString(), " and input ", X.toString(),
                     " must have the same rank");
  ASSIGN_OR_RETURN(A.Group, N.getInt("group", 1));
  if (A.Group <= 0)
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'group' value ", A.Group, " must be positive");
  if (X[1].isConst() && X[1].value() % A.Group != 0)
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'group' value ", A.Group,
                     " does not divide the input channels ", X[1].value());
  if (Wt[0].isConst() && Wt[0].value() % A.Group != 0)
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'group' value ", A.Group,
                     " does not divide the output channels ", Wt[0].value());
  if (X[1].isConst() && Wt[1].isConst() && X[1].value() / A.Group != Wt[1].value())
    return makeError(ErrorCode::Shape, N.describe(), ": input ", X.toString(), " with group ", A.Group, " has ",
                     X[1].value() / A.Group, " channels per group but the weight ", Wt.toString(), " expects ",
                     Wt[1].value());
  std::vector<int64_t> Kernel;
  const bool Known = constSpatial(Wt, Kernel);
  ASSIGN_OR_RETURN(A.W, parseWindowAttrs(N, X.getRank() - 2, Known ? &Kernel : nullptr, /*AllowCeilMode=*/false));
  A.HasAct = N.hasAttr(kFusedActMin) || N.hasAttr(kFusedActMax);
  ASSIGN_OR_RETURN(A.ActMin, N.getFloat(kFusedActMin, -INFINITY));
  ASSIGN_OR_RETURN(A.ActMax, N.getFloat(kFusedActMax, INFINITY));
  return A;
}

Status inferConv(ShapeContext &Ctx) {
  RETURN_IF_ERROR(requireInputType(Ctx, 0, {ElementType::F32}));
  RETURN_IF_ERROR(requireSameType(Ctx, 0, 1));
  const TensorShape &X = Ctx.Inputs[0].Shape, &Wt = Ctx.Inputs[1].Shape;
  ASSIGN_OR_RETURN(const ConvAttrs A, parseConvAttrs(Ctx.N, X, Wt));
  RETURN_IF_ERROR(checkChannelBias(Ctx, 2, Wt[0]));
  Ctx.Outputs[0].Type = ElementType::F32;
  RETURN_IF_ERROR(inferWindowShape(Ctx, A.W, X, Wt[0], Ctx.Outputs[0].Shape));
  if (Ctx.hasInput(kFusedResidualInput)) { // passes/FuseConvResidual checked its shape
    if (!Ctx.N.hasAttr(kFusedResidual))
      return Ctx.error(ErrorCode::Model, "has ", Ctx.Inputs.size(), " inputs; Conv takes at most 3");
    RETURN_IF_ERROR(requireSameType(Ctx, 0, kFusedResidualInput));
  }
  return Status::ok();
}

OpSchema convSchema() {
  OpSchema S;
  S.OpType = "Conv";
  S.MinInputs = 2;
  S.MaxInputs = 4; // the 4th: a residual fused by passes/FuseConvResidual
  S.Infer = inferConv;
  return S;
}

/// Concrete sizes of one run, checked against the output.
struct ConvRun {
  WindowGeometry G;
  int64_t N, C, M, Cg, Mg, InPlane, OutPlane, Taps;
};

Result<ConvRun> planConv(const char *Name, const ConvAttrs &A, const KernelContext &Ctx) {
  const TensorView &X = Ctx.Inputs[0], &Wt = Ctx.Inputs[1], &Y = Ctx.Outputs[0];
  const size_t S = A.W.spatialRank();
  if (X.rank() != S + 2 || Wt.rank() != S + 2 || Y.rank() != S + 2)
    return runError(Name, "rank mismatch");
  ConvRun R;
  R.G = computeWindowGeometry(A.W, X.Dims);
  R.N = X.Dims[0], R.C = X.Dims[1], R.M = Wt.Dims[0], R.Cg = Wt.Dims[1];
  R.Mg = R.M / A.Group;
  if (R.C != R.Cg * A.Group || R.M % A.Group != 0 || Y.Dims[0] != R.N || Y.Dims[1] != R.M)
    return runError(Name, "input ", joinInts(X.Dims), ", weight ", joinInts(Wt.Dims), " and output ", joinInts(Y.Dims),
                    " do not match group ", A.Group);
  for (size_t I = 0; I < S; ++I)
    if (Y.Dims[I + 2] != R.G.Out[I] || Wt.Dims[I + 2] != A.W.Kernel[I])
      return runError(Name, "output ", joinInts(Y.Dims), " does not match the window geometry");
  R.InPlane = product(X.Dims, 2, X.rank());
  R.OutPlane = product(Y.Dims, 2, Y.rank());
  R.Taps = product(A.W.Kernel, 0, S);
  return R;
}

const float *biasOf(const KernelContext &Ctx) {
  return inputDataOrNull(Ctx, 2);
}

class ConvRefKernel : public Kernel {
public:
  explicit ConvRefKernel(ConvAttrs A) : A(std::move(A)) {}

  Status run(const KernelContext &Ctx) const override {
    ASSIGN_OR_RETURN(const ConvRun R, planConv("f32_conv__ref", A, Ctx));
    const size_t S = A.W.spatialRank();
    const float *X = Ctx.Inputs[0].data<float>(), *Wt = Ctx.Inputs[1].data<float>(), *B = biasOf(Ctx);
    float *Y = Ctx.Outputs[0].data<float>();
    std::vector<int64_t> O(S), K(S);
    for (int64_t N = 0; N < R.N; ++N)
      for (int64_t M = 0; M < R.M; ++M) {
        const int64_t G = M / R.Mg;
        for (int64_t OI = 0; OI < R.OutPlane; ++OI) {
          int64_t Rem = OI;
          for (size_t D = S; D-- > 0;) {
            O[D] = Rem % R.G.Out[D];
            Rem /= R.G.Out[D];
          }
          double Acc = B ? B[M] : 0.0;
          for (int64_t T = 0; T < R.Taps; ++T) {
            int64_t TR = T, Offset = 0;
            bool Inside = true;
            for (size_t D = S; D-- > 0;) {
              K[D] = TR % A.W.Kernel[D];
              TR /= A.W.Kernel[D];
            }
            for (size_t D = 0; D < S; ++D) {
              const int64_t Pos = O[D] * A.W.Strides[D] - R.G.PadBegin[D] + K[D] * A.W.Dilations[D];
              Inside &= Pos >= 0 && Pos < R.G.In[D];
              Offset = Offset * R.G.In[D] + Pos;
            }
            if (!Inside)
              continue;
            for (int64_t C = 0; C < R.Cg; ++C) {
              const float Xv = X[(N * R.C + G * R.Cg + C) * R.InPlane + Offset];
              const float Wv = Wt[(M * R.Cg + C) * R.Taps + T];
              Acc += static_cast<double>(Xv) * Wv;
            }
          }
          Y[(N * R.M + M) * R.OutPlane + OI] = static_cast<float>(Acc);
        }
      }
    A.applyAct(Ctx.Outputs[0].data<float>(), Ctx.Outputs[0].elementCount());
    return Status::ok();
  }

private:
  ConvAttrs A;
};

#if defined(__x86_64__)
bool avx512PackAvailable() { return cpuFeatures().AVX512F; }

/// Dst[j] = Src[j * SW] for j in [Lo, Hi), 0 for the other j < Len (SW 1 or 2). Lanes outside
/// [Lo, Hi) are masked off in the loads, which do not fault there, so Src may point before or
/// past its row there (the padding of the im2col row).
__attribute__((target("avx512f"))) void packSegmentAvx512(float *Dst, const float *Src, int64_t Len, int64_t Lo,
                                                          int64_t Hi, int64_t SW) {
  const __m512i Even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  const auto rangeMask = [](int64_t A, int64_t B) -> uint64_t { // bits [A, B), 0 <= A, B <= 32
    return B > A ? (((B >= 64 ? ~0ull : (1ull << B)) - 1ull) & ~((1ull << A) - 1ull)) : 0ull;
  };
  for (int64_t J0 = 0; J0 < Len; J0 += 16) {
    const int64_t N = std::min<int64_t>(16, Len - J0);
    const int64_t A = std::min<int64_t>(std::max<int64_t>(Lo - J0, 0), N), B = std::max<int64_t>(std::min<int64_t>(Hi - J0, N), A);
    __m512 V;
    if (SW == 1) {
      V = _mm512_maskz_loadu_ps(static_cast<__mmask16>(rangeMask(A, B)), Src + J0);
    } else { // inputs 2A .. 2B-2 of the 32 starting at Src + 2 * J0, then the even lanes
      const uint64_t M = rangeMask(2 * A, 2 * B - 1);
      const float *S = Src + 2 * J0;
      V = _mm512_permutex2var_ps(_mm512_maskz_loadu_ps(static_cast<__mmask16>(M & 0xFFFF), S), Even,
                                 _mm512_maskz_loadu_ps(static_cast<__mmask16>((M >> 16) & 0xFFFF), S + 16));
    }
    _mm512_mask_storeu_ps(Dst + J0, static_cast<__mmask16>((1u << N) - 1u), V);
  }
}

/// One col^T panel of runTransposed: Dst[k * MR + i] = Base[TapOff[k] + Pix[i]] for k < Kc and
/// the Valid <= MR <= 16 pixels i (zeros for the others). A panel's pixels lie in two or three
/// output rows, within 32 floats of the first: one or two masked loads and a permute per k.
/// Returns false (nothing written) when they do not.
__attribute__((target("avx512f"))) bool gatherPixelsAvx512(float *Dst, const float *Base, const int64_t *TapOff,
                                                           int64_t Kc, const int64_t *Pix, int64_t Valid,
                                                           int64_t MR) {
  alignas(64) int32_t Idx[16] = {};
  int64_t Span = 0;
  for (int64_t I = 0; I < Valid; ++I) {
    const int64_t D = Pix[I] - Pix[0];
    if (D < 0 || D >= 32)
      return false;
    Idx[I] = static_cast<int32_t>(D);
    Span = std::max(Span, D + 1);
  }
  const __m512i Index = _mm512_load_si512(Idx);
  const __mmask16 Lanes = static_cast<__mmask16>((1u << Valid) - 1u), Store = static_cast<__mmask16>((1u << MR) - 1u);
  const __mmask16 Lo = static_cast<__mmask16>(Span >= 16 ? 0xFFFFu : (1u << Span) - 1u);
  const __mmask16 Hi = static_cast<__mmask16>(Span <= 16 ? 0u : Span >= 32 ? 0xFFFFu : (1u << (Span - 16)) - 1u);
  for (int64_t K = 0; K < Kc; ++K, Dst += MR) {
    const float *W = Base + TapOff[K] + Pix[0];
    const __m512 V = _mm512_maskz_permutex2var_ps(Lanes, _mm512_maskz_loadu_ps(Lo, W), Index,
                                                  _mm512_maskz_loadu_ps(Hi, W + 16));
    _mm512_mask_storeu_ps(Dst, Store, V);
  }
  return true;
}
#else
bool avx512PackAvailable() { return false; }
void packSegmentAvx512(float *, const float *, int64_t, int64_t, int64_t, int64_t) {}
bool gatherPixelsAvx512(float *, const float *, const int64_t *, int64_t, const int64_t *, int64_t, int64_t) {
  return false;
}
#endif

/// The zero-padded input of a group-1 2-D convolution split into SH x SW phase planes of Rq x Wq
/// (phase (ph, pw) of channel c holds padded pixels (r * SH + ph, w * SW + pw)). Output pixel
/// (oh, ow) and tap (kh, kw) read phase plane (c, kh * DH % SH, kw * DW % SW) at row oh + kh * DH /
/// SH, column ow + kw * DW / SW, so with rows of Wq columns every tap is a constant offset.
struct PhasePlanes {
  int64_t H, Wd, OH, OW, KH, KW, DH, DW, SH, SW, PH, PW, Wq, Rq, PlaneQ, Phases, InPlane;

  PhasePlanes(const ConvRun &R, const WindowAttrs &W) {
    H = R.G.In[0], Wd = R.G.In[1], OH = R.G.Out[0], OW = R.G.Out[1];
    KH = W.Kernel[0], KW = W.Kernel[1], DH = W.Dilations[0], DW = W.Dilations[1];
    SH = W.Strides[0], SW = W.Strides[1], PH = R.G.PadBegin[0], PW = R.G.PadBegin[1];
    Wq = OW + (KW - 1) * DW / SW, Rq = OH + (KH - 1) * DH / SH;
    PlaneQ = Rq * Wq, Phases = SH * SW, InPlane = R.InPlane;
  }

  /// tapOffset of every im2col row, k < KDim: the taps of channel 0 plus a whole channel's phase
  /// planes per channel (one division per tap, not per row).
  void tapOffsets(int64_t KDim, int64_t *Out) const {
    const int64_t Taps = KH * KW, Channel = SH * SW * PlaneQ;
    for (int64_t T = 0; T < Taps && T < KDim; ++T)
      Out[T] = tapOffset(T);
    for (int64_t K = Taps; K < KDim; ++K)
      Out[K] = Out[K - Taps] + Channel;
  }

  /// Offset of im2col row k = (c, kh, kw) from the start of the planes.
  int64_t tapOffset(int64_t K) const {
    const int64_t C = K / (KH * KW), Khd = (K / KW) % KH * DH, Kwd = K % KW * DW;
    return ((C * SH + Khd % SH) * SW + Kwd % SW) * PlaneQ + Khd / SH * Wq + Kwd / SW;
  }

  /// Whether some tap reads phase plane (Ph, Pw) (tapOffset: kh * DH % SH, kw * DW % SW).
  bool phaseRead(int64_t Ph, int64_t Pw) const {
    bool Row = false, Col = false;
    for (int64_t Kh = 0; Kh < KH && !Row; ++Kh)
      Row = Kh * DH % SH == Ph;
    for (int64_t Kw = 0; Kw < KW && !Col; ++Kw)
      Col = Kw * DW % SW == Pw;
    return Row && Col;
  }

  /// Writes the C channels of image Xn into Pd, the zero padding included (Pd need not be
  /// cleared first: a separate clearing pass cost as much as the copy). Phase planes that no tap
  /// reads are left as they are.
  void fill(const float *Xn, float *Pd, int64_t C, const Parallel &Par) const {
    // The scalar strided copy cost ~0.9 ms per ResNet-18 run.
    const bool FastStride2 = SW == 2 && avx512PackAvailable();
    Par.forRange(static_cast<size_t>(C * Phases), 4, [&](size_t Lo, size_t Hi) {
      for (size_t CP = Lo; CP < Hi; ++CP) {
        const int64_t Ch = static_cast<int64_t>(CP) / Phases, Ph = static_cast<int64_t>(CP) % Phases / SW,
                      Pw = static_cast<int64_t>(CP) % SW;
        if (!phaseRead(Ph, Pw)) // e.g. 3 of the 4 phases of a 1x1 stride-2 conv: no tap reads them
          continue;
        // Columns w of this phase with an input pixel: 0 <= w * SW + Pw - PW < Wd.
        const int64_t W0 = std::min(Wq, std::max<int64_t>(0, (PW - Pw + SW - 1) / SW));
        const int64_t W1 = std::max(W0, std::min(Wq, (Wd - 1 + PW - Pw) / SW + 1));
        for (int64_t Rr = 0; Rr < Rq; ++Rr) {
          const int64_t Ih = Rr * SH + Ph - PH;
          float *D = Pd + static_cast<int64_t>(CP) * PlaneQ + Rr * Wq;
          if (Ih < 0 || Ih >= H || W1 <= W0) {
            std::fill(D, D + Wq, 0.0f);
            continue;
          }
          if (FastStride2) { // D[w] = row[w * 2 + Pw - PW] for w in [W0, W1), zeros around
            packSegmentAvx512(D, Xn + Ch * InPlane + Ih * Wd + Pw - PW, Wq, W0, W1, 2);
            continue;
          }
          std::fill(D, D + W0, 0.0f);
          std::fill(D + W1, D + Wq, 0.0f);
          const float *In = Xn + Ch * InPlane + Ih * Wd + (W0 * SW + Pw - PW);
          if (SW == 1)
            std::memcpy(D + W0, In, static_cast<size_t>(W1 - W0) * sizeof(float));
          else
            for (int64_t Wc = W0; Wc < W1; ++Wc)
              D[Wc] = In[(Wc - W0) * SW];
        }
      }
    });
  }
};

/// A 1x1 kernel, stride 1 and no padding: the input planes are the GEMM's B as they are.
bool isPlainPointwise(const WindowAttrs &W) {
  for (size_t I = 0; I < W.spatialRank(); ++I)
    if (W.Kernel[I] != 1 || W.Strides[I] != 1)
      return false;
  for (int64_t P : W.Pads)
    if (P != 0)
      return false;
  return true;
}

/// Convolutions whose output plane has at most this many pixels take the transposed GEMM (see
/// ConvIm2colKernel::runTransposed) when their weights are constant.
constexpr int64_t kTransposedMaxPlane = 64;

/// 2-D convolution as GEMM per (image, group): Y[Mg, OH*OW] = W[Mg, Cg*KH*KW] * col[Cg*KH*KW, OH*OW].
/// The im2col matrix is never materialized: each task packs a narrow block of its columns straight
/// from the input into the microkernel's panel layout (small enough to stay in cache), multiplies,
/// and adds the bias while the block is hot. A 1x1 stride-1 conv takes the same path with plain
/// row copies.
class ConvIm2colKernel : public Kernel {
public:
  ConvIm2colKernel(std::string Name, const GemmMicroKernel &MK, ConvAttrs A, std::vector<PackedA> PackedW,
                   std::unique_ptr<PackedB> PackedWT = nullptr)
      : Name(std::move(Name)), MK(MK), A(std::move(A)), PackedW(std::move(PackedW)), PackedWT(std::move(PackedWT)) {}

  Status run(const KernelContext &Ctx) const override {
    ASSIGN_OR_RETURN(const ConvRun R, planConv(Name.c_str(), A, Ctx));
    const float *X = Ctx.Inputs[0].data<float>(), *Wt = Ctx.Inputs[1].data<float>(), *B = biasOf(Ctx);
    float *Y = Ctx.Outputs[0].data<float>();
    const int64_t KDim = R.Cg * R.Taps, Cols = R.OutPlane;
    if (Cols == 0 || R.Mg == 0)
      return Status::ok();
    if (A.Group == 1 && PackedWT && R.OutPlane <= kTransposedMaxPlane)
      return isPlainPointwise(A.W) ? runTransposedPointwise(R, X, B, Y, *PackedWT, Ctx.Par)
                                   : runTransposed(R, X, B, Y, *PackedWT, Ctx.Par);
    std::vector<PackedA> LocalW;
    const std::vector<PackedA> *Weights = &PackedW;
    if (PackedW.empty()) { // weights were not constant (or packed transposed) at creation
      LocalW.resize(static_cast<size_t>(A.Group));
      for (int64_t G = 0; G < A.Group; ++G)
        packA(MK, R.Mg, KDim, MatrixRef{Wt + G * R.Mg * KDim, KDim, 1}, LocalW[G]);
      Weights = &LocalW;
    }
    if (A.Group == 1)
      return runPhased(R, X, B, Y, (*Weights)[0], Ctx.Par);
    // Column block: a multiple of NR, at least 4 panels, packed size about 256 KiB (L2-resident
    // together with the packed weights).
    const int64_t TargetPanels = std::max<int64_t>(4, 65536 / std::max<int64_t>(KDim, 1) / MK.NR);
    const int64_t BlockCols = std::min(((Cols + MK.NR - 1) / MK.NR) * MK.NR, TargetPanels * MK.NR);
    const int64_t Blocks = (Cols + BlockCols - 1) / BlockCols;
    const int64_t Tasks = R.N * A.Group * Blocks;
    // Too few column blocks to feed every thread (small late-layer planes: 7x7, 14x14): run the
    // blocks in order and split each GEMM over the pool instead.
    const bool SplitGemm = Ctx.Par.threads() > 1 && Tasks < 2 * static_cast<int64_t>(Ctx.Par.threads());
    const Parallel Serial;
    const Parallel &GemmPar = SplitGemm ? Ctx.Par : Serial;
    const auto Blocks_ = [&](size_t Lo, size_t Hi) {
      PackedB PB;
      PB.Data.resize(static_cast<size_t>(std::max<int64_t>(1, KDim * BlockCols)));
      for (size_t T = Lo; T < Hi; ++T) {
        const int64_t Blk = static_cast<int64_t>(T) % Blocks, NG = static_cast<int64_t>(T) / Blocks;
        const int64_t N = NG / A.Group, G = NG % A.Group;
        const int64_t J0 = Blk * BlockCols, NCols = std::min(BlockCols, Cols - J0);
        packColumns(R, X + (N * R.C + G * R.Cg) * R.InPlane, J0, NCols, PB);
        float *Yg = Y + (N * R.M + G * R.Mg) * R.OutPlane;
        // Bias and the fused activation are applied in the microkernel's write-back.
        GemmEpilogue Ep;
        Ep.RowBias = B ? B + G * R.Mg : nullptr;
        Ep.Clamp = A.HasAct, Ep.Min = A.ActMin, Ep.Max = A.ActMax;
        gemmPacked(MK, (*Weights)[G], PB, 1.0f, 0.0f, Yg + J0, Cols, GemmPar, &Ep);
      }
    };
    if (SplitGemm)
      Blocks_(0, static_cast<size_t>(Tasks));
    else
      Ctx.Par.forRange(static_cast<size_t>(Tasks), 1, Blocks_);
    return Status::ok();
  }

private:
  /// Group-1 convolution with a small output plane (late CNN layers: 7x7 = 49 pixels) as the
  /// transposed product Y^T[pixels, M] = col^T[pixels, K] x W^T[K, M]: the pixels become the GEMM's
  /// rows (MR-row panels: 49 pixels fill 91% of 9 panels) and the output channels its columns
  /// (full NR-wide panels), where Y = W x col would fill only 49 of 64 columns. The weights are
  /// packed transposed once at creation; col^T panels are gathered from the phase planes (exact
  /// pixels, no extended columns); bias and activation are applied while transposing C into Y.
  Status runTransposed(const ConvRun &R, const float *X, const float *B, float *Y, const PackedB &WT,
                       const Parallel &Pool) const {
    const PhasePlanes L(R, A.W);
    const int64_t MR = MK.MR, Pixels = R.OutPlane, KDim = R.Cg * L.KH * L.KW, M = R.M;
    const int64_t Panels = (Pixels + MR - 1) / MR, Mpad = Panels * MR;
    const Parallel Serial;
    const Parallel &Par = R.N * M * KDim * Pixels < (int64_t{1} << 21) ? Serial : Pool;
    thread_local std::vector<float> Padded, Product;
    thread_local std::vector<int64_t> Offsets;
    Padded.resize(static_cast<size_t>(R.C * L.Phases * L.PlaneQ)); // fill() writes all of it
    Product.resize(static_cast<size_t>(Pixels * M));
    Offsets.resize(static_cast<size_t>(KDim + Mpad));
    float *const PaddedData = Padded.data(), *const ProductData = Product.data();
    int64_t *const TapOff = Offsets.data(), *const PixOff = TapOff + KDim;
    L.tapOffsets(KDim, TapOff);
    for (int64_t P = 0; P < Mpad; ++P) // padding rows of the last panel repeat pixel 0 (never stored)
      PixOff[P] = P < Pixels ? P / L.OW * L.Wq + P % L.OW : 0;
    // col^T panels, kept per thread like the scratch above: a fresh 1 MB allocation per run would be
    // mapped and faulted in again every time.
    thread_local PackedA Col;
    Col.M = Pixels, Col.K = KDim;
    const size_t ColSize = static_cast<size_t>(std::max<int64_t>(1, Mpad * KDim));
    if (Col.Data.size() < ColSize)
      Col.Data.resize(ColSize);
    for (int64_t N = 0; N < R.N; ++N) {
      L.fill(X + N * R.C * R.InPlane, PaddedData, R.C, Par);
      // col^T panels in packA's layout: K blocks of GemmKC, then MR pixels per k.
      const int64_t KBlocks = (KDim + GemmKC - 1) / GemmKC;
      float *ColData = Col.Data.data();
      Par.forRange(static_cast<size_t>(KBlocks * Panels), 4, [&](size_t Lo, size_t Hi) {
        for (size_t T = Lo; T < Hi; ++T) {
          const int64_t K0 = static_cast<int64_t>(T) / Panels * GemmKC, P = static_cast<int64_t>(T) % Panels;
          const int64_t Kc = std::min(GemmKC, KDim - K0);
          float *Panel = ColData + K0 * Mpad + P * Kc * MR;
          const int64_t *Pix = PixOff + P * MR;
          const int64_t Valid = std::min(MR, Pixels - P * MR);
          if (FastPack && MR <= 16 && gatherPixelsAvx512(Panel, PaddedData, TapOff + K0, Kc, Pix, Valid, MR))
            continue;
          for (int64_t Kk = 0; Kk < Kc; ++Kk) {
            const float *Src = PaddedData + TapOff[K0 + Kk];
            for (int64_t I = 0; I < MR; ++I)
              Panel[Kk * MR + I] = Src[Pix[I]];
          }
        }
      });
      gemmPacked(MK, Col, WT, 1.0f, 0.0f, ProductData, M, Par);
      float *Yn = Y + N * M * Pixels;
      Par.forRange(static_cast<size_t>(M), 16, [&](size_t Lo, size_t Hi) {
        for (size_t Ch = Lo; Ch < Hi; ++Ch) {
          const float Bias = B ? B[Ch] : 0.0f;
          float *Row = Yn + static_cast<int64_t>(Ch) * Pixels;
          for (int64_t P = 0; P < Pixels; ++P)
            Row[P] = ProductData[P * M + static_cast<int64_t>(Ch)] + Bias;
          A.applyAct(Row, static_cast<size_t>(Pixels));
        }
      });
    }
    return Status::ok();
  }

  /// runTransposed for a 1x1 stride-1 unpadded convolution (MobileNetV2's 7x7 projections): the
  /// input already is col (no phase planes), and each task takes a range of pixel panels end to
  /// end, one fan-out in all: it gathers its rows of col^T from X, multiplies them by all of W^T
  /// (bias and clamp in the GEMM's write-back, per column), and transposes its pixels into Y. A
  /// 7x7 plane is 4 full 12-pixel panels and a 1-pixel one (whose tile costs about 1/8 of a full
  /// one), where Y = W x col fills 49 of 64 columns.
  Status runTransposedPointwise(const ConvRun &R, const float *X, const float *B, float *Y, const PackedB &WT,
                                const Parallel &Pool) const {
    const int64_t MR = MK.MR, Pixels = R.OutPlane, KDim = R.C, M = R.M;
    const int64_t Panels = (Pixels + MR - 1) / MR, KBlocks = (KDim + GemmKC - 1) / GemmKC;
    const Parallel Serial;
    const Parallel &Par = R.N * M * KDim * Pixels < (int64_t{1} << 21) ? Serial : Pool;
    GemmEpilogue Ep;
    Ep.ColBias = B;
    Ep.Clamp = A.HasAct, Ep.Min = A.ActMin, Ep.Max = A.ActMax;
    // One task per thread and image, each a range of panels of about equal cost: a full panel
    // costs 1, the last one its share of rows (at least 1/8: loads, not FMAs, bound a thin tile).
    // 5 panels of a 7x7 plane on 2 threads: 2 + 2.1, where equal panel counts gave 3 + 1.1.
    const int64_t Tasks = std::max<int64_t>(1, std::min<int64_t>(Panels, Par.threads()));
    const int64_t LastRows = Pixels - (Panels - 1) * MR;
    const double LastCost = std::max(0.125, static_cast<double>(LastRows) / static_cast<double>(MR));
    std::vector<int64_t> Bounds(static_cast<size_t>(Tasks + 1), Panels);
    Bounds[0] = 0;
    for (int64_t T = 1, P = 0; T < Tasks; ++T) { // where T / Tasks of the cost is reached
      const double Target = (static_cast<double>(Panels - 1) + LastCost) * static_cast<double>(T) / Tasks;
      while (P < Panels && static_cast<double>(P) + 0.5 < Target) // the nearest panel boundary
        ++P;
      Bounds[static_cast<size_t>(T)] = std::max(Bounds[static_cast<size_t>(T - 1)], std::min(P, Panels));
    }
    Par.forRange(static_cast<size_t>(R.N * Tasks), 1, [&](size_t Lo, size_t Hi) {
      thread_local PackedA ColT; // this worker's col^T rows and product, kept between runs
      thread_local std::vector<float> Product;
      for (size_t T = Lo; T < Hi; ++T) {
        // Panels [P0, P1) of image N.
        const int64_t N = static_cast<int64_t>(T) / Tasks, Ti = static_cast<int64_t>(T) % Tasks;
        const int64_t P0 = Bounds[static_cast<size_t>(Ti)], P1 = Bounds[static_cast<size_t>(Ti + 1)];
        if (P1 <= P0)
          continue;
        const int64_t Row0 = P0 * MR, Rows = std::min(Pixels, P1 * MR) - Row0, Mpad = (P1 - P0) * MR;
        const float *Xn = X + N * KDim * Pixels;
        ColT.M = Rows, ColT.K = KDim;
        const size_t ColSize = static_cast<size_t>(std::max<int64_t>(1, Mpad * KDim));
        if (ColT.Data.size() < ColSize)
          ColT.Data.resize(ColSize);
        float *Col = ColT.Data.data();
        // packA's layout: K blocks of GemmKC, then MR pixels per k (zeros past the last pixel).
        for (int64_t Kb = 0; Kb < KBlocks; ++Kb) {
          const int64_t K0 = Kb * GemmKC, Kc = std::min(GemmKC, KDim - K0);
          for (int64_t P = 0; P < P1 - P0; ++P) {
            float *Panel = Col + K0 * Mpad + P * Kc * MR;
            const int64_t Valid = std::min(MR, Rows - P * MR);
            const float *Src = Xn + K0 * Pixels + Row0 + P * MR;
            if (MK.Isa == GemmIsa::Avx512 && MR <= 16 && rowPipelineAvx512Supported()) {
              copyRowsPaddedAvx512(Src, Pixels, Kc, Valid, MR, Panel);
              continue;
            }
            for (int64_t Kk = 0; Kk < Kc; ++Kk, Src += Pixels) {
              std::memcpy(Panel + Kk * MR, Src, static_cast<size_t>(Valid) * sizeof(float));
              std::fill(Panel + Kk * MR + Valid, Panel + (Kk + 1) * MR, 0.0f);
            }
          }
        }
        Product.resize(static_cast<size_t>(Rows * M));
        float *Prod = Product.data();
        gemmPacked(MK, ColT, WT, 1.0f, 0.0f, Prod, M, Serial, &Ep);
        float *Yn = Y + N * M * Pixels + Row0;
        if (MK.Isa == GemmIsa::Avx512 && rowPipelineAvx512Supported()) { // 16x16 blocks in registers
          transposeToPlanesAvx512(Prod, M, Rows, M, Yn, Pixels);
          continue;
        }
        for (int64_t Ch = 0; Ch < M; ++Ch)
          for (int64_t I = 0; I < Rows; ++I)
            Yn[Ch * Pixels + I] = Prod[I * M + Ch];
      }
    });
    return Status::ok();
  }

  /// Group-1 convolution on phase planes. The input is zero-padded once and split into SH x SW
  /// phase planes of Rq x Wq (phase (ph, pw) holds padded pixels (r * SH + ph, w * SW + pw)). Then
  /// im2col element (k = (c, kh, kw), p = (oh, ow)) is the plane element at TapOff[k] + oh * Wq +
  /// ow: the GEMM reads B in place through those two offset tables (runs of an output row are
  /// contiguous), one K-block panel at a time into L1, and writes Y directly. A 1x1 stride-1
  /// convolution without padding has Wq == OW and reads the input as it is.
  Status runPhased(const ConvRun &R, const float *X, const float *B, float *Y, const PackedA &Wp_,
                   const Parallel &Pool) const {
    const PhasePlanes L(R, A.W);
    const int64_t H = L.H, Wd = L.Wd, OW = L.OW, KH = L.KH, KW = L.KW, SH = L.SH, SW = L.SW;
    const int64_t PH = L.PH, PW = L.PW, Wq = L.Wq, Rq = L.Rq;
    // Stride 1, no padding and one kernel column: the slices lie inside X (with KW > 1 the last
    // slice would run (KW - 1) * DW past it), so X is used as it is.
    const bool Direct = SH == 1 && SW == 1 && KW == 1 && Wq == Wd && Rq == H && PH == 0 && PW == 0;
    const int64_t NR = MK.NR, Cols = R.OutPlane, KDim = R.Cg * KH * KW;
    // A convolution of under ~2M multiply-adds (~20 us on one core) runs on the calling thread:
    // splitting it would cost more in wake-ups than it saves (MNIST-sized layers).
    const Parallel Serial;
    const Parallel &Par = R.N * R.M * KDim * Cols < (int64_t{1} << 21) ? Serial : Pool;
    // Reads stay inside the phase planes (only output pixels' columns are read); the slack is a
    // margin kept from the layout with extended rows.
    const int64_t Phases = L.Phases, PlaneQ = L.PlaneQ, Slack = Direct ? 0 : 2 * Wq + NR;
    // Scratch of the calling thread (run() never nests another kernel's run() on its thread). The
    // lambdas below run on other workers too: they must use the pointers taken here, never the
    // thread_local names (which would resolve to the worker's own, empty, vectors).
    thread_local std::vector<float> Padded;
    thread_local std::vector<int64_t> TapOffsets, PixelOffsets;
    if (!Direct) { // fill() writes the planes; the slack past them is cleared here
      Padded.resize(static_cast<size_t>(R.C * Phases * PlaneQ + Slack));
      std::fill(Padded.end() - Slack, Padded.end(), 0.0f);
    }
    float *const PaddedData = Padded.data();
    // Output pixel p = (oh, ow) is column oh * Wq + ow of a phase-plane row; when Wq == OW that is p.
    const bool Gaps = Wq != OW;
    if (Gaps) {
      PixelOffsets.resize(static_cast<size_t>(Cols));
      for (int64_t P = 0; P < Cols; ++P)
        PixelOffsets[static_cast<size_t>(P)] = P / OW * Wq + P % OW;
    }
    const int64_t *const PixOff = Gaps ? PixelOffsets.data() : nullptr;
    GemmEpilogue Ep;
    Ep.RowBias = B;
    Ep.Clamp = A.HasAct, Ep.Min = A.ActMin, Ep.Max = A.ActMax;
    // Column blocks of about 4 NR-wide panels, as many as a multiple of the threads, the panels
    // spread evenly over them (7 blocks of 4 on 2 threads would leave one idle for a quarter).
    const int64_t Panels = (Cols + NR - 1) / NR, Threads = std::max(1, Par.threads());
    const int64_t TargetPanels = std::max<int64_t>(4, 65536 / std::max<int64_t>(KDim, 1) / NR);
    int64_t Blocks = (Panels + TargetPanels - 1) / TargetPanels;
    if (Threads > 1)
      Blocks = std::min(Panels, (Blocks + Threads - 1) / Threads * Threads);
    // Too few panels to give every thread an even share of columns (3 panels on 2 threads): split
    // each block's GEMM by rows instead. Otherwise one fan-out over the blocks (each fan-out is a
    // fork-join, which costs as much as a small convolution's block).
    const bool SplitGemm = Threads > 1 && Panels < 2 * Threads;
    const Parallel &GemmPar = SplitGemm ? Par : Serial;
    // Where im2col row k starts in Src, computed once (tapOffset divides; per row and block it
    // cost more than the copy it addresses).
    // In the Direct case the one phase plane per channel is X's own plane (PlaneQ == InPlane), so
    // the same offsets address X: channel c's plane plus the tap's row (kh * DH * Wd). Taking
    // K * InPlane there was right for 1x1 kernels only and read other channels' planes for KH > 1
    // (openWakeWord's 3x1 convolutions).
    TapOffsets.resize(static_cast<size_t>(KDim));
    L.tapOffsets(KDim, TapOffsets.data());
    const int64_t *const TapOff = TapOffsets.data();
    for (int64_t N = 0; N < R.N; ++N) {
      const float *Xn = X + N * R.C * R.InPlane;
      if (!Direct) // padding a small input is cheaper than a fan-out
        L.fill(Xn, PaddedData, R.C, R.C * R.InPlane < (int64_t{1} << 16) ? Serial : Par);
      const float *Src = Direct ? Xn : PaddedData;
      float *Out = Y + N * R.M * R.OutPlane;
      const auto Blocks_ = [&](size_t Lo, size_t Hi) {
        for (size_t T = Lo; T < Hi; ++T) {
          const int64_t Blk = static_cast<int64_t>(T);
          const int64_t J0 = Blk * Panels / Blocks * NR, NCols = std::min(Cols, (Blk + 1) * Panels / Blocks * NR) - J0;
          // im2col element (k, p) is Src[TapOff[k] + PixOff[p]]: the GEMM reads it in place, a
          // K-block panel at a time, and writes Y directly.
          const GemmRowsB Im2col{Gaps ? Src : Src + J0, TapOff, NCols, Gaps ? PixOff + J0 : nullptr};
          gemmPackedRowsB(MK, Wp_, Im2col, 1.0f, 0.0f, Out + J0, Cols, GemmPar, &Ep);
        }
      };
      if (SplitGemm)
        Blocks_(0, static_cast<size_t>(Blocks));
      else
        Par.forRange(static_cast<size_t>(Blocks), 1, Blocks_);
    }
    return Status::ok();
  }

  /// Packs columns [J0, J0 + NCols) of this group's im2col matrix into PB (the layout of packB).
  void packColumns(const ConvRun &R, const float *Xg, int64_t J0, int64_t NCols, PackedB &PB) const {
    const WindowAttrs &W = A.W;
    const int64_t H = R.G.In[0], Wd = R.G.In[1], OW = R.G.Out[1];
    const int64_t KH = W.Kernel[0], KW = W.Kernel[1], SH = W.Strides[0], SW = W.Strides[1];
    const int64_t DH = W.Dilations[0], DW = W.Dilations[1], PH = R.G.PadBegin[0], PW = R.G.PadBegin[1];
    const int64_t NR = MK.NR, KDim = R.Cg * KH * KW, Panels = (NCols + NR - 1) / NR, Npad = Panels * NR;
    constexpr int64_t KC = GemmKC;
    PB.K = KDim;
    PB.N = NCols;
    float *Dst = PB.Data.data();
    // A panel's NR columns are output pixels; split them into segments that lie in one output
    // row. Within a segment a tap reads input pixels Iw0, Iw0 + SW, ... of one input row, so each
    // (segment, tap) is a clipped strided copy (a memcpy when SW == 1) plus zero fill at the edges.
    struct Segment {
      int64_t J0, J1, Row, Col; // panel columns [J0, J1), input row/col of column J0's window origin
    };
    std::vector<Segment> Segs;
    Segs.reserve(4);
    // Per k: the input plane's offset, the tap's row offset and column tap (divisions done once).
    struct Tap {
      int64_t PlaneOff, RowOff, Kw;
    };
    std::vector<Tap> Taps(static_cast<size_t>(KDim));
    for (int64_t K = 0; K < KDim; ++K)
      Taps[K] = {(K / (KH * KW)) * R.InPlane, ((K / KW) % KH) * DH, K % KW};
    // Per (segment, column tap): first input column and the valid range [Lo, Hi) of the segment's
    // columns, 0 <= Iw0 + j * SW < Wd.
    struct SegTap {
      int64_t Iw0, Lo, Hi;
    };
    std::vector<SegTap> SegTaps;
    const bool Fast = FastPack && SW <= 2 && NR <= 32;
    for (int64_t P = 0; P < Panels; ++P) {
      const int64_t Width = std::min(NR, NCols - P * NR);
      Segs.clear();
      for (int64_t J = 0; J < Width;) {
        const int64_t Pos = J0 + P * NR + J, Oh = Pos / OW, Ow = Pos % OW;
        const int64_t Len = std::min(Width - J, OW - Ow);
        Segs.push_back({J, J + Len, Oh * SH - PH, Ow * SW - PW});
        J += Len;
      }
      SegTaps.resize(Segs.size() * static_cast<size_t>(KW));
      for (size_t Si = 0; Si < Segs.size(); ++Si)
        for (int64_t Kw = 0; Kw < KW; ++Kw) {
          const Segment &S = Segs[Si];
          const int64_t Iw0 = S.Col + Kw * DW, Len = S.J1 - S.J0;
          const int64_t Lo = Iw0 >= 0 ? 0 : std::min(Len, (-Iw0 + SW - 1) / SW);
          const int64_t Hi = Iw0 >= Wd ? 0 : std::min(Len, (Wd - Iw0 + SW - 1) / SW);
          SegTaps[Si * KW + Kw] = {Iw0, Lo, std::max(Lo, Hi)};
        }
      for (int64_t K0 = 0; K0 < KDim; K0 += KC) {
        const int64_t Kc = std::min(KC, KDim - K0);
        float *Panel = Dst + K0 * Npad + P * Kc * NR;
        for (int64_t Kk = 0; Kk < Kc; ++Kk) {
          const Tap &T = Taps[K0 + Kk];
          const float *Plane = Xg + T.PlaneOff;
          float *D = Panel + Kk * NR;
          for (size_t Si = 0; Si < Segs.size(); ++Si) {
            const Segment &S = Segs[Si];
            const SegTap &ST = SegTaps[Si * KW + T.Kw];
            const int64_t Ih = S.Row + T.RowOff, Len = S.J1 - S.J0;
            float *Dj = D + S.J0;
            const bool RowIn = Ih >= 0 && Ih < H;
            const int64_t Lo = RowIn ? ST.Lo : 0, Hi = RowIn ? ST.Hi : 0;
            const float *Src = Plane + (RowIn ? Ih * Wd : 0) + ST.Iw0;
            if (Fast) {
              packSegmentAvx512(Dj, Src, Len, Lo, Hi, SW);
              continue;
            }
            std::fill(Dj, Dj + Lo, 0.0f);
            if (SW == 1) {
              if (Hi > Lo)
                std::memcpy(Dj + Lo, Src + Lo, static_cast<size_t>(Hi - Lo) * sizeof(float));
            } else {
              for (int64_t J = Lo; J < Hi; ++J)
                Dj[J] = Src[J * SW];
            }
            std::fill(Dj + Hi, Dj + Len, 0.0f);
          }
          std::fill(D + Width, D + NR, 0.0f);
        }
      }
    }
  }

  std::string Name;
  const GemmMicroKernel &MK;
  ConvAttrs A;
  std::vector<PackedA> PackedW; ///< one per group; empty when the weights are not constant
  std::unique_ptr<PackedB> PackedWT; ///< W^T for runTransposed (small output planes), else null
  const bool FastPack = avx512PackAvailable();
};

/// Depthwise 2-D convolution (one input channel per group, one output channel per group): each
/// output plane is an independent small stencil, split over the pool.
class ConvDepthwiseKernel : public Kernel {
public:
  explicit ConvDepthwiseKernel(ConvAttrs A) : A(std::move(A)) {}

  Status run(const KernelContext &Ctx) const override {
    ASSIGN_OR_RETURN(const ConvRun R, planConv("f32_conv__depthwise_direct", A, Ctx));
    const float *X = Ctx.Inputs[0].data<float>(), *Wt = Ctx.Inputs[1].data<float>(), *B = biasOf(Ctx);
    float *Y = Ctx.Outputs[0].data<float>();
    const WindowAttrs &W = A.W;
    const int64_t H = R.G.In[0], Wd = R.G.In[1], OH = R.G.Out[0], OW = R.G.Out[1];
    const int64_t KH = W.Kernel[0], KW = W.Kernel[1], SH = W.Strides[0], SW = W.Strides[1];
    const int64_t DH = W.Dilations[0], DW = W.Dilations[1], PH = R.G.PadBegin[0], PW = R.G.PadBegin[1];
    Ctx.Par.forRange(static_cast<size_t>(R.N * R.M), 1, [&](size_t Lo, size_t Hi) {
      for (size_t P = Lo; P < Hi; ++P) {
        const int64_t M = static_cast<int64_t>(P) % R.M;
        const float *In = X + static_cast<int64_t>(P) * R.InPlane; // channel M of image P / M
        const float *K = Wt + M * KH * KW;
        float *Out = Y + static_cast<int64_t>(P) * R.OutPlane;
        const float Bias = B ? B[M] : 0.0f;
        // Valid output columns of each kernel column: iw = ow*SW - PW + kw*DW in [0, Wd).
        int64_t OwLo[64], OwHi[64];
        for (int64_t Kw = 0; Kw < KW; ++Kw) {
          const int64_t Off = Kw * DW - PW;
          OwLo[Kw] = std::min<int64_t>(OW, Off >= 0 ? 0 : (-Off + SW - 1) / SW);
          OwHi[Kw] = Wd - 1 - Off < 0 ? 0 : std::min<int64_t>(OW, (Wd - 1 - Off) / SW + 1);
        }
        for (int64_t Oh = 0; Oh < OH; ++Oh) {
          float *OutRow = Out + Oh * OW;
          for (int64_t Ow = 0; Ow < OW; ++Ow)
            OutRow[Ow] = Bias;
          // Tap-major: each tap is a scaled, strided row added to the output row (vectorizes).
          for (int64_t Kh = 0; Kh < KH; ++Kh) {
            const int64_t Ih = Oh * SH - PH + Kh * DH;
            if (Ih < 0 || Ih >= H)
              continue;
            const float *Row = In + Ih * Wd;
            for (int64_t Kw = 0; Kw < KW; ++Kw) {
              const float Kv = K[Kh * KW + Kw];
              const int64_t Off = Kw * DW - PW;
              if (SW == 1) {
                for (int64_t Ow = OwLo[Kw]; Ow < OwHi[Kw]; ++Ow)
                  OutRow[Ow] += Kv * Row[Ow + Off];
              } else {
                for (int64_t Ow = OwLo[Kw]; Ow < OwHi[Kw]; ++Ow)
                  OutRow[Ow] += Kv * Row[Ow * SW + Off];
              }
            }
          }
        }
      }
    });
    A.applyAct(Ctx.Outputs[0].data<float>(), Ctx.Outputs[0].elementCount());
    return Status::ok();
  }

private:
  ConvAttrs A;
};

/// Depthwise convolution with the AVX-512 plane kernel (common/PlaneWindow.h): strides 1 and 2,
/// bias and the fused clamp applied in registers.
class ConvDepthwiseAvx512Kernel : public Kernel {
public:
  ConvDepthwiseAvx512Kernel(ConvAttrs A, std::shared_ptr<const FlatDepthwisePlan> FlatCache)
      : A(std::move(A)), FlatCache(std::move(FlatCache)) {}

  Status run(const KernelContext &Ctx) const override {
    ASSIGN_OR_RETURN(const ConvRun R, planConv("f32_conv__depthwise_avx512", A, Ctx));
    const float *X = Ctx.Inputs[0].data<float>(), *Wt = Ctx.Inputs[1].data<float>(), *B = biasOf(Ctx);
    float *Y = Ctx.Outputs[0].data<float>();
    DepthwiseGeometry G = planeGeometryOf(A.W, &R.G);
    G.HasAct = A.HasAct, G.ActMin = A.ActMin, G.ActMax = A.ActMax;
    if (R.OutPlane == 0 || R.N * R.M == 0)
      return Status::ok();
    if (!depthwiseAvx512Supported(G))
      return runError("f32_conv__depthwise_avx512", "geometry not supported");
    const int64_t KT = G.KH * G.KW;
    // Stride-1 "same" planes take the flat-plane kernel (common/DepthwiseFlat): no per-row work.
    const bool Flat = depthwiseFlatSupported(G);
    const DepthwisePlan Plan = Flat ? DepthwisePlan{G, {}} : planDepthwise(G);
    FlatDepthwisePlan LocalPlan; // when the geometry is not the one planned at creation
    const bool Cached = Flat && FlatCache && sameGeometry(FlatCache->G, G);
    if (Flat && !Cached)
      LocalPlan = planDepthwiseFlat(G);
    const FlatDepthwisePlan &FlatPlan = Cached ? *FlatCache : LocalPlan;
    Ctx.Par.forRange(static_cast<size_t>(R.N * R.M), planesPerChunk(R.OutPlane, KT), [&](size_t Lo, size_t Hi) {
      for (size_t P = Lo; P < Hi; ++P) {
        const int64_t M = static_cast<int64_t>(P) % R.M;
        const float *In = X + static_cast<int64_t>(P) * R.InPlane;
        float *Out = Y + static_cast<int64_t>(P) * R.OutPlane;
        if (Flat)
          depthwiseFlatAvx512(FlatPlan, In, Wt + M * KT, B ? B[M] : 0.0f, Out);
        else
          depthwisePlaneAvx512(Plan, In, Wt + M * KT, B ? B[M] : 0.0f, Out);
      }
    });
    return Status::ok();
  }

private:
  ConvAttrs A;
  std::shared_ptr<const FlatDepthwisePlan> FlatCache; ///< planned at creation (known shapes), or null
};

/// Small group-1 stride-1 convolutions as a direct stencil (common/SmallConv.h): weights packed
/// in output-channel blocks at creation, the image zero-padded once per run, no im2col panels.
class ConvSmallKernel : public Kernel {
public:
  ConvSmallKernel(ConvAttrs A, SmallConvWeights Packed) : A(std::move(A)), Packed(std::move(Packed)) {}

  Status run(const KernelContext &Ctx) const override {
    ASSIGN_OR_RETURN(const ConvRun R, planConv("Conv", A, Ctx));
    const float *X = Ctx.Inputs[0].data<float>(), *B = biasOf(Ctx);
    float *Y = Ctx.Outputs[0].data<float>();
    SmallConvGeometry G;
    G.C = R.C, G.H = R.G.In[0], G.W = R.G.In[1], G.M = R.M, G.OH = R.G.Out[0], G.OW = R.G.Out[1];
    G.KH = A.W.Kernel[0], G.KW = A.W.Kernel[1], G.PH = R.G.PadBegin[0], G.PW = R.G.PadBegin[1];
    G.HasAct = A.HasAct, G.ActMin = A.ActMin, G.ActMax = A.ActMax;
    if (G.OH <= 0 || G.OW <= 0 || G.M == 0)
      return Status::ok();
    for (int64_t N = 0; N < R.N; ++N)
      smallConv(G, Packed, B, X + N * R.C * R.InPlane, Y + N * R.M * R.OutPlane, Ctx.Par);
    return Status::ok();
  }

private:
  ConvAttrs A;
  SmallConvWeights Packed;
};

/// Group-1 convolution with few input channels (an RGB stem) by the direct kernel of
/// common/DirectConv: output rows split over the pool, bias and clamp in registers.
class ConvDirectAvx512Kernel : public Kernel {
public:
  ConvDirectAvx512Kernel(ConvAttrs A, std::vector<float> PackedW) : A(std::move(A)), PackedW(std::move(PackedW)) {}

  Status run(const KernelContext &Ctx) const override {
    const char *Name = "f32_conv__direct_avx512";
    ASSIGN_OR_RETURN(const ConvRun R, planConv(Name, A, Ctx));
    if (R.OutPlane == 0 || R.N * R.M == 0)
      return Status::ok();
    DirectConvGeometry D;
    D.G = planeGeometryOf(A.W, &R.G);
    D.G.HasAct = A.HasAct, D.G.ActMin = A.ActMin, D.G.ActMax = A.ActMax;
    D.C = R.C, D.M = R.M;
    if (A.Group != 1 || !directConvAvx512Supported(D.G, R.C) ||
        PackedW.size() != static_cast<size_t>(R.M * R.C * R.Taps))
      return runError(Name, "geometry or weights not supported");
    const DepthwisePlan Plan = planDepthwise(D.G);
    const float *X = Ctx.Inputs[0].data<float>(), *B = biasOf(Ctx);
    float *Y = Ctx.Outputs[0].data<float>();
    const int64_t OH = D.G.OH, RowWork = D.G.OW * R.M * R.C * R.Taps;
    // Rows of about 64K multiply-adds per task; under ~1M in all, the calling thread alone.
    const Parallel Serial;
    const Parallel &Par = R.N * OH * RowWork < (int64_t{1} << 20) ? Serial : Ctx.Par;
    const size_t Grain = static_cast<size_t>(std::max<int64_t>(1, 65536 / std::max<int64_t>(1, RowWork)));
    Par.forRange(static_cast<size_t>(R.N * OH), Grain, [&](size_t Lo, size_t Hi) {
      for (int64_t T = static_cast<int64_t>(Lo); T < static_cast<int64_t>(Hi);) {
        const int64_t N = T / OH, Oh0 = T % OH, Oh1 = std::min(OH, Oh0 + static_cast<int64_t>(Hi) - T);
        directConvRowsAvx512(D, Plan, X + N * R.C * R.InPlane, PackedW.data(), B, Y + N * R.M * R.OutPlane, Oh0,
                             Oh1);
        T += Oh1 - Oh0;
      }
    });
    return Status::ok();
  }

private:
  ConvAttrs A;
  std::vector<float> PackedW; ///< [C * KH * KW][M]
};

/// Input channels up to which a group-1 convolution takes the direct kernel (3: RGB stems).
constexpr int64_t kDirectMaxChannels = 4;

/// 3x3 stride-1 convolution by Winograd F(4x4, 3x3) or F(2x2, 3x3) (common/Winograd.h): weights
/// transformed at creation; bias, a fused residual and the clamp applied in the output transform.
/// With spatial dims unknown at creation, W is F(4x4) and Fallback (the im2col GEMM) runs the shapes
/// tileFor gives another tile (or none).
class ConvWinogradKernel : public Kernel {
public:
  ConvWinogradKernel(std::string Name, ConvAttrs A, std::unique_ptr<Winograd3x3> W,
                     std::unique_ptr<Kernel> Fallback = nullptr)
      : Name(std::move(Name)), A(std::move(A)), W(std::move(W)), Fallback(std::move(Fallback)) {}

  Status run(const KernelContext &Ctx) const override {
    ASSIGN_OR_RETURN(const ConvRun R, planConv(Name.c_str(), A, Ctx));
    if (Fallback && Winograd3x3::tileFor(R.C, R.M, R.G.Out[0], R.G.Out[1]) != W->tile())
      return Fallback->run(Ctx);
    const float *X = Ctx.Inputs[0].data<float>(), *Res = convResidualOf(Ctx);
    float *Y = Ctx.Outputs[0].data<float>();
    if (Res && Ctx.Inputs[kFusedResidualInput].elementCount() != Ctx.Outputs[0].elementCount())
      return runError(Name.c_str(), "the residual does not match the output");
    WinogradGeometry G;
    G.H = R.G.In[0], G.W = R.G.In[1], G.OH = R.G.Out[0], G.OW = R.G.Out[1];
    G.PadTop = R.G.PadBegin[0], G.PadLeft = R.G.PadBegin[1];
    WinogradEpilogue Ep;
    Ep.Bias = biasOf(Ctx);
    Ep.Clamp = A.HasAct, Ep.Min = A.ActMin, Ep.Max = A.ActMax;
    for (int64_t N = 0; N < R.N; ++N) {
      Ep.Residual = Res ? Res + N * R.M * R.OutPlane : nullptr;
      W->run(X + N * R.C * R.InPlane, G, Y + N * R.M * R.OutPlane, Ep, Ctx.Par);
    }
    return Status::ok();
  }

private:
  std::string Name;
  ConvAttrs A;
  std::unique_ptr<Winograd3x3> W;
  std::unique_ptr<Kernel> Fallback;
};

/// 1x1 convolutions (stride 1, no padding, group 1) on large planes (AVX-512): runs of pixels
/// against 12-channel weight panels, the input channels' rows read in place (no im2col panel
/// copies), bias, fused residual and clamp in the write-back (no second pass over Y for a
/// residual). Work items are runs of pixels, every output channel of a run while its inputs are
/// in L2.
class ConvPointwiseRowsKernel : public Kernel {
public:
  ConvPointwiseRowsKernel(ConvAttrs A, std::vector<float> Packed, int64_t M, int64_t C)
      : A(std::move(A)), Packed(std::move(Packed)), M(M), C(C) {}

  Status run(const KernelContext &Ctx) const override {
    const char *Name = "f32_conv__pointwise_rows_avx512";
    ASSIGN_OR_RETURN(const ConvRun R, planConv(Name, A, Ctx));
    if (R.M != M || R.C != C || R.InPlane != R.OutPlane)
      return runError(Name, "shapes differ from the packed weights");
    const float *X = Ctx.Inputs[0].data<float>(), *B = biasOf(Ctx), *Res = convResidualOf(Ctx);
    float *Y = Ctx.Outputs[0].data<float>();
    if (Res && Ctx.Inputs[kFusedResidualInput].elementCount() != Ctx.Outputs[0].elementCount())
      return runError(Name, "the residual does not match the output");
    const int64_t P = R.OutPlane, Panels = (M + kRowPipelineMR - 1) / kRowPipelineMR;
    if (R.N * M * P == 0)
      return Status::ok();
    const Parallel Serial;
    const Parallel &Par = R.N * M * C * P < (int64_t{1} << 21) ? Serial : Ctx.Par;
    const int64_t Threads = std::max(1, Par.threads());
    // Pixels per item: at most 256 (8 tiles of 32), as many items as a multiple of the threads
    // (while few), of equal length in 16-pixel steps: 784 pixels on 2 threads are 4 x ~196
    // (3 x 208 + 160), not 3 x 256 + 16 (512 against 272 pixels per thread).
    int64_t Runs = (P + 255) / 256;
    while (Threads > 1 && R.N * Runs < 4 * Threads && (R.N * Runs) % Threads != 0)
      ++Runs;
    const int64_t Run = Threads == 1 ? 256 : std::min<int64_t>(256, ((P + Runs - 1) / Runs + 15) / 16 * 16);
    Runs = (P + Run - 1) / Run;
    // Few runs (a 14x14 plane is one): the panels split into groups too, two items per thread.
    const int64_t Groups = std::max<int64_t>(1, std::min(Panels, (2 * Threads + R.N * Runs - 1) / (R.N * Runs)));
    Par.forRange(static_cast<size_t>(R.N * Runs * Groups), 1, [&](size_t Lo, size_t Hi) {
      for (size_t T = Lo; T < Hi; ++T) {
        const int64_t Gi = static_cast<int64_t>(T) % Groups, Item = static_cast<int64_t>(T) / Groups;
        const int64_t N = Item / Runs, J0 = Item % Runs * Run;
        const int64_t Nj = std::min(Run, P - J0);
        for (int64_t Pn = Gi * Panels / Groups; Pn < (Gi + 1) * Panels / Groups; ++Pn) {
          const int64_t M0 = Pn * kRowPipelineMR;
          const int64_t Off = (N * M + M0) * P + J0;
          pointwiseRunAvx512(Packed.data() + Pn * C * kRowPipelineMR, std::min(kRowPipelineMR, M - M0), C,
                             X + N * C * P + J0, P, Nj, B ? B + M0 : nullptr, A.HasAct, A.ActMin, A.ActMax, Y + Off, P,
                             Res ? Res + Off : nullptr);
        }
      }
    });
    return Status::ok();
  }

private:
  ConvAttrs A;
  std::vector<float> Packed; ///< W in panels of kRowPipelineMR channels (packPointwiseWeights)
  int64_t M, C;
};

bool convTypesOk(const KernelCreateInfo &I) {
  return inputIs(I, 0, ElementType::F32) && inputIs(I, 1, ElementType::F32) &&
         (I.Inputs.size() < 3 || !I.Inputs[2].Present || inputIs(I, 2, ElementType::F32));
}

bool is2D(const KernelCreateInfo &I) { return I.Inputs[0].Shape.getRank() == 4; }

Result<ConvAttrs> attrsFor(const KernelCreateInfo &I) {
  return parseConvAttrs(I.N, I.Inputs[0].Shape, I.Inputs[1].Shape);
}

KernelVariant im2colVariant(GemmIsa Isa, int Priority) {
  const GemmMicroKernel &MK = gemmMicroKernel(Isa);
  const std::string Name = std::string("f32_conv__im2col_gemm_") + MK.Name;
  return {Name, Priority, [Isa](const KernelCreateInfo &I) { return convTypesOk(I) && is2D(I) && gemmIsaAvailable(Isa); },
          [Name, &MK](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
            ASSIGN_OR_RETURN(ConvAttrs A, attrsFor(I));
            std::vector<PackedA> Packed;
            std::unique_ptr<PackedB> PackedT;
            if (inputIsConst(I, 1)) {
              const ConstData &Wt = *I.Inputs[1].Const;
              const int64_t Mg = Wt.Dims[0] / A.Group, KDim = product(Wt.Dims, 1, Wt.Dims.size());
              // A small, known output plane takes the transposed GEMM: pack W^T (K x M) instead.
              const TensorShape &YS = I.Outputs[0].Shape;
              const bool SmallPlane = A.Group == 1 && YS.getRank() == 4 && YS[2].isConst() && YS[3].isConst() &&
                                      YS[2].value() * YS[3].value() <= kTransposedMaxPlane && Mg >= 32;
              if (SmallPlane) {
                PackedT.reset(new PackedB);
                packB(MK, KDim, Mg, MatrixRef{Wt.as<float>(), 1, KDim}, *PackedT, Parallel());
              } else {
                Packed.resize(static_cast<size_t>(A.Group));
                for (int64_t G = 0; G < A.Group; ++G)
                  packA(MK, Mg, KDim, MatrixRef{Wt.as<float>() + G * Mg * KDim, KDim, 1}, Packed[G]);
              }
              markConstConsumed(I, 1); // run() reads the packed copies only
            }
            return makeKernel<ConvIm2colKernel>(Name, MK, std::move(A), std::move(Packed), std::move(PackedT));
          }};
}

bool isDepthwise(const KernelCreateInfo &I) {
  if (!convTypesOk(I) || !is2D(I))
    return false;
  auto Group = I.N.getInt("group", 1);
  const TensorShape &X = I.Inputs[0].Shape, &Wt = I.Inputs[1].Shape;
  return Group.isOk() && *Group > 1 && X[1].isConst() && X[1].value() == *Group && Wt[0].isConst() &&
         Wt[0].value() == *Group && Wt[1].isConst() && Wt[1].value() == 1 && Wt[3].isConst() && Wt[3].value() <= 64;
}

KernelVariant depthwiseAvx512Variant() {
  const auto Supports = [](const KernelCreateInfo &I) {
    if (!isDepthwise(I))
      return false;
    auto A = attrsFor(I);
    if (!A.isOk() || A->W.Kernel.size() != 2)
      return false;
    return depthwiseAvx512Supported(planeGeometryOf(A->W, nullptr));
  };
  return {"f32_conv__depthwise_avx512", 60, Supports, [](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
            ASSIGN_OR_RETURN(ConvAttrs A, attrsFor(I));
            std::shared_ptr<const FlatDepthwisePlan> FlatCache;
            const TensorShape &XS = I.Inputs[0].Shape;
            if (XS[2].isConst() && XS[3].isConst()) {
              const WindowGeometry Geo = computeWindowGeometry(A.W, {1, 1, XS[2].value(), XS[3].value()});
              DepthwiseGeometry G = planeGeometryOf(A.W, &Geo);
              G.HasAct = A.HasAct, G.ActMin = A.ActMin, G.ActMax = A.ActMax;
              FlatCache = cachedFlatPlan(G);
            }
            return makeKernel<ConvDepthwiseAvx512Kernel>(std::move(A), std::move(FlatCache));
          }};
}

KernelVariant directAvx512Variant() {
  const auto Supports = [](const KernelCreateInfo &I) {
    if (!convTypesOk(I) || !is2D(I) || !inputIsConst(I, 1))
      return false;
    auto A = attrsFor(I);
    const TensorShape &X = I.Inputs[0].Shape;
    return A.isOk() && A->Group == 1 && A->W.Kernel.size() == 2 && X[1].isConst() &&
           X[1].value() <= kDirectMaxChannels && directConvAvx512Supported(planeGeometryOf(A->W, nullptr), X[1].value());
  };
  return {"f32_conv__direct_avx512", 40, Supports, [](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
            ASSIGN_OR_RETURN(ConvAttrs A, attrsFor(I));
            const ConstData &Wt = *I.Inputs[1].Const;
            std::vector<float> Packed = packDirectConvWeights(Wt.as<float>(), Wt.Dims[0], product(Wt.Dims, 1, 4));
            markConstConsumed(I, 1);
            return makeKernel<ConvDirectAvx512Kernel>(std::move(A), std::move(Packed));
          }};
}

KernelVariant depthwiseVariant() {
  const auto Supports = [](const KernelCreateInfo &I) { return isDepthwise(I); };
  return {"f32_conv__depthwise_direct", 50, Supports, [](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
            ASSIGN_OR_RETURN(ConvAttrs A, attrsFor(I));
            return makeKernel<ConvDepthwiseKernel>(std::move(A));
          }};
}

/// The direct variant takes group-1 stride-1 undilated 2-D convolutions with constant weights, a
/// kernel larger than 1x1 and few output channels (at most 64), below Winograd (3x3 shapes where
/// it pays) and above the im2col GEMM: there the im2col GEMM's per-K-block
/// panel copies and partial 12 x 32 tiles cost more than the convolution (MNIST: conv1 1->16 5x5 on
/// 28x28 21 -> 4 us, conv2 16->32 5x5 on 14x14 60 -> 33 us; see the issue note).
KernelVariant smallConvVariant() {
  const auto Supports = [](const KernelCreateInfo &I) {
    if (!convTypesOk(I) || !is2D(I) || !smallConvAvailable() || !inputIsConst(I, 1))
      return false;
    auto A = attrsFor(I);
    if (!A.isOk() || A->Group != 1 || A->W.Kernel.size() != 2)
      return false;
    const WindowAttrs &W = A->W;
    if (W.Strides[0] != 1 || W.Strides[1] != 1 || W.Dilations[0] != 1 || W.Dilations[1] != 1 ||
        W.Kernel[0] * W.Kernel[1] < 2)
      return false;
    const std::vector<int64_t> &D = I.Inputs[1].Const->Dims;
    return D[0] <= kSmallConvMaxOutputChannels && D[1] * W.Kernel[0] * W.Kernel[1] <= kSmallConvMaxReduction;
  };
  return {"f32_conv__small_avx512", 35, Supports, [](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
            ASSIGN_OR_RETURN(ConvAttrs A, attrsFor(I));
            const ConstData &Wt = *I.Inputs[1].Const;
            // The tile shape follows the output row width: pack the one layout a static shape
            // needs, both when the width is only known per run.
            const TensorShape &YS = I.Outputs[0].Shape;
            const bool Known = YS.getRank() == 4 && YS[3].isConst();
            const bool Pixels = Known && smallConvPixelTiles(YS[3].value(), Wt.Dims[0]);
            SmallConvWeights Packed;
            packSmallConvWeights(Wt.as<float>(), Wt.Dims[0], Wt.Dims[1], Wt.Dims[2], Wt.Dims[3], !Known || !Pixels,
                                  !Known || Pixels, Packed);
            markConstConsumed(I, 1); // run() reads the packed copy only
            return makeKernel<ConvSmallKernel>(std::move(A), std::move(Packed));
          }};
}

/// Winograd for 3x3 stride-1 dilation-1 group-1 2-D convolutions with constant weights, with the
/// tile Winograd3x3::tileFor picks for the (known) shape. The AVX-512 variant uses the AVX-512
/// GEMM and transforms; the portable one (the best GEMM this CPU has, scalar transforms) is not
/// measured against im2col on a machine without AVX-512 and ranks below it.
KernelVariant winogradVariant(bool Avx512) {
  const std::string Name = Avx512 ? "f32_conv__winograd_avx512" : "f32_conv__winograd_portable";
  const auto Supports = [Avx512](const KernelCreateInfo &I) {
    if (!convTypesOk(I) || !is2D(I) || !inputIsConst(I, 1) || (Avx512 && !gemmIsaAvailable(GemmIsa::Avx512)))
      return false;
    if (I.Inputs.size() > kFusedResidualInput && I.Inputs[kFusedResidualInput].Present &&
        I.Inputs[kFusedResidualInput].Type != ElementType::F32)
      return false;
    auto A = attrsFor(I);
    if (!A.isOk() || A->Group != 1 || A->W.Kernel != std::vector<int64_t>{3, 3} ||
        A->W.Strides != std::vector<int64_t>{1, 1} || A->W.Dilations != std::vector<int64_t>{1, 1})
      return false;
    const TensorShape &Wt = I.Inputs[1].Shape, &Y = I.Outputs[0].Shape;
    if (!Wt[0].isConst() || !Wt[1].isConst() || Y.getRank() != 4)
      return false;
    if (!Y[2].isConst() || !Y[3].isConst()) // F(4x4) when the run's plane is large enough (OCR images)
      return Avx512 && Winograd3x3::tileFor(Wt[1].value(), Wt[0].value(), 1024, 1024) == 4;
    return Winograd3x3::tileFor(Wt[1].value(), Wt[0].value(), Y[2].value(), Y[3].value()) != 0;
  };
  return {Name, Avx512 ? 40 : 5, Supports, [Name, Avx512](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
            ASSIGN_OR_RETURN(ConvAttrs A, attrsFor(I));
            const ConstData &Wt = *I.Inputs[1].Const;
            const GemmIsa Isa = Avx512 ? GemmIsa::Avx512
                                : gemmIsaAvailable(GemmIsa::Avx2) ? GemmIsa::Avx2 : GemmIsa::Portable;
            const TensorShape &Y = I.Outputs[0].Shape;
            const bool Known = Y[2].isConst() && Y[3].isConst();
            std::unique_ptr<Kernel> Fallback;
            if (!Known) { // packs its own copy of the weights
              ASSIGN_OR_RETURN(Fallback, withConvResidual(im2colVariant(Isa, 0)).Create(I));
            }
            const int Tile = Known ? Winograd3x3::tileFor(Wt.Dims[1], Wt.Dims[0], Y[2].value(), Y[3].value()) : 4;
            std::unique_ptr<Winograd3x3> W(
                new Winograd3x3(gemmMicroKernel(Isa), Avx512, Wt.as<float>(), Wt.Dims[0], Wt.Dims[1], Tile));
            markConstConsumed(I, 1);
            return makeKernel<ConvWinogradKernel>(Name, std::move(A), std::move(W), std::move(Fallback));
          }};
}

/// The smallest plane ConvPointwiseRowsKernel takes: MobileNetV2's 28x28 and 56x56 projections
/// (against the im2col GEMM, 1 thread: 56x56 228 -> 211 us, 28x28 86 -> 64; 2 threads: 102 -> 79
/// and equal). The 14x14 ones were 5-12% faster on 1 thread but 10-15% slower on 2 (a plane is one
/// run of pixels, split by channel panels, each item reading all of X), so they stay on im2col.
constexpr int64_t kPointwiseRowsMinPlane = 784;

KernelVariant pointwiseRowsVariant() {
  const auto Supports = [](const KernelCreateInfo &I) {
    if (!convTypesOk(I) || !is2D(I) || !inputIsConst(I, 1) || !rowPipelineAvx512Supported())
      return false;
    if (I.Inputs.size() > kFusedResidualInput && I.Inputs[kFusedResidualInput].Present &&
        I.Inputs[kFusedResidualInput].Type != ElementType::F32)
      return false;
    auto A = attrsFor(I);
    if (!A.isOk() || A->Group != 1 || !isPlainPointwise(A->W))
      return false;
    const TensorShape &Y = I.Outputs[0].Shape;
    // Measured on MobileNetV2's projections (24-32 output channels from 96-192): many input
    // channels (each a row read in place) or output panels (each re-reading the run) are untried.
    const TensorShape &Wt = I.Inputs[1].Shape;
    return Y.getRank() == 4 && Y[2].isConst() && Y[3].isConst() && Y[2].value() * Y[3].value() >= kPointwiseRowsMinPlane &&
           Wt[0].isConst() && Wt[1].isConst() && Wt[0].value() <= 96 && Wt[1].value() <= 256;
  };
  return {"f32_conv__pointwise_rows_avx512", 35, Supports,
          [](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
            ASSIGN_OR_RETURN(ConvAttrs A, attrsFor(I));
            const ConstData &Wt = *I.Inputs[1].Const;
            const int64_t M = Wt.Dims[0], C = Wt.Dims[1];
            std::vector<float> Packed = packPointwiseWeights(Wt.as<float>(), M, C);
            markConstConsumed(I, 1);
            return makeKernel<ConvPointwiseRowsKernel>(std::move(A), std::move(Packed), M, C);
          }};
}

std::vector<OpTestCase> convCases() {
  const auto X = [](std::vector<int64_t> D) { return tensorInput(std::move(D)); };
  const auto W = [](std::vector<int64_t> D) { return constInput(std::move(D)); };
  const auto ints = [](std::vector<int64_t> V) { return attrInts(std::move(V)); };
  return {
      testCase("3x3_bias", {X({1, 3, 8, 8}), W({4, 3, 3, 3}), W({4})}),
      testCase("fused_relu6", {X({1, 3, 9, 8}), W({4, 3, 3, 3}), W({4})},
               {{"pads", ints({1, 1, 1, 1})}, {kFusedActMin, attrFloat(0.0f)}, {kFusedActMax, attrFloat(0.5f)}}),
      testCase("fused_relu_depthwise", {X({1, 4, 7, 7}), W({4, 1, 3, 3})},
               {{"group", attrInt(4)}, {kFusedActMin, attrFloat(0.0f)}}),
      testCase("3x3_no_bias_pads", {X({2, 3, 7, 6}), W({5, 3, 3, 3})}, {{"pads", ints({1, 1, 1, 1})}}),
      testCase("asym_pads", {X({1, 2, 6, 7}), W({3, 2, 3, 2})}, {{"pads", ints({0, 1, 2, 0})}}),
      testCase("strides", {X({1, 3, 9, 10}), W({4, 3, 3, 3}), W({4})},
               {{"strides", ints({2, 3})}, {"pads", ints({1, 1, 1, 1})}}),
      testCase("dilations", {X({1, 2, 9, 9}), W({3, 2, 3, 3})}, {{"dilations", ints({2, 3})}}),
      testCase("groups", {X({1, 4, 6, 6}), W({6, 2, 3, 3}), W({6})}, {{"group", attrInt(2)}, {"pads", ints({1, 1, 1, 1})}}),
      testCase("depthwise", {X({2, 8, 7, 7}), W({8, 1, 3, 3}), W({8})},
               {{"group", attrInt(8)}, {"pads", ints({1, 1, 1, 1})}}),
      testCase("depthwise_strided_dilated", {X({1, 4, 9, 8}), W({4, 1, 3, 3})},
               {{"group", attrInt(4)}, {"strides", ints({2, 2})}, {"dilations", ints({2, 1})}}),
      testCase("depthwise_wide_rows", {X({1, 3, 20, 37}), W({3, 1, 3, 3}), W({3})},
               {{"group", attrInt(3)}, {"pads", ints({1, 1, 1, 1})}, {kFusedActMin, attrFloat(0.0f)},
                {kFusedActMax, attrFloat(0.6f)}}),
      testCase("depthwise_5x5_stride2", {X({1, 2, 23, 41}), W({2, 1, 5, 5}), W({2})},
               {{"group", attrInt(2)}, {"strides", ints({2, 2})}, {"pads", ints({2, 1, 2, 3})}}),
      testCase("depthwise_stride2_dilated_wide", {X({1, 2, 17, 70}), W({2, 1, 3, 3})},
               {{"group", attrInt(2)}, {"strides", ints({1, 2})}, {"dilations", ints({1, 2})}, {"pads", ints({0, 2, 1, 0})}}),
      testCase("depthwise_same_asym_pads", {X({1, 5, 11, 23}), W({5, 1, 3, 3}), W({5})},
               {{"group", attrInt(5)}, {"pads", ints({2, 0, 0, 2})}, {kFusedActMin, attrFloat(-0.2f)},
                {kFusedActMax, attrFloat(0.25f)}}),
      testCase("depthwise_same_5x5_small", {X({2, 3, 6, 5}), W({3, 1, 5, 5})}, {{"group", attrInt(3)}, {"pads", ints({2, 2, 2, 2})}}),
      testCase("depthwise_same_1x1", {X({1, 4, 3, 7}), W({4, 1, 1, 1}), W({4})}, {{"group", attrInt(4)}}),
      testCase("depthwise_multiplier", {X({1, 3, 5, 5}), W({6, 1, 3, 3})}, {{"group", attrInt(3)}}),
      testCase("pointwise", {X({2, 16, 5, 5}), W({8, 16, 1, 1}), W({8})}),
      testCase("pointwise_strided", {X({1, 8, 6, 6}), W({4, 8, 1, 1})}, {{"strides", ints({2, 2})}}),
      testCase("same_upper", {X({1, 2, 7, 8}), W({3, 2, 3, 4})},
               {{"auto_pad", attrString("SAME_UPPER")}, {"strides", ints({2, 2})}}),
      testCase("same_lower", {X({1, 2, 6, 6}), W({3, 2, 4, 3})}, {{"auto_pad", attrString("SAME_LOWER")}}),
      testCase("valid", {X({1, 2, 6, 6}), W({3, 2, 3, 3})}, {{"auto_pad", attrString("VALID")}}),
      testCase("kernel_shape_attr", {X({1, 2, 5, 5}), W({2, 2, 2, 2})}, {{"kernel_shape", ints({2, 2})}}),
      testCase("weights_not_const", {X({1, 3, 6, 6}), X({4, 3, 3, 3}), X({4})}, {{"pads", ints({1, 1, 1, 1})}}),
      testCase("small_plane_transposed", {X({2, 24, 7, 7}), W({40, 24, 3, 3}), W({40})},
               {{"pads", ints({1, 1, 1, 1})}, {kFusedActMin, attrFloat(0.0f)}}, 1e-4),
      testCase("small_plane_strided", {X({1, 16, 9, 11}), W({36, 16, 3, 3}), W({36})},
               {{"strides", ints({2, 2})}, {"pads", ints({1, 0, 1, 2})}, {"dilations", ints({1, 2})}}, 1e-4),
      testCase("small_plane_pointwise", {X({1, 64, 5, 6}), W({48, 64, 1, 1})}, {}, 1e-4),
      // Two images, two K blocks, bias and clamp, split over the pool by pixel panels.
      testCase("small_plane_pointwise_threaded", {X({2, 200, 7, 7}), W({128, 200, 1, 1}), W({128})},
               {{kFusedActMin, attrFloat(0.0f)}, {kFusedActMax, attrFloat(0.5f)}}, 1e-4),
      // Many output channels and K > GemmKC: the GEMM's A block outgrows L2 (rows run outside
      // the column panels, even split four ways), and the last K block is partial.
      testCase("pointwise_many_channels", {X({1, 200, 5, 7}), W({1536, 200, 1, 1}), W({1536})},
               {{kFusedActMin, attrFloat(0.0f)}, {kFusedActMax, attrFloat(6.0f)}}, 1e-4),
      testCase("small_plane_threaded", {X({1, 64, 8, 8}), W({64, 64, 3, 3}), W({64})}, {{"pads", ints({1, 1, 1, 1})}},
               1e-4),
      // 5e-4: Winograd F(4x4, 3x3) runs it too; its error grows with the sum of |terms| (outputs
      // here reach ~10: about 3e-5 of that), where direct summation stays within 1e-4.
      testCase("large_k", {X({1, 64, 10, 10}), W({40, 64, 3, 3}), W({40})}, {{"pads", ints({1, 1, 1, 1})}}, 5e-4),
      // Output rows far apart in the phase planes (Wq - OW = 16): the GEMM's in-place B and the
      // transposed path's pixel gather take their lane-by-lane paths.
      testCase("wide_gaps", {X({1, 3, 30, 20}), W({14, 3, 3, 3}), W({14})}, {{"dilations", ints({1, 8})}}, 1e-4),
      testCase("wide_gaps_small_plane", {X({1, 3, 12, 20}), W({14, 3, 3, 3}), W({14})}, {{"dilations", ints({1, 8})}},
               1e-4),
      // The direct variant: MNIST-like 5x5 layers, rows wider than a vector with a tail, uneven
      // pads, output channels not a multiple of the weight block, and a fused clamp.
      testCase("direct_5x5_mnist", {X({1, 16, 14, 14}), W({32, 16, 5, 5}), W({32})},
               {{"pads", ints({2, 2, 2, 2})}, {kFusedActMin, attrFloat(0.0f)}}, 1e-4),
      testCase("direct_1ch_wide", {X({2, 1, 28, 37}), W({13, 1, 5, 5}), W({13})}, {{"pads", ints({2, 1, 0, 3})}}),
      testCase("direct_3x2_no_pad", {X({1, 5, 9, 33}), W({7, 5, 3, 2})}, {}),
      testCase("direct_pixels_tail", {X({1, 4, 9, 15}), W({48, 4, 3, 3}), W({48})},
               {{"pads", ints({1, 1, 1, 1})}, {kFusedActMin, attrFloat(0.0f)}}, 1e-4),
      testCase("direct_pixels_odd", {X({2, 3, 7, 7}), W({37, 3, 2, 3})}, {{"pads", ints({0, 1, 1, 0})}}, 1e-4),
      // Large enough (> 256K multiply-adds) for the small-conv kernel to split over the pool.
      testCase("direct_5x5_threaded", {X({1, 8, 30, 30}), W({24, 8, 5, 5}), W({24})},
               {{"pads", ints({2, 2, 2, 2})}, {kFusedActMin, attrFloat(0.0f)}}, 1e-4),
      testCase("direct_pixels_threaded", {X({1, 24, 15, 13}), W({40, 24, 5, 3}), W({40})},
               {{"pads", ints({2, 1, 2, 1})}}, 1e-4),
      testCase("direct_clip", {X({1, 3, 6, 17}), W({9, 3, 3, 3}), W({9})},
               {{"pads", ints({1, 1, 1, 1})}, {kFusedActMin, attrFloat(-0.2f)}, {kFusedActMax, attrFloat(0.3f)}}),
      // Winograd shapes: channel counts that are not multiples of 16, partial edge tiles, batch 2,
      // several output-channel blocks, more channels than one GEMM K block, asymmetric padding.
      testCase("winograd_bias_relu", {X({1, 32, 12, 12}), W({64, 32, 3, 3}), W({64})},
               {{"pads", ints({1, 1, 1, 1})}, {kFusedActMin, attrFloat(0.0f)}}, 1e-4),
      testCase("winograd_odd", {X({2, 40, 13, 11}), W({45, 40, 3, 3}), W({45})}, {{"pads", ints({1, 1, 1, 1})}}, 1e-4),
      testCase("winograd_no_pad_no_bias", {X({1, 33, 14, 15}), W({49, 33, 3, 3})}, {}, 1e-4),
      testCase("winograd_asym_pads", {X({1, 40, 11, 12}), W({52, 40, 3, 3}), W({52})},
               {{"pads", ints({0, 2, 1, 0})}, {kFusedActMin, attrFloat(-0.1f)}, {kFusedActMax, attrFloat(0.3f)}}, 1e-4),
      testCase("winograd_channel_blocks", {X({1, 20, 10, 12}), W({130, 20, 3, 3}), W({130})},
               {{"pads", ints({1, 1, 1, 1})}}, 1e-4),
      // F(4x4) from 24x24 outputs on (the cases above run F(2x2)).
      testCase("winograd_f4_bias_relu", {X({1, 16, 24, 26}), W({24, 16, 3, 3}), W({24})},
               {{"pads", ints({1, 1, 1, 1})}, {kFusedActMin, attrFloat(0.0f)}}, 1e-4),
      testCase("winograd_f4_odd_no_pad", {X({2, 17, 25, 27}), W({25, 17, 3, 3})}, {}, 1e-4),
      testCase("winograd_f4_residual", {X({1, 24, 24, 24}), W({18, 24, 3, 3}), W({18}), X({1, 18, 24, 24})},
               {{"pads", ints({1, 1, 1, 1})}, {kFusedResidual, attrInt(1)}, {kFusedActMin, attrFloat(0.0f)}}, 1e-4),
      testCase("winograd_f4_channel_groups", {X({1, 32, 24, 24}), W({230, 32, 3, 3}), W({230})},
               {{"pads", ints({1, 1, 1, 1})}}, 5e-4),
      // U over 1 MiB: the harness's 4 threads split the output channels into 4 groups (F(2x2): 5
      // blocks of 64, 64, 64, 64, 48 columns; F(4x4) above: 64, 64, 64, 48).
      testCase("winograd_channel_groups", {X({1, 64, 10, 10}), W({300, 64, 3, 3}), W({300})},
               {{"pads", ints({1, 1, 1, 1})}, {kFusedActMin, attrFloat(0.0f)}}, 5e-4),
      testCase("winograd_deep", {X({1, 200, 10, 10}), W({24, 200, 3, 3}), W({24})}, {{"pads", ints({1, 1, 1, 1})}},
               5e-4),
      // A residual fused by passes/FuseConvResidual (input 3), before the clamp: in the Winograd
      // epilogue, and in the pass that follows the other variants.
      testCase("residual_winograd_relu", {X({1, 48, 10, 10}), W({50, 48, 3, 3}), W({50}), X({1, 50, 10, 10})},
               {{"pads", ints({1, 1, 1, 1})}, {kFusedResidual, attrInt(1)}, {kFusedActMin, attrFloat(0.0f)}}, 1e-4),
      testCase("residual_winograd_no_bias", {X({2, 40, 11, 13}), W({45, 40, 3, 3}), omittedInput(), X({2, 45, 11, 13})},
               {{"pads", ints({1, 1, 1, 1})}, {kFusedResidual, attrInt(1)}}, 1e-4),
      // Large-plane 1x1 (pixel runs, in-place rows): a partial run, a 4-row and a 2-row panel, a
      // residual with a clamp, no bias, batch 2, work big enough for the pool.
      testCase("pointwise_rows_residual", {X({1, 40, 29, 31}), W({26, 40, 1, 1}), W({26}), X({1, 26, 29, 31})},
               {{kFusedResidual, attrInt(1)}, {kFusedActMin, attrFloat(-0.5f)}, {kFusedActMax, attrFloat(0.5f)}},
               1e-4),
      testCase("pointwise_rows_no_bias", {X({2, 24, 28, 28}), W({16, 24, 1, 1})}, {}, 1e-4),
      testCase("pointwise_rows_relu6", {X({1, 144, 28, 30}), W({36, 144, 1, 1}), W({36})},
               {{kFusedActMin, attrFloat(0.0f)}, {kFusedActMax, attrFloat(6.0f)}}, 1e-4),
      testCase("residual_pointwise", {X({1, 8, 5, 6}), W({12, 8, 1, 1}), W({12}), X({1, 12, 5, 6})},
               {{kFusedResidual, attrInt(1)}}),
      testCase("residual_small_plane_relu6", {X({1, 24, 7, 7}), W({40, 24, 3, 3}), W({40}), X({1, 40, 7, 7})},
               {{"pads", ints({1, 1, 1, 1})}, {kFusedResidual, attrInt(1)}, {kFusedActMin, attrFloat(0.0f)},
                {kFusedActMax, attrFloat(0.5f)}},
               1e-4),
      testCase("residual_depthwise", {X({1, 4, 7, 7}), W({4, 1, 3, 3}), W({4}), X({1, 4, 7, 7})},
               {{"group", attrInt(4)}, {"pads", ints({1, 1, 1, 1})}, {kFusedResidual, attrInt(1)}}),
      // Few input channels (the direct kernel): an RGB stem (two 16-channel groups), channel
      // tails (16 + 4 + 1), rows wider than a vector, borders on every side.
      testCase("stem_stride2_relu6", {X({1, 3, 23, 37}), W({32, 3, 3, 3}), W({32})},
               {{"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}, {kFusedActMin, attrFloat(0.0f)},
                {kFusedActMax, attrFloat(0.3f)}}),
      // Direct kernel, three 16-pixel blocks at a time: a full group and a tail block, stride 2 and 1.
      testCase("stem_wide_stride2", {X({1, 3, 20, 100}), W({32, 3, 3, 3}), W({32})},
               {{"pads", ints({1, 1, 1, 1})}, {"strides", ints({2, 2})}, {kFusedActMin, attrFloat(0.0f)},
                {kFusedActMax, attrFloat(6.0f)}}),
      testCase("direct_wide_stride1", {X({2, 2, 9, 70}), W({16, 2, 3, 3})}, {}),
      testCase("few_channels_tail", {X({2, 4, 9, 40}), W({21, 4, 3, 3})},
               {{"strides", ints({1, 2})}, {"pads", ints({0, 1, 2, 0})}}),
      testCase("one_channel_5x5_dilated", {X({1, 1, 17, 19}), W({5, 1, 5, 5}), W({5})},
               {{"pads", ints({2, 3, 1, 4})}, {"dilations", ints({2, 1})}}),
      testCase("few_channels_stride2_even", {X({1, 2, 16, 32}), W({16, 2, 3, 3}), W({16})},
               {{"strides", ints({2, 2})}, {"pads", ints({0, 0, 1, 1})}}),
      // openWakeWord's embedding CNN (tf2onnx): 3x1 windows on 8-wide planes, 72 channels.
      testCase("tall_3x1_narrow_plane", {X({2, 72, 32, 8}), W({72, 72, 3, 1}), W({72})}, {}, 1e-4),
      testCase("tall_3x1_narrow_plane_b1", {X({1, 72, 30, 8}), W({72, 72, 3, 1}), W({72})}, {}, 1e-4),
      testCase("1d", {X({2, 3, 10}), W({4, 3, 3}), W({4})}, {{"pads", ints({1, 2})}, {"strides", ints({2})}}),
      testCase("3d", {X({1, 2, 5, 6, 4}), W({3, 2, 2, 3, 2}), W({3})},
               {{"pads", ints({1, 0, 1, 0, 1, 0})}, {"dilations", ints({1, 2, 1})}}),
  };
}

OpKernels convKernels() {
  OpKernels K;
  K.OpType = "Conv";
  K.Variants.push_back({"f32_conv__ref", 0, convTypesOk, [](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
                          ASSIGN_OR_RETURN(ConvAttrs A, attrsFor(I));
                          return makeKernel<ConvRefKernel>(std::move(A));
                        }});
  K.Variants.push_back(im2colVariant(GemmIsa::Portable, 10));
  K.Variants.push_back(im2colVariant(GemmIsa::Avx2, 20));
  K.Variants.push_back(im2colVariant(GemmIsa::Avx512, 30));
  K.Variants.push_back(depthwiseVariant());
  K.Variants.push_back(depthwiseAvx512Variant());
  K.Variants.push_back(smallConvVariant());
  K.Variants.push_back(directAvx512Variant());
  // These add a fused residual (passes/FuseConvResidual) in a pass after the convolution.
  for (KernelVariant &V : K.Variants)
    V = withConvResidual(std::move(V));
  // These add it in their own epilogue.
  K.Variants.push_back(winogradVariant(/*Avx512=*/true));
  K.Variants.push_back(winogradVariant(/*Avx512=*/false));
  K.Variants.push_back(pointwiseRowsVariant());
  K.TestCases = convCases;
  return K;
}

OPT_REGISTER_HEAVY_SCHEMA(Conv, convSchema());
OPT_REGISTER_KERNELS(Conv, convKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
