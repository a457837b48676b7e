// The simulated accelerator (src/backends/sim/) through the public API: loaded as an extension,
// placed by ModelLoadOptions.Devices, its own memory (copies counted with the profiler), the cycle
// model's counter file, device-resident outputs, and its error paths.
#include <Optimium/Runtime.h>

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <list>
#include <random>
#include <string>
#include <vector>

#include "OnnxBuilder.h"

namespace rt = optimium::runtime;
using optimium_test::OnnxBuilder;

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

std::vector<float> randomFloats(size_t N, unsigned Seed) {
  std::mt19937 G(Seed);
  std::uniform_real_distribution<float> D(-1.0f, 1.0f);
  std::vector<float> V(N);
  for (float &X : V)
    X = D(G);
  return V;
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
    if (I >= 2)
      EXPECT_EQ(Now - Last, Last / I) << "run " << I;
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
  // 4 KiB: x (1024 floats = 4 KiB, plus the tail the kernels may read) cannot fit.
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
    EXPECT_NE(Msg.find("4096 bytes asked, 0 of 4096 bytes in use"), std::string::npos) << Msg;
    EXPECT_NE(Msg.find("OPTIMIUM_RT_SIM_ARENA_BYTES"), std::string::npos) << Msg;
    EXPECT_NE(Msg.find("input 'x'"), std::string::npos) << Msg;
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
