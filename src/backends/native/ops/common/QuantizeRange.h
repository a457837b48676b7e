// The float32 -> u8/s8 quantization loop shared by QuantizeLinear's and DynamicQuantizeLinear's
// AVX-512 and AVX2 kernels: the reference's steps (division, NaN -> 0, rounding half to even,
// saturation), 16 (8) elements at a time.
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
/// The same on AVX2 (8 per step, the tail as the reference). x86-64 only, on CPUs with AVX2.
void quantizeRangeAvx2(const float *X, uint8_t *Y, float Scale, int32_t Zp, bool Signed, size_t Lo, size_t Hi);
/// Min and max of X[Lo, Hi) and 0 (NaN skipped, as std::min / std::max with the running value
/// first skip it), on AVX2. x86-64 only, on CPUs with AVX2.
void floatRangeAvx2(const float *X, size_t Lo, size_t Hi, float &Min, float &Max);

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
