// Requests: asynchronous runs, concurrency under every scheduler, callbacks, cancellation, errors
// surfaced by wait(), output lifetime, intermediates, and idle CPU.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <time.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <cstdlib>
#include <thread>

#include "Optimium/Runtime.h"
#include "OnnxBuilder.h"
#include "TestUtil.h"
#include "import/onnx/RawDataScanner.h"

namespace rt = optimium::runtime;
using namespace optimium_test;

namespace {

rt::Model loadBytes(const std::string &Bytes, const rt::ModelLoadOptions &O = {}) {
  // The model keeps pointing into the bytes: keep them alive for the whole test binary.
  static std::vector<std::unique_ptr<std::string>> Keep;
  Keep.push_back(std::make_unique<std::string>(Bytes));
  return rt::loadModel(reinterpret_cast<const uint8_t *>(Keep.back()->data()), Keep.back()->size(), O);
}

rt::Tensor filled(std::vector<int64_t> Dims, float V) {
  rt::TypedTensor<float> T = rt::tensor<float>(rt::TensorShape::fromDims(Dims));
  T.fill(V);
  return T;
}

double processCpuSeconds() {
  timespec TS;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &TS);
  return static_cast<double>(TS.tv_sec) + static_cast<double>(TS.tv_nsec) * 1e-9;
}

} // namespace

TEST(InferRequest, InferReturnsAtOnceAndWaitCompletes) {
  rt::Model M = loadBytes(slowChainModel(300, 192));
  rt::InferRequest R = M.createRequest();
  rt::Tensor X = filled({192, 192}, 0.5f);
  R.infer(rt::make_array(std::vector<rt::Tensor>{X}));
  EXPECT_EQ(R.getStatus(), rt::InferStatus::Running);
  EXPECT_TRUE(R.wait(std::chrono::microseconds(1))); // timed out: still running
  EXPECT_FALSE(R.wait());
  EXPECT_EQ(R.getStatus(), rt::InferStatus::Ready);
  rt::TypedTensor<float> Y(R.getOutput(0));
  EXPECT_FLOAT_EQ(Y[0], 0.5f);
}

TEST(InferRequest, InferOnARunningRequestIsRejected) {
  rt::Model M = loadBytes(slowChainModel(300, 192));
  rt::InferRequest R = M.createRequest();
  rt::Tensor X = filled({192, 192}, 1.0f);
  R.infer(rt::make_array(std::vector<rt::Tensor>{X}));
  EXPECT_THROW(R.infer(rt::make_array(std::vector<rt::Tensor>{X})), rt::InvalidOperationError);
  EXPECT_THROW(R.getOutput(0), rt::InvalidOperationError);
  R.wait();
  EXPECT_NO_THROW(R.getOutput(0));
}

TEST(InferRequest, CancelEndsInFaultAndTheRequestIsReusable) {
  rt::Model M = loadBytes(slowChainModel(300, 192));
  rt::InferRequest R = M.createRequest();
  std::atomic<int> Calls{0}, Faults{0};
  R.addCallback([&](rt::InferStatus S, std::exception_ptr E) {
    ++Calls;
    if (S == rt::InferStatus::Fault && E)
      ++Faults;
  });
  rt::Tensor X = filled({192, 192}, 1.0f);
  R.infer(rt::make_array(std::vector<rt::Tensor>{X}));
  R.cancel();
  try {
    R.wait();
    FAIL() << "a cancelled run must surface an InferError";
  } catch (const rt::InferError &E) {
    EXPECT_NE(std::string(E.what()).find("cancel"), std::string::npos) << E.what();
  }
  EXPECT_EQ(R.getStatus(), rt::InferStatus::Fault);
  EXPECT_THROW(R.wait(), rt::InferError); // the fault stays until the next good run
  EXPECT_EQ(Calls.load(), 1);
  EXPECT_EQ(Faults.load(), 1);
  R.infer(rt::make_array(std::vector<rt::Tensor>{X}));
  EXPECT_FALSE(R.wait());
  EXPECT_EQ(R.getStatus(), rt::InferStatus::Ready);
  EXPECT_EQ(Calls.load(), 2);
  EXPECT_EQ(Faults.load(), 1);
}

