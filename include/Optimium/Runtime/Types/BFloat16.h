// bfloat16 storage type (upper half of an IEEE float32) with round-to-nearest-even conversion.
#pragma once

#include <cstdint>
#include <cstring>

namespace optimium {
namespace runtime {

struct bfloat16 {
  uint16_t Bits;

  bfloat16() : Bits(0) {}
  bfloat16(float F) : Bits(fromFloat(F)) {}
  operator float() const { return toFloat(Bits); }

  static bfloat16 fromBits(uint16_t B) {
    bfloat16 H;
    H.Bits = B;
    return H;
  }

  static uint16_t fromFloat(float F) {
    uint32_t X;
    std::memcpy(&X, &F, 4);
    if ((X & 0x7fffffffu) > 0x7f800000u) // NaN stays a quiet NaN
      return static_cast<uint16_t>((X >> 16) | 0x40u);
    X += 0x7fffu + ((X >> 16) & 1u);
    return static_cast<uint16_t>(X >> 16);
  }

  static float toFloat(uint16_t B) {
    const uint32_t X = static_cast<uint32_t>(B) << 16;
    float F;
    std::memcpy(&F, &X, 4);
    return F;
  }
};

static_assert(sizeof(bfloat16) == 2, "bfloat16 must be 2 bytes");

} // namespace runtime
} // namespace optimium
