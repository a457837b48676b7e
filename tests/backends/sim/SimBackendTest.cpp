// The simulated accelerator (src/backends/sim/) through the public API: loaded as an extension,
// placed by ModelLoadOptions.Devices, its own memory (copies counted with the profiler), the cycle
// model's counter file, device-resident outputs, and its error paths.
#include <Optimium/Runtime.h>

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <list>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "OnnxBuilder.h"
#include "TestUtil.h"

namespace rt = optimium::runtime;
using optimium_test::OnnxBuilder;
using optimium_test::randomFloats;

namespace {

const rt::DeviceID kSim = rt::DeviceID::from(rt::PlatformKind::Synaptics, rt::DeviceKind::SynapNPU, 0);

using SimEnv = std::vector<std::pair<std::string, std::string>>;

/// The sim's settings for one test (it reads them when it is loaded), then the runtime with it.
class SimRuntime {
public:
  explicit SimRuntime(std::vector<std::pair<std::string, std::string>> Env = {}) {
    // Per process: ctest runs the tests of this binary side by side.
    Counter = ::testing::TempDir() + "/sim_counter_" + std::to_string(::getpid()) + "_" + std::to_string(++Serial);
    std::remove(Counter.c_str());
    Env.push_back({"OPTIMIUM_RT_SIM_COUNTER_PATH", Counter});
    for (const char *K : {"OPTIMIUM_RT_SIM_ARENA_BYTES", "OPTIMIUM_RT_SIM_MACS_PER_CYCLE",
                          "OPTIMIUM_RT_SIM_ELEMENTS_PER_CYCLE", "OPTIMIUM_RT_SIM_OP_OVERHEAD_CYCLES",
                          "OPTIMIUM_RT_SIM_CLOCK_MHZ", "OPTIMIUM_RT_SIM_FAIL_OP"})
      ::unsetenv(K);
    for (const auto &KV : Env)
      ::setenv(KV.first.c_str(), KV.second.c_str(), 1);
    rt::initialize();
    rt::loadExtension(OPTIMIUM_SIM_BACKEND);
  }
  ~SimRuntime() { rt::finalize(); }
  uint64_t counter() const {
    std::ifstream F(Counter);
    uint64_t V = 0;
    F >> V;
    return V;
  }
  std::string Counter;
  static int Serial;
};
int SimRuntime::Serial = 0;

rt::ModelLoadOptions onSim(bool Strict = false) {
  rt::ModelLoadOptions O;
  O.Devices = {kSim};
  O.Strict = Strict;
  return O;
}

std::vector<float> hostFloats(const rt::Tensor &T) {
  rt::Tensor H = T.toHost();
  const float *P = static_cast<const float *>(H.data());
  return std::vector<float>(P, P + H.getElementCount());
}

rt::Tensor floats(const std::vector<int64_t> &Dims, const std::vector<float> &V) {
  rt::Tensor T = rt::tensor(rt::ElementType::F32, rt::TensorShape::fromDims(Dims));
  std::memcpy(T.data(), V.data(), V.size() * sizeof(float));
  return T;
}

/// y = Relu(x @ W): [1, N] -> [1, N], so an output can feed the next run (or the next model).
std::string squareLayer(int64_t N, unsigned Seed, const char *Act = "Relu") {
  OnnxBuilder B;
  B.input("x", onnx::TensorProto::FLOAT, {1, N});
  B.initializer("W", {N, N}, randomFloats(static_cast<size_t>(N * N), Seed));
  B.node("MatMul", {"x", "W"}, {"h"});
  B.node(Act, {"h"}, {"y"});
  B.output("y");
  return B.bytes();
}

/// loadModel from bytes does not copy them (Model.h): the tests pass temporaries, so every model's
/// bytes are kept here for the rest of the process (valgrind found the sim reading a constant from
/// freed bytes when they were not).
rt::Model load(const std::string &Bytes, const rt::ModelLoadOptions &O) {
  static std::list<std::string> Kept;
  Kept.push_back(Bytes);
  return rt::loadModel(reinterpret_cast<const uint8_t *>(Kept.back().data()), Kept.back().size(), O);
}

std::vector<float> digits(size_t First, size_t Count) {
  std::ifstream F(std::string(OPTIMIUM_TEST_DATA_DIR) + "/models/digits/test_images.bin", std::ios::binary);
  std::vector<float> V(Count * 64);
  F.seekg(static_cast<std::streamoff>(First * 64 * sizeof(float)));
  F.read(reinterpret_cast<char *>(V.data()), static_cast<std::streamsize>(V.size() * sizeof(float)));
  EXPECT_TRUE(F.good());
  return V;
}

struct Copies {
  int In = 0, Out = 0;
};
/// Copy events of the request's last profile(): into the sim (host -> device) and out of it.
Copies copiesOf(const rt::InferRequest &R) {
  Copies C;
  for (const rt::ProfileEvent &E : R.getProfileEvents()) {
    if (E.Kind != rt::ProfileEventKind::CopyBegin)
      continue;
    if (E.DestDevice == kSim && E.SourceDevice != kSim)
      ++C.In;
    else if (E.SourceDevice == kSim && E.DestDevice != kSim)
      ++C.Out;
  }
  return C;
}

/// One profiled run (no warm-up) of R on Inputs.
void profileOnce(rt::InferRequest &R, const std::vector<rt::Tensor> &Inputs) {
  rt::ProfileOptions P;
  P.Repeat = 1;
  P.WarmUp = 0;
  R.profile(rt::ArrayRef<rt::Tensor>(Inputs), P);
}

} // namespace

