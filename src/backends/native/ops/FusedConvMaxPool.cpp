// com.optimium FusedConvMaxPool (made by passes/FuseConvMaxPool): Y = MaxPool(clamp(Conv(X, W) + B)).
// Inputs (X [N, C, H, W], W [M, C, KH, KW], B [M]?); the Conv's attributes (group 1), its fused
// clamp in kFusedActMin/Max, and the pool's window and strides in kFusedPoolKernel /
// kFusedPoolStrides (no padding, no dilation, rounding down; a NaN wins, as in MaxPool).
//
// The small variant runs Conv's direct kernel (common/SmallConv) two output rows of a channel block
// at a time into an L1 band and pools the band (2x2, stride 2): MNIST's two convolutions, whose
// 50 KB and 25 KB outputs were written, read back by MaxPool and written again at a quarter size.
#include <algorithm>
#include <cmath>

#include "backends/native/ops/common/FusedConvPair.h"
#include "backends/native/ops/common/OpUtil.h"
#include "backends/native/ops/common/Pooling.h"
#include "backends/native/ops/common/SmallConv.h"
#include "ir/FusedOps.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct ConvPoolAttrs {
  WindowAttrs Conv, Pool;
  FusedClamp Act;
};

/// The pool's window attribute Key: two positive ints.
Result<std::vector<int64_t>> poolInts(const Node &N, const char *Key) {
  ASSIGN_OR_RETURN(std::vector<int64_t> V, N.getInts(Key, {}));
  if (V.size() != 2 || V[0] <= 0 || V[1] <= 0)
    return makeError(ErrorCode::Model, N.describe(), ": attribute '", Key, "' value ", joinInts(V),
                     " must be two positive ints");
  return V;
}

Result<ConvPoolAttrs> parseAttrs(const Node &N, const TensorShape &X, const TensorShape &Wt) {
  if (X.getRank() != 4 || Wt.getRank() != 4)
    return makeError(ErrorCode::Shape, N.describe(), ": input ", X.toString(), " and weight ", Wt.toString(),
                     " must be 4-D");
  ASSIGN_OR_RETURN(const int64_t Group, N.getInt("group", 1));
  if (Group != 1)
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'group' value ", Group, " must be 1");
  if (X[1].isConst() && Wt[1].isConst() && X[1].value() != Wt[1].value())
    return makeError(ErrorCode::Shape, N.describe(), ": input ", X.toString(), " has ", X[1].value(),
                     " channels but the weight ", Wt.toString(), " expects ", Wt[1].value());
  ConvPoolAttrs A;
  std::vector<int64_t> Kernel;
  const bool Known = Wt[2].isConst() && Wt[3].isConst();
  if (Known)
    Kernel = {Wt[2].value(), Wt[3].value()};
  ASSIGN_OR_RETURN(A.Conv, parseWindowAttrs(N, 2, Known ? &Kernel : nullptr, /*AllowCeilMode=*/false));
  ASSIGN_OR_RETURN(A.Pool.Kernel, poolInts(N, kFusedPoolKernel));
  ASSIGN_OR_RETURN(A.Pool.Strides, poolInts(N, kFusedPoolStrides));
  A.Pool.Dilations = {1, 1};
  A.Pool.Pads = {0, 0, 0, 0};
  ASSIGN_OR_RETURN(A.Act, fusedClampOf(N, kFusedActMin, kFusedActMax));
  return A;
}

Status inferConvPool(ShapeContext &Ctx) {
  RETURN_IF_ERROR(requireInputType(Ctx, 0, {ElementType::F32}));
  RETURN_IF_ERROR(requireSameType(Ctx, 0, 1));
  const TensorShape &X = Ctx.Inputs[0].Shape, &Wt = Ctx.Inputs[1].Shape;
  ASSIGN_OR_RETURN(const ConvPoolAttrs A, parseAttrs(Ctx.N, X, Wt));
  RETURN_IF_ERROR(checkChannelBias(Ctx, 2, Wt[0]));
  TensorShape ConvShape;
  RETURN_IF_ERROR(inferWindowShape(Ctx, A.Conv, X, Wt[0], ConvShape));
  Ctx.Outputs[0].Type = ElementType::F32;
  return inferWindowShape(Ctx, A.Pool, ConvShape, ConvShape[1], Ctx.Outputs[0].Shape);
}

