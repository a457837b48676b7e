// Extension backends across the C ABI: the example backend (src/backends/example) is dlopen'ed,
// gets the ops it supports, computes them through the runtime's pool, and reports errors.
// Each test runs in a child process: a loaded extension stays registered for the process.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <sstream>

#include "Optimium/Runtime.h"
#include "TestUtil.h"

namespace rt = optimium::runtime;
using namespace optimium_test;

namespace {

const rt::DeviceID NPU = rt::DeviceID::from(rt::PlatformKind::Synaptics, rt::DeviceKind::SynapNPU);

#define CHECK_OR_RETURN(Cond, Msg)                                                                 \
  do {                                                                                             \
    if (!(Cond)) {                                                                                 \
      std::ostringstream OS;                                                                       \
      OS << __LINE__ << ": " << Msg;                                                               \
      return OS.str();                                                                             \
    }                                                                                              \
  } while (0)

std::string placementAndExecution() {
  rt::loadExtension(OPTIMIUM_EXAMPLE_BACKEND);
  bool Listed = false;
  for (const rt::DeviceID &D : rt::getLocalInfo().Devices)
    Listed |= D == NPU;
  CHECK_OR_RETURN(Listed, "the extension's device is not in getLocalInfo()");
  // The capability it reported through the ABI (get_capability).
  const rt::Capability &Cap = NPU.getCapability();
  CHECK_OR_RETURN(Cap.getKind() == rt::CapabilityKind::RISCV, "capability " << Cap.toString());
  const auto &RV = static_cast<const rt::RISCVCapability &>(Cap);
  CHECK_OR_RETURN(RV.Vector && RV.Float16 && RV.VectorLength == 256, "capability " << Cap.toString());
  CHECK_OR_RETURN(Cap.toString() == "riscv: v vlen=256 zfh", "capability " << Cap.toString());

  rt::ModelLoadOptions O;
  O.Devices = {NPU};
  O.Strict = false; // ops the NPU lacks fall back to the CPU
  rt::Model M = rt::loadModel(dataPath("tests/models/mlp"), O);
  int OnNpu = 0, OnCpu = 0;
  for (const rt::OpInfo &Op : M.getOperations()) {
    if (Op.Type == "Relu")
      CHECK_OR_RETURN(Op.Device == NPU, "Relu placed on " << Op.Device.toString());
    OnNpu += Op.Device == NPU;
    OnCpu += Op.Device.getPlatform() == rt::PlatformKind::Native;
  }
  CHECK_OR_RETURN(OnNpu >= 1 && OnCpu >= 1, "expected a mixed placement, got " << OnNpu << " NPU / " << OnCpu << " CPU");

  auto Runs = reinterpret_cast<unsigned long (*)()>(
      dlsym(dlopen(OPTIMIUM_EXAMPLE_BACKEND, RTLD_NOW | RTLD_NOLOAD), "optimium_example_backend_runs"));
  CHECK_OR_RETURN(Runs, "cannot find the example backend's counter");
  const unsigned long Before = Runs();
  rt::InferRequest R = M.createRequest();
  R.infer(rt::make_array(std::vector<rt::Tensor>{readNpy(dataPath("tests/models/mlp/input_0.npy"))}));
  R.wait();
  const double Diff = maxAbsDiff(R.getOutput(0), readNpy(dataPath("tests/models/mlp/output_0.npy")));
  CHECK_OR_RETURN(Diff <= 1e-4, "output differs by " << Diff);
  CHECK_OR_RETURN(Runs() > Before, "the example backend's kernel never ran");

  // Strict with only the NPU: the ops it lacks cannot be placed.
  O.Strict = true;
  try {
    rt::loadModel(dataPath("tests/models/mlp"), O);
    return "strict placement on the NPU should fail for MatMul";
  } catch (const rt::ModelError &E) {
    CHECK_OR_RETURN(std::string(E.what()).find("MatMul") != std::string::npos, E.what());
  }
  // Loading the same platform twice is an ExtensionError.
  try {
    rt::loadExtension(OPTIMIUM_EXAMPLE_BACKEND);
    return "a second load of the same extension should fail";
  } catch (const rt::ExtensionError &) {
  }
  return "";
}

} // namespace

