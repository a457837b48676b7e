// com.optimium LayerNormChannels (made by passes/FuseLayerNormChannels): LayerNorm over the channel
// axis of an NCHW (or N, C, L...) tensor, as ConvNeXt's and SegFormer's "LayerNorm2d" is exported:
// Transpose (channels last) -> LayerNormalization (last axis) -> Transpose (channels back). Inputs
// X [N, C, ...], Scale [C], Bias [C] (optional); attribute epsilon. Y[n, c, p] = (X[n, c, p] -
// mean_c) / sqrt(var_c + epsilon) * Scale[c] + Bias[c], mean and (biased) variance over c at each
// position p. With channels_last = 1 (Transpose -> LayerNormalization without the Transpose back:
// ConvNeXt's blocks, whose MLP reads channels last) Y is [N, ..., C]: Y[n, p, c] is that value.
//
// The tiled variant reads X in place, a tile of 64 positions at a time: for each channel the
// tile's 64 contiguous values (one 256-byte run per channel, cache-line aligned when the plane is),
// summed into 64 lanes, then the centred squares, then the normalized outputs: three passes over
// the C x 64 tile in L1 instead of two transposes of the whole tensor and a row-wise LayerNorm.
// The channels-last variant (AVX2) computes the same tile and writes it through 8 x 8 register
// transposes: one pass instead of the Transpose's and the LayerNormalization's.
#include <algorithm>
#include <cmath>
#include <vector>

#include "backends/native/ops/common/OpUtil.h"
#include "backends/native/ops/common/SimdDispatch.h"
#include "backends/native/ops/common/Transpose256.h"
#include "backends/native/ops/common/VecMath256.h"
#include "ir/FusedOps.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

constexpr size_t kScale = 1, kBias = 2;

Status inferLnc(ShapeContext &Ctx) {
  RETURN_IF_ERROR(requireInputType(Ctx, 0, {ElementType::F32}));
  RETURN_IF_ERROR(requireSameType(Ctx, 0, kScale));
  ASSIGN_OR_RETURN(const float Eps, Ctx.N.getFloat("epsilon", 1e-5f));
  (void)Eps;
  const TensorShape &X = Ctx.Inputs[0].Shape, &S = Ctx.Inputs[kScale].Shape;
  if (X.getRank() < 2)
    return Ctx.error(ErrorCode::Shape, "input ", X.toString(), " must have a channel axis (rank >= 2)");
  if (S.getRank() != 1 || (S[0].isConst() && X[1].isConst() && S[0].value() != X[1].value()))
    return Ctx.error(ErrorCode::Shape, "scale ", S.toString(), " must be [C] for the input ", X.toString());
  RETURN_IF_ERROR(checkChannelBias(Ctx, kBias, X[1]));
  ASSIGN_OR_RETURN(const int64_t Last, Ctx.N.getInt(kLncChannelsLast, 0));
  Ctx.Outputs[0].Type = ElementType::F32;
  Ctx.Outputs[0].Shape = X;
  if (Last) { // [N, spatial..., C]
    std::vector<Expr> D{X[0]};
    for (size_t I = 2; I < X.getRank(); ++I)
      D.push_back(X[I]);
    D.push_back(X[1]);
    Ctx.Outputs[0].Shape = TensorShape(std::move(D));
  }
  return Status::ok();
}

OpSchema lncSchema() {
  OpSchema S;
  S.Domain = kLayerNormChannelsDomain;
  S.OpType = kLayerNormChannelsOp;
  S.MinInputs = 2;
  S.MaxInputs = 3;
  S.Infer = inferLnc;
  return S;
}

/// The sizes of one run: N images of C channels by P positions.
struct LncRun {
  int64_t N = 0, C = 0, P = 0;
};

/// Y's dims for X's: X's, or with channels last [N, spatial..., C].
std::vector<int64_t> lncOutDims(const std::vector<int64_t> &X, bool Last) {
  if (!Last || X.size() < 2)
    return X;
  std::vector<int64_t> D{X[0]};
  D.insert(D.end(), X.begin() + 2, X.end());
  D.push_back(X[1]);
  return D;
}

