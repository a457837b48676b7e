// optimium-run's device listing and selection (tools/Devices.h) with an extension loaded.
#include "tools/Devices.h"

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <sstream>

namespace rt = optimium::runtime;
using namespace optimium::tools;

TEST(DumpDevices, ListsEachDevicesCapabilityExtensionsIncluded) {
  {
    rt::AutoInit Init;
    rt::loadExtension(OPTIMIUM_EXAMPLE_BACKEND);
    std::ostringstream OS;
    dumpDevices(OS);
    const std::string Out = OS.str();
    // The example extension's capability crosses the backend ABI (get_capability).
    EXPECT_NE(Out.find("--device=synaptics  Synaptics:SynapNPU:0@0  platform=Synaptics kind=SynapNPU index=0  "
                       "capability: riscv: v vlen=256 zfh\n"),
              std::string::npos)
        << Out;
#if defined(__x86_64__)
    EXPECT_NE(Out.find("--device=native  Native:x64:0@0  platform=Native kind=x64 index=0  capability: x86: sse2"),
              std::string::npos)
        << Out;
#endif
    EXPECT_EQ(resolveDevice("synaptics", "", "auto").size(), 1u);
  }
  // AutoInit's finalize() unloaded it.
  EXPECT_EQ(::dlopen(OPTIMIUM_EXAMPLE_BACKEND, RTLD_NOW | RTLD_NOLOAD), nullptr);
  rt::AutoInit Init;
  std::ostringstream OS;
  dumpDevices(OS);
  EXPECT_EQ(OS.str().find("synaptics"), std::string::npos) << OS.str();
}