TEST(SimBackend, RegistersAsTheNpuDriversSimHardwareTypeWithItsProperties) {
  SimRuntime Sim;
  const rt::HostInfo H = rt::getLocalInfo();
  bool Found = false;
  for (const rt::DeviceID &D : H.Devices)
    Found |= D == kSim;
  ASSERT_TRUE(Found);
  EXPECT_EQ(rt::getDeviceProperty(kSim, "hw_type"), "sim");
  EXPECT_EQ(rt::getDeviceProperty(kSim, "inference_time_path"), Sim.Counter);
  EXPECT_EQ(rt::getDeviceProperty(kSim, "memory"), std::to_string(256u << 20) + "-byte arena");
  EXPECT_EQ(rt::getDeviceProperty(kSim, "no such key"), "");
  EXPECT_EQ(kSim.getCapability().toString(), "riscv: v vlen=256 zfh");
  EXPECT_EQ(Sim.counter(), 0u); // the file exists from registration on
  // Explicit-only: with no Devices asked for, nothing is placed on the simulator.
  rt::Model M = rt::loadModel(std::string(OPTIMIUM_TEST_DATA_DIR) + "/models/digits/model.onnx");
  for (const rt::OpInfo &Op : M.getOperations())
    EXPECT_EQ(Op.Device.getPlatform(), rt::PlatformKind::Native) << Op.Name;
}

TEST(SimBackend, DigitsOnTheSimEqualTheNativeBackendBitForBit) {
  SimRuntime Sim(SimEnv{{"OPTIMIUM_RT_SIM_CLOCK_MHZ", "1"}}); // microseconds = cycles: no rounding
  const std::string Path = std::string(OPTIMIUM_TEST_DATA_DIR) + "/models/digits/model.onnx";
  rt::Model OnSim = rt::loadModel(Path, onSim(/*Strict=*/true)); // every op of it runs on the sim
  rt::Model Native = rt::loadModel(Path);
  for (const rt::OpInfo &Op : OnSim.getOperations())
    EXPECT_EQ(Op.Device, kSim) << Op.Name << " (" << Op.Type << ")";
  rt::InferRequest RS = OnSim.createRequest(), RN = Native.createRequest();
  const std::vector<float> Images = digits(0, 40);
  uint64_t Last = 0;
  for (size_t I = 0; I < 40; ++I) {
    rt::Tensor X = floats({1, 1, 8, 8}, std::vector<float>(Images.begin() + I * 64, Images.begin() + (I + 1) * 64));
    RS.infer({X});
    RS.wait();
    RN.infer({X});
    RN.wait();
    const std::vector<float> A = hostFloats(RS.getOutput(0)), B = hostFloats(RN.getOutput(0));
    ASSERT_EQ(A.size(), 10u);
    EXPECT_EQ(std::memcmp(A.data(), B.data(), A.size() * sizeof(float)), 0) << "digit " << I;
    // Deterministic time: every run adds the same modelled microseconds.
    const uint64_t Now = Sim.counter();
    EXPECT_GT(Now, Last);
    if (I >= 2) {
      EXPECT_EQ(Now - Last, Last / I) << "run " << I;
    }
    Last = Now;
  }
}

TEST(SimBackend, CounterGrowsByTheModelledCycles) {
  // 1 MHz: one cycle is one microsecond. MatMul [1,256] x [256,256]: 65536 MACs / 64 = 1024
  // cycles + 256 outputs / 16 = 16 + 100 overhead = 1140; Relu: 256 / 16 + 100 = 116.
  SimRuntime Sim({{"OPTIMIUM_RT_SIM_MACS_PER_CYCLE", "64"},
                  {"OPTIMIUM_RT_SIM_ELEMENTS_PER_CYCLE", "16"},
                  {"OPTIMIUM_RT_SIM_OP_OVERHEAD_CYCLES", "100"},
                  {"OPTIMIUM_RT_SIM_CLOCK_MHZ", "1"}});
  rt::Model M = load(squareLayer(256, 1, "Tanh"), onSim(true));
  std::vector<std::string> Ops;
  for (const rt::OpInfo &Op : M.getOperations())
    Ops.push_back(Op.Type);
  ASSERT_EQ(Ops, (std::vector<std::string>{"MatMul", "Tanh"}));
  rt::InferRequest R = M.createRequest();
  rt::Tensor X = floats({1, 256}, randomFloats(256, 7));
  for (int Run = 1; Run <= 3; ++Run) {
    R.infer({X});
    R.wait();
    EXPECT_EQ(Sim.counter(), uint64_t(Run) * (1140 + 116));
  }
}

