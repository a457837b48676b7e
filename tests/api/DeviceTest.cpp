// Device classification and names, DeviceID / HostInfo, the local host's Native CPU and its
// detected capabilities (checked against the compiler's own CPU detection), device registration.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>

#include "Optimium/Runtime/Device.h"
#include "Optimium/Runtime/Exceptions.h"
#include "core/DeviceRegistry.h"

namespace rt = optimium::runtime;
using rt::DeviceID;
using rt::DeviceKind;
using rt::PlatformKind;

TEST(DeviceTest, Classification) {
  for (DeviceKind K : {DeviceKind::x86, DeviceKind::x64, DeviceKind::ARM, DeviceKind::ARM64, DeviceKind::RISCV32,
                       DeviceKind::RISCV64, DeviceKind::AnyCPU}) {
    EXPECT_TRUE(rt::isDeviceCPU(K)) << rt::toString(K);
    EXPECT_FALSE(rt::isDeviceGPU(K) || rt::isDeviceNPU(K) || rt::isDeviceNeutral(K)) << rt::toString(K);
  }
  for (DeviceKind K : {DeviceKind::NVIDIA, DeviceKind::AMDGPU, DeviceKind::IntelGPU, DeviceKind::Mali,
                       DeviceKind::Adreno, DeviceKind::AnyGPU}) {
    EXPECT_TRUE(rt::isDeviceGPU(K)) << rt::toString(K);
    EXPECT_FALSE(rt::isDeviceCPU(K) || rt::isDeviceNPU(K) || rt::isDeviceNeutral(K)) << rt::toString(K);
  }
  for (DeviceKind K : {DeviceKind::Hexagon, DeviceKind::Myriad, DeviceKind::ARA1, DeviceKind::GoogleTPU,
                       DeviceKind::CV22, DeviceKind::SynapNPU, DeviceKind::AnyNPU}) {
    EXPECT_TRUE(rt::isDeviceNPU(K)) << rt::toString(K);
    EXPECT_FALSE(rt::isDeviceCPU(K) || rt::isDeviceGPU(K) || rt::isDeviceNeutral(K)) << rt::toString(K);
  }
  EXPECT_TRUE(rt::isDeviceNeutral(DeviceKind::Neutral));
  EXPECT_FALSE(rt::isDeviceCPU(DeviceKind::Unspecified) || rt::isDeviceGPU(DeviceKind::Unspecified) ||
               rt::isDeviceNPU(DeviceKind::Unspecified) || rt::isDeviceNeutral(DeviceKind::Unspecified));
}

TEST(DeviceTest, Names) {
  EXPECT_STREQ(rt::toString(PlatformKind::Native), "Native");
  EXPECT_STREQ(rt::toString(PlatformKind::XNNPack), "XNNPack");
  EXPECT_STREQ(rt::toString(PlatformKind::Synaptics), "Synaptics");
  EXPECT_STREQ(rt::toString(DeviceKind::x64), "x64");
  EXPECT_STREQ(rt::toString(DeviceKind::ARM64), "ARM64");
  EXPECT_STREQ(rt::toString(DeviceKind::AnyCPU), "AnyCPU");
  EXPECT_STREQ(rt::toString(DeviceKind::RISCV64), "RISCV64");
  EXPECT_STREQ(rt::toString(DeviceKind::GoogleTPU), "GoogleTPU");
  EXPECT_STREQ(rt::toString(DeviceKind::Unspecified), "Unspecified");
  EXPECT_STREQ(rt::toString(rt::OSKind::Linux), "Linux");
  EXPECT_STREQ(rt::toString(rt::OSKind::Android), "Android");
  EXPECT_STREQ(rt::toString(rt::OSKind::MacOS), "MacOS");
  EXPECT_STREQ(rt::toString(rt::OSKind::IOS), "IOS");
}

