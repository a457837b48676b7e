// Fusion of a QDQ-quantized convolution into one integer QLinearConv: the pattern quantizers
// write (DequantizeLinear on a u8/s8 activation and on constant s8/u8 weights [and int32 bias]
// -> Conv [with a fused Relu/Clip] -> QuantizeLinear) becomes QLinearConv on the integers, so the
// int8 model runs int8 kernels instead of dequantize -> float conv -> quantize.
#pragma once

#include <cstddef>

#include "ir/Graph.h"

namespace optimium {
namespace runtime {
namespace detail {

/// Rewrites every float32 Conv whose inputs are DequantizeLinear outputs of (x: u8/s8, per-tensor
/// constant scale and zero point), (w: constant u8/s8, per-tensor or per-output-channel constant
/// scale and zero point) and, when present, (bias: constant int32, zero point 0, scale equal to
/// x_scale * w_scale per channel up to float rounding), and whose output's only reader is a
/// QuantizeLinear with constant per-tensor scale and zero point, into QLinearConv(x, x_scale,
/// x_zp, w, w_scale, w_zp, y_scale, y_zp[, bias]) writing the QuantizeLinear's output. A clamp the
/// Conv carries (kFusedActMin/Max, from FuseConvActivation) stays on the node: QLinearConv kernels
/// clamp at the quantized bounds, which is exact since quantization is monotone. DequantizeLinear
/// nodes left without readers are removed. Returns the number of convolutions fused. Run after
/// fuseConvActivation; callers skip it when every intermediate must stay readable.
size_t fuseQuantizedConv(Graph &G);

} // namespace detail
} // namespace runtime
} // namespace optimium
