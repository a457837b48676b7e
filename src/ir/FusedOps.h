// Contracts between the fusion passes (src/passes/) and the kernels that run what they write:
// the op types and domains of fused nodes, the internal attributes a pass sets and a kernel reads,
// and the shape limits both must agree on. They live here, below both, so a kernel never includes
// a pass (scripts/check-layers.py). Internal attribute names start with "optimium." and never
// appear in a model file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "ir/Graph.h"

namespace optimium {
namespace runtime {
namespace detail {

// --- written by passes/FuseAttention ------------------------------------------
/// Internal Attention attribute: 1 when a query row whose keys are all masked (-inf) gives NaN, as
/// the Softmax of the unfused graph does, instead of the Attention op's zeros.
constexpr const char *kAttentionMaskedRowsNaN = "optimium.masked_rows_nan";

// --- written by passes/FuseConvActivation -------------------------------------
/// Internal Conv attributes carrying the fused clamp (read by the native Conv kernels).
constexpr const char *kFusedActMin = "optimium.act_min";
constexpr const char *kFusedActMax = "optimium.act_max";

/// Internal Conv attribute: a fused activation other than a clamp (then kFusedActMin/Max are absent),
/// one of the kFusedAct* names below; its parameters in kFusedActAlpha / kFusedActBeta.
constexpr const char *kFusedActKind = "optimium.act";
constexpr const char *kFusedActAlpha = "optimium.act_alpha";
constexpr const char *kFusedActBeta = "optimium.act_beta";
/// 1 / (1 + exp(-x)) (Sigmoid).
constexpr const char *kFusedActSigmoid = "sigmoid";
/// x * sigmoid(alpha * x) (SiLU: Mul(x, Sigmoid(x)), alpha 1; ONNX Swish).
constexpr const char *kFusedActSilu = "silu";
/// max(0, min(1, alpha * x + beta)) (HardSigmoid).
constexpr const char *kFusedActHardSigmoid = "hard_sigmoid";
/// x * max(0, min(1, alpha * x + beta)) (HardSwish: alpha 1/6, beta 0.5).
constexpr const char *kFusedActHardSwish = "hard_swish";

/// The attribute names of one fused activation on a node: a clamp (Min, Max) or a kind (with Alpha,
/// Beta). Kind null: a clamp only.
struct FusedActKeys {
  const char *Min, *Max, *Kind, *Alpha, *Beta;
};
/// A Conv's own activation (the keys above).
constexpr FusedActKeys kConvActKeys{kFusedActMin, kFusedActMax, kFusedActKind, kFusedActAlpha, kFusedActBeta};

/// Whether N carries any fused activation under Keys (a clamp or a kind).
inline bool hasFusedActivation(const Node &N, const FusedActKeys &Keys = kConvActKeys) {
  return N.hasAttr(Keys.Min) || N.hasAttr(Keys.Max) || (Keys.Kind && N.hasAttr(Keys.Kind));
}

/// Copies the activation From carries under FromKeys into Attrs under ToKeys.
inline void copyFusedActivation(const Node &From, const FusedActKeys &FromKeys, std::map<std::string, AttrValue> &Attrs,
                                const FusedActKeys &ToKeys) {
  const std::pair<const char *, const char *> Pairs[] = {{FromKeys.Min, ToKeys.Min},
                                                         {FromKeys.Max, ToKeys.Max},
                                                         {FromKeys.Kind, ToKeys.Kind},
                                                         {FromKeys.Alpha, ToKeys.Alpha},
                                                         {FromKeys.Beta, ToKeys.Beta}};
  for (const auto &P : Pairs) {
    if (!P.first || !P.second)
      continue;
    auto It = From.Attrs.find(P.first);
    if (It != From.Attrs.end())
      Attrs[P.second] = It->second;
  }
}

// --- written by passes/FuseConvResidual ---------------------------------------
/// Internal Conv attribute marking input 3 as a fused residual (read by the native Conv kernels).
constexpr const char *kFusedResidual = "optimium.residual";

/// Index of the fused residual among the Conv's inputs (after X, W and the optional bias).
constexpr size_t kFusedResidualInput = 3;

// --- written by passes/FuseConvMaxPool ----------------------------------------
constexpr const char *kFusedConvMaxPoolDomain = "com.optimium";
constexpr const char *kFusedConvMaxPoolOp = "FusedConvMaxPool";

/// The pool's window and strides on the fused node (2-D ints); the Conv keeps its own attributes.
constexpr const char *kFusedPoolKernel = "optimium.pool_kernel";
constexpr const char *kFusedPoolStrides = "optimium.pool_strides";

/// The convolutions Conv's direct "small" kernel takes (backends/native/ops/common/SmallConv: group
/// 1, stride 1, dilation 1, a window of two taps or more, constant weights) are further limited to
/// at most this many output channels and C * KH * KW reduction terms. The fused node runs on that
/// kernel, so the pass fuses only such convolutions.
constexpr int64_t kSmallConvMaxOutputChannels = 64;
constexpr int64_t kSmallConvMaxReduction = 4096;

// --- written by passes/FusePointwiseDepthwise ---------------------------------
/// Domain and op type of the fused node.
constexpr const char *kFusedPointwiseDepthwiseDomain = "com.optimium";
constexpr const char *kFusedPointwiseDepthwiseOp = "FusedPointwiseDepthwise";

/// The 1x1 Conv's fused clamp on the fused node (the depthwise Conv's clamp keeps kFusedActMin/Max).
constexpr const char *kExpandActMin = "optimium.expand_act_min";
constexpr const char *kExpandActMax = "optimium.expand_act_max";
constexpr const char *kFusedDepthwisePointwiseOp = "FusedDepthwisePointwise";

/// The depthwise Conv's clamp on a FusedDepthwisePointwise node.
constexpr const char *kDepthwiseActMin = "optimium.depthwise_act_min";
constexpr const char *kDepthwiseActMax = "optimium.depthwise_act_max";

// --- written by passes/FuseSqueezeExcitation ----------------------------------
/// Squeeze-excitation as one node: inputs X [N, C, H, W], W1 [R, C, 1, 1], W2 [C, R, 1, 1], B1 [R]
/// (optional), B2 [C] (optional); Y = X * act2(W2 act1(W1 mean_hw(X) + B1) + B2) per channel.
constexpr const char *kSqueezeExcitationDomain = "com.optimium";
constexpr const char *kSqueezeExcitationOp = "SqueezeExcitation";
/// act1 (the reducing 1x1 Conv's: Relu, SiLU, ...) and act2 (the expanding one's: Sigmoid,
/// HardSigmoid, ...).
constexpr FusedActKeys kSeReduceActKeys{"optimium.se_reduce_act_min", "optimium.se_reduce_act_max",
                                        "optimium.se_reduce_act", "optimium.se_reduce_act_alpha",
                                        "optimium.se_reduce_act_beta"};
constexpr FusedActKeys kSeExpandActKeys{"optimium.se_expand_act_min", "optimium.se_expand_act_max",
                                        "optimium.se_expand_act", "optimium.se_expand_act_alpha",
                                        "optimium.se_expand_act_beta"};

// --- written by passes/FuseLayerNormChannels ----------------------------------
/// LayerNorm over the channels (axis 1) of an N, C, spatial... tensor, in place of Transpose
/// (channels last) -> LayerNormalization (last axis) -> Transpose (channels back to axis 1):
/// inputs X [N, C, ...], Scale [C], Bias [C] (optional); attribute "epsilon" (float).
constexpr const char *kLayerNormChannelsDomain = "com.optimium";
constexpr const char *kLayerNormChannelsOp = "LayerNormChannels";
/// Its attribute (int, default 0): 1 when Y is channels last, [N, spatial..., C] (passes/
/// FuseLayerNormChannels' fuseLayerNormChannelsLast: a Transpose -> LayerNormalization whose result
/// stays channels last).
constexpr const char *kLncChannelsLast = "channels_last";

// --- written by passes/FuseTransposeScaleAdd ---------------------------------
/// A channels-last tensor back to channels-first, scaled per channel, plus a channels-first one,
/// in place of Transpose (perm [0, r-1, 1, ..., r-2]) -> Mul (per-channel constant) -> Add:
/// inputs X [N, P1, ..., Pk, C], Scale (C values), R [N, C, P1, ..., Pk]; Y = Scale[c] * X + R.
constexpr const char *kTransposeScaleAddDomain = "com.optimium";
constexpr const char *kTransposeScaleAddOp = "TransposeScaleAdd";

// --- written by passes/FuseMatMulBias -----------------------------------------
/// Internal MatMul attribute: 1 when input 2 is a fused bias of the output's last dim.
constexpr const char *kFusedBias = "optimium.fused_bias";

/// Internal MatMul attribute: 1 when a Gelu (approximate "none") of the output is fused in.
constexpr const char *kFusedGelu = "optimium.fused_gelu";

/// Internal MatMul attribute: the widths N1, N2, ... of the outputs a merged MatMul writes: output
/// i holds columns [N1 + ... + N(i-1), + Ni) of A x B (B, and the fused bias, concatenated).
constexpr const char *kSplitOutputs = "optimium.split_outputs";

// --- written by passes/FuseTransposeMatMul ------------------------------------
/// Internal MatMul attribute: 1 when input 1 holds B transposed in its last two dims ([.., N, K]).
constexpr const char *kTransposeB = "optimium.transpose_b";

// --- written by passes/Bf16Weights --------------------------------------------
/// Internal MatMul/Gemm attribute: 1 when B is a constant bfloat16 matrix standing for its float32
/// values (A and the output float32).
constexpr const char *kBf16Weights = "optimium.bf16_weights";

/// Whether N carries kBf16Weights = 1.
inline bool hasBf16Weights(const Node &N) {
  const auto Flag = N.getInt(kBf16Weights, 0);
  return Flag.isOk() && Flag.value() == 1;
}

// --- written by passes/Bf16Compute (the ComputePrecision::BFloat16 load option) --------
/// Internal MatMul/Gemm/Conv attribute: 1 when the node may round its float32 operands to bfloat16
/// and accumulate in float32 (weights converted once at load). Kernels with a bf16 dot-product
/// path take it; every other kernel ignores it and computes float32.
constexpr const char *kComputeBf16 = "optimium.compute_bf16";

/// Whether N carries kComputeBf16 = 1.
inline bool hasComputeBf16(const Node &N) {
  const auto Flag = N.getInt(kComputeBf16, 0);
  return Flag.isOk() && Flag.value() == 1;
}

} // namespace detail
} // namespace runtime
} // namespace optimium