TEST(SimBackend, CopiesPerRunWithAndWithoutDeviceOutputs) {
  SimRuntime Sim;
  rt::Model A = load(squareLayer(64, 1), onSim(true));
  rt::Model B = load(squareLayer(64, 2), onSim(true));
  rt::Model NativeA = load(squareLayer(64, 1), {}), NativeB = load(squareLayer(64, 2), {});
  const rt::Tensor X = floats({1, 64}, randomFloats(64, 3));

  // Host outputs: every run copies x in and y out. (W is not copied: MatMul packed it into its
  // kernel at load, as a compiled NPU program holds its weights.)
  rt::InferRequest R = A.createRequest();
  for (int Run = 0; Run < 3; ++Run) {
    profileOnce(R, {Run == 0 ? X : R.getOutput(0).clone()}); // fed back from the host
    EXPECT_EQ(copiesOf(R).In, 1);
    EXPECT_EQ(copiesOf(R).Out, 1);
    EXPECT_FALSE(R.getOutput(0).isDeviceTensor());
  }

  // Device outputs: the output stays in the sim's memory and feeds the next run without a copy.
  rt::InferRequest D = A.createRequest();
  D.setDeviceOutputs(true);
  EXPECT_TRUE(D.getDeviceOutputs());
  profileOnce(D, {X});
  EXPECT_EQ(copiesOf(D).In, 1); // x, from the host
  EXPECT_EQ(copiesOf(D).Out, 0);
  rt::Tensor Y = D.getOutput(0);
  ASSERT_TRUE(Y.isDeviceTensor());
  EXPECT_EQ(Y.getDevice(), kSim);
  EXPECT_EQ(Y.data(), nullptr);
  EXPECT_TRUE(static_cast<bool>(Y));
  std::vector<float> Expected = hostFloats(Y);
  for (int Run = 0; Run < 3; ++Run) {
    profileOnce(D, {Y});
    EXPECT_EQ(copiesOf(D).In, 0) << "run " << Run;
    EXPECT_EQ(copiesOf(D).Out, 0) << "run " << Run;
    rt::Tensor Next = D.getOutput(0);
    // The output handed out before is not overwritten by later runs.
    EXPECT_EQ(hostFloats(Y), Expected);
    // Same values as the native backend fed the same input.
    rt::InferRequest N = NativeA.createRequest();
    N.infer({floats({1, 64}, Expected)});
    N.wait();
    Expected = hostFloats(N.getOutput(0));
    EXPECT_EQ(hostFloats(Next), Expected) << "run " << Run;
    Y = Next;
  }

  // A chain of two models on the device: A's device output is B's input, no copy in between.
  rt::InferRequest RA = A.createRequest(), RB = B.createRequest();
  RA.setDeviceOutputs(true);
  RB.setDeviceOutputs(true);
  profileOnce(RA, {X});
  profileOnce(RB, {RA.getOutput(0)});
  EXPECT_EQ(copiesOf(RB).In, 0);
  profileOnce(RA, {X});
  profileOnce(RB, {RA.getOutput(0)});
  EXPECT_EQ(copiesOf(RA).In, 1); // x
  EXPECT_EQ(copiesOf(RB).In, 0);
  EXPECT_EQ(copiesOf(RB).Out, 0);
  rt::InferRequest NA = NativeA.createRequest(), NB = NativeB.createRequest();
  NA.infer({X});
  NA.wait();
  NB.infer({NA.getOutput(0)});
  NB.wait();
  EXPECT_EQ(hostFloats(RB.getOutput(0)), hostFloats(NB.getOutput(0)));
  // A device tensor also feeds a model on the CPU (copied to the host for it).
  NB.infer({RA.getOutput(0)});
  NB.wait();
  EXPECT_EQ(hostFloats(NB.getOutput(0)), hostFloats(RB.getOutput(0)));
}

TEST(SimBackend, EverySchedulerGivesTheNativeResultsAndADeviceTensorFeedsDataDependentCpuOps) {
  SimRuntime Sim;
  const std::string Path = std::string(OPTIMIUM_TEST_DATA_DIR) + "/models/digits/model.onnx";
  rt::Model Native = rt::loadModel(Path);
  const rt::Tensor X = floats({1, 1, 8, 8}, digits(3, 1));
  rt::InferRequest N = Native.createRequest();
  N.infer({X});
  N.wait();
  for (rt::SchedulerType T : {rt::SchedulerType::Exclusive, rt::SchedulerType::Sequential, rt::SchedulerType::Pipeline}) {
    rt::ModelLoadOptions O = onSim(true);
    O.Scheduler = T;
    O.ThreadCount = 2;
    rt::Model M = rt::loadModel(Path, O);
    rt::InferRequest R = M.createRequest();
    for (int Run = 0; Run < 3; ++Run) {
      R.infer({X});
      R.wait();
      EXPECT_EQ(hostFloats(R.getOutput(0)), hostFloats(N.getOutput(0))) << rt::toString(T);
    }
  }
  // NonZero (output shape from the values, on the CPU) of a device output: the executor copies it
  // to the host before shape inference reads it.
  rt::Model A = load(squareLayer(16, 1), onSim(true));
  rt::InferRequest RA = A.createRequest();
  RA.setDeviceOutputs(true);
  RA.infer({floats({1, 16}, randomFloats(16, 9))});
  RA.wait();
  const rt::Tensor Y = RA.getOutput(0);
  ASSERT_TRUE(Y.isDeviceTensor());
  OnnxBuilder B;
  B.input("y", onnx::TensorProto::FLOAT, {1, 16});
  B.node("NonZero", {"y"}, {"idx"});
  B.output("idx");
  rt::Model NZ = load(B.bytes(), {});
  rt::InferRequest RN = NZ.createRequest();
  RN.infer({Y});
  RN.wait();
  size_t NonZeros = 0;
  for (float V : hostFloats(Y))
    NonZeros += V != 0.0f;
  EXPECT_EQ(RN.getOutput(0).getShape().getDims(), (std::vector<int64_t>{2, static_cast<int64_t>(NonZeros)}));
}

