// Rewrites of QDQ-quantized graphs (what static quantizers write: DequantizeLinear -> float op ->
// QuantizeLinear around every op) into integer ops, so an int8 model runs int8 kernels instead of
// dequantize -> float op -> quantize: Conv -> QLinearConv, Add -> com.microsoft QLinearAdd, MaxPool
// on the integers; plus folding DequantizeLinear of constants (weights) into float constants.
#pragma once

#include <cstddef>

#include "ir/Graph.h"

namespace optimium {
namespace runtime {
namespace detail {

/// Rewrites every float32 2-D Conv whose inputs are DequantizeLinear outputs of (x: u8/s8,
/// per-tensor constant scale and zero point), (w: constant s8 of zero point 0 or u8 of zero point
/// 128 - what the VNNI kernel takes -, per-tensor or per-output-channel scale; not depthwise-like:
/// groups need 4+ input and 8+ output channels each) and, when present, (bias: constant int32,
/// zero point 0, scale equal to x_scale * w_scale per channel up to float rounding), and whose
/// output's only reader is a
/// QuantizeLinear with constant per-tensor scale and zero point, into QLinearConv(x, x_scale,
/// x_zp, w, w_scale, w_zp, y_scale, y_zp[, bias]) writing the QuantizeLinear's output. A clamp the
/// Conv carries (kFusedActMin/Max, from FuseConvActivation) stays on the node: QLinearConv kernels
/// clamp at the quantized bounds, which is exact since quantization is monotone. DequantizeLinear
/// nodes left without readers are removed. Returns the number of convolutions fused. Run after
/// fuseConvActivation; callers skip it when every intermediate must stay readable.
size_t fuseQuantizedConv(Graph &G);

/// Rewrites DequantizeLinear(a) + DequantizeLinear(b) -> Add [-> Relu] -> QuantizeLinear (u8/s8,
/// one shape, per-tensor constant parameters, each intermediate read only by the next op) into
/// com.microsoft QLinearAdd, whose kernels compute the same float32 steps (bit-identical); a Relu
/// becomes kFusedActMin = 0, a clamp at the output's zero point (exact: quantization is monotone).
size_t fuseQuantizedAdd(Graph &G);

/// Rewrites DequantizeLinear(x) -> MaxPool -> QuantizeLinear with the same constant per-tensor
/// scale (positive, normal) and zero point on both ends into MaxPool on x itself: dequantization
/// is increasing, and quantizing a dequantized value gives the integer back.
size_t fuseQuantizedMaxPool(Graph &G);

/// Replaces every DequantizeLinear whose inputs are all constants (quantized weights of ops left
/// in float) with its float32 result, computed as the DequantizeLinear kernel does. Returns the
/// number folded.
size_t foldConstantDequantize(Graph &G);

} // namespace detail
} // namespace runtime
} // namespace optimium
