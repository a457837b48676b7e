// Fusion of dynamically quantized MatMuls (onnxruntime.quantization.quantize_dynamic's graph):
// MatMulInteger(a_q, B, a_zp, b_zp) -> Cast(to=FLOAT) -> Mul(., Mul(a_scale, b_scale)) [-> Add(bias)]
// becomes one com.microsoft MatMulIntegerToFloat, whose VNNI kernel multiplies u8 activations with
// the int8 weights packed at load and scales the int32 sums in its write-back (the same float32
// steps as the unfused ops: bit-identical). DynamicQuantizeLinear, which makes a_q, a_scale and
// a_zp and is shared by the MatMuls reading one activation, stays.
#pragma once

#include <cstddef>

#include "ir/Graph.h"

namespace optimium {
namespace runtime {
namespace detail {

/// Rewrites every default-domain MatMulInteger with a constant 2-D u8/s8 B (and a constant or
/// absent b_zero_point) whose only reader is Cast(to=FLOAT), whose only reader is a Mul by the
/// output of Mul(a_scale, b_scale) (b_scale a constant of 1 or N values, a_scale one float32
/// value), into MatMulIntegerToFloat(a_q, B, a_scale, b_scale, a_zp, b_zp) writing the Mul's
/// output; an Add of a constant float32 bias [N] that is the only reader of that output folds in
/// as the bias input. The scales' Mul goes when nothing else reads it. Returns the number fused.
/// Callers skip it when every intermediate must stay readable.
size_t fuseDynamicQuantMatMul(Graph &G);

} // namespace detail
} // namespace runtime
} // namespace optimium