TEST(SimBackend, DeviceTensorsCopyToTheHostOnlyThroughToHost) {
  SimRuntime Sim;
  rt::Model A = load(squareLayer(16, 1), onSim(true));
  rt::InferRequest R = A.createRequest();
  R.setDeviceOutputs(true);
  R.infer({floats({1, 16}, randomFloats(16, 5))});
  R.wait();
  rt::Tensor Y = R.getOutput(0);
  ASSERT_TRUE(Y.isDeviceTensor());
  rt::Tensor H = Y.toHost();
  EXPECT_FALSE(H.isDeviceTensor());
  EXPECT_EQ(H.getDevice().getPlatform(), rt::PlatformKind::Native);
  rt::Tensor C = Y.clone(); // a host copy
  EXPECT_FALSE(C.isDeviceTensor());
  EXPECT_EQ(hostFloats(C), hostFloats(H));
  rt::Tensor Dest = rt::tensor(rt::ElementType::F32, rt::TensorShape::fromDims({1, 16}));
  Y.copyTo(Dest);
  EXPECT_EQ(hostFloats(Dest), hostFloats(H));
  // A device tensor never passes for host memory.
  EXPECT_THROW(Dest.copyTo(Y), rt::InvalidStateError);
}

TEST(SimBackend, AFailedOpFallsBackToTheCpuWithoutStrictAndFailsNamingDeviceAndOpWithIt) {
  SimRuntime Sim(SimEnv{{"OPTIMIUM_RT_SIM_FAIL_OP", "MatMul"}});
  const std::string Bytes = squareLayer(32, 4);
  const rt::Tensor X = floats({1, 32}, randomFloats(32, 6));
  rt::Model Native = load(Bytes, {});
  rt::InferRequest N = Native.createRequest();
  N.infer({X});
  N.wait();
  {
    rt::Model Strict = load(Bytes, onSim(true));
    rt::InferRequest R = Strict.createRequest();
    R.infer({X});
    try {
      R.wait();
      ADD_FAILURE() << "the failing op did not fail the run";
    } catch (const rt::DeviceError &E) {
      const std::string M = E.what();
      EXPECT_NE(M.find("Synaptics:SynapNPU:0@0"), std::string::npos) << M;
      EXPECT_NE(M.find("the simulated NPU failed op MatMul"), std::string::npos) << M;
      EXPECT_NE(M.find("Strict"), std::string::npos) << M;
    }
  }
  rt::Model Lenient = load(Bytes, onSim(false));
  for (const rt::OpInfo &Op : Lenient.getOperations())
    EXPECT_EQ(Op.Device, kSim) << Op.Name; // claimed by the sim at load
  rt::InferRequest R = Lenient.createRequest();
  for (int Run = 0; Run < 2; ++Run) {
    R.infer({X});
    R.wait();
    EXPECT_EQ(hostFloats(R.getOutput(0)), hostFloats(N.getOutput(0)));
  }
}

TEST(SimBackend, AFullDeviceMemoryIsAClearError) {
  // 4 KiB: the planned values (x, h, y: 1024 floats = 4 KiB each; x and h, h and y live at once)
  // cannot fit.
  SimRuntime Sim(SimEnv{{"OPTIMIUM_RT_SIM_ARENA_BYTES", "4K"}});
  EXPECT_EQ(rt::getDeviceProperty(kSim, "memory"), "4096-byte arena");
  rt::Model M = load(squareLayer(1024, 1), onSim(true));
  rt::InferRequest R = M.createRequest();
  R.infer({floats({1, 1024}, randomFloats(1024, 3))});
  try {
    R.wait();
    ADD_FAILURE() << "a 4 KiB input fitted into a 4 KiB arena with its padding";
  } catch (const rt::OutOfResourceError &E) {
    const std::string Msg = E.what();
    EXPECT_NE(Msg.find("sim device memory is full"), std::string::npos) << Msg;
    EXPECT_NE(Msg.find("8192 bytes asked, 0 of 4096 bytes in use"), std::string::npos) << Msg;
    EXPECT_NE(Msg.find("OPTIMIUM_RT_SIM_ARENA_BYTES"), std::string::npos) << Msg;
    EXPECT_NE(Msg.find("the device tensors of model"), std::string::npos) << Msg;
    EXPECT_NE(Msg.find("3 values planned in 8192 bytes"), std::string::npos) << Msg;
  }
}

TEST(SimBackend, BadSettingsRefuseTheExtension) {
  ::setenv("OPTIMIUM_RT_SIM_CLOCK_MHZ", "fast", 1);
  rt::initialize();
  try {
    rt::loadExtension(OPTIMIUM_SIM_BACKEND);
    ADD_FAILURE() << "a malformed setting was accepted";
  } catch (const rt::ExtensionError &E) {
    EXPECT_NE(std::string(E.what()).find("failed to register"), std::string::npos) << E.what();
  }
  ::unsetenv("OPTIMIUM_RT_SIM_CLOCK_MHZ");
  rt::finalize();
}