Result<LncRun> planLnc(const char *Name, const KernelContext &Ctx, bool Last = false) {
  const TensorView &X = Ctx.Inputs[0], &Y = Ctx.Outputs[0];
  if (X.rank() < 2 || Y.Dims != lncOutDims(X.Dims, Last))
    return runError(Name, "input ", joinInts(X.Dims), " and output ", joinInts(Y.Dims), " do not match");
  LncRun R;
  R.N = X.Dims[0], R.C = X.Dims[1], R.P = product(X.Dims, 2, X.rank());
  if (static_cast<int64_t>(Ctx.Inputs[kScale].elementCount()) != R.C ||
      (inputDataOrNull(Ctx, kBias) && static_cast<int64_t>(Ctx.Inputs[kBias].elementCount()) != R.C))
    return runError(Name, "scale/bias of ", Ctx.Inputs[kScale].elementCount(), " values for ", R.C, " channels");
  return R;
}

class LncRefKernel : public Kernel {
public:
  LncRefKernel(float Eps, bool Last) : Eps(Eps), Last(Last) {}
  Status run(const KernelContext &Ctx) const override {
    ASSIGN_OR_RETURN(const LncRun R, planLnc("f32_layer_norm_channels__ref", Ctx, Last));
    const float *X = Ctx.Inputs[0].data<const float>(), *S = Ctx.Inputs[kScale].data<const float>();
    const float *B = inputDataOrNull(Ctx, kBias);
    float *Y = Ctx.Outputs[0].data<float>();
    for (int64_t N = 0; N < R.N; ++N)
      for (int64_t P = 0; P < R.P; ++P) {
        const float *Xp = X + N * R.C * R.P + P;
        double Mean = 0, Var = 0;
        for (int64_t C = 0; C < R.C; ++C)
          Mean += Xp[C * R.P];
        Mean /= static_cast<double>(std::max<int64_t>(R.C, 1));
        for (int64_t C = 0; C < R.C; ++C)
          Var += (Xp[C * R.P] - Mean) * (Xp[C * R.P] - Mean);
        Var /= static_cast<double>(std::max<int64_t>(R.C, 1));
        const double Inv = 1.0 / std::sqrt(Var + static_cast<double>(Eps));
        for (int64_t C = 0; C < R.C; ++C)
          Y[Last ? (N * R.P + P) * R.C + C : N * R.C * R.P + C * R.P + P] =
              static_cast<float>((Xp[C * R.P] - Mean) * Inv * S[C] + (B ? B[C] : 0.0));
      }
    return Status::ok();
  }

private:
  float Eps;
  bool Last;
};

/// Positions per tile: four 16-float vectors per channel row (the loops below vectorize along it).
constexpr int64_t kTile = 64;

/// The statistics of a tile of L <= kTile positions (channel stride Stride): per position the
/// mean over C channels into Mean and 1 / sqrt(variance + Eps) into Var (both zeroed by the
/// caller). Inlined into each caller, so the AVX2 kernel's copy is vectorized for AVX2.
__attribute__((always_inline)) inline void tileStats(const float *X, int64_t C, int64_t Stride, int64_t L, float InvC,
                                                     float Eps, float *Mean, float *Var) {
  for (int64_t K = 0; K < C; ++K)
    for (int64_t I = 0; I < L; ++I)
      Mean[I] += X[K * Stride + I];
  for (int64_t I = 0; I < L; ++I)
    Mean[I] *= InvC;
  for (int64_t K = 0; K < C; ++K)
    for (int64_t I = 0; I < L; ++I) {
      const float D = X[K * Stride + I] - Mean[I];
      Var[I] += D * D;
    }
  for (int64_t I = 0; I < L; ++I)
    Var[I] = 1.0f / std::sqrt(Var[I] * InvC + Eps);
}

