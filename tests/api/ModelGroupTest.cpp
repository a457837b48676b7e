// Model groups (spec section 11): one shared pool sized to the largest member, the FIFO mutual
// exclusion of run(), sealing, the reused request (Preserved tensors persist), output lifetime,
// profiling of members, idle CPU, and the bad-input paths (add after seal, a member that does not
// load, wrong inputs, an error while another thread waits, the group destroyed during a run).
#include <gtest/gtest.h>

#include <stdlib.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include "Optimium/Runtime.h"
#include "OnnxBuilder.h"
#include "TestUtil.h"
#include "exec/Group.h"
#include "exec/ThreadPool.h"

namespace rt = optimium::runtime;
using namespace optimium_test;

namespace {

const int F32 = onnx::TensorProto_DataType_FLOAT;
const int I64 = onnx::TensorProto_DataType_INT64;

/// y = chain of Len MatMuls of z [Size,Size] with itself (scaled to stay finite): a run that takes
/// a while, with fan-outs on the pool.
std::string slowModel(int Len = 30, int64_t Size = 192) {
  OnnxBuilder B;
  B.input("z", F32, {Size, Size});
  std::string Prev = "z";
  for (int I = 0; I < Len; ++I) {
    const std::string Out = I == Len - 1 ? "y" : "t" + std::to_string(I);
    B.node("MatMul", {Prev, "z"}, {Out}, "mm" + std::to_string(I));
    Prev = Out;
  }
  B.output("y", F32);
  return B.bytes();
}

/// out = Gather(table, idx) after a slow chain on z: an index out of range fails at run time,
/// after the chain has run for a while.
std::string slowThenGatherModel() {
  OnnxBuilder B;
  B.input("z", F32, {256, 256});
  B.input("idx", I64, {1});
  std::string Prev = "z";
  for (int I = 0; I < 150; ++I) { // 5 GFLOP: long enough for the other thread to arrive
    const std::string Out = "t" + std::to_string(I);
    B.node("MatMul", {Prev, "z"}, {Out}, "mm" + std::to_string(I));
    Prev = Out;
  }
  B.output(Prev, F32);
  B.initializer("table", {4}, {10.f, 11.f, 12.f, 13.f});
  B.node("Gather", {"table", "idx"}, {"out"}, "gather");
  B.output("out", F32);
  return B.bytes();
}

/// cache_out = Concat(cache_in, x, axis=1), cache_in Preserved + Resizable (updated from cache_out).
std::string cacheModel() {
  OnnxBuilder B;
  B.input("cache_in", F32, {2, 0}, {"", "n"});
  B.input("x", F32, {2, 1});
  auto *N = B.node("Concat", {"cache_in", "x"}, {"cache_out"}, "concat");
  OnnxBuilder::attrInt(N, "axis", 1);
  B.output("cache_out", F32);
  return B.bytes();
}
const char *kCacheManifest = R"({"optimium_manifest": 1, "tensors": {
  "cache_in": {"preserved": true, "resizable": true, "update_from": "cache_out", "base_shape": [2, 0]}}})";

std::string modelFolder(const std::string &Bytes, const std::string &Manifest = "") {
  char Tmpl[] = "/tmp/optimium_group_XXXXXX";
  std::string Dir = mkdtemp(Tmpl);
  std::ofstream(Dir + "/model.onnx", std::ios::binary) << Bytes;
  if (!Manifest.empty())
    std::ofstream(Dir + "/optimium.json") << Manifest;
  return Dir;
}

rt::Tensor filled(const std::vector<int64_t> &Dims, float V) {
  rt::TypedTensor<float> T = rt::tensor<float>(rt::TensorShape::fromDims(Dims));
  for (size_t I = 0; I < T.getElementCount(); ++I)
    T.data()[I] = V;
  return T;
}

rt::Tensor digitsInput() { return readNpy(dataPath("models/digits/sample_input.npy")); }