TEST(DeviceTest, DeviceIDValue) {
  DeviceID D = DeviceID::from(PlatformKind::XNNPack, DeviceKind::ARM64, 2, 1);
  EXPECT_EQ(D.getPlatform(), PlatformKind::XNNPack);
  EXPECT_EQ(D.getDeviceKind(), DeviceKind::ARM64);
  EXPECT_EQ(D.getIndex(), 2u);
  EXPECT_EQ(D.getHostID(), 1u);
  EXPECT_EQ(D.toString(), "XNNPack:ARM64:2@1");
  EXPECT_EQ(DeviceID::from(PlatformKind::Native, DeviceKind::x64).toString(), "Native:x64:0@0");
  EXPECT_EQ(DeviceID().toString(), "Native:Unspecified:0@0");
  EXPECT_TRUE(D == DeviceID::from(PlatformKind::XNNPack, DeviceKind::ARM64, 2, 1));
  EXPECT_TRUE(D != DeviceID::from(PlatformKind::XNNPack, DeviceKind::ARM64, 3, 1));
  EXPECT_THROW(D.getHostInfo(), rt::DeviceError); // host 1 is not known here
}

TEST(DeviceTest, CapabilityStrings) {
  rt::X86Capability X;
  EXPECT_EQ(X.toString(), "x86: none");
  X.SSE2 = X.AVX = X.AVX2 = X.FMA = X.AVX512F = X.AVX512BW = X.AVX512VL = X.AVX512VNNI = X.AVX512BF16 = true;
  EXPECT_EQ(X.toString(), "x86: sse2 avx avx2 fma avx512f avx512bw avx512vl avx512vnni avx512bf16");
  rt::ARMCapability A;
  A.NEON = A.DotProd = A.SVE2 = true;
  EXPECT_EQ(A.toString(), "arm: neon dotprod sve2");
  rt::CUDACapability C;
  C.ComputeMajor = 8;
  C.ComputeMinor = 6;
  EXPECT_EQ(C.toString(), "cuda: sm_86");
  EXPECT_EQ(rt::VoidCapability().toString(), "void");
  EXPECT_EQ(rt::VoidCapability().getKind(), rt::CapabilityKind::Void);
  rt::HexagonCapability H;
  H.Version = 73;
  H.HVX = true;
  EXPECT_EQ(H.toString(), "hexagon: v73 hvx");
}

TEST(DeviceTest, LocalHostHasNativeCPU) {
  const rt::HostInfo Info = rt::getLocalInfo();
  EXPECT_EQ(Info.ID, 0);
  EXPECT_FALSE(Info.Name.empty());
  EXPECT_EQ(Info.OS, rt::OSKind::Linux);
  EXPECT_TRUE(rt::isDeviceCPU(Info.Architecture));
  ASSERT_FALSE(Info.Devices.empty());
  const DeviceID Native = Info.Devices[0];
  EXPECT_EQ(Native.getPlatform(), PlatformKind::Native);
  EXPECT_EQ(Native.getDeviceKind(), Info.Architecture);
  EXPECT_EQ(Native.getIndex(), 0u);
  EXPECT_EQ(Native.getHostID(), 0u);
  EXPECT_EQ(Native.getHostInfo().Name, Info.Name);
  EXPECT_NE(Info.toString().find("devices: [" + Native.toString() + " (" + Native.getCapability().toString() + ")"),
            std::string::npos)
      << Info.toString();
#if defined(__x86_64__)
  EXPECT_EQ(Info.Architecture, DeviceKind::x64);
  EXPECT_EQ(Native.toString(), "Native:x64:0@0");
#elif defined(__aarch64__)
  EXPECT_EQ(Info.Architecture, DeviceKind::ARM64);
#endif
}

