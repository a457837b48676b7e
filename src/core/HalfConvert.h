// Bulk float16 <-> float32 conversion: F16C (VCVTPH2PS / VCVTPS2PH, 8 values per instruction) where
// the CPU has it, else the scalar float16::toFloat / fromFloat. Both give the same bits for every
// input (round to nearest even, subnormals exact, infinities and NaN payloads kept with the quiet
// bit set); tests/core/HalfConvertTest.cpp checks all 65536 float16 values and float32 edge cases.
#pragma once

#include <cstddef>
#include <cstdint>

namespace optimium {
namespace runtime {
namespace detail {

/// Dst[i] = float16 Src[i] as float32, for i < N.
void halfToFloat(const uint16_t *Src, float *Dst, size_t N);
/// Dst[i] = Src[i] rounded to float16 (nearest even), for i < N.
void floatToHalf(const float *Src, uint16_t *Dst, size_t N);

/// The portable loops (what halfToFloat / floatToHalf do without F16C); for the tests.
void halfToFloatScalar(const uint16_t *Src, float *Dst, size_t N);
void floatToHalfScalar(const float *Src, uint16_t *Dst, size_t N);

} // namespace detail
} // namespace runtime
} // namespace optimium
