// Exact conversions between float/double and the low-precision element types (float8 variants,
// float8e8m0, float4e2m1, int4/uint4/int2/uint2), and ONNX's packed sub-byte layout. Shared by the
// importer, the Cast / QuantizeLinear / DequantizeLinear kernels, the tools and the tests.
//
// Rules (the ONNX Cast spec, with ml_dtypes' choices where the spec leaves room):
//  - float -> float8 / float4: round to nearest, ties to even, on the exact (double) value.
//    A rounded magnitude above the largest finite value becomes that value when Saturate is set;
//    otherwise inf (E5M2) or NaN (E4M3FN: S.1111.111, FNUZ types: 0x80). +-inf is treated as an
//    overflow the same way. NaN -> NaN (E4M3FN 0x7F / E5M2 0x7E with the input's sign, FNUZ 0x80).
//    FNUZ types have no -0: -0 and negative values rounding to zero give 0x00.
//    float4e2m1 has no inf/NaN: it always saturates (+-6), NaN -> 0x8 (ml_dtypes' choice).
//  - float -> float8e8m0 (2^(e-127), e = 0..254, NaN 0xFF): the exponent of the float32 value,
//    rounded by RoundMode (Up: any nonzero fraction rounds up, Down: truncate, Nearest: on the
//    fraction's first bit, ties up); saturate keeps 0xFE from rounding into NaN. NaN/inf -> 0xFF.
//    The sign is ignored (negative inputs are undefined in ONNX).
//  - float -> int4/uint4/int2/uint2 (Cast): truncate toward zero; a result outside the type's
//    range, NaN and inf give 0 (ONNX leaves this undefined; ml_dtypes and the ONNX test data give 0).
//  - integer -> int4/... (Cast): keep the low bits and reinterpret (ONNX's rule for fixed point).
//  - QuantizeLinear clamps instead: see clampToRange().
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "Optimium/Runtime/ElementType.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace lowp {

/// A float format of at most 8 bits: sign, ExpBits exponent bits, ManBits mantissa bits.
struct MiniFloatFormat {
  int ExpBits;
  int ManBits;
  int Bias;
  bool HasInf;     ///< IEEE-style inf at the all-ones exponent, zero mantissa (E5M2)
  bool Fnuz;       ///< no -0, no inf; 0x80 is the only NaN (the *FNUZ types)
  bool NanAllOnes; ///< S.1111.111 is NaN and the only NaN (E4M3FN)
  bool HasNan;     ///< false for float4e2m1
};

constexpr MiniFloatFormat kE4M3FN{4, 3, 7, false, false, true, true};
constexpr MiniFloatFormat kE4M3FNUZ{4, 3, 8, false, true, false, true};
constexpr MiniFloatFormat kE5M2{5, 2, 15, true, false, false, true};
constexpr MiniFloatFormat kE5M2FNUZ{5, 2, 16, false, true, false, true};
constexpr MiniFloatFormat kE2M1{2, 1, 1, false, false, false, false};

/// Format of a float8 / float4 element type (F8E8M0 is handled separately); nullptr otherwise.
inline const MiniFloatFormat *miniFloatFormat(ElementType T) {
  switch (T) {
  case ElementType::F8E4M3FN: return &kE4M3FN;
  case ElementType::F8E4M3FNUZ: return &kE4M3FNUZ;
  case ElementType::F8E5M2: return &kE5M2;
  case ElementType::F8E5M2FNUZ: return &kE5M2FNUZ;
  case ElementType::F4E2M1: return &kE2M1;
  default: return nullptr;
  }
}

inline int totalBits(const MiniFloatFormat &F) { return 1 + F.ExpBits + F.ManBits; }
inline uint8_t signBit(const MiniFloatFormat &F) { return static_cast<uint8_t>(1u << (F.ExpBits + F.ManBits)); }

/// Largest finite magnitude's code (without sign).
inline uint8_t maxFiniteCode(const MiniFloatFormat &F) {
  const uint8_t AllOnes = static_cast<uint8_t>(signBit(F) - 1);
  if (F.HasInf)
    return static_cast<uint8_t>(AllOnes - (1u << F.ManBits)); // exponent all-ones minus one, mantissa all ones
  if (F.NanAllOnes)
    return static_cast<uint8_t>(AllOnes - 1);
  return AllOnes; // FNUZ and float4: every non-NaN code is finite
}