TEST(InferRequest, CallbacksFireOncePerRun) {
  rt::Model M = rt::loadModel(dataPath("tests/models/mlp"));
  rt::InferRequest R = M.createRequest();
  std::atomic<int> Ready{0};
  R.addCallback([&](rt::InferStatus S, std::exception_ptr E) {
    EXPECT_EQ(S, rt::InferStatus::Ready);
    EXPECT_FALSE(E);
    ++Ready;
  });
  rt::Tensor X = readNpy(dataPath("tests/models/mlp/input_0.npy"));
  for (int I = 0; I < 5; ++I) {
    R.infer(rt::make_array(std::vector<rt::Tensor>{X}));
    R.wait();
  }
  EXPECT_EQ(Ready.load(), 5);
  EXPECT_THROW(R.addCallback(nullptr), rt::InvalidArgumentError);
}

class ConcurrentRequests : public ::testing::TestWithParam<rt::SchedulerType> {};

TEST_P(ConcurrentRequests, ManyRequestsOfOneModelDoNotInterfere) {
  rt::ModelLoadOptions O;
  O.Scheduler = GetParam();
  O.ThreadCount = 2;
  rt::Model M = rt::loadModel(dataPath("tests/models/cnn"), O);
  constexpr int N = 6;
  std::vector<rt::Tensor> Inputs, Expected;
  rt::Tensor Base = readNpy(dataPath("tests/models/cnn/input_0.npy"));
  for (int I = 0; I < N; ++I) {
    rt::Tensor In = Base.clone();
    float *P = static_cast<float *>(In.data());
    for (size_t J = 0; J < In.getElementCount(); ++J)
      P[J] = P[J] * static_cast<float>(I + 1) * 0.5f;
    Inputs.push_back(In);
    rt::InferRequest R = M.createRequest();
    R.infer(rt::make_array(std::vector<rt::Tensor>{In}));
    R.wait();
    Expected.push_back(R.getOutput(0).clone());
  }
  for (int Round = 0; Round < 3; ++Round) {
    std::vector<rt::InferRequest> Reqs;
    for (int I = 0; I < N; ++I) {
      Reqs.push_back(M.createRequest());
      Reqs.back().infer(rt::make_array(std::vector<rt::Tensor>{Inputs[I]}));
    }
    for (int I = 0; I < N; ++I) {
      Reqs[I].wait();
      EXPECT_EQ(maxAbsDiff(Reqs[I].getOutput(0), Expected[I]), 0.0) << "request " << I;
    }
  }
  // From several user threads at once, too.
  std::vector<std::thread> Threads;
  std::atomic<int> Mismatches{0};
  for (int T = 0; T < 4; ++T)
    Threads.emplace_back([&, T] {
      rt::InferRequest R = M.createRequest();
      for (int K = 0; K < 10; ++K) {
        const int I = (T + K) % N;
        R.infer(rt::make_array(std::vector<rt::Tensor>{Inputs[I]}));
        R.wait();
        if (maxAbsDiff(R.getOutput(0), Expected[I]) != 0.0)
          ++Mismatches;
      }
    });
  for (auto &T : Threads)
    T.join();
  EXPECT_EQ(Mismatches.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(Schedulers, ConcurrentRequests,
                         ::testing::Values(rt::SchedulerType::Auto, rt::SchedulerType::Exclusive,
                                           rt::SchedulerType::Sequential, rt::SchedulerType::Pipeline));

TEST(InferRequest, ExclusiveSchedulerRunsRequestsOneAtATimeInOrder) {
  rt::ModelLoadOptions O;
  O.Scheduler = rt::SchedulerType::Exclusive;
  O.ThreadCount = 2;
  rt::Model M = loadBytes(slowChainModel(40, 128), O);
  std::mutex Mu;
  std::vector<int> Order;
  std::vector<rt::InferRequest> Reqs;
  rt::Tensor X = filled({128, 128}, 1.0f);
  for (int I = 0; I < 4; ++I) {
    Reqs.push_back(M.createRequest());
    Reqs.back().addCallback([&, I](rt::InferStatus, std::exception_ptr) {
      std::lock_guard<std::mutex> L(Mu);
      Order.push_back(I);
    });
  }
  for (auto &R : Reqs)
    R.infer(rt::make_array(std::vector<rt::Tensor>{X}));
  for (auto &R : Reqs)
    R.wait();
  EXPECT_EQ(Order, (std::vector<int>{0, 1, 2, 3}));
}

TEST(InferRequest, InputsAreValidated) {
  rt::Model M = rt::loadModel(dataPath("models/digits"));
  rt::InferRequest R = M.createRequest();
  EXPECT_THROW(R.infer(rt::make_array(std::vector<rt::Tensor>{})), rt::InvalidArgumentError);
  EXPECT_THROW(R.infer(rt::make_array(std::vector<rt::Tensor>{rt::tensor<float>({1, 1, 8, 8}), rt::tensor<float>({1})})),
               rt::InvalidArgumentError);
  try {
    R.infer(rt::make_array(std::vector<rt::Tensor>{rt::tensor<int64_t>({1, 1, 8, 8})}));
    FAIL();
  } catch (const rt::TypeError &E) {
    EXPECT_NE(std::string(E.what()).find("image"), std::string::npos) << E.what();
  }
  try {
    R.infer(rt::make_array(std::vector<rt::Tensor>{rt::tensor<float>({1, 3, 8, 8})}));
    FAIL();
  } catch (const rt::ShapeError &E) {
    EXPECT_NE(std::string(E.what()).find("1x3x8x8"), std::string::npos) << E.what();
    EXPECT_NE(std::string(E.what()).find("1x1x8x8"), std::string::npos) << E.what();
  }
  rt::Tensor Released = rt::tensor<float>({1, 1, 8, 8});
  Released.release();
  EXPECT_THROW(R.infer(rt::make_array(std::vector<rt::Tensor>{Released})), rt::InvalidArgumentError);
  EXPECT_THROW(R.infer(rt::make_array(std::vector<rt::Tensor>{rt::Tensor()})), rt::InvalidArgumentError);
  EXPECT_EQ(R.getStatus(), rt::InferStatus::Ready); // rejected inputs never start a run
  EXPECT_THROW(R.getOutput(0), rt::InvalidOperationError); // nothing has run
}

TEST(InferRequest, InputsByNameAndOutputLookup) {
  rt::Model M = rt::loadModel(dataPath("tests/models/two_inputs"));
  rt::InferRequest R = M.createRequest();
  rt::Tensor A = readNpy(dataPath("tests/models/two_inputs/input_0.npy"));
  rt::Tensor B = readNpy(dataPath("tests/models/two_inputs/input_1.npy"));
  R.infer(std::map<std::string, rt::Tensor>{{"b", B}, {"a", A}});
  R.wait();
  EXPECT_LE(maxAbsDiff(R.getOutput("sum_times_a"), readNpy(dataPath("tests/models/two_inputs/output_0.npy"))), 1e-6);
  EXPECT_THROW(R.infer(std::map<std::string, rt::Tensor>{{"a", A}}), rt::InvalidArgumentError);
  EXPECT_THROW(R.infer(std::map<std::string, rt::Tensor>{{"a", A}, {"b", B}, {"c", A}}), rt::InvalidArgumentError);
  EXPECT_THROW(R.getOutput(1), rt::InvalidArgumentError);
  try {
    R.getOutput("nope");
    FAIL();
  } catch (const rt::InvalidArgumentError &E) {
    EXPECT_NE(std::string(E.what()).find("sum_times_a"), std::string::npos) << E.what();
  }
  EXPECT_EQ(R.getModelName(), "two_inputs");
  EXPECT_EQ(R.getInputTensorInfo(1).Name, "b");
  EXPECT_EQ(R.getOutputTensorInfo(0).Name, "sum_times_a");
  EXPECT_EQ(R.getModelOperations().size(), 2u);
  EXPECT_GE(R.getModelTensors().size(), 4u);
  EXPECT_EQ(R.getTensorInfo("a").Shape, rt::TensorShape({2, 3}));
}

TEST(InferRequest, OutputsShareTheRequestBufferAndAreOverwrittenInPlace) {
  rt::Model M = rt::loadModel(dataPath("tests/models/mlp"));
  rt::InferRequest R = M.createRequest();
  rt::Tensor X = readNpy(dataPath("tests/models/mlp/input_0.npy"));
  R.infer(rt::make_array(std::vector<rt::Tensor>{X}));
  R.wait();
  rt::Tensor Held = R.getOutput(0);
  rt::Tensor Snapshot = rt::tensor(Held.getType(), Held.getShape());
  Held.copyTo(Snapshot);
  EXPECT_EQ(R.getOutput(0).data(), Held.data()); // same buffer, no copy
  rt::Tensor Y = X.clone();
  static_cast<float *>(Y.data())[0] += 10.0f;
  R.infer(rt::make_array(std::vector<rt::Tensor>{Y}));
  R.wait();
  EXPECT_EQ(R.getOutput(0).data(), Held.data());
  EXPECT_GT(maxAbsDiff(Held, Snapshot), 0.0); // overwritten in place, as the spec says
  // The buffer outlives the request and the model.
  rt::Tensor Kept = R.getOutput(0);
  R = rt::InferRequest();
  M = rt::Model();
  EXPECT_EQ(Kept.getElementCount(), 20u);
  EXPECT_TRUE(std::isfinite(static_cast<const float *>(Kept.data())[19]));
}

TEST(InferRequest, IntermediatesAreReadableWithoutMemoryOptimization) {
  rt::ModelLoadOptions O;
  O.EnableMemoryOptimization = false;
  rt::Model M = rt::loadModel(dataPath("tests/models/cnn"), O);
  rt::InferRequest R = M.createRequest();
  R.infer(rt::make_array(std::vector<rt::Tensor>{readNpy(dataPath("tests/models/cnn/input_0.npy"))}));
  R.wait();
  size_t Read = 0;
  for (const rt::TensorInfo &T : M.getTensors()) {
    rt::Tensor V = R.getTensor(T.Name);
    EXPECT_EQ(V.getShape(), T.Shape) << T.Name;
    ++Read;
  }
  EXPECT_GE(Read, 10u);
  EXPECT_THROW(R.getTensor("no_such_tensor"), rt::InvalidArgumentError);

  // With memory optimization on, a reused intermediate is refused with a clear error.
  rt::Model Shared = rt::loadModel(dataPath("tests/models/cnn"));
  rt::InferRequest R2 = Shared.createRequest();
  R2.infer(rt::make_array(std::vector<rt::Tensor>{readNpy(dataPath("tests/models/cnn/input_0.npy"))}));
  R2.wait();
  size_t Refused = 0;
  for (const rt::TensorInfo &T : Shared.getTensors()) {
    try {
      R2.getTensor(T.Name);
    } catch (const rt::InvalidOperationError &) {
      ++Refused;
    }
  }
  EXPECT_GE(Refused, 1u);
}

TEST(InferRequest, IntermediateValuesAreCorrect) {
  rt::ModelLoadOptions O;
  O.EnableMemoryOptimization = false;
  rt::Model M = rt::loadModel(dataPath("tests/models/two_inputs"), O);
  rt::InferRequest R = M.createRequest();
  rt::Tensor A = readNpy(dataPath("tests/models/two_inputs/input_0.npy"));
  rt::Tensor B = readNpy(dataPath("tests/models/two_inputs/input_1.npy"));
  R.infer(rt::make_array(std::vector<rt::Tensor>{A, B}));
  R.wait();
  const rt::OpInfo &Add = M.getOperations()[0];
  rt::Tensor Sum = R.getTensor(Add.Outputs[0]);
  for (size_t I = 0; I < 6; ++I)
    EXPECT_FLOAT_EQ(static_cast<const float *>(Sum.data())[I],
                    static_cast<const float *>(A.data())[I] + static_cast<const float *>(B.data())[I]);
}

TEST(InferRequest, IntermediateSavePathDumpsNpyPerRun) {
  const std::string Dir = ::testing::TempDir() + "/optimium_dump";
  ::mkdir(Dir.c_str(), 0755);
  rt::ModelLoadOptions O;
  O.IntermediateSavePath = Dir;
  O.IndexedIntermediateSave = true;
  rt::Model M = rt::loadModel(dataPath("tests/models/two_inputs"), O);
  rt::InferRequest R = M.createRequest();
  rt::Tensor A = readNpy(dataPath("tests/models/two_inputs/input_0.npy"));
  rt::Tensor B = readNpy(dataPath("tests/models/two_inputs/input_1.npy"));
  for (int I = 0; I < 2; ++I) {
    R.infer(rt::make_array(std::vector<rt::Tensor>{A, B}));
    R.wait();
  }
  struct stat St;
  EXPECT_EQ(::stat((Dir + "/0_sum_times_a.npy").c_str(), &St), 0);
  EXPECT_EQ(::stat((Dir + "/1_sum_times_a.npy").c_str(), &St), 0);
  rt::Tensor Saved = readNpy(Dir + "/1_sum_times_a.npy");
  EXPECT_EQ(maxAbsDiff(Saved, R.getOutput(0)), 0.0);
}

TEST(InferRequest, AnIdleLoadedModelUsesNoCpu) {
  for (int Spin : {rt::kDefaultSpinIterations, -1, 0}) {
    rt::ModelLoadOptions O;
    O.ThreadCount = 2;
    O.SpinIterations = Spin;
    rt::Model M = rt::loadModel(dataPath("models/digits"), O);
    rt::InferRequest R = M.createRequest();
    rt::Tensor X = rt::tensor<float>({1, 1, 8, 8});
    for (int I = 0; I < 20; ++I) {
      R.infer(rt::make_array(std::vector<rt::Tensor>{X}));
      R.wait();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50)); // let the bounded spin run out
    const double Before = processCpuSeconds();
    std::this_thread::sleep_for(std::chrono::seconds(1));
    const double Used = processCpuSeconds() - Before;
    std::cout << "idle CPU over 1 s with SpinIterations=" << Spin << ": " << Used * 1000 << " ms" << std::endl;
    EXPECT_LT(Used, 0.02);
  }
}

// With one thread the caller is the only compute thread: the pool's worker must not spin beside
// back-to-back synchronous runs (each run's deferred start used to wake it into a spin, 25-40% of a
// second core beside MNIST). Process CPU time over the runs stays close to their wall time: a
// spinning worker would make it about twice the wall time. What remains is the parked worker's
// wake-ups for each run's deferred start (woken to sleep until the caller's head start ends, then
// by that timer): about 3.5 us per run here, 1.2x the wall time of these 14 us runs, up to 1.33x
// when other tests load the machine, hence the 1.5 bound.
TEST(InferRequest, OneThreadRunsUseOneCore) {
  for (int Spin : {rt::kDefaultSpinIterations, -1}) {
    rt::ModelLoadOptions O;
    O.ThreadCount = 1;
    O.SpinIterations = Spin;
    rt::Model M = rt::loadModel(dataPath("models/digits"), O);
    rt::InferRequest R = M.createRequest();
    rt::Tensor X = rt::tensor<float>({1, 1, 8, 8});
    const auto run = [&] {
      R.infer(rt::make_array(std::vector<rt::Tensor>{X}));
      R.wait();
    };
    for (int I = 0; I < 100; ++I)
      run();
    const double Cpu0 = processCpuSeconds();
    const auto Wall0 = std::chrono::steady_clock::now();
    int Runs = 0;
    for (; std::chrono::steady_clock::now() - Wall0 < std::chrono::milliseconds(500); ++Runs)
      run();
    const double Cpu = processCpuSeconds() - Cpu0;
    const double Wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - Wall0).count();
    std::cout << "SpinIterations=" << Spin << ": " << Cpu * 1000 << " ms CPU over " << Wall * 1000 << " ms of " << Runs
              << " runs" << std::endl;
    EXPECT_LT(Cpu, 1.5 * Wall);
  }
}

