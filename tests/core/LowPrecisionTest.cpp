// core/LowPrecision.h: float8 / float4 / e8m0 / int4 / int2 conversions against straightforward
// reference computations (every code of every format), round trips, rounding ties, saturation,
// and ONNX's packed sub-byte layout.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "core/LowPrecision.h"

using namespace optimium::runtime;
namespace lowp = optimium::runtime::detail::lowp;

namespace {

struct FormatCase {
  ElementType Type;
  int E, M, Bias;
  enum Kind { IeeeInf, NanAllOnes, Fnuz, NoNan } K;
  double Max;
};

const FormatCase kFormats[] = {
    {ElementType::F8E4M3FN, 4, 3, 7, FormatCase::NanAllOnes, 448},
    {ElementType::F8E4M3FNUZ, 4, 3, 8, FormatCase::Fnuz, 240},
    {ElementType::F8E5M2, 5, 2, 15, FormatCase::IeeeInf, 57344},
    {ElementType::F8E5M2FNUZ, 5, 2, 16, FormatCase::Fnuz, 57344},
    {ElementType::F4E2M1, 2, 1, 1, FormatCase::NoNan, 6},
};

/// The textbook value of a code: (-1)^s * 2^(e - bias) * (1 + m / 2^M), subnormal when e == 0.
double referenceValue(const FormatCase &F, unsigned Code) {
  const unsigned S = (Code >> (F.E + F.M)) & 1, E = (Code >> F.M) & ((1u << F.E) - 1), M = Code & ((1u << F.M) - 1);
  const double Nan = std::numeric_limits<double>::quiet_NaN(), Inf = std::numeric_limits<double>::infinity();
  if (F.K == FormatCase::Fnuz && S == 1 && E == 0 && M == 0)
    return Nan;
  if (F.K == FormatCase::IeeeInf && E == (1u << F.E) - 1)
    return M ? Nan : (S ? -Inf : Inf);
  if (F.K == FormatCase::NanAllOnes && E == (1u << F.E) - 1 && M == (1u << F.M) - 1)
    return Nan;
  const double Mant = E == 0 ? M / std::pow(2.0, F.M) : 1 + M / std::pow(2.0, F.M);
  const double V = Mant * std::pow(2.0, (E == 0 ? 1 : static_cast<int>(E)) - F.Bias);
  return S ? -V : V;
}

unsigned codeCount(const FormatCase &F) { return 1u << (1 + F.E + F.M); }

/// Nearest finite code to V by scanning every code; ties go to the even code (RNE).
unsigned nearestCode(const FormatCase &F, double V) {
  unsigned Best = 0;
  double BestErr = std::numeric_limits<double>::infinity();
  for (unsigned C = 0; C < codeCount(F); ++C) {
    const double R = referenceValue(F, C);
    // Zero of the value's sign (FNUZ: the only zero).
    if (!std::isfinite(R) || (R == 0 && std::signbit(R) != std::signbit(V) && F.K != FormatCase::Fnuz))
      continue;
    const double Err = std::fabs(R - V);
    if (Err < BestErr || (Err == BestErr && (C & 1) == 0 && (Best & 1) == 1)) {
      Best = C;
      BestErr = Err;
    }
  }
  return Best;
}

TEST(LowPrecision, DecodesEveryCodeLikeTheTextbookFormula) {
  for (const FormatCase &F : kFormats) {
    SCOPED_TRACE(toString(F.Type));
    for (unsigned C = 0; C < codeCount(F); ++C) {
      const double Want = referenceValue(F, C), Got = lowp::lowPrecisionToDouble(F.Type, static_cast<uint8_t>(C));
      if (std::isnan(Want))
        EXPECT_TRUE(std::isnan(Got)) << "code " << C;
      else
        EXPECT_EQ(Got, Want) << "code " << C;
    }
  }
  EXPECT_EQ(lowp::lowPrecisionToDouble(ElementType::F8E4M3FN, 0x7E), 448);
  EXPECT_EQ(lowp::lowPrecisionToDouble(ElementType::F8E4M3FN, 0x01), std::ldexp(1.0, -9));
  EXPECT_EQ(lowp::lowPrecisionToDouble(ElementType::F8E5M2, 0x7B), 57344);
  EXPECT_TRUE(std::isinf(lowp::lowPrecisionToDouble(ElementType::F8E5M2, 0x7C)));
  EXPECT_EQ(lowp::lowPrecisionToDouble(ElementType::F8E4M3FNUZ, 0x7F), 240);
  EXPECT_TRUE(std::isnan(lowp::lowPrecisionToDouble(ElementType::F8E5M2FNUZ, 0x80)));
  const double E2M1[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  for (unsigned C = 0; C < 8; ++C) {
    EXPECT_EQ(lowp::lowPrecisionToDouble(ElementType::F4E2M1, static_cast<uint8_t>(C)), E2M1[C]);
    EXPECT_EQ(lowp::lowPrecisionToDouble(ElementType::F4E2M1, static_cast<uint8_t>(C | 8)), -E2M1[C]);
  }
}

TEST(LowPrecision, EveryFiniteCodeRoundTrips) {
  for (const FormatCase &F : kFormats) {
    SCOPED_TRACE(toString(F.Type));
    for (unsigned C = 0; C < codeCount(F); ++C) {
      const double V = referenceValue(F, C);
      if (!std::isfinite(V))
        continue;
      for (bool Saturate : {true, false})
        EXPECT_EQ(lowp::doubleToLowPrecision(F.Type, V, Saturate), C) << "value " << V;
      EXPECT_EQ(lowp::doubleToLowPrecision(F.Type, static_cast<float>(V), true), C);
    }
  }
}

TEST(LowPrecision, RoundsToNearestEvenBetweenEveryPairOfCodes) {
  for (const FormatCase &F : kFormats) {
    SCOPED_TRACE(toString(F.Type));
    // Positive finite codes in increasing value order are consecutive codes from 0.
    for (unsigned C = 0; C + 1 < codeCount(F) / 2; ++C) {
      const double A = referenceValue(F, C), B = referenceValue(F, C + 1);
      if (!std::isfinite(A) || !std::isfinite(B))
        continue;
      const double Mid = (A + B) / 2;
      const unsigned Even = (C & 1) == 0 ? C : C + 1;
      for (const double Sign : {1.0, -1.0}) {
        const unsigned SignBit = Sign < 0 ? codeCount(F) / 2 : 0;
        const auto Enc = [&](double V) { return lowp::doubleToLowPrecision(F.Type, Sign * V, true); };
        const bool NegZero = Sign < 0 && F.K == FormatCase::Fnuz; // FNUZ has no -0
        const auto Want = [&](unsigned Code) { return Code == 0 && NegZero ? 0u : Code | SignBit; };
        EXPECT_EQ(Enc(Mid), Want(Even)) << "midpoint " << Mid;
        EXPECT_EQ(Enc(std::nextafter(Mid, 0.0)), Want(C)) << "below " << Mid;
        EXPECT_EQ(Enc(std::nextafter(Mid, 1e9)), Want(C + 1)) << "above " << Mid;
      }
    }
  }
}

TEST(LowPrecision, MatchesBruteForceNearestOnRandomValues) {
  std::mt19937 Rng(7);
  for (const FormatCase &F : kFormats) {
    SCOPED_TRACE(toString(F.Type));
    std::uniform_real_distribution<double> Exp(-12, std::log2(F.Max));
    for (int I = 0; I < 3000; ++I) {
      const double V = (I % 2 ? -1 : 1) * std::exp2(Exp(Rng));
      if (std::fabs(V) > F.Max)
        continue;
      const unsigned Want = nearestCode(F, V);
      EXPECT_EQ(lowp::doubleToLowPrecision(F.Type, V, false), Want) << "value " << V;
    }
  }
}

TEST(LowPrecision, SaturateClampsAndNonSaturateOverflowsPerType) {
  const double Inf = std::numeric_limits<double>::infinity(), Nan = std::numeric_limits<double>::quiet_NaN();
  struct Row {
    ElementType T;
    uint8_t MaxCode, OverflowPos, OverflowNeg, NanPos, NanNeg;
  };
  const Row Rows[] = {
      {ElementType::F8E4M3FN, 0x7E, 0x7F, 0xFF, 0x7F, 0xFF},
      {ElementType::F8E4M3FNUZ, 0x7F, 0x80, 0x80, 0x80, 0x80},
      {ElementType::F8E5M2, 0x7B, 0x7C, 0xFC, 0x7E, 0xFE},
      {ElementType::F8E5M2FNUZ, 0x7F, 0x80, 0x80, 0x80, 0x80},
      {ElementType::F4E2M1, 0x07, 0x07, 0x0F, 0x08, 0x08}, // no inf/NaN: always saturates, NaN -> -0
  };
  for (const Row &R : Rows) {
    SCOPED_TRACE(toString(R.T));
    const uint8_t SignBit = R.T == ElementType::F4E2M1 ? 0x08 : 0x80;
    for (double Big : {1e6, Inf}) {
      EXPECT_EQ(lowp::doubleToLowPrecision(R.T, Big, true), R.MaxCode);
      EXPECT_EQ(lowp::doubleToLowPrecision(R.T, -Big, true), R.MaxCode | SignBit);
      EXPECT_EQ(lowp::doubleToLowPrecision(R.T, Big, false), R.OverflowPos);
      EXPECT_EQ(lowp::doubleToLowPrecision(R.T, -Big, false), R.OverflowNeg);
    }
    EXPECT_EQ(lowp::doubleToLowPrecision(R.T, Nan, true), R.NanPos);
    EXPECT_EQ(lowp::doubleToLowPrecision(R.T, -Nan, false), R.NanNeg);
  }
  // Just above the largest finite value but rounding down to it: not an overflow.
  EXPECT_EQ(lowp::doubleToLowPrecision(ElementType::F8E4M3FN, 463.9, false), 0x7E);
  EXPECT_EQ(lowp::doubleToLowPrecision(ElementType::F8E4M3FN, 464, false), 0x7E);   // tie: to even (448)
  EXPECT_EQ(lowp::doubleToLowPrecision(ElementType::F8E4M3FN, 464.1, false), 0x7F); // rounds to 480: NaN
  EXPECT_EQ(lowp::doubleToLowPrecision(ElementType::F8E4M3FN, 464.1, true), 0x7E);
  EXPECT_EQ(lowp::doubleToLowPrecision(ElementType::F8E5M2, 61439, false), 0x7B);
  EXPECT_EQ(lowp::doubleToLowPrecision(ElementType::F8E5M2, 61440, false), 0x7C);
  // Signed zeros; FNUZ has none.
  EXPECT_EQ(lowp::doubleToLowPrecision(ElementType::F8E4M3FN, -0.0, true), 0x80);
  EXPECT_EQ(lowp::doubleToLowPrecision(ElementType::F8E4M3FNUZ, -0.0, true), 0x00);
  EXPECT_EQ(lowp::doubleToLowPrecision(ElementType::F8E5M2FNUZ, -1e-30, true), 0x00);
}

TEST(LowPrecision, E8M0RoundingModes) {
  using R = lowp::E8M0Rounding;
  const auto Enc = [](float V, bool Sat, R Mode) { return lowp::encodeE8M0(V, Sat, Mode); };
  EXPECT_EQ(Enc(1.0f, true, R::Up), 127);
  EXPECT_EQ(Enc(1.5f, true, R::Up), 128);
  EXPECT_EQ(Enc(1.5f, true, R::Down), 127);
  EXPECT_EQ(Enc(1.5f, true, R::Nearest), 128);
  EXPECT_EQ(Enc(1.25f, true, R::Nearest), 127);
  EXPECT_EQ(Enc(0.0f, true, R::Up), 0);
  EXPECT_EQ(Enc(std::numeric_limits<float>::infinity(), true, R::Up), 0xFF);
  EXPECT_EQ(Enc(std::numeric_limits<float>::quiet_NaN(), true, R::Up), 0xFF);
  const float Big = std::ldexp(1.5f, 127);
  EXPECT_EQ(Enc(Big, true, R::Up), 0xFE);
  EXPECT_EQ(Enc(Big, false, R::Up), 0xFF);
  for (int C = 0; C < 255; ++C) {
    EXPECT_EQ(lowp::decodeE8M0(static_cast<uint8_t>(C)), std::ldexp(1.0, C - 127));
    // 2^-127 is a float32 subnormal (exponent field 0, nonzero fraction): "up" gives 2^-126, as the reference.
    if (C > 0) {
      EXPECT_EQ(Enc(static_cast<float>(std::ldexp(1.0, C - 127)), true, R::Up), C);
    }
  }
  EXPECT_TRUE(std::isnan(lowp::decodeE8M0(0xFF)));
}

TEST(LowPrecision, SubByteIntegers) {
  // Cast from float: truncate toward zero; out of range, NaN and inf give 0 (ONNX test data).
  EXPECT_EQ(static_cast<int8_t>(lowp::castFloatToSubByteInt(ElementType::I4, -8.9)), -8);
  EXPECT_EQ(lowp::castFloatToSubByteInt(ElementType::I4, 7.9), 7);
  EXPECT_EQ(lowp::castFloatToSubByteInt(ElementType::I4, 8.0), 0);
  EXPECT_EQ(lowp::castFloatToSubByteInt(ElementType::I4, -9.0), 0);
  EXPECT_EQ(lowp::castFloatToSubByteInt(ElementType::U4, 15.5), 15);
  EXPECT_EQ(lowp::castFloatToSubByteInt(ElementType::U4, -1.0), 0);
  EXPECT_EQ(lowp::castFloatToSubByteInt(ElementType::U2, 3.0), 3);
  EXPECT_EQ(static_cast<int8_t>(lowp::castFloatToSubByteInt(ElementType::I2, -2.0)), -2);
  EXPECT_EQ(lowp::castFloatToSubByteInt(ElementType::I2, 2.0), 0);
  EXPECT_EQ(lowp::castFloatToSubByteInt(ElementType::I4, std::nan("")), 0);
  // From integers: keep the low bits (-9 -> 7 in int4, 200 -> -8).
  EXPECT_EQ(static_cast<int8_t>(lowp::fromLowBits(ElementType::I4, -9)), 7);
  EXPECT_EQ(static_cast<int8_t>(lowp::fromLowBits(ElementType::I4, 200)), -8);
  EXPECT_EQ(lowp::fromLowBits(ElementType::U4, -1), 15);
  EXPECT_EQ(static_cast<int8_t>(lowp::fromLowBits(ElementType::I2, 3)), -1);
  EXPECT_EQ(lowp::fromLowBits(ElementType::U2, 5), 1);
  EXPECT_EQ(lowp::subByteIntValue(ElementType::I4, 0xF8), -8);
  EXPECT_EQ(lowp::subByteIntValue(ElementType::U4, 0x0F), 15);
}

TEST(LowPrecision, PackedLayoutRoundTripsLowBitsFirst) {
  // int4 [-8, 7, 1] packs as 0x78 (low nibble first), 0x01 (padding 0).
  const uint8_t I4[] = {static_cast<uint8_t>(-8), 7, 1};
  uint8_t Packed[2];
  lowp::packSubByte(ElementType::I4, I4, 3, Packed);
  EXPECT_EQ(Packed[0], 0x78);
  EXPECT_EQ(Packed[1], 0x01);
  uint8_t Back[3];
  lowp::unpackSubByte(ElementType::I4, Packed, 3, Back);
  EXPECT_EQ(std::vector<uint8_t>(Back, Back + 3), std::vector<uint8_t>(I4, I4 + 3));
  EXPECT_EQ(lowp::packedByteCount(ElementType::I4, 3), 2u);
  EXPECT_EQ(lowp::packedByteCount(ElementType::U2, 5), 2u);
  EXPECT_EQ(lowp::packedByteCount(ElementType::F8E5M2, 5), 5u);
  // uint2 [1, 2, 3, 0, 3] -> 0b00111001, 0b00000011.
  const uint8_t U2[] = {1, 2, 3, 0, 3};
  uint8_t P2[2];
  lowp::packSubByte(ElementType::U2, U2, 5, P2);
  EXPECT_EQ(P2[0], 0x39);
  EXPECT_EQ(P2[1], 0x03);
  // int2 unpacking sign-extends: field 0b11 -> -1, 0b10 -> -2.
  const uint8_t P3[] = {0x0E};
  uint8_t I2[2];
  lowp::unpackSubByte(ElementType::I2, P3, 2, I2);
  EXPECT_EQ(static_cast<int8_t>(I2[0]), -2);
  EXPECT_EQ(static_cast<int8_t>(I2[1]), -1);
  // Every byte value of every 4-bit type survives unpack -> pack.
  for (ElementType T : {ElementType::I4, ElementType::U4, ElementType::F4E2M1}) {
    for (unsigned B = 0; B < 256; ++B) {
      // (Two-byte buffers: the 8-bit path of these helpers copies Count bytes.)
      const uint8_t In[2] = {static_cast<uint8_t>(B), 0};
      uint8_t Two[2], Again[2] = {0, 0};
      lowp::unpackSubByte(T, In, 2, Two);
      lowp::packSubByte(T, Two, 2, Again);
      EXPECT_EQ(Again[0], In[0]) << toString(T) << " byte " << B;
    }
  }
}

TEST(LowPrecision, ElementTypeNamesAndSizes) {
  const std::pair<ElementType, const char *> Names[] = {
      {ElementType::F8E4M3FN, "f8e4m3fn"}, {ElementType::F8E4M3FNUZ, "f8e4m3fnuz"}, {ElementType::F8E5M2, "f8e5m2"},
      {ElementType::F8E5M2FNUZ, "f8e5m2fnuz"}, {ElementType::F8E8M0, "f8e8m0"}, {ElementType::F4E2M1, "f4e2m1"},
      {ElementType::I4, "i4"}, {ElementType::U4, "u4"}, {ElementType::I2, "i2"}, {ElementType::U2, "u2"}};
  for (const auto &N : Names) {
    EXPECT_STREQ(toString(N.first), N.second);
    EXPECT_EQ(getElementSize(N.first), 1u) << N.second;
    EXPECT_TRUE(lowp::isLowPrecision(N.first)) << N.second;
  }
  // The existing values are unchanged (the new ones were appended).
  EXPECT_EQ(static_cast<int>(ElementType::String), 14);
  EXPECT_EQ(static_cast<int>(ElementType::F8E4M3FN), 15);
}

} // namespace