double processCpuSeconds() {
  timespec TS;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &TS);
  return static_cast<double>(TS.tv_sec) + static_cast<double>(TS.tv_nsec) * 1e-9;
}

std::vector<float> values(const rt::Tensor &T) {
  const float *P = static_cast<const float *>(T.data());
  return std::vector<float>(P, P + T.getElementCount());
}

} // namespace

TEST(ModelGroup, MembersComputeWhatStandaloneModelsCompute) {
  rt::ModelGroupOptions GO;
  GO.SpinIterations = -1;
  rt::ModelGroup G = rt::createModelGroup(GO);
  rt::GroupMemberOptions MO;
  MO.ThreadCount = 2;
  rt::GroupMember Digits = G.add(dataPath("models/digits"), MO);
  rt::GroupMember Two = G.add(dataPath("tests/models/two_inputs"), MO);
  EXPECT_EQ(G.size(), 2u);
  EXPECT_FALSE(G.sealed());
  EXPECT_EQ(Digits.getName(), rt::loadModel(dataPath("models/digits")).getName());
  ASSERT_EQ(Digits.getInputNames().size(), 1u);
  EXPECT_EQ(Digits.getInputTensorInfo(0).Name, Digits.getInputNames()[0].str());
  EXPECT_EQ(Digits.getOutputTensorInfo(0).Name, Digits.getOutputNames()[0].str());
  EXPECT_EQ(Digits.getTensorInfo(Digits.getOutputNames()[0]).Name, Digits.getOutputNames()[0].str());

  rt::Tensor X = digitsInput();
  rt::Tensor Expected = readNpy(dataPath("models/digits/sample_output.npy"));
  rt::Tensor A = readNpy(dataPath("tests/models/two_inputs/input_0.npy"));
  rt::Tensor B = readNpy(dataPath("tests/models/two_inputs/input_1.npy"));
  rt::Tensor ExpectedTwo = readNpy(dataPath("tests/models/two_inputs/output_0.npy"));
  for (int I = 0; I < 5; ++I) { // alternate, as a pipeline does
    Digits.run(rt::make_array(std::vector<rt::Tensor>{X}));
    EXPECT_LT(maxAbsDiff(Digits.getOutput(0), Expected), 1e-4);
    EXPECT_LT(maxAbsDiff(Digits.getOutput(Digits.getOutputNames()[0]), Expected), 1e-4);
    Two.run({{Two.getInputNames()[0].str(), A}, {Two.getInputNames()[1].str(), B}});
    EXPECT_LT(maxAbsDiff(Two.getOutput(0), ExpectedTwo), 1e-5);
  }
  EXPECT_TRUE(G.sealed());
  EXPECT_EQ(G.impl()->Runs, 10u);
}

TEST(ModelGroup, AddAfterTheFirstRunIsInvalidState) {
  rt::ModelGroup G = rt::createModelGroup();
  rt::GroupMember D = G.add(dataPath("models/digits"));
  D.run(rt::make_array(std::vector<rt::Tensor>{digitsInput()}));
  EXPECT_TRUE(G.sealed());
  try {
    G.add(dataPath("models/digits"));
    FAIL() << "add() after the first run must throw";
  } catch (const rt::InvalidStateError &E) {
    EXPECT_NE(std::string(E.what()).find("sealed"), std::string::npos) << E.what();
  }
  EXPECT_THROW(G.add(reinterpret_cast<const uint8_t *>("x"), 1, {}), rt::InvalidStateError);
  EXPECT_EQ(G.size(), 1u);
  D.run(rt::make_array(std::vector<rt::Tensor>{digitsInput()})); // still usable
}