class LncTiledKernel : public Kernel {
public:
  explicit LncTiledKernel(float Eps) : Eps(Eps) {}
  Status run(const KernelContext &Ctx) const override {
    ASSIGN_OR_RETURN(const LncRun R, planLnc("f32_layer_norm_channels__tiled", Ctx));
    const float *X = Ctx.Inputs[0].data<const float>(), *S = Ctx.Inputs[kScale].data<const float>();
    const float *B = inputDataOrNull(Ctx, kBias);
    float *Y = Ctx.Outputs[0].data<float>();
    const int64_t Tiles = (R.P + kTile - 1) / kTile;
    const float InvC = 1.0f / static_cast<float>(std::max<int64_t>(R.C, 1));
    // About 16K values per task: a ConvNeXt-Tiny stem (96 channels, 56x56) gives 49 tasks.
    const size_t Grain = static_cast<size_t>(std::max<int64_t>(1, 16384 / std::max<int64_t>(1, R.C * kTile)));
    Ctx.Par.forRange(static_cast<size_t>(R.N * Tiles), Grain, [&](size_t Lo, size_t Hi) {
      for (size_t T = Lo; T < Hi; ++T) {
        const int64_t N = static_cast<int64_t>(T) / Tiles, P0 = (static_cast<int64_t>(T) % Tiles) * kTile;
        const int64_t Len = std::min(kTile, R.P - P0);
        const float *Xt = X + N * R.C * R.P + P0;
        float *Yt = Y + N * R.C * R.P + P0;
        if (Len == kTile)
          tile<kTile>(Xt, Yt, S, B, R.C, R.P, InvC);
        else
          tileAny(Xt, Yt, S, B, R.C, R.P, Len, InvC);
      }
    });
    return Status::ok();
  }

private:
  /// A full tile: the lane count is a constant, so every loop over it vectorizes.
  template <int64_t L>
  void tile(const float *X, float *Y, const float *S, const float *B, int64_t C, int64_t Stride, float InvC) const {
    float Mean[L] = {}, Var[L] = {};
    for (int64_t K = 0; K < C; ++K) {
      const float *Row = X + K * Stride;
      for (int64_t I = 0; I < L; ++I)
        Mean[I] += Row[I];
    }
    for (int64_t I = 0; I < L; ++I)
      Mean[I] *= InvC;
    for (int64_t K = 0; K < C; ++K) {
      const float *Row = X + K * Stride;
      for (int64_t I = 0; I < L; ++I) {
        const float D = Row[I] - Mean[I];
        Var[I] += D * D;
      }
    }
    for (int64_t I = 0; I < L; ++I)
      Var[I] = 1.0f / std::sqrt(Var[I] * InvC + Eps);
    for (int64_t K = 0; K < C; ++K) {
      const float *Row = X + K * Stride;
      float *Out = Y + K * Stride;
      const float Sk = S[K], Bk = B ? B[K] : 0.0f;
      for (int64_t I = 0; I < L; ++I)
        Out[I] = (Row[I] - Mean[I]) * Var[I] * Sk + Bk;
    }
  }
  /// The last, partial tile of a plane.
  void tileAny(const float *X, float *Y, const float *S, const float *B, int64_t C, int64_t Stride, int64_t L,
               float InvC) const {
    float Mean[kTile] = {}, Var[kTile] = {};
    tileStats(X, C, Stride, L, InvC, Eps, Mean, Var);
    for (int64_t K = 0; K < C; ++K) {
      const float Sk = S[K], Bk = B ? B[K] : 0.0f;
      for (int64_t I = 0; I < L; ++I)
        Y[K * Stride + I] = (X[K * Stride + I] - Mean[I]) * Var[I] * Sk + Bk;
    }
  }
  float Eps;
};