// A MatMul weight whose bytes in the file are not 4-byte aligned is copied at load; once the
// kernel has packed it the copy is dropped. Inference and getTensor must not notice.
TEST(InferRequest, PackedWeightCopiesAreDroppedButTheWeightStaysReadable) {
  std::vector<float> W(64 * 48), X(64);
  for (size_t I = 0; I < W.size(); ++I)
    W[I] = static_cast<float>(static_cast<int>(I % 97) - 48) / 32.0f;
  for (size_t I = 0; I < X.size(); ++I)
    X[I] = static_cast<float>(static_cast<int>(I % 13) - 6) / 4.0f;
  std::string Bytes;
  size_t Misaligned = 0;
  for (std::string Pad; Pad.size() < 8; Pad += "p") { // vary a name until the raw bytes are misaligned
    optimium_test::OnnxBuilder B;
    B.input("x", onnx::TensorProto_DataType_FLOAT, {1, 64});
    B.initializer("w" + Pad, {64, 48}, W);
    B.node("MatMul", {"x", "w" + Pad}, {"y"});
    B.output("y", onnx::TensorProto_DataType_FLOAT);
    Bytes = B.bytes();
    std::vector<rt::detail::RawSpan> Spans;
    ASSERT_TRUE(rt::detail::scanInitializerRawData(reinterpret_cast<const uint8_t *>(Bytes.data()), Bytes.size(), Spans));
    Misaligned = static_cast<size_t>(Spans[0].Data - reinterpret_cast<const uint8_t *>(Bytes.data())) % 4;
    if (Misaligned)
      break;
  }
  ASSERT_NE(Misaligned, 0u) << "could not place the weight's bytes off a 4-byte boundary";
  const std::string Path = ::testing::TempDir() + "/misaligned_weight.onnx";
  {
    std::ofstream F(Path, std::ios::binary);
    F.write(Bytes.data(), static_cast<std::streamsize>(Bytes.size()));
  }
  rt::Model M = rt::loadModel(Path);
  rt::InferRequest R = M.createRequest();
  rt::Tensor In = rt::tensor(rt::ElementType::F32, {1, 64});
  std::copy(X.begin(), X.end(), static_cast<float *>(In.data()));
  R.infer({In});
  R.wait();
  const rt::Tensor Y = R.getOutput(0);
  for (int J = 0; J < 48; ++J) {
    double Expected = 0;
    for (int K = 0; K < 64; ++K)
      Expected += static_cast<double>(X[K]) * W[K * 48 + J];
    EXPECT_NEAR(static_cast<const float *>(Y.data())[J], Expected, 1e-3) << "column " << J;
  }
  std::string Name;
  for (const rt::TensorInfo &T : M.getTensors())
    if (T.Name.rfind("w", 0) == 0)
      Name = T.Name;
  ASSERT_FALSE(Name.empty());
  const rt::Tensor Wt = R.getTensor(Name);
  ASSERT_EQ(Wt.getElementCount(), W.size());
  EXPECT_EQ(std::memcmp(Wt.data(), W.data(), W.size() * sizeof(float)), 0);
  std::remove(Path.c_str());
}