TEST(ModelGroup, PoolSizedToTheLargestMemberEachMemberKeepsItsThreadCount) {
  rt::ModelGroupOptions GO;
  rt::ModelGroup G = rt::createModelGroup(GO);
  rt::GroupMemberOptions One, Three;
  One.ThreadCount = 1;
  Three.ThreadCount = 3;
  rt::GroupMember A = G.add(dataPath("models/digits"), One);
  rt::GroupMember B = G.add(dataPath("models/digits"), Three);
  EXPECT_EQ(G.impl()->Pool, nullptr); // no threads before the first run
  A.run(rt::make_array(std::vector<rt::Tensor>{digitsInput()}));
  ASSERT_NE(G.impl()->Pool, nullptr);
  EXPECT_EQ(G.impl()->Pool->threadCount(), 3);
  ASSERT_EQ(G.impl()->Members.size(), 2u);
  const auto &MA = *G.impl()->Members[0];
  const auto &MB = *G.impl()->Members[1];
  EXPECT_EQ(MA.Pool, MB.Pool);                 // one pool
  EXPECT_EQ(MA.Sched, MB.Sched);               // one scheduler
  EXPECT_EQ(MA.EffectiveScheduler, rt::SchedulerType::Exclusive);
  EXPECT_EQ(MA.Slice.Parts, 1);                // its own parallel ranges
  EXPECT_EQ(MB.Slice.Parts, 3);
  EXPECT_EQ(MA.Slice.Pool, G.impl()->Pool.get());
}

TEST(ModelGroup, TheMembersRequestIsReusedPreservedTensorsPersist) {
  rt::ModelGroup G = rt::createModelGroup();
  rt::GroupMember Cache = G.add(modelFolder(cacheModel(), kCacheManifest));
  rt::GroupMember Other = G.add(dataPath("models/digits"));
  for (int Step = 0; Step < 3; ++Step) {
    Cache.run(rt::make_array(std::vector<rt::Tensor>{filled({2, 1}, float(Step))}));
    Other.run(rt::make_array(std::vector<rt::Tensor>{digitsInput()})); // interleaved: state stays
  }
  rt::Tensor C = Cache.getTensor("cache_in");
  EXPECT_EQ(C.getShape().getDims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values(C), (std::vector<float>{0, 1, 2, 0, 1, 2}));
  // setTensorShape resets the cache's extent at the next run (grown to 2x5, then one more column).
  Cache.setTensorShape("cache_in", rt::TensorShape({2, 5}));
  Cache.run(rt::make_array(std::vector<rt::Tensor>{filled({2, 1}, 9.f)}));
  EXPECT_EQ(Cache.getOutput(0).getShape().getDims(), (std::vector<int64_t>{2, 6}));
}

TEST(ModelGroup, GetOutputIsOverwrittenByTheNextRunCopyToSnapshots) {
  rt::ModelGroup G = rt::createModelGroup();
  rt::GroupMember M = G.add(dataPath("tests/models/two_inputs"));
  rt::Tensor A = readNpy(dataPath("tests/models/two_inputs/input_0.npy"));
  rt::Tensor B = readNpy(dataPath("tests/models/two_inputs/input_1.npy"));
  M.run(rt::make_array(std::vector<rt::Tensor>{A, B}));
  rt::Tensor View = M.getOutput(0);
  rt::Tensor Snapshot = rt::tensor(View.getType(), View.getShape());
  View.copyTo(Snapshot);
  const std::vector<float> First = values(Snapshot);
  rt::Tensor A2 = filled(A.getShape().getDims(), 3.f);
  M.run(rt::make_array(std::vector<rt::Tensor>{A2, B}));
  EXPECT_EQ(View.data(), M.getOutput(0).data()); // the same memory, rewritten in place
  EXPECT_NE(values(View), First);
  EXPECT_EQ(values(Snapshot), First);
}

