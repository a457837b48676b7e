// finalize() as the spec says: it shuts the runtime down entirely. Runs in flight stop before their
// next op and are waited for, every model's threads are joined and kernels destroyed, extensions
// are unloaded (tests/backends/ExtensionTest.cpp checks that part); models, requests and group
// members still held refuse to run with an InvalidStateError; initialize() starts afresh.
// Each test leaves the runtime initialized once, as the test environment (TestUtil.cpp) set it up.
#include <gtest/gtest.h>

#include <dirent.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>
#include <thread>

#include "OnnxBuilder.h"
#include "Optimium/Runtime.h"
#include "TestUtil.h"

namespace rt = optimium::runtime;
using namespace optimium_test;

namespace {

/// Threads of this process (/proc/self/task).
int threadCount() {
  int N = 0;
  if (DIR *D = ::opendir("/proc/self/task")) {
    while (const dirent *E = ::readdir(D))
      N += E->d_name[0] != '.';
    ::closedir(D);
  }
  return N;
}

/// Ops ops of Sin one after another over Elements floats: a run long enough (hundreds of ms) to be
/// in flight when finalize() comes, made of ops finalize() can stop between.
std::string sinChain(int Ops, int64_t Elements) {
  OnnxBuilder B(13);
  B.input("x", onnx::TensorProto_DataType_FLOAT, {Elements});
  std::string Prev = "x";
  for (int I = 0; I < Ops; ++I) {
    const std::string Out = I + 1 == Ops ? "y" : "s" + std::to_string(I);
    B.node("Sin", {Prev}, {Out}, "sin" + std::to_string(I));
    Prev = Out;
  }
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  return B.bytes();
}

rt::Model load(const std::string &Bytes, rt::SchedulerType Scheduler = rt::SchedulerType::Auto, int Threads = 2) {
  rt::ModelLoadOptions O;
  O.ThreadCount = Threads;
  O.Scheduler = Scheduler;
  static std::vector<std::unique_ptr<std::string>> Keep; // the model may point into the bytes
  Keep.push_back(std::make_unique<std::string>(Bytes));
  return rt::loadModel(reinterpret_cast<const uint8_t *>(Keep.back()->data()), Keep.back()->size(), O);
}

/// Expects Call to throw an InvalidStateError whose message holds Part.
void expectInvalidState(const std::function<void()> &Call, const std::string &Part) {
  try {
    Call();
    ADD_FAILURE() << "no InvalidStateError (expected one mentioning '" << Part << "')";
  } catch (const rt::InvalidStateError &E) {
    EXPECT_NE(std::string(E.what()).find(Part), std::string::npos) << E.what();
  }
}

std::vector<rt::Tensor> mlpInput() { return {readNpy(dataPath("tests/models/mlp/input_0.npy"))}; }

} // namespace

TEST(Finalize, ModelsHeldAcrossItAreRefusedAndInitializeStartsAfresh) {
  const std::string Mlp = dataPath("tests/models/mlp");
  const rt::Tensor Want = readNpy(dataPath("tests/models/mlp/output_0.npy"));
  rt::Model M = rt::loadModel(Mlp);
  rt::InferRequest R = M.createRequest();
  R.infer(rt::make_array(mlpInput()));
  R.wait();
  const rt::Tensor Before = R.getOutput(0); // owns its memory: stays readable after finalize()
  EXPECT_LE(maxAbsDiff(Before, Want), 1e-4);

  rt::finalize();
  EXPECT_FALSE(rt::isInitialized());
  expectInvalidState([&] { rt::loadModel(Mlp); }, "loadModel: the runtime is not initialized");
  expectInvalidState([&] { R.infer(rt::make_array(mlpInput())); }, "infer: model '");
  expectInvalidState([&] { R.infer(rt::make_array(mlpInput())); }, "was released by finalize()");
  expectInvalidState([&] { R.getOutput(0); }, "getOutput: model '");
  expectInvalidState([&] { M.createRequest(); }, "createRequest: model '");
  expectInvalidState([&] { rt::createModelGroup(); }, "not initialized");
  // What needs no runtime still answers: metadata, status, a wait with nothing in flight.
  EXPECT_FALSE(M.getName().empty());
  EXPECT_EQ(M.getInputNames().size(), 1u);
  EXPECT_EQ(R.getStatus(), rt::InferStatus::Ready);
  EXPECT_FALSE(R.wait());
  EXPECT_LE(maxAbsDiff(Before, Want), 1e-4);

  rt::initialize();
  EXPECT_TRUE(rt::isInitialized());
  rt::Model M2 = rt::loadModel(Mlp);
  rt::InferRequest R2 = M2.createRequest();
  R2.infer(rt::make_array(mlpInput()));
  R2.wait();
  EXPECT_LE(maxAbsDiff(R2.getOutput(0), Want), 1e-4);
  // A model of the earlier session stays released.
  expectInvalidState([&] { R.infer(rt::make_array(mlpInput())); }, "was released by finalize()");
}

TEST(Finalize, OnlyTheLastMatchingCallShutsDown) {
  rt::initialize(); // count 2
  rt::Model M = rt::loadModel(dataPath("tests/models/mlp"));
  rt::finalize(); // count 1: nothing happens
  EXPECT_TRUE(rt::isInitialized());
  rt::InferRequest R = M.createRequest();
  R.infer(rt::make_array(mlpInput()));
  EXPECT_NO_THROW(R.wait());
}