TEST(SimBackend, ToDeviceTensorsFeedInferWithoutACopy) {
  SimRuntime Sim;
  rt::Model A = load(squareLayer(64, 1), onSim(true));
  rt::Model NativeA = load(squareLayer(64, 1), {});
  const rt::Tensor X = floats({1, 64}, randomFloats(64, 3));
  rt::InferRequest N = NativeA.createRequest();
  N.infer({X});
  N.wait();
  const std::vector<float> Expected = hostFloats(N.getOutput(0));

  const rt::Tensor XD = X.toDevice(kSim);
  ASSERT_TRUE(XD.isDeviceTensor());
  EXPECT_EQ(XD.getDevice(), kSim);
  EXPECT_EQ(XD.data(), nullptr);
  EXPECT_EQ(XD.getShape().getDims(), (std::vector<int64_t>{1, 64}));
  EXPECT_EQ(hostFloats(XD), hostFloats(X)); // the copy in is exact
  EXPECT_EQ(XD.toDevice(kSim).impl(), XD.impl()); // already there: itself

  // Host outputs: the input is bound without a copy in, y is copied out.
  rt::InferRequest R = A.createRequest();
  for (int Run = 0; Run < 2; ++Run) {
    profileOnce(R, {XD});
    EXPECT_EQ(copiesOf(R).In, 0) << "run " << Run;
    EXPECT_EQ(copiesOf(R).Out, 1) << "run " << Run;
    EXPECT_EQ(hostFloats(R.getOutput(0)), Expected);
  }
  // The same host tensor costs a copy in every run.
  profileOnce(R, {X});
  EXPECT_EQ(copiesOf(R).In, 1);
  // Device outputs too: no copy at all.
  rt::InferRequest D = A.createRequest();
  D.setDeviceOutputs(true);
  profileOnce(D, {XD});
  EXPECT_EQ(copiesOf(D).In, 0);
  EXPECT_EQ(copiesOf(D).Out, 0);
  EXPECT_EQ(hostFloats(D.getOutput(0)), Expected);
  // The device's buffer is only read: the input is unchanged after the runs.
  EXPECT_EQ(hostFloats(XD), hostFloats(X));
  // A model on the CPU reads it through the host.
  rt::InferRequest N2 = NativeA.createRequest();
  N2.infer({XD});
  N2.wait();
  EXPECT_EQ(hostFloats(N2.getOutput(0)), Expected);

  // Devices computing in host memory: the host tensor itself (or the device tensor's host copy).
  const rt::DeviceID Cpu = rt::getLocalInfo().Devices[0];
  EXPECT_EQ(X.toDevice(Cpu).impl(), X.impl());
  const rt::Tensor Back = XD.toDevice(Cpu);
  EXPECT_FALSE(Back.isDeviceTensor());
  EXPECT_EQ(hostFloats(Back), hostFloats(X));
}

TEST(SimBackend, ToDeviceBadInputIsAClearError) {
  SimRuntime Sim(SimEnv{{"OPTIMIUM_RT_SIM_ARENA_BYTES", "4K"}});
  const rt::Tensor X = floats({1, 256}, randomFloats(256, 4)); // 1 KiB (+ 64 bytes of tail in the arena)
  // Not a device of this runtime: a platform with no extension loaded, and another host's CPU.
  for (const rt::DeviceID &D : {rt::DeviceID::from(rt::PlatformKind::CUDA, rt::DeviceKind::NVIDIA, 0),
                                rt::DeviceID::from(rt::PlatformKind::Native, rt::DeviceKind::x64, 0, 3)}) {
    try {
      X.toDevice(D);
      ADD_FAILURE() << "toDevice(" << D.toString() << ") succeeded";
    } catch (const rt::DeviceError &E) {
      const std::string M = E.what();
      EXPECT_NE(M.find(D.toString() + " is not a device of this runtime"), std::string::npos) << M;
      EXPECT_NE(M.find(kSim.toString()), std::string::npos) << M; // lists the loaded ones
    }
  }
  EXPECT_THROW(rt::Tensor().toDevice(kSim), rt::InvalidStateError);
  rt::Tensor Released = X.clone();
  Released.release();
  EXPECT_THROW(Released.toDevice(kSim), rt::InvalidStateError);
  EXPECT_THROW(rt::tensor(rt::ElementType::String, rt::TensorShape::fromDims({2})).toDevice(kSim), rt::TypeError);

  // Real device memory: three 1 KiB tensors fill the 4 KiB arena, a fourth does not fit until one
  // is released.
  std::vector<rt::Tensor> OnDevice;
  for (int I = 0; I < 3; ++I)
    OnDevice.push_back(X.toDevice(kSim));
  try {
    X.toDevice(kSim);
    ADD_FAILURE() << "a fourth 1 KiB buffer fitted into the 4 KiB arena";
  } catch (const rt::OutOfResourceError &E) {
    const std::string M = E.what();
    EXPECT_NE(M.find("sim device memory is full"), std::string::npos) << M;
    EXPECT_NE(M.find(kSim.toString()), std::string::npos) << M;
  }
  OnDevice[1].release();
  OnDevice[1] = X.toDevice(kSim);
  EXPECT_EQ(hostFloats(OnDevice[1]), hostFloats(X));

  // A released device tensor is refused by infer().
  rt::Model A = load(squareLayer(256, 1), onSim(true));
  rt::Tensor Freed = OnDevice[0];
  OnDevice[0].release();
  Freed.release();
  rt::InferRequest R = A.createRequest();
  try {
    R.infer({Freed});
    R.wait();
    ADD_FAILURE() << "a released device tensor was accepted";
  } catch (const rt::InvalidArgumentError &E) {
    EXPECT_NE(std::string(E.what()).find("empty or released tensor"), std::string::npos) << E.what();
  }
}