TEST(ModelGroup, ConcurrentRunsOfMembersAreMutuallyExclusiveInArrivalOrder) {
  rt::ModelGroupOptions GO;
  GO.SpinIterations = -1;
  rt::ModelGroup G = rt::createModelGroup(GO);
  rt::GroupMemberOptions MO;
  MO.ThreadCount = 2;
  rt::GroupMember A = G.add(modelFolder(slowModel()), MO);
  rt::GroupMember B = G.add(modelFolder(slowModel()), MO);
  auto RecA = std::make_shared<rt::ProfileEventRecorder>(1 << 16);
  auto RecB = std::make_shared<rt::ProfileEventRecorder>(1 << 16);
  A.setRecorder(RecA);
  B.setRecorder(RecB);
  rt::Tensor Z = filled({192, 192}, 0.01f);
  const int Runs = 6;
  std::thread TA([&] {
    for (int I = 0; I < Runs; ++I)
      A.run(rt::make_array(std::vector<rt::Tensor>{Z}));
  });
  std::thread TB([&] {
    for (int I = 0; I < Runs; ++I)
      B.run(rt::make_array(std::vector<rt::Tensor>{Z}));
  });
  TA.join();
  TB.join();
  // Every run of A lies entirely before or after every run of B.
  using Interval = std::pair<int64_t, int64_t>;
  auto intervals = [](const rt::ProfileEventRecorder &R) {
    std::vector<Interval> Out;
    int64_t Begin = -1;
    for (const rt::ProfileEvent &E : R.events()) {
      if (E.Kind == rt::ProfileEventKind::ModelExecuteBegin)
        Begin = E.TimeStamp.time_since_epoch().count();
      if (E.Kind == rt::ProfileEventKind::ModelExecuteEnd && Begin >= 0)
        Out.emplace_back(Begin, E.TimeStamp.time_since_epoch().count());
    }
    return Out;
  };
  const auto IA = intervals(*RecA), IB = intervals(*RecB);
  ASSERT_EQ(IA.size(), size_t(Runs));
  ASSERT_EQ(IB.size(), size_t(Runs));
  for (const Interval &X : IA)
    for (const Interval &Y : IB)
      EXPECT_TRUE(X.second <= Y.first || Y.second <= X.first) << "runs of two members overlapped";
  EXPECT_EQ(G.impl()->Runs, uint64_t(2 * Runs));
  EXPECT_GT(G.impl()->WaitedRuns, 0u) << "two threads running for a while never waited for each other";
  EXPECT_EQ(A.getProfileDurations().ModelDurations.size(), size_t(Runs));
  EXPECT_FALSE(A.getLayerDurations().empty());
  A.setRecorder(nullptr);
  EXPECT_TRUE(A.getProfileDurations().ModelDurations.empty());
}

TEST(ModelGroup, AMemberThatDoesNotLoadLeavesTheGroupUsable) {
  rt::ModelGroup G = rt::createModelGroup();
  rt::GroupMember D = G.add(dataPath("models/digits"));
  EXPECT_THROW(G.add("/nonexistent/model.onnx"), rt::IOError);
  const std::string Garbage = "this is not an onnx model";
  EXPECT_THROW(G.add(reinterpret_cast<const uint8_t *>(Garbage.data()), Garbage.size(), {}), rt::ContainerError);
  EXPECT_THROW(G.add(nullptr, 10, {}), rt::InvalidArgumentError);
  EXPECT_EQ(G.size(), 1u);
  EXPECT_FALSE(G.sealed());
  // A member from bytes (kept alive by the test).
  const std::string Bytes = slowModel(2, 8);
  rt::GroupMember S = G.add(reinterpret_cast<const uint8_t *>(Bytes.data()), Bytes.size(), {});
  EXPECT_EQ(G.size(), 2u);
  D.run(rt::make_array(std::vector<rt::Tensor>{digitsInput()}));
  S.run(rt::make_array(std::vector<rt::Tensor>{filled({8, 8}, 1.f)}));
  EXPECT_EQ(values(S.getOutput(0))[0], 64.f); // (ones 8x8)^3: 1*8 = 8, 8*8 = 64
}

