// optimium-run's device listing and selection (tools/Devices.h) with an extension loaded.
#include "tools/DeviceAllocator.h"
#include "tools/Devices.h"
#include "tools/Npy.h"

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
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
    EXPECT_NE(Out.find("--device=npu  Synaptics:SynapNPU:0@0  platform=Synaptics kind=SynapNPU index=0  "
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
  EXPECT_EQ(OS.str().find("Synaptics"), std::string::npos) << OS.str();
}

namespace {
std::string resolveError(const std::string &Device, const std::string &HwType) {
  try {
    resolveDevice(Device, HwType, "auto");
  } catch (const ToolError &E) {
    return E.what();
  }
  return "";
}
} // namespace

TEST(ResolveDevice, HwTypesAreTheNpuDriversBackends) {
  rt::AutoInit Init;
  EXPECT_NE(resolveError("npu", "sim").find("--hw_type=sim: no npu backend of that type is loaded"), std::string::npos);
  rt::loadExtension(OPTIMIUM_SIM_BACKEND);
  for (const char *Name : {"npu", "torq", "synaptics"}) {
    const std::vector<rt::DeviceID> D = resolveDevice(Name, "sim", "auto");
    ASSERT_EQ(D.size(), 1u) << Name;
    EXPECT_EQ(D[0].toString(), "Synaptics:SynapNPU:0@0");
  }
  EXPECT_EQ(resolveDevice("npu", "", "auto").size(), 1u);
  EXPECT_EQ(resolveError("npu", "fpga"), "--hw_type=fpga: unknown hardware type of device npu; known: " + knownHwTypes());
  EXPECT_EQ(knownHwTypes(), "sim (the simulated NPU, liboptimium-runtime-sim.so), astra_machina (the Synaptics Astra "
                            "Machina SoC NPU, not built in this runtime)");
  EXPECT_NE(resolveError("npu", "astra_machina").find("this runtime does not build it"), std::string::npos);
  EXPECT_NE(resolveError("native", "sim").find("device 'native' has no selectable hardware backends"), std::string::npos);
  std::ostringstream OS;
  dumpDevices(OS);
  EXPECT_NE(OS.str().find("capability: riscv: v vlen=256 zfh  hw_type=sim  memory="), std::string::npos) << OS.str();
}

namespace {
/// The ToolError message of DeviceAllocator::create ("" when it succeeds).
std::string allocatorError(const std::string &Flag, const std::string &Heap) {
  try {
    DeviceAllocator::create(Flag, Heap);
  } catch (const ToolError &E) {
    return E.what();
  }
  return "";
}
} // namespace

TEST(DeviceAllocator, DmabufSaysWhyTheHeapCannotBeUsedAndAutoFallsBackToCpu) {
  rt::AutoInit Init;
  // No such heap: dmabuf is an error naming it; auto and cpu give host memory.
  const std::string Missing = "/nonexistent/dma_heap/system";
  EXPECT_EQ(allocatorError("dmabuf", Missing),
            "--device_allocator=dmabuf: " + Missing +
                " does not exist (this kernel offers no DMA-BUF system heap, CONFIG_DMABUF_HEAPS_SYSTEM); use "
                "--device_allocator=auto or cpu");
  for (const char *Flag : {"auto", "cpu"}) {
    std::unique_ptr<DeviceAllocator> A = DeviceAllocator::create(Flag, Missing);
    EXPECT_FALSE(A->isDmaBuf());
    EXPECT_EQ(A->name(), "cpu");
    rt::Tensor T = A->allocate(rt::ElementType::F32, {2, 3});
    EXPECT_EQ(T.getElementCount(), 6u);
    EXPECT_FALSE(T.isUserBuffer());
  }
  // A node that opens but is no DMA-BUF heap (a regular file): a clear error, and auto falls back.
  const std::string NotAHeap = ::testing::TempDir() + "/not_a_dma_heap";
  std::ofstream(NotAHeap) << "x";
  const std::string E = allocatorError("dmabuf", NotAHeap);
  EXPECT_EQ(E.rfind("--device_allocator=dmabuf: " + NotAHeap + " is not a DMA-BUF heap (", 0), 0u) << E;
  EXPECT_FALSE(DeviceAllocator::create("auto", NotAHeap)->isDmaBuf());
  // A node that cannot be opened read-write (a folder).
  EXPECT_EQ(allocatorError("dmabuf", "/"), "--device_allocator=dmabuf: cannot open /: Is a directory");
  EXPECT_EQ(allocatorError("gpu", Missing), "--device_allocator=gpu: expected auto, cpu or dmabuf");
}

TEST(DeviceAllocator, DmaBufBuffersOfTheSystemHeapWhereItExists) {
  if (::access(kSystemDmaHeap, R_OK | W_OK) != 0)
    GTEST_SKIP() << kSystemDmaHeap << " is not usable here (the error and fallback paths are tested above)";
  rt::AutoInit Init;
  std::unique_ptr<DeviceAllocator> A = DeviceAllocator::create("dmabuf");
  ASSERT_TRUE(A->isDmaBuf());
  rt::Tensor T = A->allocate(rt::ElementType::F32, {4, 5});
  EXPECT_TRUE(T.isUserBuffer());
  std::memset(T.data(), 0, T.getTensorSize());
  // Beyond any heap's size: a clear error, not a crash.
  try {
    A->allocate(rt::ElementType::F32, {int64_t(1) << 40});
    ADD_FAILURE() << "a 4 TiB dma-buf was allocated";
  } catch (const ToolError &Err) {
    EXPECT_NE(std::string(Err.what()).find("failed"), std::string::npos) << Err.what();
  }
}