/// The value of a code (NaN codes -> NaN).
inline double decodeMiniFloat(const MiniFloatFormat &F, uint8_t Code) {
  Code = static_cast<uint8_t>(Code & ((1u << totalBits(F)) - 1));
  const bool Neg = (Code & signBit(F)) != 0;
  const int Exp = (Code >> F.ManBits) & ((1 << F.ExpBits) - 1);
  const int Man = Code & ((1 << F.ManBits) - 1);
  const int ExpMax = (1 << F.ExpBits) - 1;
  if (F.Fnuz && Code == signBit(F))
    return std::numeric_limits<double>::quiet_NaN();
  if (F.HasInf && Exp == ExpMax)
    return Man ? std::numeric_limits<double>::quiet_NaN()
               : (Neg ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity());
  if (F.NanAllOnes && Exp == ExpMax && Man == (1 << F.ManBits) - 1)
    return std::numeric_limits<double>::quiet_NaN();
  const double Mag = Exp == 0 ? std::ldexp(static_cast<double>(Man), 1 - F.Bias - F.ManBits)
                              : std::ldexp(static_cast<double>((1 << F.ManBits) | Man), Exp - F.Bias - F.ManBits);
  return Neg ? -Mag : Mag;
}

inline uint8_t nanCode(const MiniFloatFormat &F, bool Neg) {
  if (!F.HasNan)
    return signBit(F); // float4e2m1: NaN -> -0 (ml_dtypes)
  if (F.Fnuz)
    return signBit(F);
  const uint8_t Sign = Neg ? signBit(F) : 0;
  if (F.NanAllOnes)
    return static_cast<uint8_t>(Sign | (signBit(F) - 1));
  return static_cast<uint8_t>(Sign | (signBit(F) - 1 - ((1u << (F.ManBits - 1)) - 1))); // quiet NaN: top mantissa bit
}

/// Rounds V (finite or not) to the format; see the file comment for overflow and NaN.
inline uint8_t encodeMiniFloat(const MiniFloatFormat &F, double V, bool Saturate) {
  const bool Neg = std::signbit(V);
  const uint8_t Sign = Neg ? signBit(F) : 0;
  if (std::isnan(V))
    return nanCode(F, Neg);
  const uint8_t MaxCode = maxFiniteCode(F);
  // Without inf or NaN there is nothing to overflow to: always saturate.
  const bool Sat = Saturate || !F.HasNan;
  const auto overflow = [&]() -> uint8_t {
    if (Sat)
      return static_cast<uint8_t>(Sign | MaxCode);
    if (F.HasInf)
      return static_cast<uint8_t>(Sign | (((1u << F.ExpBits) - 1) << F.ManBits)); // inf: exponent all ones
    return nanCode(F, Neg);
  };
  const double A = std::fabs(V);
  if (std::isinf(A))
    return overflow();
  if (A == 0)
    return F.Fnuz ? uint8_t(0) : Sign;
  // Quantum of A's binade (subnormal binade below the smallest normal exponent).
  int E2 = 0;
  std::frexp(A, &E2); // A = f * 2^E2, f in [0.5, 1)
  const int MinNormal = 1 - F.Bias;
  const int E = std::max(E2 - 1, MinNormal);
  const double Scaled = std::ldexp(A, F.ManBits - E); // exact: a power-of-two scale
  double N = std::floor(Scaled);
  const double Frac = Scaled - N;
  if (Frac > 0.5 || (Frac == 0.5 && std::fmod(N, 2.0) != 0))
    N += 1;
  const double Rounded = std::ldexp(N, E - F.ManBits);
  if (Rounded > decodeMiniFloat(F, MaxCode))
    return overflow();
  if (Rounded == 0)
    return F.Fnuz ? uint8_t(0) : Sign;
  // Encode the representable value Rounded.
  int R2 = 0;
  std::frexp(Rounded, &R2);
  const int RE = R2 - 1;
  uint8_t Code;
  if (RE < MinNormal) {
    Code = static_cast<uint8_t>(std::ldexp(Rounded, F.ManBits - MinNormal)); // subnormal mantissa
  } else {
    const int Man = static_cast<int>(std::ldexp(Rounded, F.ManBits - RE)) - (1 << F.ManBits);
    Code = static_cast<uint8_t>(((RE + F.Bias) << F.ManBits) | Man);
  }
  return static_cast<uint8_t>(Sign | Code);
}

