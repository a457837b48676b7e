// com.optimium LayerNormChannels (made by passes/FuseLayerNormChannels): LayerNorm over the channel
// axis of an NCHW (or N, C, L...) tensor, as ConvNeXt's and SegFormer's "LayerNorm2d" is exported:
// Transpose (channels last) -> LayerNormalization (last axis) -> Transpose (channels back). Inputs
// X [N, C, ...], Scale [C], Bias [C] (optional); attribute epsilon. Y[n, c, p] = (X[n, c, p] -
// mean_c) / sqrt(var_c + epsilon) * Scale[c] + Bias[c], mean and (biased) variance over c at each
// position p.
//
// The tiled variant reads X in place, a tile of 64 positions at a time: for each channel the
// tile's 64 contiguous values (one 256-byte run per channel, cache-line aligned when the plane is),
// summed into 64 lanes, then the centred squares, then the normalized outputs: three passes over
// the C x 64 tile in L1 instead of two transposes of the whole tensor and a row-wise LayerNorm.
#include <algorithm>
#include <cmath>
#include <vector>

#include "backends/native/ops/common/OpUtil.h"
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
  Ctx.Outputs[0].Type = ElementType::F32;
  Ctx.Outputs[0].Shape = X;
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

Result<LncRun> planLnc(const char *Name, const KernelContext &Ctx) {
  const TensorView &X = Ctx.Inputs[0], &Y = Ctx.Outputs[0];
  if (X.rank() < 2 || Y.Dims != X.Dims)
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
  explicit LncRefKernel(float Eps) : Eps(Eps) {}
  Status run(const KernelContext &Ctx) const override {
    ASSIGN_OR_RETURN(const LncRun R, planLnc("f32_layer_norm_channels__ref", Ctx));
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
          Y[N * R.C * R.P + C * R.P + P] = static_cast<float>((Xp[C * R.P] - Mean) * Inv * S[C] + (B ? B[C] : 0.0));
      }
    return Status::ok();
  }

private:
  float Eps;
};

/// Positions per tile: four 16-float vectors per channel row (the loops below vectorize along it).
constexpr int64_t kTile = 64;

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
    for (int64_t K = 0; K < C; ++K) {
      const float Sk = S[K], Bk = B ? B[K] : 0.0f;
      for (int64_t I = 0; I < L; ++I)
        Y[K * Stride + I] = (X[K * Stride + I] - Mean[I]) * Var[I] * Sk + Bk;
    }
  }
  float Eps;
};

bool typesOk(const KernelCreateInfo &I) {
  return inputIs(I, 0, ElementType::F32) && inputIs(I, kScale, ElementType::F32) &&
         (I.Inputs.size() <= kBias || !I.Inputs[kBias].Present || inputIs(I, kBias, ElementType::F32));
}

Result<float> epsilonOf(const KernelCreateInfo &I) { return I.N.getFloat("epsilon", 1e-5f); }

std::vector<OpTestCase> lncCases() {
  const auto X = [](std::vector<int64_t> D) { return tensorInput(std::move(D)); };
  const auto W = [](std::vector<int64_t> D) { return constInput(std::move(D)); };
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
  };
}

OpKernels lncKernels() {
  OpKernels K;
  K.Domain = kLayerNormChannelsDomain;
  K.OpType = kLayerNormChannelsOp;
  K.Variants.push_back({"f32_layer_norm_channels__ref", 0, typesOk,
                        [](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
                          ASSIGN_OR_RETURN(const float Eps, epsilonOf(I));
                          return makeKernel<LncRefKernel>(Eps);
                        }});
  K.Variants.push_back({"f32_layer_norm_channels__tiled", 10, typesOk,
                        [](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
                          ASSIGN_OR_RETURN(const float Eps, epsilonOf(I));
                          return makeKernel<LncTiledKernel>(Eps);
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