#if defined(OPT_SIMD_X86) && defined(OPT_HAVE_VECMATH256)
/// One tile of L <= kTile positions with channels last: the statistics (tileStats, vectorized
/// for AVX2 here), then per 8 positions x 8 channels the normalized
/// values, transposed in registers, each position's 8 channels one store. Y points at the tile's
/// first position ([L][C]).
OPT_TARGET_AVX2 void lncTileLastAvx2(const float *X, float *Y, const float *S, const float *B, int64_t C,
                                     int64_t Stride, int64_t L, float InvC, float Eps) {
  alignas(32) float Mean[kTile] = {}, Var[kTile] = {};
  tileStats(X, C, Stride, L, InvC, Eps, Mean, Var);
  const int64_t C8 = C / 8 * 8;
  for (int64_t I0 = 0; I0 < L; I0 += 8) {
    const int64_t Len = std::min<int64_t>(8, L - I0);
    const __m256i M = vec256::lanesBelow256(Len);
    const __m256 Mv = _mm256_load_ps(Mean + I0), Rv = _mm256_load_ps(Var + I0);
    for (int64_t K0 = 0; K0 < C8; K0 += 8) {
      __m256 V[8];
      for (int64_t K = 0; K < 8; ++K) {
        const float *Row = X + (K0 + K) * Stride + I0;
        const __m256 Xv = Len == 8 ? _mm256_loadu_ps(Row) : _mm256_maskload_ps(Row, M);
        V[K] = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_sub_ps(Xv, Mv), Rv), _mm256_set1_ps(S[K0 + K]),
                               _mm256_set1_ps(B ? B[K0 + K] : 0.0f));
      }
      vec256::transpose8x8(V);
      for (int64_t I = 0; I < Len; ++I)
        _mm256_storeu_ps(Y + (I0 + I) * C + K0, V[I]);
    }
    for (int64_t K = C8; K < C; ++K) // the last channels (not a multiple of 8) one value at a time
      for (int64_t I = I0; I < I0 + Len; ++I)
        Y[I * C + K] = (X[K * Stride + I] - Mean[I]) * Var[I] * S[K] + (B ? B[K] : 0.0f);
  }
}
#endif

class LncLastAvx2Kernel : public Kernel {
public:
  explicit LncLastAvx2Kernel(float Eps) : Eps(Eps) {}
  Status run(const KernelContext &Ctx) const override {
#if defined(OPT_SIMD_X86) && defined(OPT_HAVE_VECMATH256)
    ASSIGN_OR_RETURN(const LncRun R, planLnc("f32_layer_norm_channels__last_avx2", Ctx, true));
    const float *X = Ctx.Inputs[0].data<const float>(), *S = Ctx.Inputs[kScale].data<const float>();
    const float *B = inputDataOrNull(Ctx, kBias);
    float *Y = Ctx.Outputs[0].data<float>();
    const int64_t Tiles = (R.P + kTile - 1) / kTile;
    const float InvC = 1.0f / static_cast<float>(std::max<int64_t>(R.C, 1));
    const size_t Grain = static_cast<size_t>(std::max<int64_t>(1, 16384 / std::max<int64_t>(1, R.C * kTile)));
    Ctx.Par.forRange(static_cast<size_t>(R.N * Tiles), Grain, [&](size_t Lo, size_t Hi) {
      for (size_t T = Lo; T < Hi; ++T) {
        const int64_t N = static_cast<int64_t>(T) / Tiles, P0 = (static_cast<int64_t>(T) % Tiles) * kTile;
        lncTileLastAvx2(X + N * R.C * R.P + P0, Y + (N * R.P + P0) * R.C, S, B, R.C, R.P,
                        std::min(kTile, R.P - P0), InvC, Eps);
      }
    });
    return Status::ok();
#else
    (void)Ctx;
    return runError("f32_layer_norm_channels__last_avx2", "not built for x86 with AVX2");
#endif
  }

private:
  float Eps;
};

bool typesOk(const KernelCreateInfo &I) {
  return inputIs(I, 0, ElementType::F32) && inputIs(I, kScale, ElementType::F32) &&
         (I.Inputs.size() <= kBias || !I.Inputs[kBias].Present || inputIs(I, kBias, ElementType::F32));
}