TEST(ModelGroup, WrongInputsThrowAndLeaveTheMemberAndGroupUsable) {
  rt::ModelGroup G = rt::createModelGroup();
  rt::GroupMember D = G.add(dataPath("models/digits"));
  rt::GroupMember Two = G.add(dataPath("tests/models/two_inputs"));
  EXPECT_THROW(D.run(rt::make_array(std::vector<rt::Tensor>{filled({1, 1, 9, 9}, 0.f)})), rt::ShapeError);
  EXPECT_THROW(D.run(rt::make_array(std::vector<rt::Tensor>{rt::tensor<int32_t>({1, 1, 8, 8})})), rt::TypeError);
  EXPECT_THROW(D.run(rt::make_array(std::vector<rt::Tensor>{})), rt::InvalidArgumentError);
  EXPECT_THROW(D.run({{"no_such_input", digitsInput()}}), rt::InvalidArgumentError);
  EXPECT_THROW(D.getOutput(7), rt::InvalidArgumentError);
  EXPECT_THROW(D.getTensor("no_such_tensor"), rt::InvalidArgumentError);
  EXPECT_THROW(D.getTensorInfo("no_such_tensor"), rt::InvalidArgumentError);
  D.run(rt::make_array(std::vector<rt::Tensor>{digitsInput()}));
  EXPECT_LT(maxAbsDiff(D.getOutput(0), readNpy(dataPath("models/digits/sample_output.npy"))), 1e-4);
  rt::Tensor A = readNpy(dataPath("tests/models/two_inputs/input_0.npy"));
  rt::Tensor B = readNpy(dataPath("tests/models/two_inputs/input_1.npy"));
  Two.run(rt::make_array(std::vector<rt::Tensor>{A, B}));
  EXPECT_EQ(G.impl()->Runs, G.impl()->Serving); // every turn taken was given back
}

TEST(ModelGroup, AnErrorInOneThreadWhileAnotherWaitsFailsOnlyThatRun) {
  rt::ModelGroup G = rt::createModelGroup();
  rt::GroupMemberOptions MO;
  MO.ThreadCount = 2;
  rt::GroupMember Bad = G.add(modelFolder(slowThenGatherModel()), MO);
  rt::GroupMember Good = G.add(dataPath("models/digits"), MO);
  rt::TypedTensor<int64_t> Idx = rt::tensor<int64_t>({1});
  Idx.data()[0] = 42; // out of range: the Gather fails after the slow chain
  rt::Tensor Z = filled({256, 256}, 1.f / 256); // z*z == z: the chain stays finite
  std::atomic<bool> BadFailed{false};
  std::string Message;
  std::thread TBad([&] {
    try {
      Bad.run(rt::make_array(std::vector<rt::Tensor>{Z, Idx}));
    } catch (const rt::Exception &E) {
      BadFailed = true;
      Message = E.what();
    }
  });
  // Wait until the bad run holds the turn, then run the good member: it must wait, then succeed.
  while (G.impl()->Runs == 0)
    std::this_thread::yield();
  Good.run(rt::make_array(std::vector<rt::Tensor>{digitsInput()}));
  TBad.join();
  EXPECT_TRUE(BadFailed.load());
  EXPECT_NE(Message.find("gather"), std::string::npos) << Message;
  EXPECT_LT(maxAbsDiff(Good.getOutput(0), readNpy(dataPath("models/digits/sample_output.npy"))), 1e-4);
  EXPECT_GE(G.impl()->WaitedRuns, 1u);
  // The failed member runs again with good inputs.
  Idx.data()[0] = 2;
  Bad.run(rt::make_array(std::vector<rt::Tensor>{Z, Idx}));
  EXPECT_EQ(values(Bad.getOutput("out"))[0], 12.f);
}