class FinalizeInFlight : public ::testing::TestWithParam<rt::SchedulerType> {};

TEST_P(FinalizeInFlight, StopsTheRunBeforeItsNextOpWaitsForItAndJoinsThreads) {
  const int ThreadsBefore = threadCount();
  const int64_t N = 1 << 18;
  rt::Model M = load(sinChain(100, N), GetParam(), /*Threads=*/3);
  EXPECT_EQ(threadCount(), ThreadsBefore + 3) << "the model's pool";
  rt::TypedTensor<float> X = rt::tensor<float>(rt::TensorShape{N});
  X.fill(0.5f);
  // One whole run, for scale.
  rt::InferRequest Warm = M.createRequest();
  auto T0 = std::chrono::steady_clock::now();
  Warm.infer(rt::make_array(std::vector<rt::Tensor>{rt::Tensor(X)}));
  Warm.wait();
  const double RunMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - T0).count();
  std::printf("one run: %.1f ms\n", RunMs);
  rt::InferRequest R = M.createRequest();
  rt::InferRequest Queued = M.createRequest(); // a second run: queued behind the first (Exclusive)
  std::atomic<int> Callbacks{0};
  R.addCallback([&](rt::InferStatus, std::exception_ptr) { ++Callbacks; });
  R.infer(rt::make_array(std::vector<rt::Tensor>{rt::Tensor(X)}));
  Queued.infer(rt::make_array(std::vector<rt::Tensor>{rt::Tensor(X)}));
  // Both are in flight (a run of 100 ops over 256K floats takes far longer than this), the first
  // some ops into its run.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(R.getStatus(), rt::InferStatus::Running);
  const auto Start = std::chrono::steady_clock::now();
  rt::finalize();
  const double Ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - Start).count();

  // finalize() returned after both runs ended: callbacks done, no request running, threads joined.
  EXPECT_EQ(Callbacks.load(), 1);
  for (rt::InferRequest *Q : {&R, &Queued}) {
    EXPECT_EQ(Q->getStatus(), rt::InferStatus::Fault);
    expectInvalidState([&] { Q->wait(); }, "finalize() shut the runtime down");
  }
  try {
    R.wait();
  } catch (const rt::Exception &E) {
    std::printf("finalize: %.1f ms; %s\n", Ms, E.what()); // which op it stopped before
  }
  EXPECT_EQ(threadCount(), ThreadsBefore) << "the model's workers were not joined";
  // It stopped them between ops rather than waiting out the rest of the run (~1/100 of it).
  EXPECT_LT(Ms, RunMs / 2);
  expectInvalidState([&] { R.infer(rt::make_array(std::vector<rt::Tensor>{rt::Tensor(X)})); }, "was released by finalize()");
  rt::initialize();
}

INSTANTIATE_TEST_SUITE_P(Schedulers, FinalizeInFlight,
                         ::testing::Values(rt::SchedulerType::Sequential, rt::SchedulerType::Exclusive,
                                           rt::SchedulerType::Pipeline),
                         [](const ::testing::TestParamInfo<rt::SchedulerType> &I) {
                           return std::string(rt::toString(I.param));
                         });

TEST(Finalize, GroupMembersHeldAcrossItAreRefused) {
  rt::ModelGroup G = rt::createModelGroup();
  rt::GroupMember A = G.add(dataPath("tests/models/mlp"));
  A.run(rt::make_array(mlpInput()));
  rt::finalize();
  expectInvalidState([&] { A.run(rt::make_array(mlpInput())); }, "GroupMember::run: model '");
  expectInvalidState([&] { A.getOutput(0); }, "was released by finalize()");
  expectInvalidState([&] { G.add(dataPath("tests/models/mlp")); }, "not initialized");
  rt::initialize();
  // An unsealed group across finalize(): its first run() is refused too (no pool is started).
  rt::ModelGroup G2 = rt::createModelGroup();
  rt::GroupMember B = G2.add(dataPath("tests/models/mlp"));
  rt::finalize();
  expectInvalidState([&] { B.run(rt::make_array(mlpInput())); }, "was released by finalize()");
  EXPECT_FALSE(G2.sealed());
  rt::initialize();
}

TEST(Finalize, FromAnInferenceCallbackIsRefused) {
  rt::Model M = rt::loadModel(dataPath("tests/models/mlp"));
  rt::InferRequest R = M.createRequest();
  std::string Error;
  R.addCallback([&](rt::InferStatus, std::exception_ptr) {
    try {
      rt::finalize();
    } catch (const rt::InvalidOperationError &E) {
      Error = E.what();
    }
  });
  R.infer(rt::make_array(mlpInput()));
  R.wait();
  EXPECT_NE(Error.find("finalize: called from an inference callback"), std::string::npos) << Error;
  EXPECT_TRUE(rt::isInitialized());
}

TEST(Finalize, WithoutInitializeIsANoOp) {
  rt::finalize();
  EXPECT_NO_THROW(rt::finalize());
  EXPECT_FALSE(rt::isInitialized());
  rt::initialize();
  EXPECT_TRUE(rt::isInitialized());
}