TEST(InferRequest, AWaitingCallerRunsARunNoWorkerHasStarted) {
  // Sequential runs go to the pool, but a caller that blocks in wait() before any worker took the
  // run executes it itself (no hand-off to a worker and back). Workers pinned to cores keep it.
  for (bool Pinned : {false, true}) {
    rt::ModelLoadOptions O;
    O.ThreadCount = 1;
    O.Scheduler = rt::SchedulerType::Sequential;
    if (Pinned)
      O.Cores = {0};
    rt::Model M = loadBytes(slowChainModel(4, 16), O);
    rt::InferRequest R = M.createRequest();
    std::atomic<int> Here{0}, Runs{0};
    const std::thread::id Caller = std::this_thread::get_id();
    R.addCallback([&](rt::InferStatus, std::exception_ptr) {
      Here += std::this_thread::get_id() == Caller;
      ++Runs;
    });
    rt::Tensor X = filled({16, 16}, 0.25f);
    for (int I = 0; I < 40; ++I) {
      R.infer(rt::make_array(std::vector<rt::Tensor>{X}));
      EXPECT_FALSE(R.wait());
      rt::TypedTensor<float> Y(R.getOutput(0));
      ASSERT_FLOAT_EQ(Y[0], 0.25f) << "run " << I;
    }
    EXPECT_EQ(Runs.load(), 40);
    if (Pinned)
      EXPECT_EQ(Here.load(), 0) << "pinned workers run every request";
    else
      EXPECT_GT(Here.load(), 0) << "no run of 40 went to the waiting caller";
  }
}