TEST(Extension, ExampleBackendIsPlacedAndRunsAcrossTheCAbi) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        std::string Error;
        try {
          Error = placementAndExecution();
        } catch (const std::exception &E) {
          Error = E.what();
        }
        if (!Error.empty())
          std::fprintf(stderr, "FAILED: %s\n", Error.c_str());
        std::exit(Error.empty() ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(Extension, BadPathsAreReported) {
  EXPECT_THROW(rt::loadExtension("/no/such/liboptimium-runtime-x.so"), rt::InvalidArgumentError);
  EXPECT_THROW(rt::loadExtension(dataPath("tests")), rt::InvalidArgumentError);
  // A file that is not a shared library.
  EXPECT_THROW(rt::loadExtension(dataPath("models/digits/model.onnx")), rt::ExtensionError);
}

namespace {

const rt::DeviceID Hexagon = rt::DeviceID::from(rt::PlatformKind::Hexagon, rt::DeviceKind::Hexagon);

bool listed(const rt::DeviceID &ID) {
  for (const rt::DeviceID &D : rt::getLocalInfo().Devices)
    if (D == ID)
      return true;
  return false;
}

/// The ExtensionError message of loading tests/backends/BadBackend.c in Mode ("" when it loads).
std::string badLoad(const char *Mode) {
  ::setenv("OPTIMIUM_TEST_BAD_BACKEND", Mode, 1);
  std::string Message;
  try {
    rt::loadExtension(OPTIMIUM_BAD_BACKEND);
  } catch (const rt::ExtensionError &E) {
    Message = E.what();
  }
  ::unsetenv("OPTIMIUM_TEST_BAD_BACKEND");
  return Message;
}

bool contains(const std::string &S, const std::string &Part) { return S.find(Part) != std::string::npos; }

} // namespace

TEST(Extension, WrongApiVersionsAndBadRegistrationsAreRefused) {
  std::string E = badLoad("v1");
  EXPECT_TRUE(contains(E, "was built against backend API version 1, this runtime speaks version 2")) << E;
  EXPECT_TRUE(contains(E, "rebuild it against")) << E;
  E = badLoad("future");
  EXPECT_TRUE(contains(E, "was built against backend API version 3, this runtime speaks version 2")) << E;
  E = badLoad("silent");
  EXPECT_TRUE(contains(E, "failed to register (code 1) without reporting the backend API version")) << E;
  E = badLoad("capability");
  EXPECT_TRUE(contains(E, "reports capability kind 99, which this runtime does not know")) << E;
  E = badLoad("capfail");
  EXPECT_TRUE(contains(E, "failed to report the capability of Hexagon:Hexagon:0@0 (code 7)")) << E;
  E = badLoad("device");
  EXPECT_TRUE(contains(E, "registered an unknown device (platform 8, device kind 200")) << E;
  // None of them registered anything, nor stayed loaded.
  EXPECT_FALSE(listed(Hexagon));
  EXPECT_EQ(::dlopen(OPTIMIUM_BAD_BACKEND, RTLD_NOW | RTLD_NOLOAD), nullptr);
}

TEST(Extension, CapabilityCrossesTheAbiAndFinalizeUnloads) {
  ASSERT_EQ(badLoad("ok"), "");
  ASSERT_TRUE(listed(Hexagon));
  const rt::Capability &Cap = Hexagon.getCapability();
  ASSERT_EQ(Cap.getKind(), rt::CapabilityKind::Hexagon) << Cap.toString();
  EXPECT_EQ(static_cast<const rt::HexagonCapability &>(Cap).Version, 73u);
  EXPECT_TRUE(static_cast<const rt::HexagonCapability &>(Cap).HVX);
  const std::string Host = rt::getLocalInfo().toString();
  EXPECT_TRUE(contains(Host, "Hexagon:Hexagon:0@0 (" + Cap.toString() + ")")) << Host;
  // A second library for the platform is refused, and the first stays.
  EXPECT_TRUE(contains(badLoad("ok"), "an extension for platform Hexagon is already loaded")) << "";
  EXPECT_TRUE(listed(Hexagon));

  // finalize() unloads it: its device is gone, its library closed; initialize() starts without it.
  rt::finalize();
  EXPECT_FALSE(listed(Hexagon));
  EXPECT_EQ(Hexagon.getCapability().getKind(), rt::CapabilityKind::Void);
  EXPECT_EQ(::dlopen(OPTIMIUM_BAD_BACKEND, RTLD_NOW | RTLD_NOLOAD), nullptr);
  rt::initialize();
  EXPECT_FALSE(listed(Hexagon));
  // Loading it again works (no "already loaded"), then the test leaves the process as it found it.
  EXPECT_EQ(badLoad("ok"), "");
  EXPECT_TRUE(listed(Hexagon));
  rt::finalize();
  rt::initialize();
  EXPECT_FALSE(listed(Hexagon));
}
