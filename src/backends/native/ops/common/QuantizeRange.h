// The float32 -> u8/s8 quantization loop shared by QuantizeLinear's and DynamicQuantizeLinear's
// AVX-512 kernels: the reference's steps (division, NaN -> 0, rounding half to even, saturation),
// 16 elements at a time.
#pragma once

#include <cstddef>
#include <cstdint>

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

/// Y[i] = saturate(round_half_even(X[i] / Scale) + Zp) for i in [Lo, Hi): u8, or s8 when Signed;
/// a NaN quotient gives Zp. x86-64 only, and only on CPUs with AVX-512 F, BW and VL.
void quantizeRangeAvx512(const float *X, uint8_t *Y, float Scale, int32_t Zp, bool Signed, size_t Lo, size_t Hi);

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