OpSchema convPoolSchema() {
  OpSchema S;
  S.Domain = kFusedConvMaxPoolDomain;
  S.OpType = kFusedConvMaxPoolOp;
  S.MinInputs = 2;
  S.MaxInputs = 3;
  S.Infer = inferConvPool;
  return S;
}

/// Sizes of one run, checked against the output.
struct ConvPoolRun {
  WindowGeometry Conv, Pool;
  int64_t N, C, M, InPlane, OutPlane;
};

Result<ConvPoolRun> planRun(const char *Name, const ConvPoolAttrs &A, const KernelContext &Ctx) {
  const TensorView &X = Ctx.Inputs[0], &Wt = Ctx.Inputs[1], &Y = Ctx.Outputs[0];
  if (X.rank() != 4 || Wt.rank() != 4 || Y.rank() != 4)
    return runError(Name, "rank mismatch");
  ConvPoolRun R;
  R.N = X.Dims[0], R.C = X.Dims[1], R.M = Wt.Dims[0];
  R.Conv = computeWindowGeometry(A.Conv, X.Dims);
  R.Pool = computeWindowGeometry(A.Pool, {R.N, R.M, R.Conv.Out[0], R.Conv.Out[1]});
  if (Wt.Dims[1] != R.C || Wt.Dims[2] != A.Conv.Kernel[0] || Wt.Dims[3] != A.Conv.Kernel[1] || Y.Dims[0] != R.N ||
      Y.Dims[1] != R.M || Y.Dims[2] != R.Pool.Out[0] || Y.Dims[3] != R.Pool.Out[1])
    return runError(Name, "input ", joinInts(X.Dims), " and weight ", joinInts(Wt.Dims), " do not match the output ",
                    joinInts(Y.Dims));
  R.InPlane = X.Dims[2] * X.Dims[3];
  R.OutPlane = Y.Dims[2] * Y.Dims[3];
  return R;
}

/// Both ops as written: the convolution accumulated in double, rounded to float32, clamped, all of
/// it stored (as the unfused graph does), then the max pool with the first NaN of a window winning.
class ConvPoolRefKernel : public Kernel {
public:
  explicit ConvPoolRefKernel(ConvPoolAttrs A) : A(std::move(A)) {}

  Status run(const KernelContext &Ctx) const override {
    ASSIGN_OR_RETURN(const ConvPoolRun R, planRun("f32_conv_maxpool__ref", A, Ctx));
    const float *X = Ctx.Inputs[0].data<float>(), *Wt = Ctx.Inputs[1].data<float>(), *B = inputDataOrNull(Ctx, 2);
    float *Y = Ctx.Outputs[0].data<float>();
    const int64_t H = R.Conv.In[0], W = R.Conv.In[1], OH = R.Conv.Out[0], OW = R.Conv.Out[1];
    const int64_t KH = A.Conv.Kernel[0], KW = A.Conv.Kernel[1];
    std::vector<float> Conv(static_cast<size_t>(R.M * OH * OW));
    for (int64_t N = 0; N < R.N; ++N) {
      for (int64_t M = 0; M < R.M; ++M)
        for (int64_t Oh = 0; Oh < OH; ++Oh)
          for (int64_t Ow = 0; Ow < OW; ++Ow) {
            double Acc = B ? B[M] : 0.0;
            for (int64_t C = 0; C < R.C; ++C)
              for (int64_t Kh = 0; Kh < KH; ++Kh)
                for (int64_t Kw = 0; Kw < KW; ++Kw) {
                  const int64_t Ih = Oh * A.Conv.Strides[0] - R.Conv.PadBegin[0] + Kh * A.Conv.Dilations[0];
                  const int64_t Iw = Ow * A.Conv.Strides[1] - R.Conv.PadBegin[1] + Kw * A.Conv.Dilations[1];
                  if (Ih >= 0 && Ih < H && Iw >= 0 && Iw < W)
                    Acc += static_cast<double>(Wt[((M * R.C + C) * KH + Kh) * KW + Kw]) *
                           X[((N * R.C + C) * H + Ih) * W + Iw];
                }
            Conv[static_cast<size_t>((M * OH + Oh) * OW + Ow)] = A.Act(static_cast<float>(Acc));
          }
      const int64_t POH = R.Pool.Out[0], POW = R.Pool.Out[1];
      for (int64_t M = 0; M < R.M; ++M)
        for (int64_t Ph = 0; Ph < POH; ++Ph)
          for (int64_t Pw = 0; Pw < POW; ++Pw) {
            float Best = 0;
            bool Found = false;
            for (int64_t Kh = 0; Kh < A.Pool.Kernel[0]; ++Kh)
              for (int64_t Kw = 0; Kw < A.Pool.Kernel[1]; ++Kw) {
                const float V = Conv[static_cast<size_t>(
                    (M * OH + Ph * A.Pool.Strides[0] + Kh) * OW + Pw * A.Pool.Strides[1] + Kw)];
                if (!Found || V > Best || (V != V && Best == Best))
                  Best = V;
                Found = true;
              }
            Y[((N * R.M + M) * POH + Ph) * POW + Pw] = Best;
          }
    }
    return Status::ok();
  }

private:
  ConvPoolAttrs A;
};

