// Conv (f32): 1-D/2-D/3-D convolution with groups, pads/auto_pad, strides, dilations and optional
// bias. The reference handles any spatial rank; the optimized variants are 2-D only: im2col into
// the blocked SGEMM (1x1 stride-1 convs skip im2col: the input already is the GEMM's B), Winograd
// for 3x3 stride-1 convs (common/Winograd.h), and a direct depthwise kernel. Constant weights are
// packed once at creation. A residual fused by passes/FuseConvResidual is input 3.
//
// This file: the schema, the shared helpers (conv/ConvCommon.h), the reference kernel, the harness
// cases and the variant list; each optimized algorithm is in its own file of ops/conv/.
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "backends/native/ops/common/ConvResidual.h"
#include "backends/native/ops/conv/ConvCommon.h"
#include "ir/FusedOps.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace conv {

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
  ASSIGN_OR_RETURN(A.Act, convFusedActOf(N));
  return A;
}

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

bool convTypesOk(const KernelCreateInfo &I) {
  return inputIs(I, 0, ElementType::F32) && inputIs(I, 1, ElementType::F32) &&
         (I.Inputs.size() < 3 || !I.Inputs[2].Present || inputIs(I, 2, ElementType::F32));
}

bool is2D(const KernelCreateInfo &I) { return I.Inputs[0].Shape.getRank() == 4; }

Result<ConvAttrs> attrsFor(const KernelCreateInfo &I) {
  return parseConvAttrs(I.N, I.Inputs[0].Shape, I.Inputs[1].Shape);
}

} // namespace conv

namespace {

using namespace conv;

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
    // Per element with std::exp (FusedAct's scalar form), so the harness checks the vector forms.
    float *Out = Ctx.Outputs[0].data<float>();
    for (size_t I = 0, E = Ctx.Outputs[0].elementCount(); I < E; ++I)
      Out[I] = A.Act(Out[I]);
    return Status::ok();
  }

private:
  ConvAttrs A;
};