TEST(InferRequest, AReshapeSharesItsInputsBytes) {
  // x -> Relu -> a -> Reshape -> b -> Relu -> y: b is a view of a (same arena bytes, no copy) when
  // memory optimization is on; with it off every value has its own bytes. Results are the same.
  OnnxBuilder B(17);
  B.input("x", onnx::TensorProto_DataType_FLOAT, {4, 6});
  B.initializerI64("shape", {2}, {2, 12});
  B.node("Relu", {"x"}, {"a"}, "relu1");
  B.node("Reshape", {"a", "shape"}, {"b"}, "view");
  B.node("Neg", {"b"}, {"y"}, "neg");
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  const std::string Bytes = B.bytes();
  for (bool MemOpt : {true, false}) {
    rt::ModelLoadOptions O;
    O.EnableMemoryOptimization = MemOpt;
    rt::Model M = loadBytes(Bytes, O);
    rt::InferRequest R = M.createRequest();
    rt::TypedTensor<float> X = rt::tensor<float>({4, 6});
    for (int I = 0; I < 24; ++I)
      X[static_cast<size_t>(I)] = static_cast<float>(I % 5) - 2.0f;
    R.infer(rt::make_array(std::vector<rt::Tensor>{X}));
    R.wait();
    rt::Tensor A = R.getTensor("a"), Bv = R.getTensor("b");
    if (MemOpt)
      EXPECT_EQ(A.data(), Bv.data()) << "the Reshape's output should alias its input";
    else
      EXPECT_NE(A.data(), Bv.data());
    rt::TypedTensor<float> Y(R.getOutput("y"));
    for (int I = 0; I < 24; ++I)
      EXPECT_EQ(Y[static_cast<size_t>(I)], -std::max(0.0f, static_cast<float>(I % 5) - 2.0f)) << I;
  }
}