/// The small direct convolution with the 2x2 stride-2 pool fused (common/SmallConv).
class ConvPoolSmallKernel : public Kernel {
public:
  ConvPoolSmallKernel(ConvPoolAttrs A, SmallConvWeights Packed) : A(std::move(A)), Packed(std::move(Packed)) {}

  Status run(const KernelContext &Ctx) const override {
    ASSIGN_OR_RETURN(const ConvPoolRun R, planRun("f32_conv_maxpool__small_avx512", A, Ctx));
    const float *X = Ctx.Inputs[0].data<float>(), *B = inputDataOrNull(Ctx, 2);
    float *Y = Ctx.Outputs[0].data<float>();
    SmallConvGeometry G;
    G.C = R.C, G.H = R.Conv.In[0], G.W = R.Conv.In[1], G.M = R.M, G.OH = R.Conv.Out[0], G.OW = R.Conv.Out[1];
    G.KH = A.Conv.Kernel[0], G.KW = A.Conv.Kernel[1], G.PH = R.Conv.PadBegin[0], G.PW = R.Conv.PadBegin[1];
    G.Act = A.Act;
    if (R.OutPlane == 0 || R.M == 0)
      return Status::ok();
    for (int64_t N = 0; N < R.N; ++N)
      smallConvMaxPool2x2(G, Packed, B, X + N * R.C * R.InPlane, Y + N * R.M * R.OutPlane, Ctx.Par);
    return Status::ok();
  }

private:
  ConvPoolAttrs A;
  SmallConvWeights Packed;
};

bool typesOk(const KernelCreateInfo &I) {
  return inputIs(I, 0, ElementType::F32) && inputIs(I, 1, ElementType::F32) &&
         (I.Inputs.size() < 3 || !I.Inputs[2].Present || inputIs(I, 2, ElementType::F32));
}

Result<ConvPoolAttrs> attrsFor(const KernelCreateInfo &I) {
  return parseAttrs(I.N, I.Inputs[0].Shape, I.Inputs[1].Shape);
}

KernelVariant smallVariant() {
  const auto Supports = [](const KernelCreateInfo &I) {
    if (!typesOk(I) || !smallConvAvailable() || !inputIsConst(I, 1))
      return false;
    const Result<ConvPoolAttrs> A = attrsFor(I);
    if (!A.isOk())
      return false;
    const WindowAttrs &C = A.value().Conv, &P = A.value().Pool;
    const std::vector<int64_t> &D = I.Inputs[1].Const->Dims;
    const int64_t Taps = C.Kernel[0] * C.Kernel[1];
    return C.Strides == std::vector<int64_t>{1, 1} && C.Dilations == std::vector<int64_t>{1, 1} &&
           P.Kernel == std::vector<int64_t>{2, 2} && P.Strides == std::vector<int64_t>{2, 2} && Taps >= 2 &&
           D[0] <= kSmallConvMaxOutputChannels && D[1] * Taps <= kSmallConvMaxReduction;
  };
  return {"f32_conv_maxpool__small_avx512", 10, Supports,
          [](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
            ASSIGN_OR_RETURN(ConvPoolAttrs A, attrsFor(I));
            const ConstData &Wt = *I.Inputs[1].Const;
            // The tile shape follows the convolution's row width: the one layout a known width
            // needs, both when it is only known per run.
            const TensorShape &YS = I.Outputs[0].Shape;
            const TensorShape &XS = I.Inputs[0].Shape;
            const bool Known = XS[3].isConst() && YS.getRank() == 4;
            const bool Pixels =
                Known && smallConvPixelTiles(windowOutputSize<int64_t>(A.Conv, 1, XS[3].value()), Wt.Dims[0]);
            SmallConvWeights Packed;
            packSmallConvWeights(I, 1, "f32_conv_maxpool__small_avx512", !Known || !Pixels, !Known || Pixels, Packed);
            markConstConsumed(I, 1); // run() reads the packed copy only
            return makeKernel<ConvPoolSmallKernel>(std::move(A), std::move(Packed));
          }};
}