Result<float> epsilonOf(const KernelCreateInfo &I) { return I.N.getFloat("epsilon", 1e-5f); }

bool channelsLast(const KernelCreateInfo &I) {
  auto L = I.N.getInt(kLncChannelsLast, 0);
  return L.isOk() && *L != 0;
}

std::vector<OpTestCase> lncCases() {
  const auto X = [](std::vector<int64_t> D) { return tensorInput(std::move(D)); };
  const auto W = [](std::vector<int64_t> D) { return constInput(std::move(D)); };
  const std::map<std::string, AttrValue> Last = {{"epsilon", attrFloat(1e-6f)}, {kLncChannelsLast, attrInt(1)}};
  return {
      // ConvNeXt-Tiny's stem (96 channels, 56x56: 49 full tiles) and a downsample (384, 14x14: a
      // partial tile), batch 2 with odd sizes, no bias, a 1-D signal, epsilon, non-constant scale.
      testCase("convnext_stem", {X({1, 96, 56, 56}), W({96}), W({96})}, {{"epsilon", attrFloat(1e-6f)}}),
      testCase("convnext_down_14x14", {X({1, 384, 14, 14}), W({384}), W({384})}, {{"epsilon", attrFloat(1e-6f)}}),
      testCase("batch2_odd", {X({2, 7, 5, 3}), W({7}), W({7})}),
      testCase("no_bias", {X({1, 20, 9, 8}), W({20})}),
      testCase("rank3", {X({2, 33, 70}), W({33}), W({33})}),
      testCase("epsilon_large", {X({1, 3, 4, 4}), W({3}), W({3})}, {{"epsilon", attrFloat(0.5f)}}),
      testCase("scale_not_const", {X({1, 16, 8, 8}), X({16}), X({16})}),
      // Channels last (a ConvNeXt block's LayerNorm): 96 on 56x56, 384 on 14x14 (a partial tile,
      // a partial 8-block), 768 on 7x7; odd channels and sizes with a batch of 2, no bias.
      testCase("last_convnext_56x56", {X({1, 96, 56, 56}), W({96}), W({96})}, Last),
      testCase("last_convnext_14x14", {X({1, 384, 14, 14}), W({384}), W({384})}, Last),
      testCase("last_convnext_7x7", {X({1, 768, 7, 7}), W({768}), W({768})}, Last),
      testCase("last_batch2_odd", {X({2, 13, 5, 7}), W({13}), W({13})}, Last),
      testCase("last_no_bias_rank3", {X({1, 24, 70}), W({24})}, Last),
  };
}

OpKernels lncKernels() {
  OpKernels K;
  K.Domain = kLayerNormChannelsDomain;
  K.OpType = kLayerNormChannelsOp;
  K.Variants.push_back({"f32_layer_norm_channels__ref", 0, typesOk,
                        [](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
                          ASSIGN_OR_RETURN(const float Eps, epsilonOf(I));
                          return makeKernel<LncRefKernel>(Eps, channelsLast(I));
                        }});
  K.Variants.push_back({"f32_layer_norm_channels__tiled", 10,
                        [](const KernelCreateInfo &I) { return typesOk(I) && !channelsLast(I); },
                        [](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
                          ASSIGN_OR_RETURN(const float Eps, epsilonOf(I));
                          return makeKernel<LncTiledKernel>(Eps);
                        }});
  K.Variants.push_back({"f32_layer_norm_channels__last_avx2", 10,
                        [](const KernelCreateInfo &I) { return typesOk(I) && channelsLast(I) && simdAvx2(); },
                        [](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
                          ASSIGN_OR_RETURN(const float Eps, epsilonOf(I));
                          return makeKernel<LncLastAvx2Kernel>(Eps);
                        }});
  K.TestCases = lncCases;
  return K;
}

OPT_REGISTER_SCHEMA(LayerNormChannels, lncSchema());
OPT_REGISTER_KERNELS(LayerNormChannels, lncKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