TEST(InferRequest, ConcatInputsAreWrittenInPlace) {
  // x -> Relu -> a, x -> Neg -> b, Concat(a, b, a) along axis 1 -> c -> Neg -> y. At batch 1 the
  // memory plan puts a and b inside c (a at byte 0, b right after it), so their producers write in
  // place and the Concat copies only the second a (an input may sit in one place). Not done where
  // something comes before the axis (batch 2) or where an input would start off a 64-byte
  // boundary (3 x 5 floats = 60 bytes: a at 0 is in place, b at 60 is copied); the results are
  // the same in every case.
  struct Case {
    std::vector<int64_t> Dims;
    bool AInPlace, BInPlace;
  };
  for (const Case &C : {Case{{1, 16, 4, 4}, true, true}, Case{{2, 16, 4, 4}, false, false},
                        Case{{1, 3, 1, 5}, true, false}}) {
    OnnxBuilder B(17);
    B.input("x", onnx::TensorProto_DataType_FLOAT, C.Dims);
    B.node("Relu", {"x"}, {"a"}, "relu");
    B.node("Neg", {"x"}, {"b"}, "neg1");
    OnnxBuilder::attrInt(B.node("Concat", {"a", "b", "a"}, {"c"}, "concat"), "axis", 1);
    B.node("Neg", {"c"}, {"y"}, "neg2");
    B.output("y", onnx::TensorProto_DataType_FLOAT);
    B.output("a", onnx::TensorProto_DataType_FLOAT); // outputs too, so that they stay readable
    B.output("b", onnx::TensorProto_DataType_FLOAT);
    B.output("c", onnx::TensorProto_DataType_FLOAT);
    rt::Model M = loadBytes(B.bytes(), rt::ModelLoadOptions());
    rt::InferRequest R = M.createRequest();
    rt::TypedTensor<float> X = rt::tensor<float>(rt::TensorShape(std::vector<rt::Expr>(C.Dims.begin(), C.Dims.end())));
    const size_t N = X.getElementCount();
    for (size_t I = 0; I < N; ++I)
      X[I] = static_cast<float>(static_cast<int>(I % 7) - 3);
    for (int Run = 0; Run < 2; ++Run) {
      R.infer(rt::make_array(std::vector<rt::Tensor>{X}));
      R.wait();
      rt::TypedTensor<float> Y(R.getOutput("y"));
      const size_t Outer = static_cast<size_t>(C.Dims[0]), Inner = N / Outer;
      for (size_t O = 0; O < Outer; ++O)
        for (size_t I = 0; I < Inner; ++I) {
          const float V = X[O * Inner + I];
          const size_t Base = O * 3 * Inner;
          ASSERT_EQ(Y[Base + I], -std::max(0.0f, V)) << "dims[1] " << C.Dims[1] << " at " << O << "," << I;
          ASSERT_EQ(Y[Base + Inner + I], V);
          ASSERT_EQ(Y[Base + 2 * Inner + I], -std::max(0.0f, V));
        }
    }
    const char *CData = static_cast<const char *>(R.getOutput("c").data());
    const bool AIn = R.getOutput("a").data() == CData;
    const bool BIn = R.getOutput("b").data() == CData + N * sizeof(float);
    EXPECT_EQ(AIn, C.AInPlace) << "dims[0] " << C.Dims[0] << ", dims[1] " << C.Dims[1];
    EXPECT_EQ(BIn, C.BInPlace) << "dims[0] " << C.Dims[0] << ", dims[1] " << C.Dims[1];
  }
}