std::vector<OpTestCase> convCases() {
  const auto X = [](std::vector<int64_t> D) { return tensorInput(std::move(D)); };
  const auto W = [](std::vector<int64_t> D) { return constInput(std::move(D)); };
  const auto ints = [](std::vector<int64_t> V) { return attrInts(std::move(V)); };
  // A fused activation other than a clamp (passes/FuseConvActivation), on top of Attrs.
  const auto act = [](std::map<std::string, AttrValue> Attrs, const char *Kind, float Alpha = 1.0f, float Beta = 0.0f) {
    Attrs[kFusedActKind] = attrString(Kind);
    Attrs[kFusedActAlpha] = attrFloat(Alpha);
    Attrs[kFusedActBeta] = attrFloat(Beta);
    return Attrs;
  };
  const auto hswish = [&](std::map<std::string, AttrValue> Attrs) {
    return act(std::move(Attrs), kFusedActHardSwish, 1.0f / 6.0f, 0.5f);
  };
  const auto hsigmoid = [&](std::map<std::string, AttrValue> Attrs) {
    return act(std::move(Attrs), kFusedActHardSigmoid, 0.1666667f, 0.5f);
  };
  const std::map<std::string, AttrValue> Pad1 = {{"pads", ints({1, 1, 1, 1})}};
  return {
      // Fused activations in every variant's epilogue: SiLU, Sigmoid, HardSwish, HardSigmoid
      // (alpha/beta), SiLU with alpha (ONNX Swish).
      testCase("silu_3x3", {X({1, 3, 8, 8}), W({4, 3, 3, 3}), W({4})}, act(Pad1, kFusedActSilu)),
      testCase("swish_alpha_3x3", {X({1, 3, 8, 8}), W({4, 3, 3, 3}), W({4})}, act(Pad1, kFusedActSilu, 0.7f)),
      testCase("sigmoid_groups", {X({1, 4, 6, 6}), W({6, 2, 3, 3}), W({6})},
               act({{"group", attrInt(2)}, {"pads", ints({1, 1, 1, 1})}}, kFusedActSigmoid)),
      testCase("hard_sigmoid_alpha_beta", {X({1, 3, 9, 8}), W({4, 3, 3, 3}), W({4})},
               act(Pad1, kFusedActHardSigmoid, 0.3f, 0.6f)),
      testCase("silu_depthwise_flat", {X({2, 8, 14, 14}), W({8, 1, 3, 3}), W({8})},
               act({{"group", attrInt(8)}, {"pads", ints({1, 1, 1, 1})}}, kFusedActSilu)),
      testCase("hswish_depthwise_5x5_stride2", {X({1, 6, 23, 41}), W({6, 1, 5, 5}), W({6})},
               hswish({{"group", attrInt(6)}, {"strides", ints({2, 2})}, {"pads", ints({2, 2, 2, 2})}})),
      testCase("silu_depthwise_wide_rows", {X({1, 3, 20, 37}), W({3, 1, 3, 3}), W({3})},
               act({{"group", attrInt(3)}, {"pads", ints({1, 1, 1, 1})}}, kFusedActSilu)),
      testCase("silu_depthwise_stride2", {X({1, 16, 28, 28}), W({16, 1, 3, 3}), W({16})},
               act({{"group", attrInt(16)}, {"strides", ints({2, 2})}, {"pads", ints({0, 0, 1, 1})}}, kFusedActSilu)),
      // Channels in lanes over the pool, ranges of several 8-channel items (depthwiseLanes8Grain) with a
      // partial last block; and a stride-2 layer whose transposes make it worth a fan-out.
      testCase("silu_depthwise_7x7_ranges", {X({1, 300, 7, 7}), W({300, 1, 5, 5}), W({300})},
               act({{"group", attrInt(300)}, {"pads", ints({2, 2, 2, 2})}}, kFusedActSilu)),
      testCase("depthwise_stride2_14x14_threaded", {X({1, 200, 14, 14}), W({200, 1, 3, 3}), W({200})},
               {{"group", attrInt(200)}, {"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}}),
      testCase("silu_pointwise_small_plane", {X({1, 64, 5, 6}), W({48, 64, 1, 1}), W({48})}, act({}, kFusedActSilu),
               1e-4),
      testCase("hswish_pointwise_threaded", {X({2, 200, 7, 7}), W({128, 200, 1, 1}), W({128})}, hswish({}), 1e-4),
      // Squeeze-excitation's 1x1 convolutions on a 1x1 plane.
      testCase("silu_se_reduce", {X({1, 96, 1, 1}), W({4, 96, 1, 1}), W({4})}, act({}, kFusedActSilu), 1e-4),
      testCase("hsigmoid_se_expand", {X({1, 24, 1, 1}), W({96, 24, 1, 1}), W({96})}, hsigmoid({}), 1e-4),
      testCase("sigmoid_se_expand", {X({2, 8, 1, 1}), W({40, 8, 1, 1}), W({40})}, act({}, kFusedActSigmoid), 1e-4),
      testCase("silu_pointwise_rows", {X({1, 24, 28, 30}), W({36, 24, 1, 1}), W({36})}, act({}, kFusedActSilu), 1e-4),
      testCase("hswish_pointwise_rows_residual", {X({1, 40, 29, 31}), W({26, 40, 1, 1}), W({26}), X({1, 26, 29, 31})},
               hswish({{kFusedResidual, attrInt(1)}}), 1e-4),
      testCase("silu_pointwise_many_channels", {X({1, 200, 5, 7}), W({1536, 200, 1, 1}), W({1536})},
               act({}, kFusedActSilu), 1e-4),
      testCase("silu_small_plane_transposed", {X({2, 24, 7, 7}), W({40, 24, 3, 3}), W({40})}, act(Pad1, kFusedActSilu),
               1e-4),
      testCase("hswish_stem_stride2", {X({1, 3, 23, 37}), W({16, 3, 3, 3}), W({16})},
               hswish({{"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}})),
      testCase("silu_stem_wide_stride2", {X({1, 3, 20, 100}), W({32, 3, 3, 3}), W({32})},
               act({{"pads", ints({1, 1, 1, 1})}, {"strides", ints({2, 2})}}, kFusedActSilu)),
      testCase("silu_direct_5x5", {X({1, 16, 14, 14}), W({32, 16, 5, 5}), W({32})},
               act({{"pads", ints({2, 2, 2, 2})}}, kFusedActSilu), 1e-4),
      testCase("hswish_direct_pixels_tail", {X({1, 4, 9, 15}), W({48, 4, 3, 3}), W({48})}, hswish(Pad1), 1e-4),
      testCase("silu_winograd_f2", {X({1, 32, 12, 12}), W({64, 32, 3, 3}), W({64})}, act(Pad1, kFusedActSilu), 1e-4),
      testCase("hswish_winograd_f4", {X({1, 16, 24, 26}), W({24, 16, 3, 3}), W({24})}, hswish(Pad1), 1e-4),
      testCase("silu_winograd_residual", {X({1, 48, 10, 10}), W({50, 48, 3, 3}), W({50}), X({1, 50, 10, 10})},
               act({{"pads", ints({1, 1, 1, 1})}, {kFusedResidual, attrInt(1)}}, kFusedActSilu), 1e-4),
      testCase("hsigmoid_residual_depthwise", {X({1, 4, 7, 7}), W({4, 1, 3, 3}), W({4}), X({1, 4, 7, 7})},
               hsigmoid({{"group", attrInt(4)}, {"pads", ints({1, 1, 1, 1})}, {kFusedResidual, attrInt(1)}})),
      testCase("silu_1d", {X({2, 3, 10}), W({4, 3, 3}), W({4})}, act({{"pads", ints({1, 2})}}, kFusedActSilu)),
      // Channels in lanes (conv/ConvDepthwiseBlocked.cpp): EfficientNet's 5x5 SiLU layers, MobileNetV3's
      // HardSwish ones, a strided 3x3.
      testCase("silu_depthwise_blocked_5x5", {X({1, 20, 14, 13}), W({20, 1, 5, 5}), W({20})},
               act({{"group", attrInt(20)}, {"pads", ints({2, 2, 2, 2})}}, kFusedActSilu)),
      testCase("hswish_depthwise_blocked_5x5_stride2", {X({2, 33, 9, 11}), W({33, 1, 5, 5}), W({33})},
               hswish({{"group", attrInt(33)}, {"strides", ints({2, 2})}, {"pads", ints({1, 2, 2, 1})}})),
      testCase("sigmoid_depthwise_blocked_3x3_stride2", {X({1, 21, 13, 18}), W({21, 1, 3, 3}), W({21})},
               act({{"group", attrInt(21)}, {"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}}, kFusedActSigmoid)),
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
      // Channels in lanes (conv/ConvDepthwiseBlocked*.cpp): 5- and 7-wide kernels, 3x3, strides 1 and 2,
      // channels not a multiple of 16, asymmetric and no padding, tiny planes, batch 2, the clamp,
      // strips of rows over the pool.
      testCase("depthwise_blocked_5x5_relu6", {X({1, 20, 14, 13}), W({20, 1, 5, 5}), W({20})},
               {{"group", attrInt(20)}, {"pads", ints({2, 2, 2, 2})}, {kFusedActMin, attrFloat(0.0f)},
                {kFusedActMax, attrFloat(0.5f)}}),
      testCase("depthwise_blocked_5x5_stride2_asym", {X({2, 33, 9, 11}), W({33, 1, 5, 5}), W({33})},
               {{"group", attrInt(33)}, {"strides", ints({2, 2})}, {"pads", ints({1, 2, 2, 1})}}),
      testCase("depthwise_blocked_5x5_valid_stride2", {X({1, 16, 12, 21}), W({16, 1, 5, 5})},
               {{"group", attrInt(16)}, {"strides", ints({2, 2})}}),
      testCase("depthwise_blocked_7x7_small_plane", {X({1, 17, 7, 7}), W({17, 1, 7, 7}), W({17})},
               {{"group", attrInt(17)}, {"pads", ints({3, 3, 3, 3})}}),
      testCase("depthwise_blocked_7x7_stride2", {X({1, 5, 23, 19}), W({5, 1, 7, 7}), W({5})},
               {{"group", attrInt(5)}, {"strides", ints({2, 2})}, {"pads", ints({3, 2, 1, 3})},
                {kFusedActMin, attrFloat(-0.3f)}, {kFusedActMax, attrFloat(0.4f)}}),
      testCase("depthwise_blocked_7x7_tiny", {X({2, 3, 2, 3}), W({3, 1, 7, 7})}, {{"group", attrInt(3)}, {"pads", ints({3, 3, 3, 3})}}),
      testCase("depthwise_blocked_7x7_threaded", {X({1, 40, 30, 37}), W({40, 1, 7, 7}), W({40})},
               {{"group", attrInt(40)}, {"pads", ints({3, 3, 3, 3})}}),
      testCase("depthwise_blocked_rect", {X({1, 18, 10, 15}), W({18, 1, 3, 7}), W({18})},
               {{"group", attrInt(18)}, {"strides", ints({1, 2})}, {"pads", ints({1, 0, 1, 4})}}),
      testCase("depthwise_blocked_same_upper", {X({1, 24, 15, 16}), W({24, 1, 7, 5})},
               {{"group", attrInt(24)}, {"auto_pad", attrString("SAME_UPPER")}, {"strides", ints({2, 1})}}),
      testCase("depthwise_blocked_3x3_stride2", {X({1, 21, 13, 18}), W({21, 1, 3, 3}), W({21})},
               {{"group", attrInt(21)}, {"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}}),
      testCase("depthwise_blocked_3x3_narrow", {X({1, 35, 7, 7}), W({35, 1, 3, 3}), W({35})},
               {{"group", attrInt(35)}, {"pads", ints({1, 0, 1, 2})}, {kFusedActMin, attrFloat(0.0f)}}),
      testCase("depthwise_blocked_residual", {X({1, 20, 9, 9}), W({20, 1, 5, 5}), W({20}), X({1, 20, 9, 9})},
               {{"group", attrInt(20)}, {"pads", ints({2, 2, 2, 2})}, {kFusedResidual, attrInt(1)},
                {kFusedActMin, attrFloat(0.0f)}}),
      testCase("depthwise_multiplier", {X({1, 3, 5, 5}), W({6, 1, 3, 3})}, {{"group", attrInt(3)}}),
      // The AVX2 plane kernel (common/PlaneWindow, 8 outputs per vector): planes narrower than 8
      // and not a multiple of 8 wide, 7x7 (ConvNeXt) with dilation 2, vertical stride 3,
      // asymmetric pads, interior blocks two at a time, the clamp with NaN inputs (NaN passes),
      // SiLU and HardSwish applied per finished rows.
      testCase("depthwise_avx2_narrow_3x3", {X({2, 3, 9, 5}), W({3, 1, 3, 3}), W({3})},
               {{"group", attrInt(3)}, {"pads", ints({1, 1, 1, 1})}, {kFusedActMin, attrFloat(0.0f)},
                {kFusedActMax, attrFloat(0.5f)}}),
      testCase("depthwise_avx2_narrow_stride2", {X({1, 4, 11, 3}), W({4, 1, 3, 3}), W({4})},
               {{"group", attrInt(4)}, {"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}}),
      testCase("depthwise_avx2_7x7_dilated", {X({1, 3, 21, 45}), W({3, 1, 7, 7}), W({3})},
               {{"group", attrInt(3)}, {"dilations", ints({2, 2})}, {"pads", ints({6, 5, 4, 6})}}),
      testCase("depthwise_avx2_7x7_stride2", {X({1, 3, 30, 61}), W({3, 1, 7, 7})},
               {{"group", attrInt(3)}, {"strides", ints({2, 2})}, {"pads", ints({3, 3, 3, 3})}}),
      testCase("depthwise_avx2_5x5_wide", {X({1, 2, 17, 83}), W({2, 1, 5, 5}), W({2})},
               {{"group", attrInt(2)}, {"pads", ints({2, 2, 2, 2})}}),
      testCase("depthwise_avx2_vstride3_asym", {X({1, 3, 16, 26}), W({3, 1, 3, 5}), W({3})},
               {{"group", attrInt(3)}, {"strides", ints({3, 1})}, {"pads", ints({0, 3, 2, 0})}}),
      testCase("depthwise_avx2_stride2_dilated2", {X({1, 2, 19, 40}), W({2, 1, 3, 3}), W({2})},
               {{"group", attrInt(2)}, {"strides", ints({2, 2})}, {"dilations", ints({2, 2})}, {"pads", ints({2, 2, 2, 2})}}),
      testCase("depthwise_avx2_clamp_nan", {valuesInput({1, 3, 10, 19}, nanSprinkled(3 * 10 * 19, 23), ElementType::F32, false),
                                            W({3, 1, 3, 3}), W({3})},
               {{"group", attrInt(3)}, {"pads", ints({1, 1, 1, 1})}, {kFusedActMin, attrFloat(0.0f)},
                {kFusedActMax, attrFloat(0.5f)}}),
      testCase("depthwise_avx2_stride2_nan", {valuesInput({1, 2, 12, 35}, nanSprinkled(2 * 12 * 35, 41), ElementType::F32, false),
                                             W({2, 1, 3, 3}), W({2})},
               {{"group", attrInt(2)}, {"strides", ints({2, 2})}, {"pads", ints({0, 0, 1, 1})}, {kFusedActMin, attrFloat(-0.2f)},
                {kFusedActMax, attrFloat(0.3f)}}),
      testCase("silu_depthwise_avx2_7x7", {X({1, 4, 14, 14}), W({4, 1, 7, 7}), W({4})},
               act({{"group", attrInt(4)}, {"pads", ints({3, 3, 3, 3})}}, kFusedActSilu)),
      testCase("hswish_depthwise_avx2_stride2", {X({1, 5, 29, 29}), W({5, 1, 3, 3}), W({5})},
               hswish({{"group", attrInt(5)}, {"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}})),
      // The AVX2 channels-in-lanes kernel (conv/ConvDepthwiseBlockedAvx2, 8 channels per block):
      // channel counts not a multiple of 8, planes narrower than 8 and odd widths (the 8-pixel
      // transposes straddle rows), runs of 8 pixels (6 for 7x7) with every tail length, strides 1
      // and 2, asymmetric pads, each fused activation in registers, NaN through the clamp, two
      // images, and a layer large enough to split over the pool.
      testCase("depthwise_blocked_avx2_3x3_odd", {X({2, 13, 7, 5}), W({13, 1, 3, 3}), W({13})},
               {{"group", attrInt(13)}, {"pads", ints({1, 1, 1, 1})}, {kFusedActMin, attrFloat(0.0f)},
                {kFusedActMax, attrFloat(0.5f)}}),
      testCase("depthwise_blocked_avx2_3x3_stride2", {X({1, 11, 29, 31}), W({11, 1, 3, 3}), W({11})},
               act({{"group", attrInt(11)}, {"strides", ints({2, 2})}, {"pads", ints({0, 0, 1, 1})}}, kFusedActSilu)),
      testCase("depthwise_blocked_avx2_5x5_tails", {X({1, 9, 15, 15}), W({9, 1, 5, 5}), W({9})},
               act({{"group", attrInt(9)}, {"pads", ints({2, 2, 2, 2})}}, kFusedActSigmoid)),
      testCase("depthwise_blocked_avx2_5x5_stride2", {X({1, 16, 14, 14}), W({16, 1, 5, 5})},
               hsigmoid({{"group", attrInt(16)}, {"strides", ints({2, 2})}, {"pads", ints({1, 2, 2, 1})}})),
      testCase("depthwise_blocked_avx2_5x5_tiny", {X({1, 6, 3, 4}), W({6, 1, 5, 5}), W({6})},
               hswish({{"group", attrInt(6)}, {"pads", ints({2, 2, 2, 2})}})),
      testCase("depthwise_blocked_avx2_7x7_tails", {X({2, 10, 13, 19}), W({10, 1, 7, 7}), W({10})},
               act({{"group", attrInt(10)}, {"pads", ints({3, 3, 3, 3})}}, kFusedActSilu, 0.7f)),
      testCase("depthwise_blocked_avx2_7x7_stride2", {X({1, 7, 20, 17}), W({7, 1, 7, 7}), W({7})},
               {{"group", attrInt(7)}, {"strides", ints({2, 2})}, {"pads", ints({3, 2, 2, 3})}}),
      testCase("depthwise_blocked_avx2_5x3_rect", {X({1, 12, 9, 10}), W({12, 1, 5, 3}), W({12})},
               {{"group", attrInt(12)}, {"strides", ints({1, 2})}, {"pads", ints({2, 1, 2, 1})}}),
      testCase("depthwise_blocked_avx2_clamp_nan",
               {valuesInput({1, 9, 7, 7}, nanSprinkled(9 * 7 * 7, 17), ElementType::F32, false), W({9, 1, 5, 5}), W({9})},
               {{"group", attrInt(9)}, {"pads", ints({2, 2, 2, 2})}, {kFusedActMin, attrFloat(-0.2f)},
                {kFusedActMax, attrFloat(0.3f)}}),
      testCase("depthwise_blocked_avx2_silu_nan",
               {valuesInput({1, 8, 6, 11}, nanSprinkled(8 * 6 * 11, 29), ElementType::F32, false), W({8, 1, 3, 3}), W({8})},
               act({{"group", attrInt(8)}, {"pads", ints({1, 1, 1, 1})}}, kFusedActSilu)),
      testCase("depthwise_blocked_avx2_threaded", {X({1, 24, 28, 28}), W({24, 1, 5, 5}), W({24})},
               act({{"group", attrInt(24)}, {"pads", ints({2, 2, 2, 2})}}, kFusedActSilu), 2e-4),
      testCase("pointwise", {X({2, 16, 5, 5}), W({8, 16, 1, 1}), W({8})}),
      testCase("pointwise_strided", {X({1, 8, 6, 6}), W({4, 8, 1, 1})}, {{"strides", ints({2, 2})}}),
      // B read in place by the GEMM (runPhased): 13-pixel output rows, so 8-lane groups straddle the
      // two padding columns between rows (two runs per group), K = 270 past one K block; 5-pixel
      // rows (three runs in a group: the element-by-element copy); a 1x1 plane of 99 columns.
      testCase("3x3_pads_row_gaps", {X({1, 30, 11, 13}), W({20, 30, 3, 3}), W({20})},
               {{"pads", ints({1, 1, 1, 1})}, {kFusedActMin, attrFloat(0.0f)}}, 1e-4),
      testCase("3x3_pads_narrow_rows", {X({1, 4, 20, 5}), W({7, 4, 3, 3})}, {{"pads", ints({1, 1, 1, 1})}}),
      testCase("pointwise_odd_plane", {X({1, 20, 9, 11}), W({24, 20, 1, 1}), W({24})}),
      // Stride-2 packs (phase planes, grouped im2col columns) and a 5x5 plane for the transposed
      // GEMM, whose 6-pixel panels span two or three output rows.
      testCase("groups_stride2", {X({1, 8, 13, 17}), W({12, 4, 3, 3}), W({12})},
               {{"group", attrInt(2)}, {"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}}),
      testCase("small_plane_transposed_odd_channels", {X({1, 16, 6, 6}), W({37, 16, 3, 3}), W({37})},
               {{"pads", ints({1, 1, 1, 1})}, {kFusedActMin, attrFloat(0.0f)}, {kFusedActMax, attrFloat(6.0f)}}, 1e-4),
      testCase("pointwise_transposed_odd_channels", {X({1, 24, 5, 7}), W({35, 24, 1, 1}), W({35})}, {}, 1e-4),
      testCase("small_plane_transposed_stride2", {X({1, 40, 10, 10}), W({48, 40, 3, 3}), W({48})},
               {{"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}}, 1e-4),
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
      // 5e-4: the AVX2 Winograd runs it as F(4x4) (as large_k below).
      testCase("small_plane_threaded", {X({1, 64, 8, 8}), W({64, 64, 3, 3}), W({64})}, {{"pads", ints({1, 1, 1, 1})}},
               5e-4),
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
      // f32_conv__small_avx2: 4-channel quads past M (M = 6, 10), a 3-wide row (masked stores only),
      // 1- and 2-slot tiles, SiLU and hard-swish in registers, asymmetric pads.
      testCase("small_5x5_silu_tails", {X({1, 3, 7, 3}), W({6, 3, 5, 5}), W({6})},
               act({{"pads", ints({2, 1, 2, 1})}}, kFusedActSilu), 1e-4),
      testCase("small_3x4_hswish_two_slots", {X({2, 2, 5, 18}), W({10, 2, 3, 4}), W({10})},
               hswish({{"pads", ints({0, 1, 0, 2})}}), 1e-4),
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
      // 5e-4: the AVX2 Winograd runs this plane as F(4x4) (error ~1e-4 on these 360-term sums).
      testCase("residual_winograd_no_bias", {X({2, 40, 11, 13}), W({45, 40, 3, 3}), omittedInput(), X({2, 45, 11, 13})},
               {{"pads", ints({1, 1, 1, 1})}, {kFusedResidual, attrInt(1)}}, 5e-4),
      // The AVX2 Winograd (8 channels per vector, 8 x 8 transposes; F(4x4) on small planes too):
      // channels not multiples of 8 on both sides, rows of 8 + a tail, batch 2, asymmetric pads, a
      // clip; a residual with NaNs through the clamp (NaN passes; input NaNs would spread over the
      // whole 4x4 tile, as in any Winograd).
      testCase("winograd_avx2_channel_tails", {X({2, 21, 23, 19}), W({27, 21, 3, 3}), W({27})},
               {{"pads", ints({1, 1, 1, 1})}, {kFusedActMin, attrFloat(-0.3f)}, {kFusedActMax, attrFloat(0.4f)}}, 1e-4),
      testCase("winograd_avx2_relu_asym", {X({1, 16, 9, 41}), W({48, 16, 3, 3}), W({48})},
               {{"pads", ints({1, 0, 1, 2})}, {kFusedActMin, attrFloat(0.0f)}}, 1e-4),
      testCase("winograd_avx2_nan_residual",
               {X({1, 24, 17, 17}), W({40, 24, 3, 3}), W({40}),
                valuesInput({1, 40, 17, 17}, nanSprinkled(40 * 17 * 17, 29), ElementType::F32, false)},
               {{"pads", ints({1, 1, 1, 1})}, {kFusedResidual, attrInt(1)}, {kFusedActMin, attrFloat(0.0f)},
                {kFusedActMax, attrFloat(0.5f)}},
               1e-4),
      // Large-plane 1x1 (pixel runs, in-place rows): a partial run, a 4-row and a 2-row panel, a
      // residual with a clamp, no bias, batch 2, work big enough for the pool.
      testCase("pointwise_rows_residual", {X({1, 40, 29, 31}), W({26, 40, 1, 1}), W({26}), X({1, 26, 29, 31})},
               {{kFusedResidual, attrInt(1)}, {kFusedActMin, attrFloat(-0.5f)}, {kFusedActMax, attrFloat(0.5f)}},
               1e-4),
      testCase("pointwise_rows_no_bias", {X({2, 24, 28, 28}), W({16, 24, 1, 1})}, {}, 1e-4),
      testCase("pointwise_rows_relu6", {X({1, 144, 28, 30}), W({36, 144, 1, 1}), W({36})},
               {{kFusedActMin, attrFloat(0.0f)}, {kFusedActMax, attrFloat(6.0f)}}, 1e-4),
      // The AVX2 pixel runs (6 channels x 16 pixels per tile, two tiles per 12-channel panel): a
      // run ending 2 pixels into a tile (one masked vector) and one ending 13 in (both masked),
      // panels of 12 + 12 + 7 and of 5 channels (one pass), each activation in registers, a
      // residual under HardSigmoid, NaN inputs through the clamp, SiLU with alpha and no bias.
      testCase("pointwise_rows_avx2_tail2", {X({1, 20, 14, 15}), W({31, 20, 1, 1}), W({31})},
               {{kFusedActMin, attrFloat(0.0f)}, {kFusedActMax, attrFloat(0.5f)}}, 1e-4),
      testCase("pointwise_rows_avx2_tail13", {X({1, 7, 17, 13}), W({5, 7, 1, 1}), W({5})}, {}, 1e-4),
      testCase("sigmoid_pointwise_rows_avx2", {X({1, 16, 14, 14}), W({20, 16, 1, 1}), W({20})},
               act({}, kFusedActSigmoid), 1e-4),
      testCase("hsigmoid_pointwise_rows_avx2_residual", {X({2, 12, 15, 17}), W({11, 12, 1, 1}), W({11}),
                                                         X({2, 11, 15, 17})},
               hsigmoid({{kFusedResidual, attrInt(1)}}), 1e-4),
      testCase("swish_alpha_pointwise_rows_avx2_no_bias", {X({1, 9, 16, 16}), W({24, 9, 1, 1})},
               act({}, kFusedActSilu, 0.7f), 1e-4),
      testCase("pointwise_rows_avx2_clamp_nan",
               {valuesInput({1, 9, 14, 16}, nanSprinkled(9 * 14 * 16, 37), ElementType::F32, false),
                W({14, 9, 1, 1}), W({14})},
               {{kFusedActMin, attrFloat(-0.2f)}, {kFusedActMax, attrFloat(0.3f)}}, 1e-4),
      // One image whose 14x14 plane is one run, 8 panels: split into 4 groups of 2 panels over the
      // harness's 4 threads (13 tiles x 2 panels each, against runs of 64 pixels x 8 panels).
      testCase("pointwise_rows_avx2_panel_groups_residual",
               {X({1, 40, 14, 14}), W({96, 40, 1, 1}), W({96}), X({1, 96, 14, 14})},
               {{kFusedResidual, attrInt(1)}, {kFusedActMin, attrFloat(0.0f)}, {kFusedActMax, attrFloat(6.0f)}},
               1e-4),
      // 400 input channels: four chunks of 100 (partial sums through the output), the residual and
      // HardSwish on the last only.
      testCase("hswish_pointwise_rows_avx2_chunked_residual",
               {X({1, 400, 14, 15}), W({13, 400, 1, 1}), W({13}), X({1, 13, 14, 15})},
               hswish({{kFusedResidual, attrInt(1)}}), 1e-4),
      // Panels of 12 + 12 + 9 channels (the 9 in passes of 5 and 4) over two chunks of 100 input
      // channels, 17x19 pixels ending 3 into a tile; 8 channels (4 + 4) with a residual under a
      // clamp.
      testCase("pointwise_rows_avx2_9_row_panel_chunked", {X({1, 200, 17, 19}), W({33, 200, 1, 1}), W({33})},
               {{kFusedActMin, attrFloat(0.0f)}, {kFusedActMax, attrFloat(6.0f)}}, 1e-4),
      // Over 192 input channels on planes of 56x56 and up whole panels go in pairs: 40 channels as
      // a pair, 12 and 4, over 56x57 pixels (runs ending in an 8-pixel half block), with a residual
      // and a clamp; 48 channels as two pairs over two images of 59x55 (a 13-pixel tail), no bias.
      testCase("pointwise_rows_avx2_panel_pairs_residual",
               {X({1, 200, 56, 57}), W({40, 200, 1, 1}), W({40}), X({1, 40, 56, 57})},
               {{kFusedResidual, attrInt(1)}, {kFusedActMin, attrFloat(0.0f)}, {kFusedActMax, attrFloat(6.0f)}},
               1e-4),
      testCase("pointwise_rows_avx2_panel_pairs_tail", {X({2, 256, 59, 55}), W({48, 256, 1, 1})}, {}, 1e-4),
      // A 13x13 plane (10 whole 16-pixel blocks and 9 pixels), 22 panels split over the threads.
      testCase("pointwise_rows_avx2_13x13_relu", {X({1, 64, 13, 13}), W({256, 64, 1, 1}), W({256})},
               {{kFusedActMin, attrFloat(0.0f)}}, 1e-4),
      testCase("pointwise_rows_avx2_8_rows_residual",
               {X({1, 48, 23, 21}), W({8, 48, 1, 1}), W({8}), X({1, 8, 23, 21})},
               {{kFusedResidual, attrInt(1)}, {kFusedActMin, attrFloat(-0.5f)}, {kFusedActMax, attrFloat(0.5f)}},
               1e-4),
      // The AVX2 channels-in-lanes 1x1 on small planes (up to 6 pixels x 16 channels per tile,
      // balanced where the last tile would hold 1-3 pixels; output channels padded to 8): 49
      // pixels (4 tiles of 6, 5 of 5), 25 (5 of 5), 81 (11 of 6, 3 of 5), 182 (27 of 6, 4 of 5),
      // 16 (6, 6, 4), 37 in one row (7 tiles, balanced); 37 channels (16 + 16 + 8, 3 padded), 24 (16 + 8), 8, 5, 264 (an expansion from
      // 256: the deep-input rule); 300 input channels in three chunks of 100, 256 in two of 128,
      // 400 in four of 100, 130 in two of 65 (partial sums through the product); each activation,
      // residuals, NaN inputs through the clamp, no bias, two images.
      testCase("pointwise_transposed_avx2_7x7_chunked_relu6", {X({1, 300, 7, 7}), W({37, 300, 1, 1}), W({37})},
               {{kFusedActMin, attrFloat(0.0f)}, {kFusedActMax, attrFloat(6.0f)}}, 1e-4),
      testCase("pointwise_transposed_avx2_1x37_silu", {X({1, 40, 1, 37}), W({24, 40, 1, 1}), W({24})},
               act({}, kFusedActSilu, 1.0f), 1e-4),
      testCase("swish_alpha_pointwise_transposed_avx2_no_bias", {X({1, 12, 5, 5}), W({8, 12, 1, 1})},
               act({}, kFusedActSilu, 0.7f), 1e-4),
      testCase("hswish_pointwise_transposed_avx2_residual", {X({2, 28, 7, 7}), W({24, 28, 1, 1}), W({24}),
                                                             X({2, 24, 7, 7})},
               hswish({{kFusedResidual, attrInt(1)}}), 1e-4),
      testCase("sigmoid_pointwise_transposed_avx2_residual_14x13", {X({1, 400, 14, 13}), W({20, 400, 1, 1}), W({20}),
                                                                    X({1, 20, 14, 13})},
               act({{kFusedResidual, attrInt(1)}}, kFusedActSigmoid), 1e-4),
      testCase("pointwise_transposed_avx2_clamp_nan",
               {valuesInput({1, 17, 9, 9}, nanSprinkled(17 * 9 * 9, 23), ElementType::F32, false), W({14, 17, 1, 1}),
                W({14})},
               {{kFusedActMin, attrFloat(-0.2f)}, {kFusedActMax, attrFloat(0.3f)}}, 1e-4),
      testCase("pointwise_transposed_avx2_deep_expand", {X({1, 256, 7, 7}), W({264, 256, 1, 1}), W({264})}, {}, 1e-4),
      // Over 10x10 from at least 384 input channels, more output than input channels (SqueezeNet's
      // 13x13 classifier, 1000 from 512): 143 pixels (17 tiles and 7), 401 channels (25 x 16 + 1).
      testCase("pointwise_transposed_avx2_wide_expand_relu", {X({1, 384, 13, 11}), W({401, 384, 1, 1}), W({401})},
               {{kFusedActMin, attrFloat(0.0f)}}, 1e-4),
      // Split by pixels (three blocks of 16 channels, SqueezeNet's 13x13 squeeze from 384): parts
      // of 48, 32, 48 and 41 pixels over the harness's 4 threads, each against every block.
      testCase("pointwise_transposed_avx2_pixel_parts_relu", {X({1, 384, 13, 13}), W({48, 384, 1, 1}), W({48})},
               {{kFusedActMin, attrFloat(0.0f)}}, 1e-4),
      testCase("hsigmoid_pointwise_transposed_avx2_chunked_residual_4x4",
               {X({1, 130, 4, 4}), W({5, 130, 1, 1}), W({5}), X({1, 5, 4, 4})},
               hsigmoid({{kFusedResidual, attrInt(1)}}), 1e-4),
      // The strided 1x1 kernels (ResNet's downsample convolutions) on the subsampled input: output
      // planes of 15x17 (odd input width: the last even lanes one by one), 15x14 with a residual,
      // strides 3x2 over 200 channels (chunked partial sums) and 1x2; the channels-in-lanes one on
      // 7x7 and 7x8 planes with a residual and 300 channels in chunks; two images.
      testCase("pointwise_rows_strided_avx2_relu6", {X({1, 20, 30, 33}), W({31, 20, 1, 1}), W({31})},
               {{"strides", ints({2, 2})}, {kFusedActMin, attrFloat(0.0f)}, {kFusedActMax, attrFloat(6.0f)}}, 1e-4),
      testCase("hswish_pointwise_rows_strided_avx2_residual",
               {X({2, 24, 29, 28}), W({13, 24, 1, 1}), W({13}), X({2, 13, 15, 14})},
               hswish({{"strides", ints({2, 2})}, {kFusedResidual, attrInt(1)}}), 1e-4),
      testCase("pointwise_rows_strided_avx2_3x2_chunked", {X({1, 200, 45, 30}), W({14, 200, 1, 1})},
               {{"strides", ints({3, 2})}}, 1e-4),
      testCase("silu_pointwise_rows_strided_avx2_1x2", {X({1, 16, 14, 28}), W({20, 16, 1, 1}), W({20})},
               act({{"strides", ints({1, 2})}}, kFusedActSilu), 1e-4),
      testCase("sigmoid_pointwise_transposed_strided_avx2_residual",
               {X({2, 40, 14, 13}), W({24, 40, 1, 1}), W({24}), X({2, 24, 7, 7})},
               act({{"strides", ints({2, 2})}, {kFusedResidual, attrInt(1)}}, kFusedActSigmoid), 1e-4),
      testCase("pointwise_transposed_strided_avx2_chunked_relu6", {X({1, 300, 13, 16}), W({37, 300, 1, 1}), W({37})},
               {{"strides", ints({2, 2})}, {kFusedActMin, attrFloat(0.0f)}, {kFusedActMax, attrFloat(6.0f)}}, 1e-4),
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
      // The AVX2 direct kernel (16-pixel blocks, 6-channel groups): ResNet's 7x7 stride-2 stem
      // (147 taps, rows split over threads: whole-vector stores stop at each range's last row),
      // channel tails 6 + 6 + 2 + 1 and 6 + 4 + 1, an odd row width with a partial second vector,
      // a row narrower than a vector at stride 1, NaN inputs.
      testCase("direct_avx2_7x7_stem_relu", {X({1, 3, 64, 61}), W({24, 3, 7, 7}), W({24})},
               {{"strides", ints({2, 2})}, {"pads", ints({3, 3, 3, 3})}, {kFusedActMin, attrFloat(0.0f)}}, 1e-4),
      // ResNet's stem channels (64 = ten 6-channel groups + 4, each group's weights one
      // contiguous block) and small M (3 = 2 + 1, 5 = 4 + 1).
      testCase("direct_avx2_7x7_64ch", {X({1, 3, 21, 40}), W({64, 3, 7, 7}), W({64})},
               {{"strides", ints({2, 2})}, {"pads", ints({3, 3, 3, 3})}}, 1e-4),
      testCase("direct_avx2_m3", {X({1, 3, 9, 20}), W({3, 3, 3, 3})}, {{"pads", ints({1, 1, 1, 1})}}),
      testCase("direct_avx2_m5_s2", {X({1, 3, 9, 20}), W({5, 3, 3, 3}), W({5})}, {{"strides", ints({2, 2})}}),
      testCase("direct_avx2_tails_s2", {X({2, 3, 13, 45}), W({15, 3, 3, 3}), W({15})}, {{"strides", ints({2, 2})}}),
      testCase("direct_avx2_tails_s1", {X({1, 3, 6, 5}), W({11, 3, 3, 3})}, {{"pads", ints({1, 0, 1, 2})}}),
      testCase("direct_avx2_nan", {valuesInput({1, 3, 9, 35}, nanSprinkled(3 * 9 * 35, 41), ElementType::F32, false),
                                   W({8, 3, 3, 3}), W({8})},
               {{"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}}),
      // Rows wider than one chunk of gathered taps (9 blocks of 16 pixels at 27 taps): 151 outputs
      // = a full chunk + a 7-pixel one, channels 6 + 6 + 1, a clamp cutting both ways.
      testCase("direct_avx2_row_chunks_clamp", {X({1, 3, 7, 301}), W({13, 3, 3, 3}), W({13})},
               {{"strides", ints({2, 2})},
                {"pads", ints({1, 1, 1, 1})},
                {kFusedActMin, attrFloat(-0.2f)},
                {kFusedActMax, attrFloat(0.3f)}},
               1e-4),
      // openWakeWord's embedding CNN (tf2onnx): 3x1 windows on 8-wide planes, 72 channels.
      testCase("tall_3x1_narrow_plane", {X({2, 72, 32, 8}), W({72, 72, 3, 1}), W({72})}, {}, 1e-4),
      testCase("tall_3x1_narrow_plane_b1", {X({1, 72, 30, 8}), W({72, 72, 3, 1}), W({72})}, {}, 1e-4),
      // bf16 compute (passes/Bf16Compute): 1x1 (in place, strided), 3x3 padded with odd K (27),
      // a 7x7 stride-2 stem, a small plane, a deep K over one block, residual + clamp, no bias,
      // a grouped conv (stays float32).
      testCase("bf16c_pointwise", {X({2, 40, 9, 11}), W({70, 40, 1, 1}), W({70})}, {{kComputeBf16, attrInt(1)}}),
      testCase("bf16c_pointwise_strided", {X({1, 24, 12, 12}), W({40, 24, 1, 1})},
               {{kComputeBf16, attrInt(1)}, {"strides", ints({2, 2})}}),
      testCase("bf16c_3x3_odd_k", {X({1, 3, 17, 19}), W({20, 3, 3, 3}), W({20})},
               {{kComputeBf16, attrInt(1)}, {"pads", ints({1, 1, 1, 1})}}),
      testCase("bf16c_stem_7x7_s2", {X({1, 3, 30, 30}), W({16, 3, 7, 7}), W({16})},
               {{kComputeBf16, attrInt(1)}, {"pads", ints({3, 3, 3, 3})}, {"strides", ints({2, 2})}}),
      testCase("bf16c_small_plane", {X({1, 64, 7, 7}), W({48, 64, 3, 3}), W({48})},
               {{kComputeBf16, attrInt(1)}, {"pads", ints({1, 1, 1, 1})}}),
      testCase("bf16c_deep_k", {X({1, 80, 6, 6}), W({36, 80, 3, 3})}, {{kComputeBf16, attrInt(1)}}),
      testCase("bf16c_residual_relu", {X({1, 32, 10, 10}), W({24, 32, 3, 3}), W({24}), X({1, 24, 10, 10})},
               {{kComputeBf16, attrInt(1)}, {"pads", ints({1, 1, 1, 1})}, {kFusedResidual, attrInt(1)},
                {kFusedActMin, attrFloat(0.0f)}}),
      testCase("bf16c_grouped", {X({1, 8, 6, 6}), W({8, 4, 3, 3})}, {{kComputeBf16, attrInt(1)}, {"group", attrInt(2)}}),
      testCase("1d", {X({2, 3, 10}), W({4, 3, 3}), W({4})}, {{"pads", ints({1, 2})}, {"strides", ints({2})}}),
      testCase("3d", {X({1, 2, 5, 6, 4}), W({3, 2, 2, 3, 2}), W({3})},
               {{"pads", ints({1, 0, 1, 0, 1, 0})}, {"dilations", ints({1, 2, 1})}}),
      // The AVX2 plane kernel's stride-2 path (common/PlaneWindow.cpp dwBlockS2Avx2: even lanes of
      // 16 inputs kept in shuffle order, odd taps from the previous tap's loads): planes wider than
      // 32 and not a multiple of 8 (interior blocks two at a time, masked tails), TF-style and
      // asymmetric pads, an even kernel width, vertical stride 1, 5x5, each fused activation, NaN
      // through the clamp. Last in the list, so the cases above keep their seeds.
      testCase("silu_depthwise_avx2_s2_wide", {X({1, 3, 21, 75}), W({3, 1, 3, 3}), W({3})},
               act({{"group", attrInt(3)}, {"strides", ints({2, 2})}, {"pads", ints({0, 0, 1, 1})}}, kFusedActSilu)),
      testCase("hsigmoid_depthwise_avx2_s2_wide", {X({2, 2, 18, 113}), W({2, 1, 3, 3}), W({2})},
               hsigmoid({{"group", attrInt(2)}, {"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}})),
      testCase("sigmoid_depthwise_avx2_s2_5x5_wide", {X({1, 2, 20, 67}), W({2, 1, 5, 5}), W({2})},
               act({{"group", attrInt(2)}, {"strides", ints({2, 2})}, {"pads", ints({2, 2, 2, 2})}}, kFusedActSigmoid)),
      testCase("hswish_depthwise_avx2_s2_kw4", {X({1, 2, 10, 50}), W({2, 1, 3, 4}), W({2})},
               hswish({{"group", attrInt(2)}, {"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 2})}})),
      testCase("swish_depthwise_avx2_hstride2", {X({1, 3, 12, 51}), W({3, 1, 3, 3})},
               act({{"group", attrInt(3)}, {"strides", ints({1, 2})}, {"pads", ints({1, 0, 1, 1})}}, kFusedActSilu, 0.7f)),
      testCase("depthwise_avx2_s2_wide_nan", {valuesInput({1, 2, 13, 82}, nanSprinkled(2 * 13 * 82, 43), ElementType::F32, false),
                                              W({2, 1, 3, 3}), W({2})},
               {{"group", attrInt(2)}, {"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}, {kFusedActMin, attrFloat(0.0f)},
                {kFusedActMax, attrFloat(0.4f)}}),
      // Stride-2 3x3 (ResNet's downsampling conv2) through the im2col GEMM: a 7x7 output (the
      // transposed GEMM in the portable and AVX-512 variants: 9 six-row pixel panels; runTaps in
      // the AVX2 one: 4 tiles of 6 pixels and 5 of 5), one task's rows, K past one GemmKC block; col^T panel rows stored whole but
      // the last), and phase planes whose rows hold whole 8-lane segments, a left pad (the first
      // segment starts at lane 1) and an odd width.
      testCase("stride2_3x3_transposed_7x7", {X({1, 72, 14, 13}), W({40, 72, 3, 3}), W({40})},
               {{"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}, {kFusedActMin, attrFloat(0.0f)}}, 1e-4),
      testCase("stride2_3x3_phase_planes", {X({2, 24, 37, 46}), W({20, 24, 3, 3}), W({20})},
               {{"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}}, 1e-4),
      testCase("stride2_3x3_phase_planes_odd", {X({1, 16, 30, 33}), W({24, 16, 3, 3})},
               {{"strides", ints({2, 2})}, {"pads", ints({0, 0, 1, 1})}}, 1e-4),
      // The AVX2 tap-broadcast path of f32_conv__im2col_gemm_avx2_6x16 (runTaps: stride 2, output planes
      // over 64 pixels): pixel counts not a multiple of the 6-pixel tile (tiles across output rows),
      // output channels not a multiple of 16 (a masked bias / partial last panel), K over several
      // GemmKC blocks (partial sums between blocks), more than one 32-tile chunk, two images, no
      // bias, asymmetric pads, a 5x5 window with dilation, each fused activation, NaN through
      // the clamp.
      testCase("taps_avx2_s2_tails", {X({2, 23, 19, 27}), W({21, 23, 3, 3}), W({21})},
               {{"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}}, 1e-4),
      testCase("taps_avx2_s2_chunks_relu", {X({1, 40, 41, 38}), W({35, 40, 3, 3}), W({35})},
               {{"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}, {kFusedActMin, attrFloat(0.0f)}}, 1e-4),
      // Planes of 9 pixels (runTaps' tiles of 4 and 5) and of 3 (one 3-pixel tile).
      testCase("taps_avx2_s2_3x3_plane", {X({1, 24, 6, 5}), W({20, 24, 3, 3}), W({20})},
               {{"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}, {kFusedActMin, attrFloat(0.0f)}}, 1e-4),
      testCase("taps_avx2_s2_1x3_plane", {X({1, 24, 2, 6}), W({20, 24, 3, 3}), W({20})},
               {{"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}}, 1e-4),
      testCase("taps_avx2_s2_no_bias_asym", {X({1, 9, 22, 31}), W({16, 9, 3, 3})},
               {{"strides", ints({2, 2})}, {"pads", ints({0, 2, 1, 0})}}, 1e-4),
      testCase("taps_avx2_s2_5x5_dilated", {X({1, 6, 30, 29}), W({7, 6, 5, 5}), W({7})},
               {{"strides", ints({2, 2})}, {"pads", ints({3, 2, 3, 2})}, {"dilations", ints({2, 1})}}, 1e-4),
      testCase("taps_avx2_s2_silu", {X({1, 12, 24, 26}), W({18, 12, 3, 3}), W({18})},
               act({{"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}}, kFusedActSilu), 1e-4),
      testCase("taps_avx2_s2_hswish", {X({1, 8, 20, 20}), W({33, 8, 3, 3}), W({33})},
               hswish({{"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}}), 1e-4),
      testCase("taps_avx2_s2_nan", {valuesInput({1, 5, 18, 21}, nanSprinkled(5 * 18 * 21, 47), ElementType::F32, false),
                                    W({17, 5, 3, 3}), W({17})},
               {{"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}, {kFusedActMin, attrFloat(0.0f)},
                {kFusedActMax, attrFloat(6.0f)}}),
      testCase("taps_avx2_s2_residual", {X({1, 16, 28, 28}), W({32, 16, 3, 3}), W({32}), X({1, 32, 14, 14})},
               {{"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}, {kFusedResidual, attrInt(1)},
                {kFusedActMin, attrFloat(0.0f)}}, 1e-4),
      // runTaps reads a channels-last padded copy (taps ordered kh, kw, c): channel counts that are
      // not a multiple of the 8 x 8 transposes (29, 13), output planes of 64 pixels or fewer (were
      // the transposed GEMM's) with two images and a residual, one smaller than a tile (2 x 2), and
      // balanced chunks: 33 tiles in one chunk, 42 in two of 21.
      testCase("taps_avx2_s2_small_plane_residual", {X({2, 29, 9, 11}), W({40, 29, 3, 3}), W({40}), X({2, 40, 5, 6})},
               {{"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}, {kFusedResidual, attrInt(1)},
                {kFusedActMin, attrFloat(0.0f)}}, 1e-4),
      testCase("taps_avx2_s2_tiny_plane", {X({1, 13, 4, 4}), W({18, 13, 3, 3}), W({18})},
               {{"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}}, 1e-4),
      testCase("taps_avx2_s2_one_chunk_33_tiles", {X({1, 24, 28, 28}), W({20, 24, 3, 3}), W({20})},
               {{"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}}, 1e-4),
      testCase("taps_avx2_s2_two_chunks_hsigmoid", {X({1, 8, 41, 24}), W({24, 8, 3, 3}), W({24})},
               hsigmoid({{"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}}), 1e-4),
      // Review edges (h28): a 1x1 window with padding (not the strided pointwise kernels' case), an
      // input wider and taller than the windows reach (the padded copy cuts columns and rows), a
      // single input and output channel, and K exactly two GemmKC blocks.
      testCase("taps_avx2_s2_1x1_padded", {X({1, 7, 9, 10}), W({5, 7, 1, 1}), W({5})},
               {{"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}}, 1e-4),
      testCase("taps_avx2_s2_input_cut", {X({2, 3, 12, 30}), W({4, 3, 3, 3}), W({4})}, {{"strides", ints({2, 2})}},
               1e-4),
      testCase("taps_avx2_s2_one_channel", {X({1, 1, 17, 19}), W({1, 1, 3, 3}), W({1})},
               {{"strides", ints({2, 2})}, {"pads", ints({1, 0, 1, 2})}}, 1e-4),
      testCase("taps_avx2_s2_k_two_blocks", {X({1, 64, 16, 16}), W({17, 64, 3, 3}), W({17})},
               {{"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}}, 1e-4),
      // The strided 1x1 kernels: stride 2 down the rows only (the subsample copies whole rows), an
      // input row exactly 2 x the output (the AVX2 even-lane loads end on the row's last element),
      // and three images.
      testCase("pointwise_rows_strided_avx2_2x1", {X({1, 8, 28, 14}), W({9, 8, 1, 1}), W({9})},
               {{"strides", ints({2, 1})}}, 1e-4),
      testCase("pointwise_rows_strided_avx2_exact_row_three_images", {X({3, 5, 28, 32}), W({11, 5, 1, 1})},
               {{"strides", ints({2, 2})}}, 1e-4),
      testCase("pointwise_transposed_strided_avx2_exact_row", {X({3, 260, 14, 16}), W({9, 260, 1, 1}), W({9})},
               {{"strides", ints({2, 2})}}, 1e-4),
      // (Last, so the cases above keep their harness seeds.)
      // f32_conv__small_avx2's pixel tiles with a kernel width other than 3 or 5 (the generic tap
      // loop), M = 33 (a 16-channel half with one live channel), 45 pixels (a 3-pixel last tile).
      testCase("small_pixels_2x2_tails", {X({1, 3, 6, 10}), W({33, 3, 2, 2}), W({33})},
               {{kFusedActMin, attrFloat(0.0f)}}, 1e-4),
      // f32_conv__depthwise_blocked_avx2's full 8-channel blocks (transposes through 128-bit
      // halves): MobileNetV2's 14x14 stride-2 plane (49 outputs: an overlapping last output block)
      // in two images with the clamp, an odd plane with asymmetric pads (input rows wrapping inside
      // a full block), a 3x3 plane wider than 32 with a 17th channel, 3x3 stride 1 on 7x7 planes,
      // fewer than 8 outputs of a full block, and strips of rows whose outputs are not a multiple
      // of 8 (over the pool).
      testCase("depthwise_blocked_avx2_s2_14x14", {X({2, 16, 14, 14}), W({16, 1, 3, 3}), W({16})},
               {{"group", attrInt(16)}, {"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})},
                {kFusedActMin, attrFloat(0.0f)}, {kFusedActMax, attrFloat(0.5f)}}),
      testCase("depthwise_blocked_avx2_s2_odd_asym", {X({1, 24, 15, 15}), W({24, 1, 3, 3}), W({24})},
               {{"group", attrInt(24)}, {"strides", ints({2, 2})}, {"pads", ints({0, 1, 1, 0})}}),
      testCase("depthwise_blocked_avx2_3x3_wide", {X({1, 17, 9, 45}), W({17, 1, 3, 3}), W({17})},
               {{"group", attrInt(17)}, {"pads", ints({1, 1, 1, 1})}}),
      testCase("depthwise_blocked_avx2_3x3_7x7", {X({1, 32, 7, 7}), W({32, 1, 3, 3}), W({32})},
               {{"group", attrInt(32)}, {"pads", ints({1, 1, 1, 1})}, {kFusedActMin, attrFloat(0.0f)}}),
      testCase("depthwise_blocked_avx2_tiny_full_block", {X({1, 8, 3, 3}), W({8, 1, 3, 3})},
               {{"group", attrInt(8)}, {"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}}),
      testCase("depthwise_blocked_avx2_strips", {X({1, 24, 40, 37}), W({24, 1, 3, 3}), W({24})},
               {{"group", attrInt(24)}, {"pads", ints({1, 1, 1, 1})}}),
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
  K.Variants.push_back(depthwiseAvx2Variant());
  K.Variants.push_back(depthwiseBlockedVariant());
  K.Variants.push_back(depthwiseBlockedAvx2Variant());
  K.Variants.push_back(smallConvVariant());
  K.Variants.push_back(smallConvAvx2Variant());
  K.Variants.push_back(directAvx512Variant());
  K.Variants.push_back(directAvx2Variant());
  K.Variants.push_back(im2colBf16Variant());
  // These add a fused residual (passes/FuseConvResidual) in a pass after the convolution.
  for (KernelVariant &V : K.Variants)
    V = withConvResidual(std::move(V));
  // These add it in their own epilogue.
  K.Variants.push_back(winogradVariant(GemmIsa::Avx512));
  K.Variants.push_back(winogradVariant(GemmIsa::Avx2));
  K.Variants.push_back(winogradVariant(GemmIsa::Portable));
  K.Variants.push_back(pointwiseRowsVariant());
  K.Variants.push_back(pointwiseRowsAvx2Variant());
  K.Variants.push_back(pointwiseTransposedAvx2Variant());
  K.Variants.push_back(pointwiseRowsStridedAvx2Variant());
  K.Variants.push_back(pointwiseTransposedStridedAvx2Variant());
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