TEST(SimBackend, ToDeviceAfterFinalizeIsAClearErrorAndHeldDeviceTensorsStayReadable) {
  rt::Tensor XD;
  const rt::Tensor X = floats({1, 16}, randomFloats(16, 8));
  {
    SimRuntime Sim;
    XD = X.toDevice(kSim);
  } // finalize()
  EXPECT_THROW(X.toDevice(kSim), rt::InvalidStateError);
  // The buffer holds its backend: the data can still be read back (then the library closes).
  EXPECT_EQ(hostFloats(XD), hostFloats(X));
  XD.release();
  SimRuntime Again; // initialize() again works
  EXPECT_TRUE(X.toDevice(kSim).isDeviceTensor());
}

namespace {

/// x: resizable [1, n] (Relu on the CPU: its dims are symbols, which the sim does not take);
/// z [1, 64] -> Relu(z W) on the sim; c: preserved [1, 4], updated by c + 1 (Add on the sim).
std::string resizableModelFolder() {
  OnnxBuilder B;
  B.input("x", onnx::TensorProto::FLOAT, {1, 8});
  B.input("z", onnx::TensorProto::FLOAT, {1, 64});
  B.input("c", onnx::TensorProto::FLOAT, {1, 4});
  B.initializer("W", {64, 64}, randomFloats(64 * 64, 11));
  B.initializer("one", {1, 4}, {1.0f, 1.0f, 1.0f, 1.0f});
  B.node("Relu", {"x"}, {"y1"});
  B.node("MatMul", {"z", "W"}, {"h"});
  B.node("Relu", {"h"}, {"y2"});
  B.node("Add", {"c", "one"}, {"c_out"});
  B.output("y1");
  B.output("y2");
  B.output("c_out", onnx::TensorProto::FLOAT, {1, 4}, true);
  char Tmpl[] = "/tmp/optimium_sim_rs_XXXXXX";
  const std::string Dir = ::mkdtemp(Tmpl);
  std::ofstream(Dir + "/model.onnx", std::ios::binary) << B.bytes();
  std::ofstream(Dir + "/optimium.json") << R"({"optimium_manifest": 1, "tensors": {
    "x": {"resizable": true, "base_shape": [1, 8]},
    "c": {"preserved": true, "update_from": "c_out"}}})";
  return Dir;
}

} // namespace

TEST(SimBackend, ADeviceTensorFeedsAResizableInputThroughOneCountedCopy) {
  SimRuntime Sim;
  const std::string Dir = resizableModelFolder();
  rt::Model M = rt::loadModel(Dir, onSim());
  EXPECT_EQ(M.getInputNames().size(), 2u); // x and z: c lives in the request
  const rt::Tensor Z = floats({1, 64}, randomFloats(64, 12));
  const rt::Tensor ZD = Z.toDevice(kSim);
  for (const std::vector<int64_t> &Dims : {std::vector<int64_t>{1, 8}, std::vector<int64_t>{1, 24}}) {
    const rt::Tensor X = floats(Dims, randomFloats(static_cast<size_t>(Dims[1]), 13));
    rt::InferRequest Host = M.createRequest(), Dev = M.createRequest();
    if (Dims[1] != 8) {
      Host.setTensorShape("x", rt::TensorShape::fromDims(Dims));
      Dev.setTensorShape("x", rt::TensorShape::fromDims(Dims));
    }
    profileOnce(Host, {X, Z});
    // Host-fed: z, c and the constant 'one' (the first run of the request) are copied in, y2 and
    // c's update come out.
    EXPECT_EQ(copiesOf(Host).In, 3);
    EXPECT_EQ(copiesOf(Host).Out, 2);
    const rt::Tensor XD = X.toDevice(kSim);
    profileOnce(Dev, {XD, ZD});
    // Device-fed: z is bound in place, x goes to the host once for the CPU's Relu.
    EXPECT_EQ(copiesOf(Dev).In, 2) << "only the preserved c and the constant go in";
    EXPECT_EQ(copiesOf(Dev).Out, 3) << "x to the host for Relu, then y2 and c's update";
    for (size_t O = 0; O < 3; ++O)
      EXPECT_EQ(hostFloats(Dev.getOutput(O)), hostFloats(Host.getOutput(O))) << "output " << O;
    EXPECT_EQ(hostFloats(Dev.getOutput(0)).size(), static_cast<size_t>(Dims[1]));
    // The preserved input advanced on the device path too, and the device tensor is unchanged.
    EXPECT_EQ(hostFloats(Dev.getTensor("c")), std::vector<float>(4, 1.0f));
    EXPECT_EQ(hostFloats(XD), hostFloats(X));
    // The second run of the same request: c advances again.
    Dev.infer(std::vector<rt::Tensor>{XD, ZD});
    Dev.wait();
    EXPECT_EQ(hostFloats(Dev.getTensor("c")), std::vector<float>(4, 2.0f));
  }

  // The shape checks of a host tensor: a device tensor of another shape is a ShapeError.
  rt::InferRequest R = M.createRequest();
  R.setTensorShape("x", rt::TensorShape::fromDims({1, 16}));
  const rt::Tensor Wrong = floats({1, 8}, randomFloats(8, 14)).toDevice(kSim);
  try {
    R.infer(std::vector<rt::Tensor>{Wrong, ZD});
    R.wait();
    ADD_FAILURE() << "a [1, 8] device tensor was accepted for x of shape [1, 16]";
  } catch (const rt::ShapeError &E) {
    const std::string Msg = E.what();
    EXPECT_NE(Msg.find("'x'"), std::string::npos) << Msg;
    EXPECT_NE(Msg.find("setTensorShape"), std::string::npos) << Msg;
  }
  // A preserved input is the request's own: passing it (from the device or the host) by name is
  // refused naming it.
  const rt::Tensor CD = floats({1, 4}, {5, 5, 5, 5}).toDevice(kSim);
  try {
    R.infer(std::map<std::string, rt::Tensor>{{"x", floats({1, 16}, randomFloats(16, 15))}, {"z", ZD}, {"c", CD}});
    ADD_FAILURE() << "a preserved input was accepted as an argument of infer()";
  } catch (const rt::InvalidArgumentError &E) {
    const std::string Msg = E.what();
    EXPECT_NE(Msg.find("'c' is a preserved input"), std::string::npos) << Msg;
    EXPECT_NE(Msg.find("getTensor('c')"), std::string::npos) << Msg;
  }
  std::system(("rm -rf '" + Dir + "'").c_str());
}