TEST(InferRequest, ARunNobodyWaitsForStartsOnAWorkerUnderEverySpinSetting) {
  // The caller head start must not strand a run: with no wait() (only polling), a worker takes it
  // once the head start is over, also when workers spin while a request is armed (negative spin).
  for (int Spin : {rt::kDefaultSpinIterations, -1, 0}) {
    for (int Threads : {1, 2}) {
      rt::ModelLoadOptions O;
      O.ThreadCount = Threads;
      O.SpinIterations = Spin;
      O.Scheduler = rt::SchedulerType::Sequential;
      rt::Model M = loadBytes(slowChainModel(4, 16), O);
      rt::InferRequest R = M.createRequest();
      rt::Tensor X = filled({16, 16}, 0.75f);
      for (int I = 0; I < 5; ++I) {
        R.infer(rt::make_array(std::vector<rt::Tensor>{X}));
        const auto Start = std::chrono::steady_clock::now();
        while (R.getStatus() == rt::InferStatus::Running) {
          ASSERT_LT(std::chrono::steady_clock::now() - Start, std::chrono::seconds(10))
              << "run never started (spin " << Spin << ", threads " << Threads << ")";
          std::this_thread::sleep_for(std::chrono::microseconds(100));
        }
        EXPECT_FALSE(R.wait());
        rt::TypedTensor<float> Y(R.getOutput(0));
        EXPECT_FLOAT_EQ(Y[0], 0.75f);
      }
    }
  }
}

