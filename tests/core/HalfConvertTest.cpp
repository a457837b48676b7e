// Bulk float16 <-> float32 conversion (core/HalfConvert.h): the F16C path (where the CPU has it)
// gives the scalar conversion's bits for every float16 value, and for float32 values around every
// rounding boundary, subnormal range, overflow threshold, infinities and NaNs; lengths that are not
// a multiple of 8 take the scalar tail.
#include <gtest/gtest.h>

#include <Optimium/Runtime/Types/Float16.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "core/CpuFeatures.h"
#include "core/HalfConvert.h"

namespace rt = optimium::runtime;
namespace dt = optimium::runtime::detail;

namespace {

uint32_t bitsOf(float F) {
  uint32_t B;
  std::memcpy(&B, &F, 4);
  return B;
}

float floatOf(uint32_t B) {
  float F;
  std::memcpy(&F, &B, 4);
  return F;
}

} // namespace

TEST(HalfConvert, EveryFloat16ValueConvertsLikeTheScalarCode) {
  std::vector<uint16_t> H(65536 + 5); // + 5: a scalar tail
  for (size_t I = 0; I < H.size(); ++I)
    H[I] = static_cast<uint16_t>(I);
  std::vector<float> Fast(H.size()), Ref(H.size());
  dt::halfToFloat(H.data(), Fast.data(), H.size());
  dt::halfToFloatScalar(H.data(), Ref.data(), H.size());
  for (size_t I = 0; I < H.size(); ++I)
    ASSERT_EQ(bitsOf(Fast[I]), bitsOf(Ref[I])) << "float16 bits 0x" << std::hex << H[I];
  EXPECT_EQ(Fast[0x3c00], 1.0f);
  EXPECT_EQ(Fast[0x0001], std::ldexp(1.0f, -24)); // the smallest subnormal, exact
  std::printf("F16C %s\n", dt::cpuFeatures().F16C ? "used" : "absent: scalar path checked against itself");
}

TEST(HalfConvert, Float32RoundsToNearestEvenLikeTheScalarCode) {
  std::vector<float> F;
  // Every float16 value, the midpoints to its neighbours and one ulp (float32) either side.
  for (uint32_t H = 0; H < 0x7c00; ++H) {
    const float V = rt::float16::toFloat(static_cast<uint16_t>(H)), Next = rt::float16::toFloat(static_cast<uint16_t>(H + 1));
    const float Mid = 0.5f * (V + Next);
    for (float X : {V, Mid, std::nextafter(Mid, 0.0f), std::nextafter(Mid, INFINITY)}) {
      F.push_back(X);
      F.push_back(-X);
    }
  }
  const float Specials[] = {0.0f, -0.0f, 65504.0f, 65519.99f, 65520.0f, 1e6f, -1e30f, INFINITY, -INFINITY,
                            std::numeric_limits<float>::denorm_min(), 1e-40f, -1e-30f, 5.96e-8f, 2.98e-8f, 2.99e-8f,
                            std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(),
                            floatOf(0x7f800001u), floatOf(0xffa00000u), floatOf(0x7fc12345u)};
  F.insert(F.end(), std::begin(Specials), std::end(Specials));
  std::mt19937 G(7);
  std::uniform_int_distribution<uint32_t> D;
  for (int I = 0; I < 100000; ++I)
    F.push_back(floatOf(D(G)));
  F.push_back(1.0f); // lengths not a multiple of 8
  std::vector<uint16_t> Fast(F.size()), Ref(F.size());
  dt::floatToHalf(F.data(), Fast.data(), F.size());
  dt::floatToHalfScalar(F.data(), Ref.data(), F.size());
  for (size_t I = 0; I < F.size(); ++I)
    ASSERT_EQ(Fast[I], Ref[I]) << "float32 bits 0x" << std::hex << bitsOf(F[I]) << " (" << F[I] << ")";
}
