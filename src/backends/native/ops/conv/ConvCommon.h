// What Conv's kernels share: the validated attributes, the sizes of one run, the helpers the
// variants' supports() checks use (defined in ops/Conv.cpp, with the schema and the reference), and
// one factory per algorithm, each in its own file of ops/conv/.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "backends/native/ops/common/FusedActivation.h"
#include "backends/native/ops/common/Gemm.h"
#include "backends/native/ops/common/OpUtil.h"
#include "backends/native/ops/common/Pooling.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace conv {

/// Attributes of a Conv node, validated against the input and weight shapes.
struct ConvAttrs {
  WindowAttrs W;
  int64_t Group = 1;
  /// A fused activation (passes/FuseConvActivation: Relu, Clip, Sigmoid, SiLU, HardSigmoid,
  /// HardSwish), applied after the bias (and the fused residual).
  FusedAct Act;

  /// Applies the activation to Count values in place.
  void applyAct(float *Y, size_t Count) const { applyFusedAct(Act, Y, Count); }
};

/// Concrete sizes of one run, checked against the output.
struct ConvRun {
  WindowGeometry G;
  int64_t N, C, M, Cg, Mg, InPlane, OutPlane, Taps;
};

/// Validates a Conv node's attributes against the input and weight shapes.
Result<ConvAttrs> parseConvAttrs(const Node &N, const TensorShape &X, const TensorShape &Wt);
/// The sizes of one run, checked against the output (runError named Name otherwise).
Result<ConvRun> planConv(const char *Name, const ConvAttrs &A, const KernelContext &Ctx);
/// The bias (input 2), or null.
const float *biasOf(const KernelContext &Ctx);
/// f32 input, weight and bias.
bool convTypesOk(const KernelCreateInfo &I);
/// A 2-D convolution (rank-4 input).
bool is2D(const KernelCreateInfo &I);
/// parseConvAttrs of the node being created.
Result<ConvAttrs> attrsFor(const KernelCreateInfo &I);
/// A 1x1 kernel, stride 1 and no padding: the input planes are the GEMM's B as they are.
bool isPlainPointwise(const WindowAttrs &W);

// The variants, by algorithm (priorities in each factory; Conv.cpp lists them).
/// im2col into the blocked SGEMM of Isa (ConvIm2col.cpp).
KernelVariant im2colVariant(GemmIsa Isa, int Priority);
/// The same with bfloat16 operands (kComputeBf16, group 1; common/GemmBf16Dot.h).
KernelVariant im2colBf16Variant();
/// A depthwise 2-D convolution (group = input channels = output channels, weight [C, 1, KH, KW]).
bool isDepthwiseConv(const KernelCreateInfo &I);
/// Direct depthwise stencil, and the AVX-512 plane kernel (ConvDepthwise.cpp).
KernelVariant depthwiseVariant();
KernelVariant depthwiseAvx512Variant();
KernelVariant depthwiseAvx2Variant();
/// Depthwise with channels in vector lanes: 5 and 7 wide, 3x3 strided or narrow (ConvDepthwiseBlocked.cpp).
KernelVariant depthwiseBlockedVariant();
/// Its AVX2 + FMA sibling, 8 channels in lanes (ConvDepthwiseBlockedAvx2.cpp).
KernelVariant depthwiseBlockedAvx2Variant();
/// Small group-1 convolutions as a direct stencil, and few-input-channel stems (ConvDirect.cpp).
KernelVariant smallConvVariant();
KernelVariant smallConvAvx2Variant();
KernelVariant directAvx512Variant();
KernelVariant directAvx2Variant();
/// Winograd for 3x3 stride-1 convolutions (ConvWinograd.cpp).
KernelVariant winogradVariant(GemmIsa Isa);
/// 1x1 convolutions on large planes, rows read in place (ConvPointwiseRows.cpp).
KernelVariant pointwiseRowsVariant();
KernelVariant pointwiseRowsAvx2Variant();
KernelVariant pointwiseTransposedAvx2Variant();
/// The AVX2 two above for 1x1 convolutions with strides (no padding), on the subsampled input.
KernelVariant pointwiseRowsStridedAvx2Variant();
KernelVariant pointwiseTransposedStridedAvx2Variant();

} // namespace conv
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