TEST(InferRequest, RunIsInferPlusWaitOnTheCallersThread) {
  // run(): the synchronous call. Under Sequential without pinned cores no pool task exists, so
  // every run executes on the caller (infer(); wait() leaves some to a worker when the caller is
  // slow); pinned workers and the Exclusive / Pipeline schedulers still run it their way.
  struct Case {
    rt::SchedulerType Scheduler;
    int Threads;
    bool Pinned;
    bool AllOnCaller;
  };
  for (const Case &C : {Case{rt::SchedulerType::Sequential, 1, false, true},
                        Case{rt::SchedulerType::Sequential, 2, false, true},
                        Case{rt::SchedulerType::Sequential, 1, true, false},
                        Case{rt::SchedulerType::Exclusive, 1, false, false},
                        Case{rt::SchedulerType::Pipeline, 2, false, false}}) {
    rt::ModelLoadOptions O;
    O.ThreadCount = C.Threads;
    O.Scheduler = C.Scheduler;
    if (C.Pinned)
      O.Cores = {0};
    rt::Model M = loadBytes(slowChainModel(4, 16), O);
    rt::InferRequest R = M.createRequest();
    std::atomic<int> Here{0}, Runs{0};
    const std::thread::id Caller = std::this_thread::get_id();
    R.addCallback([&](rt::InferStatus S, std::exception_ptr E) {
      EXPECT_EQ(S, rt::InferStatus::Ready);
      EXPECT_FALSE(E);
      Here += std::this_thread::get_id() == Caller;
      ++Runs;
    });
    for (int I = 0; I < 20; ++I) {
      const float V = 0.25f * static_cast<float>(I);
      if (I % 2)
        R.run(rt::make_array(std::vector<rt::Tensor>{filled({16, 16}, V)}));
      else
        R.run(std::map<std::string, rt::Tensor>{{std::string(M.getInputNames()[0]), filled({16, 16}, V)}});
      EXPECT_EQ(R.getStatus(), rt::InferStatus::Ready);
      rt::TypedTensor<float> Y(R.getOutput(0));
      ASSERT_FLOAT_EQ(Y[0], V) << "run " << I << " threads " << C.Threads;
    }
    EXPECT_EQ(Runs.load(), 20);
    if (C.AllOnCaller) {
      EXPECT_EQ(Here.load(), 20) << "threads " << C.Threads;
    }
    if (C.Pinned) {
      EXPECT_EQ(Here.load(), 0) << "pinned workers run every request";
    }
  }
}

TEST(InferRequest, RunReportsInferAndRunErrors) {
  rt::ModelLoadOptions O;
  O.ThreadCount = 1;
  rt::Model M = loadBytes(slowChainModel(4, 16), O);
  rt::InferRequest R = M.createRequest();
  // infer()'s validation: count, shape, names.
  EXPECT_THROW(R.run(rt::make_array(std::vector<rt::Tensor>{})), rt::InvalidArgumentError);
  EXPECT_THROW(R.run(rt::make_array(std::vector<rt::Tensor>{filled({16, 8}, 1.0f)})), rt::ShapeError);
  EXPECT_THROW(R.run(std::map<std::string, rt::Tensor>{{"no_such_input", filled({16, 16}, 1.0f)}}),
               rt::InvalidArgumentError);
  // A cancelled run ends in Fault and run() rethrows its InferError like wait(); the request is
  // reusable after it.
  rt::Model Slow = loadBytes(slowChainModel(300, 192), O);
  rt::InferRequest S = Slow.createRequest();
  S.addCallback([&](rt::InferStatus, std::exception_ptr) {});
  rt::Tensor Big = filled({192, 192}, 0.5f);
  S.infer(rt::make_array(std::vector<rt::Tensor>{Big}));
  EXPECT_THROW(S.run(rt::make_array(std::vector<rt::Tensor>{Big})), rt::InvalidOperationError)
      << "run() while a run is in progress";
  S.wait();
  // A run's own error: cancel() from another thread, repeatedly (infer() clears an earlier
  // cancel), while run() executes the 300 ops on this one.
  std::atomic<bool> Done{false};
  std::thread Canceller([&] {
    while (!Done.load()) {
      S.cancel();
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  });
  try {
    S.run(rt::make_array(std::vector<rt::Tensor>{Big}));
    ADD_FAILURE() << "run() must surface the cancelled run's InferError";
  } catch (const rt::InferError &E) {
    EXPECT_NE(std::string(E.what()).find("cancel"), std::string::npos) << E.what();
  }
  Done = true;
  Canceller.join();
  EXPECT_EQ(S.getStatus(), rt::InferStatus::Fault);
  S.run(rt::make_array(std::vector<rt::Tensor>{Big})); // reusable
  EXPECT_EQ(S.getStatus(), rt::InferStatus::Ready);
}