std::vector<OpTestCase> convPoolCases() {
  const auto X = [](std::vector<int64_t> D) { return tensorInput(std::move(D)); };
  const auto W = [](std::vector<int64_t> D) { return constInput(std::move(D)); };
  const auto ints = [](std::vector<int64_t> V) { return attrInts(std::move(V)); };
  const auto attrs = [&](std::vector<int64_t> Pads, std::vector<int64_t> PoolK, std::vector<int64_t> PoolS) {
    std::map<std::string, AttrValue> A{{kFusedPoolKernel, ints(std::move(PoolK))},
                                       {kFusedPoolStrides, ints(std::move(PoolS))}};
    if (!Pads.empty())
      A["pads"] = ints(std::move(Pads));
    return A;
  };
  const auto relu = [](std::map<std::string, AttrValue> A, float Lo, float Hi) {
    A[kFusedActMin] = attrFloat(Lo);
    A[kFusedActMax] = attrFloat(Hi);
    return A;
  };
  return {
      // MNIST's two layers: rows of 16-pixel vectors (28 wide), then pixel tiles (14 wide, 32
      // channels), both big enough for the pool.
      testCase("mnist_conv1", {X({1, 1, 28, 28}), W({16, 1, 5, 5}), W({16})},
               relu(attrs({2, 2, 2, 2}, {2, 2}, {2, 2}), 0.0f, INFINITY), 1e-4),
      testCase("mnist_conv2", {X({1, 16, 14, 14}), W({32, 16, 5, 5}), W({32})},
               relu(attrs({2, 2, 2, 2}, {2, 2}, {2, 2}), 0.0f, INFINITY), 1e-4),
      // Odd plane (the last row and column are not pooled), a partial channel block, no bias, no
      // clamp, batch 2, rows longer than a vector.
      testCase("odd_plane_rows", {X({2, 3, 11, 19}), W({10, 3, 3, 3})}, attrs({1, 1, 1, 1}, {2, 2}, {2, 2}), 1e-4),
      // Pixel tiles with a second, partial block of 8 channels and a clamp cutting both ways.
      testCase("pixel_tiles_clamp", {X({1, 4, 9, 9}), W({40, 4, 3, 3}), W({40})},
               relu(attrs({1, 1, 1, 1}, {2, 2}, {2, 2}), -0.3f, 0.4f), 1e-4),
      // Unpadded 2x3 window on a 2-row output: one pooled row.
      testCase("unpadded_one_row", {X({1, 6, 3, 20}), W({12, 6, 2, 3}), W({12})}, attrs({}, {2, 2}, {2, 2}), 1e-4),
      // Another pool window and stride: the reference alone.
      testCase("pool_3x3_s2_reference_only", {X({1, 2, 9, 9}), W({4, 2, 3, 3}), W({4})},
               attrs({1, 1, 1, 1}, {3, 3}, {2, 2})),
  };
}

OpKernels convPoolKernels() {
  OpKernels K;
  K.Domain = kFusedConvMaxPoolDomain;
  K.OpType = kFusedConvMaxPoolOp;
  K.Variants.push_back({"f32_conv_maxpool__ref", 0, typesOk,
                        [](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
                          ASSIGN_OR_RETURN(ConvPoolAttrs A, attrsFor(I));
                          return makeKernel<ConvPoolRefKernel>(std::move(A));
                        }});
  K.Variants.push_back(smallVariant());
  K.TestCases = convPoolCases;
  return K;
}

OPT_REGISTER_HEAVY_SCHEMA(FusedConvMaxPool, convPoolSchema());
OPT_REGISTER_KERNELS(FusedConvMaxPool, convPoolKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