// --- float8e8m0 ----------------------------------------------------------------------------------

enum class E8M0Rounding { Up, Down, Nearest };

inline double decodeE8M0(uint8_t Code) {
  if (Code == 0xFF)
    return std::numeric_limits<double>::quiet_NaN();
  return std::ldexp(1.0, static_cast<int>(Code) - 127);
}

/// Rounds the float32 value's magnitude to a power of two (the ONNX reference's algorithm).
inline uint8_t encodeE8M0(float V, bool Saturate, E8M0Rounding Mode) {
  uint32_t Bits;
  std::memcpy(&Bits, &V, sizeof(Bits));
  uint32_t Exp = (Bits >> 23) & 0xFF;
  if (Exp == 0xFF)
    return 0xFF;
  bool Up = false;
  switch (Mode) {
  case E8M0Rounding::Up: Up = (Bits & 0x7FFFFF) != 0; break;
  case E8M0Rounding::Down: break;
  case E8M0Rounding::Nearest: {
    const bool G = (Bits & 0x400000) != 0, R = (Bits & 0x200000) != 0, S = (Bits & 0x1FFFFF) != 0;
    Up = G && (R || S || Exp > 0);
    break;
  }
  }
  if (Up && Saturate && Exp == 0xFE)
    Up = false;
  Exp += Up ? 1 : 0;
  return static_cast<uint8_t>(Exp);
}

// --- small integers --------------------------------------------------------------------------------

inline bool isSubByteInt(ElementType T) {
  return T == ElementType::I4 || T == ElementType::U4 || T == ElementType::I2 || T == ElementType::U2;
}
inline bool isLowPrecisionFloat(ElementType T) {
  return miniFloatFormat(T) != nullptr || T == ElementType::F8E8M0;
}
inline bool isLowPrecision(ElementType T) { return isSubByteInt(T) || isLowPrecisionFloat(T); }

/// Bits per element in ONNX's packed layout (8 for the float8 types, 0 for other types).
inline int packedBits(ElementType T) {
  switch (T) {
  case ElementType::I4: case ElementType::U4: case ElementType::F4E2M1: return 4;
  case ElementType::I2: case ElementType::U2: return 2;
  default: return isLowPrecisionFloat(T) ? 8 : 0;
  }
}

inline void intRange(ElementType T, int32_t &Lo, int32_t &Hi) {
  switch (T) {
  case ElementType::I4: Lo = -8, Hi = 7; break;
  case ElementType::U4: Lo = 0, Hi = 15; break;
  case ElementType::I2: Lo = -2, Hi = 1; break;
  case ElementType::U2: Lo = 0, Hi = 3; break;
  default: Lo = Hi = 0; break;
  }
}

/// The stored byte of a sub-byte integer type from its low bits (sign-extended for I4/I2): the
/// "keep the low bits" rule of integer Cast and the unpacking of ONNX's layout.
inline uint8_t fromLowBits(ElementType T, int64_t V) {
  switch (T) {
  case ElementType::I4: return static_cast<uint8_t>(static_cast<int8_t>(static_cast<uint8_t>(V << 4)) >> 4);
  case ElementType::I2: return static_cast<uint8_t>(static_cast<int8_t>(static_cast<uint8_t>(V << 6)) >> 6);
  case ElementType::U4: case ElementType::F4E2M1: return static_cast<uint8_t>(V & 0xF);
  case ElementType::U2: return static_cast<uint8_t>(V & 0x3);
  default: return static_cast<uint8_t>(V);
  }
}

/// Float -> sub-byte integer for Cast: truncate toward zero; out of range, NaN and inf -> 0.
inline uint8_t castFloatToSubByteInt(ElementType T, double V) {
  int32_t Lo, Hi;
  intRange(T, Lo, Hi);
  if (!(std::fabs(V) < 1e9))
    return 0;
  const double Tr = std::trunc(V);
  if (Tr < Lo || Tr > Hi)
    return 0;
  return static_cast<uint8_t>(static_cast<int8_t>(Tr));
}

