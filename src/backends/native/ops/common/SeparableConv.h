// What the two fused 1x1 + depthwise convolution ops share beyond common/FusedConvPair
// (FusedPointwiseDepthwise: 1x1 then depthwise, inputs (X, Wp, Wd, Bp?, Bd?);
// FusedDepthwisePointwise: depthwise then 1x1, inputs (X, Wd, Wp, Bd?, Bp?)): the attributes, the
// schema and shape inference, the sizes of a run checked against the output, the depthwise plane
// geometry, the float32 type check, the row-pipeline weight packing, the reference kernel (both
// convolutions as written) and the harness's clamp attributes. Each op's file keeps its fast
// kernels, its harness cases and its registration.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "backends/native/ops/common/FusedConvPair.h"
#include "backends/native/ops/common/Gemm.h"
#include "backends/native/ops/common/PlaneWindow.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

/// The attributes of a pair node: the depthwise window and the clamp fused after each convolution.
struct SeparableAttrs {
  WindowAttrs W;        ///< the depthwise window
  FusedClamp Pointwise; ///< after the 1x1 convolution
  FusedClamp Depthwise; ///< after the depthwise convolution
};

/// Parses a pair node's attributes; In1, In2: the shapes of inputs 1 and 2 (the weights in the
/// node's order).
Result<SeparableAttrs> parseSeparableAttrs(const Node &N, const TensorShape &X, const TensorShape &In1,
                                           const TensorShape &In2, bool PointwiseFirst);
/// The same from a kernel's creation info.
Result<SeparableAttrs> separableAttrsFor(const KernelCreateInfo &I, bool PointwiseFirst);

/// The schema of a pair op (3 to 5 float32 inputs, the output's channels those of input 2).
OpSchema separableSchema(const char *OpType, bool PointwiseFirst);

/// The float32 inputs every variant needs (X, both weights, the biases when present).
bool separableTypesOk(const KernelCreateInfo &I);

/// Sizes of one run, checked against the output: C the input channels, M the output channels.
struct SeparableRun {
  WindowGeometry G;
  int64_t N, C, M, Plane, OutPlane, KH, KW;
};
Result<SeparableRun> planSeparableRun(const char *Name, const SeparableAttrs &A, const KernelContext &Ctx,
                                      bool PointwiseFirst);

/// The depthwise plane geometry of the window over Geo, with the depthwise clamp.
DepthwiseGeometry separableGeometry(const SeparableAttrs &A, const WindowGeometry &Geo);

/// Input Index (a constant 1x1 weight [M, C, 1, 1]) packed for the row pipeline
/// (packPointwiseWeights) and marked consumed.
struct RowPipelineWeights {
  AlignedFloats Packed;
  int64_t M, C;
};
/// Input Index's 1x1 weights in the row pipeline's panels (packPointwiseWeights), borrowed from the
/// packed-weights cache under Layout when it holds them.
RowPipelineWeights packRowPipelineWeights(const KernelCreateInfo &I, size_t Index, const std::string &Layout);

/// The reference variant (priority 0): both convolutions as written, the intermediate tensor in
/// full (rounded to float32 as the unfused graph stores it), both accumulated in double.
KernelVariant separableReferenceVariant(const char *Name, bool PointwiseFirst);

/// Attrs with a clamp [Lo, Hi] after the first convolution (OnFirst: kExpandActMin/Max when the
/// 1x1 runs first, kDepthwiseActMin/Max otherwise) or after the second (kFusedActMin/Max): the
/// harness cases.
std::map<std::string, AttrValue> withSeparableClamp(std::map<std::string, AttrValue> Attrs, float Lo, float Hi,
                                                    bool OnFirst, bool PointwiseFirst);

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