namespace {

/// A chain the sim takes whole, every value [1, 4, 16, 16] f32 (4 KiB):
///   c0 = Conv1x1(x, W); m = Mul(c0, x); a = Relu(m); b = Add(a, c0); y = Relu(b)
/// Lifetimes (node steps): x 0-1, c0 0-3, m 1-2, a 2-3, b 3-4, y 4-end: at most three values are
/// live at once (x, c0, m at step 1; c0, a, b at step 3), so the plan holds 3 x 4 KiB where one
/// allocation per value holds 6.
std::string chainModel() {
  OnnxBuilder B;
  B.input("x", onnx::TensorProto::FLOAT, {1, 4, 16, 16});
  B.initializer("W", {4, 4, 1, 1}, randomFloats(16, 21));
  B.node("Conv", {"x", "W"}, {"c0"});
  B.node("Mul", {"c0", "x"}, {"m"});
  B.node("Relu", {"m"}, {"a"});
  B.node("Add", {"a", "c0"}, {"b"});
  B.node("Relu", {"b"}, {"y"});
  B.output("y");
  return B.bytes();
}

constexpr uint64_t kChainValue = 4096;                // bytes of each value
constexpr uint64_t kSimBlock = kChainValue + 64;      // one sim allocation of one value (+ its tail)

uint64_t simBytes(const char *Key) { return std::stoull(rt::getDeviceProperty(kSim, Key)); }

uint64_t simInUse() { return simBytes("arena_bytes_in_use"); }

} // namespace

TEST(SimBackend, DeviceValuesArePlannedInOneAllocationOfThePlannedSize) {
  SimRuntime Sim;
  EXPECT_EQ(simInUse(), 0u);
  EXPECT_EQ(simBytes("peak_bytes_in_use"), 0u);
  const std::string Bytes = chainModel();
  rt::Model S = load(Bytes, onSim(true)), N = load(Bytes, {});
  for (const rt::OpInfo &Op : S.getOperations())
    ASSERT_EQ(Op.Device, kSim) << Op.Name << " (" << Op.Type << ") is not on the sim";
  const rt::Tensor X = floats({1, 4, 16, 16}, randomFloats(1024, 22));
  rt::InferRequest NR = N.createRequest();
  NR.infer({X});
  NR.wait();

  rt::InferRequest R = S.createRequest();
  profileOnce(R, {X});
  EXPECT_EQ(hostFloats(R.getOutput(0)), hostFloats(NR.getOutput(0))); // bit for bit
  // Copied in: x, and W when its kernel reads it at run time (then it stays, one block of its own).
  const int In = copiesOf(R).In;
  ASSERT_TRUE(In == 1 || In == 2) << In;
  const uint64_t Constants = In == 2 ? 128 : 0; // W: 64 bytes + 64 of tail
  const uint64_t Planned = 3 * kChainValue + 64;
  EXPECT_EQ(simInUse(), Planned + Constants);
  EXPECT_EQ(simBytes("peak_bytes_in_use"), Planned + Constants);
  EXPECT_LT(Planned, 6 * kSimBlock); // one allocation per value: x, c0, m, a, b, y
  // Later runs reuse the allocation.
  for (int Run = 0; Run < 3; ++Run) {
    R.infer({floats({1, 4, 16, 16}, randomFloats(1024, 23 + Run))});
    R.wait();
    EXPECT_EQ(simInUse(), Planned + Constants);
  }
  NR.infer({floats({1, 4, 16, 16}, randomFloats(1024, 25))});
  NR.wait();
  EXPECT_EQ(hostFloats(R.getOutput(0)), hostFloats(NR.getOutput(0)));
  EXPECT_EQ(simBytes("peak_bytes_in_use"), Planned + Constants);
  // A second request has its own allocation; both go back to the device with the requests.
  {
    rt::InferRequest R2 = S.createRequest();
    R2.infer({X});
    R2.wait();
    EXPECT_EQ(simInUse(), 2 * (Planned + Constants)); // constants too: one copy per request
  }
  // The pool task that finished R2's run may hold the request a moment after wait() returned.
  for (int Wait = 0; Wait < 1000 && simInUse() != Planned + Constants; ++Wait)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(simInUse(), Planned + Constants);

  // Device outputs: y owns a buffer of its own (a handed-out output never changes); its slot in the
  // plan stays.
  R.setDeviceOutputs(true);
  R.infer({X});
  R.wait();
  rt::Tensor Y = R.getOutput(0);
  ASSERT_TRUE(Y.isDeviceTensor());
  EXPECT_EQ(simInUse(), Planned + Constants + kSimBlock);
  R.infer({floats({1, 4, 16, 16}, randomFloats(1024, 26))});
  R.wait();
  NR.infer({X});
  NR.wait();
  EXPECT_EQ(hostFloats(Y), hostFloats(NR.getOutput(0))); // still the first run's y
}