/// Integer value of a stored sub-byte integer element.
inline int32_t subByteIntValue(ElementType T, uint8_t Stored) {
  return (T == ElementType::I4 || T == ElementType::I2) ? static_cast<int8_t>(Stored) : Stored;
}

// --- one entry point per direction -----------------------------------------------------------------

/// Value of one stored low-precision element (any of the types above) as a double.
inline double lowPrecisionToDouble(ElementType T, uint8_t Stored) {
  if (const MiniFloatFormat *F = miniFloatFormat(T))
    return decodeMiniFloat(*F, Stored);
  if (T == ElementType::F8E8M0)
    return decodeE8M0(Stored);
  return subByteIntValue(T, Stored);
}

/// A float value as a stored low-precision element, by the Cast rules of the file comment.
inline uint8_t doubleToLowPrecision(ElementType T, double V, bool Saturate,
                                    E8M0Rounding Mode = E8M0Rounding::Up) {
  if (const MiniFloatFormat *F = miniFloatFormat(T))
    return encodeMiniFloat(*F, V, Saturate);
  if (T == ElementType::F8E8M0)
    return encodeE8M0(static_cast<float>(V), Saturate, Mode);
  return castFloatToSubByteInt(T, V);
}

// --- ONNX ----------------------------------------------------------------------------------------

/// ElementType of an ONNX TensorProto.DataType code of a low-precision type (17..26), Undefined
/// for any other code. (Debian's onnx headers predate these codes, hence the numbers.)
inline ElementType fromOnnxDataType(int64_t Code) {
  switch (Code) {
  case 17: return ElementType::F8E4M3FN;
  case 18: return ElementType::F8E4M3FNUZ;
  case 19: return ElementType::F8E5M2;
  case 20: return ElementType::F8E5M2FNUZ;
  case 21: return ElementType::U4;
  case 22: return ElementType::I4;
  case 23: return ElementType::F4E2M1;
  case 24: return ElementType::F8E8M0;
  case 25: return ElementType::U2;
  case 26: return ElementType::I2;
  default: return ElementType::Undefined;
  }
}

// --- ONNX's packed layout --------------------------------------------------------------------------

/// Bytes ONNX uses for Count elements of T in raw_data.
inline size_t packedByteCount(ElementType T, size_t Count) {
  const int Bits = packedBits(T);
  if (Bits == 4)
    return (Count + 1) / 2;
  if (Bits == 2)
    return (Count + 3) / 4;
  return Count;
}

/// Unpacks Count elements from ONNX's packed bytes (lowest bits first) into one byte each.
inline void unpackSubByte(ElementType T, const uint8_t *Packed, size_t Count, uint8_t *Out) {
  const int Bits = packedBits(T);
  if (Bits != 4 && Bits != 2) {
    std::memcpy(Out, Packed, Count);
    return;
  }
  const int PerByte = 8 / Bits;
  for (size_t I = 0; I < Count; ++I) {
    const unsigned Byte = Packed[I / PerByte];
    const unsigned Field = (Byte >> ((I % PerByte) * Bits)) & ((1u << Bits) - 1);
    Out[I] = fromLowBits(T, Field);
  }
}

/// Packs Count one-byte elements into ONNX's layout (the unused high bits of the last byte are 0).
inline void packSubByte(ElementType T, const uint8_t *In, size_t Count, uint8_t *Packed) {
  const int Bits = packedBits(T);
  if (Bits != 4 && Bits != 2) {
    std::memcpy(Packed, In, Count);
    return;
  }
  const int PerByte = 8 / Bits;
  std::memset(Packed, 0, packedByteCount(T, Count));
  for (size_t I = 0; I < Count; ++I)
    Packed[I / PerByte] = static_cast<uint8_t>(Packed[I / PerByte] |
                                               ((In[I] & ((1u << Bits) - 1)) << ((I % PerByte) * Bits)));
}

} // namespace lowp
} // namespace detail
} // namespace runtime
} // namespace optimium