TEST(ModelGroup, DestroyingTheGroupDuringARunLetsTheRunFinish) {
  std::weak_ptr<rt::GroupImpl> Watch;
  rt::GroupMember Survivor;
  {
    rt::ModelGroup G = rt::createModelGroup();
    Watch = G.impl();
    rt::GroupMember Slow = G.add(modelFolder(slowModel(60)));
    rt::GroupMember Other = G.add(dataPath("models/digits"));
    Survivor = Slow;
    std::atomic<bool> Started{false};
    std::atomic<bool> Ok{false};
    rt::Tensor Z = filled({192, 192}, 0.001f);
    std::thread T([Slow, Z, &Started, &Ok]() mutable {
      Started = true;
      Slow.run(rt::make_array(std::vector<rt::Tensor>{Z}));
      Ok = Slow.getOutput(0).getElementCount() == 192u * 192u;
      Slow = rt::GroupMember(); // the thread's handle goes away too
    });
    while (!Started || G.impl()->Runs == 0)
      std::this_thread::yield();
    // Drop the group handle (and another member) while the run is in progress.
    G = rt::ModelGroup();
    Other = rt::GroupMember();
    T.join();
    EXPECT_TRUE(Ok.load());
    EXPECT_FALSE(Watch.expired()); // Survivor keeps it
  }
  // The remaining member still runs; dropping it frees the group, its pool and its threads.
  Survivor.run(rt::make_array(std::vector<rt::Tensor>{filled({192, 192}, 0.001f)}));
  Survivor = rt::GroupMember();
  EXPECT_TRUE(Watch.expired());
}

TEST(ModelGroup, AnIdleGroupUsesNoCpuEvenWithNegativeSpin) {
  rt::ModelGroupOptions GO;
  GO.SpinIterations = -1;
  rt::ModelGroup G = rt::createModelGroup(GO);
  rt::GroupMemberOptions MO;
  MO.ThreadCount = 2;
  rt::GroupMember A = G.add(dataPath("models/digits"), MO);
  rt::GroupMember B = G.add(dataPath("models/digits"), MO);
  for (int I = 0; I < 20; ++I) {
    A.run(rt::make_array(std::vector<rt::Tensor>{digitsInput()}));
    B.run(rt::make_array(std::vector<rt::Tensor>{digitsInput()}));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50)); // past the warm window
  const double Before = processCpuSeconds();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const double Used = processCpuSeconds() - Before;
  std::cout << "idle group CPU over 0.5 s: " << Used * 1000 << " ms" << std::endl;
  EXPECT_LT(Used, 0.01);
}

TEST(ModelGroup, EmptyHandlesAndBadOptionsAreClearErrors) {
  rt::ModelGroup Empty;
  EXPECT_FALSE(static_cast<bool>(Empty));
  EXPECT_THROW(Empty.add(dataPath("models/digits")), rt::InvalidStateError);
  EXPECT_THROW(Empty.size(), rt::InvalidStateError);
  rt::GroupMember None;
  EXPECT_THROW(None.run(rt::make_array(std::vector<rt::Tensor>{})), rt::InvalidStateError);
  EXPECT_THROW(None.getName(), rt::InvalidStateError);
  rt::ModelGroupOptions GO;
  GO.Cores = {0, -1};
  EXPECT_THROW(rt::createModelGroup(GO), rt::InvalidArgumentError);
}

TEST(ThreadPool, MaxPartsBoundsTheThreadsOfAFanOut) {
  rt::detail::PoolConfig PC;
  PC.Threads = 3;
  rt::detail::ThreadPool Pool(PC);
  for (int Parts : {1, 2, 3}) {
    std::mutex Mu;
    std::set<std::thread::id> Seen;
    Pool.parallelFor(
        64, 1,
        [&](size_t, size_t) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
          std::lock_guard<std::mutex> L(Mu);
          Seen.insert(std::this_thread::get_id());
        },
        Parts);
    EXPECT_LE(Seen.size(), size_t(Parts)) << "MaxParts " << Parts;
  }
}

TEST(ModelGroup, ATurnTakenTwiceOnOneThreadIsAnErrorNotADeadlock) {
  rt::ModelGroup G = rt::createModelGroup();
  rt::GroupImpl &Impl = *G.impl();
  Impl.beginTurn();
  EXPECT_THROW(Impl.beginTurn(), rt::InvalidOperationError); // e.g. run() from a callback of a run
  Impl.endTurn();
  Impl.beginTurn(); // given back: taken again
  Impl.endTurn();
}
