// IEEE 754 binary16 storage type with float conversion (round to nearest even).
#pragma once

#include <cstdint>
#include <cstring>

namespace optimium {
namespace runtime {

struct float16 {
  uint16_t Bits;

  float16() : Bits(0) {}
  float16(float F) : Bits(fromFloat(F)) {}
  operator float() const { return toFloat(Bits); }

  static float16 fromBits(uint16_t B) {
    float16 H;
    H.Bits = B;
    return H;
  }

  static uint16_t fromFloat(float F) {
    uint32_t X;
    std::memcpy(&X, &F, 4);
    const uint32_t Sign = (X >> 16) & 0x8000u;
    X &= 0x7fffffffu;
    if (X >= 0x7f800000u) // Inf or NaN
      return static_cast<uint16_t>(Sign | 0x7c00u | (X > 0x7f800000u ? 0x200u | ((X >> 13) & 0x3ffu) : 0u));
    if (X >= 0x477ff000u) // overflows to infinity after rounding
      return static_cast<uint16_t>(Sign | 0x7c00u);
    if (X < 0x38800000u) { // subnormal or zero in half precision
      if (X < 0x33000000u)
        return static_cast<uint16_t>(Sign);
      const uint32_t Exp = X >> 23;
      const uint32_t Mant = (X & 0x7fffffu) | 0x800000u;
      const uint32_t Shift = 126u - Exp; // 14..24
      uint32_t Half = Mant >> Shift;
      const uint32_t Rem = Mant & ((1u << Shift) - 1u);
      const uint32_t Mid = 1u << (Shift - 1u);
      if (Rem > Mid || (Rem == Mid && (Half & 1u)))
        ++Half;
      return static_cast<uint16_t>(Sign | Half);
    }
    uint32_t Half = ((X - 0x38000000u) >> 13);
    const uint32_t Rem = X & 0x1fffu;
    if (Rem > 0x1000u || (Rem == 0x1000u && (Half & 1u)))
      ++Half;
    return static_cast<uint16_t>(Sign | Half);
  }

  static float toFloat(uint16_t H) {
    const uint32_t Sign = static_cast<uint32_t>(H & 0x8000u) << 16;
    const uint32_t Exp = (H >> 10) & 0x1fu;
    uint32_t Mant = H & 0x3ffu;
    uint32_t X;
    if (Exp == 0) {
      if (Mant == 0) {
        X = Sign;
      } else { // normalize the subnormal
        uint32_t E = 113;
        while (!(Mant & 0x400u)) {
          Mant <<= 1;
          --E;
        }
        X = Sign | (E << 23) | ((Mant & 0x3ffu) << 13);
      }
    } else if (Exp == 31) { // infinity, or a NaN: quiet (as IEEE conversion and F16C's VCVTPH2PS make it)
      X = Sign | 0x7f800000u | (Mant << 13) | (Mant ? 0x400000u : 0u);
    } else {
      X = Sign | ((Exp + 112u) << 23) | (Mant << 13);
    }
    float F;
    std::memcpy(&F, &X, 4);
    return F;
  }
};

static_assert(sizeof(float16) == 2, "float16 must be 2 bytes");

} // namespace runtime
} // namespace optimium