TEST(SimBackend, UnsharedDevicePlansAndHeldIntermediatesKeepTheirBytes) {
  SimRuntime Sim;
  const std::string Bytes = chainModel();
  rt::ModelLoadOptions Keep = onSim(true);
  Keep.EnableMemoryOptimization = false; // every intermediate readable: nothing shares bytes
  rt::Model S = load(Bytes, Keep);
  rt::ModelLoadOptions NativeKeep;
  NativeKeep.EnableMemoryOptimization = false;
  rt::Model N = load(Bytes, NativeKeep);
  const rt::Tensor X1 = floats({1, 4, 16, 16}, randomFloats(1024, 31));
  const rt::Tensor X2 = floats({1, 4, 16, 16}, randomFloats(1024, 32));
  rt::InferRequest NR = N.createRequest(), R = S.createRequest();
  NR.infer({X1});
  NR.wait();
  const std::vector<float> A1 = hostFloats(NR.getTensor("a"));
  profileOnce(R, {X1});
  const uint64_t Constants = copiesOf(R).In == 2 ? 128 : 0;
  const uint64_t Unshared = 6 * kChainValue + 64;
  EXPECT_EQ(simInUse(), Unshared + Constants);
  // An intermediate only the device holds comes back as a device tensor of the plan's bytes ...
  rt::Tensor A = R.getTensor("a");
  ASSERT_TRUE(A.isDeviceTensor());
  EXPECT_EQ(hostFloats(A), A1);
  // ... which the next run does not overwrite: it takes a fresh allocation while A holds the old.
  R.infer({X2});
  R.wait();
  EXPECT_EQ(hostFloats(A), A1);
  EXPECT_EQ(simInUse(), 2 * Unshared + Constants);
  NR.infer({X2});
  NR.wait();
  EXPECT_EQ(hostFloats(R.getTensor("a")), hostFloats(NR.getTensor("a")));
  EXPECT_EQ(hostFloats(R.getOutput(0)), hostFloats(NR.getOutput(0)));
  A = rt::Tensor();
  EXPECT_EQ(simInUse(), Unshared + Constants);

  // The Pipeline scheduler overlaps nodes: its device values get bytes of their own (one
  // allocation still), with the same results.
  rt::ModelLoadOptions Pipe = onSim(true);
  Pipe.Scheduler = rt::SchedulerType::Pipeline;
  rt::Model P = load(Bytes, Pipe);
  rt::InferRequest PR = P.createRequest();
  PR.infer({X2});
  PR.wait();
  EXPECT_EQ(hostFloats(PR.getOutput(0)), hostFloats(NR.getOutput(0)));
  EXPECT_EQ(simInUse(), 2 * Unshared + 2 * Constants);
}

TEST(SimBackend, ADevicePlanBeyondTheArenaIsAClearError) {
  // 8 KiB: the chain's plan (3 x 4 KiB) cannot fit.
  SimRuntime Sim(SimEnv{{"OPTIMIUM_RT_SIM_ARENA_BYTES", "8K"}});
  rt::Model M = load(chainModel(), onSim(true));
  rt::InferRequest R = M.createRequest();
  R.infer({floats({1, 4, 16, 16}, randomFloats(1024, 41))});
  try {
    R.wait();
    ADD_FAILURE() << "a 12 KiB plan fitted into an 8 KiB arena";
  } catch (const rt::OutOfResourceError &E) {
    const std::string Msg = E.what();
    EXPECT_NE(Msg.find("sim device memory is full: 12288 bytes asked"), std::string::npos) << Msg;
    EXPECT_NE(Msg.find("6 values planned in 12288 bytes"), std::string::npos) << Msg;
    EXPECT_NE(Msg.find(kSim.toString()), std::string::npos) << Msg;
    EXPECT_NE(Msg.find("OPTIMIUM_RT_SIM_ARENA_BYTES"), std::string::npos) << Msg;
  }
  EXPECT_EQ(simInUse(), 0u); // nothing half-allocated stays
}
