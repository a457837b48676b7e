// core/CpuFeatures: detection agrees with the compiler's own cpuid reading, the disable list
// hides features and what needs them, and OPTIMIUM_RT_CPU_DISABLE reaches cpuFeatures() (ctest
// runs this binary once more with avx512f hidden: unit_tests_without_avx512).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "core/CpuFeatures.h"

namespace dt = optimium::runtime::detail;

TEST(CpuFeatures, DetectionAgreesWithTheCompilersBuiltin) {
#if defined(__x86_64__)
  const dt::CpuFeatures F = dt::detectCpuFeatures();
  __builtin_cpu_init();
  EXPECT_EQ(F.AVX2, __builtin_cpu_supports("avx2") != 0);
  EXPECT_EQ(F.FMA, __builtin_cpu_supports("fma") != 0);
  EXPECT_EQ(F.AVX512F, __builtin_cpu_supports("avx512f") != 0);
  EXPECT_EQ(F.AVX512BW, __builtin_cpu_supports("avx512bw") != 0);
  EXPECT_EQ(F.AVX512VL, __builtin_cpu_supports("avx512vl") != 0);
  EXPECT_EQ(F.AVX512VNNI, __builtin_cpu_supports("avx512vnni") != 0);
  EXPECT_TRUE(F.SSE2);
#else
  GTEST_SKIP() << "x86 only";
#endif
}

TEST(CpuFeatures, DisablingAFeatureHidesWhatNeedsIt) {
  dt::CpuFeatures F;
  F.SSE2 = F.AVX = F.AVX2 = F.FMA = F.F16C = F.AVX512F = F.AVX512BW = F.AVX512DQ = F.AVX512VL = true;
  F.AVX512VNNI = F.AVX512BF16 = F.AVXVNNI = F.AMXTile = F.AMXInt8 = F.AMXBF16 = true;
  dt::CpuFeatures G = F;
  EXPECT_EQ(dt::disableCpuFeatures(G, "amx"), "");
  EXPECT_FALSE(G.AMXTile || G.AMXInt8 || G.AMXBF16);
  EXPECT_TRUE(G.AVX512VNNI);
  G = F;
  EXPECT_EQ(dt::disableCpuFeatures(G, " avx512f "), "");
  EXPECT_FALSE(G.AVX512F || G.AVX512BW || G.AVX512VNNI || G.AVX512BF16 || G.AMXTile || G.AMXInt8);
  EXPECT_TRUE(G.AVX2 && G.FMA && G.AVXVNNI);
  EXPECT_FALSE(G.avx512Fma());
  EXPECT_TRUE(G.avx2Fma());
  G = F;
  EXPECT_EQ(dt::disableCpuFeatures(G, "avx,bogus,avx512vnni,nope"), "bogus,nope");
  EXPECT_FALSE(G.AVX || G.AVX2 || G.FMA || G.AVX512F || G.AVXVNNI);
  EXPECT_TRUE(G.SSE2);
  EXPECT_EQ(G.toString(), "sse2");
  EXPECT_EQ(dt::CpuFeatures().toString(), "none");
}

TEST(CpuFeatures, TheEnvironmentMaskReachesTheRuntime) {
  const char *Env = std::getenv("OPTIMIUM_RT_CPU_DISABLE");
  const dt::CpuFeatures &F = dt::cpuFeatures();
  if (!Env) {
    const dt::CpuFeatures D = dt::detectCpuFeatures();
    EXPECT_EQ(F.toString(), D.toString());
    return;
  }
  dt::CpuFeatures Expected = dt::detectCpuFeatures();
  dt::disableCpuFeatures(Expected, Env);
  EXPECT_EQ(F.toString(), Expected.toString());
  if (std::string(Env).find("avx512f") != std::string::npos) {
    EXPECT_FALSE(F.AVX512F);
  }
}