#if defined(__x86_64__) || defined(__i386__)
TEST(DeviceTest, X86CapabilityMatchesCompilerDetection) {
  const DeviceID Native = rt::getLocalInfo().Devices[0];
  const rt::Capability &Cap = Native.getCapability();
  ASSERT_EQ(Cap.getKind(), rt::CapabilityKind::X86);
  const auto *X = dynamic_cast<const rt::X86Capability *>(&Cap);
  ASSERT_NE(X, nullptr);
  __builtin_cpu_init();
  EXPECT_EQ(X->SSE2, static_cast<bool>(__builtin_cpu_supports("sse2")));
  EXPECT_EQ(X->SSE41, static_cast<bool>(__builtin_cpu_supports("sse4.1")));
  EXPECT_EQ(X->SSE42, static_cast<bool>(__builtin_cpu_supports("sse4.2")));
  EXPECT_EQ(X->AVX, static_cast<bool>(__builtin_cpu_supports("avx")));
  EXPECT_EQ(X->AVX2, static_cast<bool>(__builtin_cpu_supports("avx2")));
  EXPECT_EQ(X->FMA, static_cast<bool>(__builtin_cpu_supports("fma")));
  EXPECT_EQ(X->AVX512F, static_cast<bool>(__builtin_cpu_supports("avx512f")));
  EXPECT_EQ(X->AVX512BW, static_cast<bool>(__builtin_cpu_supports("avx512bw")));
  EXPECT_EQ(X->AVX512VL, static_cast<bool>(__builtin_cpu_supports("avx512vl")));
  EXPECT_EQ(X->AVX512DQ, static_cast<bool>(__builtin_cpu_supports("avx512dq")));
  EXPECT_EQ(X->AVX512VNNI, static_cast<bool>(__builtin_cpu_supports("avx512vnni")));
#if defined(__x86_64__)
  EXPECT_TRUE(X->SSE2); // part of x86-64
#endif
  const std::string S = Cap.toString();
  EXPECT_EQ(S.rfind("x86:", 0), 0u) << S;
  EXPECT_EQ(S.find(" avx2") != std::string::npos, X->AVX2) << S;
  EXPECT_EQ(&Native.getCapability(), &Cap); // stable reference
}
#endif

TEST(DeviceTest, UnknownDeviceHasVoidCapability) {
  const DeviceID Unknown = DeviceID::from(PlatformKind::Hexagon, DeviceKind::Hexagon, 9, 0);
  EXPECT_EQ(Unknown.getCapability().getKind(), rt::CapabilityKind::Void);
  EXPECT_EQ(DeviceID::from(PlatformKind::Native, DeviceKind::x64, 0, 5).getCapability().getKind(),
            rt::CapabilityKind::Void);
}

// Registration changes process-wide state, so it runs in a child process.
TEST(DeviceTest, RegisteredDevicesAppearInLocalInfo) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        const rt::HostInfo Before = rt::getLocalInfo();
        const size_t N = Before.Devices.size();
        const DeviceID Extra = DeviceID::from(PlatformKind::Synaptics, DeviceKind::SynapNPU, 0, 0);
        auto Cap = std::make_unique<rt::HexagonCapability>();
        Cap->Version = 68;
        rt::detail::registerLocalDevice(Extra, std::move(Cap));
        const rt::HostInfo After = rt::getLocalInfo();
        bool Ok = After.Devices.size() == N + 1 && After.Devices[N] == Extra;
        Ok = Ok && Before.Devices.size() == N && Before.Devices[0] == After.Devices[0]; // old view still valid
        Ok = Ok && Extra.getCapability().toString() == "hexagon: v68";
        const rt::Capability *Old = &Extra.getCapability();
        rt::detail::registerLocalDevice(Extra, nullptr); // re-registration replaces, does not duplicate
        Ok = Ok && rt::getLocalInfo().Devices.size() == N + 1;
        Ok = Ok && Extra.getCapability().getKind() == rt::CapabilityKind::Void;
        Ok = Ok && Old->toString() == "hexagon: v68"; // the old reference is still alive
        Ok = Ok && rt::detail::localDevices().size() == N + 1;
        std::exit(Ok ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
  EXPECT_THROW(rt::detail::registerLocalDevice(DeviceID::from(PlatformKind::CUDA, DeviceKind::NVIDIA, 0, 3), nullptr),
               rt::InvalidArgumentError);
}
