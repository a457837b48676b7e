// What the XNNPACK extension's test files share: the runtime initialized around the test binary,
// and the XNNPack and native CPU devices of this host.
#pragma once

#include <Optimium/Runtime.h>
#include <gtest/gtest.h>

namespace xnnpack_test {

/// initialize() before the tests, finalize() after (register with AddGlobalTestEnvironment).
class Runtime : public ::testing::Environment {
public:
  void SetUp() override { optimium::runtime::initialize(); }
  void TearDown() override { optimium::runtime::finalize(); }
};

/// The XNNPack device (an empty DeviceID when the extension is not loaded).
inline optimium::runtime::DeviceID xnnpack() {
  for (const optimium::runtime::DeviceID &D : optimium::runtime::getLocalInfo().Devices)
    if (D.getPlatform() == optimium::runtime::PlatformKind::XNNPack)
      return D;
  return optimium::runtime::DeviceID();
}
/// The native CPU (the first device).
inline optimium::runtime::DeviceID cpu() { return optimium::runtime::getLocalInfo().Devices[0]; }

} // namespace xnnpack_test
