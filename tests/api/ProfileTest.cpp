// Profiling: InferRequest::profile() under every scheduler (event counts, begin/end pairing and
// nesting per thread), warm-up, early stop, the stop flag, the warm-up time cap, a full event
// buffer, the lock-free recorder under concurrent appends, setRecorder, bad options, Copy events of
// the half-precision adapter, and the duration summaries.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <thread>

#include "Optimium/Runtime.h"
#include "OnnxBuilder.h"
#include "TestUtil.h"

namespace rt = optimium::runtime;
using namespace optimium_test;
using Kind = rt::ProfileEventKind;

namespace {

rt::Model loadBytes(const std::string &Bytes, const rt::ModelLoadOptions &O = {}) {
  static std::vector<std::unique_ptr<std::string>> Keep; // the model points into the bytes
  Keep.push_back(std::make_unique<std::string>(Bytes));
  return rt::loadModel(reinterpret_cast<const uint8_t *>(Keep.back()->data()), Keep.back()->size(), O);
}

rt::Model loadDigits(rt::SchedulerType S, int Threads) {
  rt::ModelLoadOptions O;
  O.Scheduler = S;
  O.ThreadCount = Threads;
  return rt::loadModel(dataPath("models/digits"), O);
}

std::vector<rt::Tensor> digitInputs() { return {readNpy(dataPath("models/digits/sample_input.npy"))}; }

size_t count(rt::ArrayRef<rt::ProfileEvent> Events, Kind K) {
  return static_cast<size_t>(
      std::count_if(Events.begin(), Events.end(), [K](const rt::ProfileEvent &E) { return E.Kind == K; }));
}

bool isBegin(Kind K) { return static_cast<int>(K) % 2 == 0; }
Kind endOf(Kind K) { return static_cast<Kind>(static_cast<int>(K) + 1); }
bool crossesThreads(Kind K) {
  return K == Kind::ModelExecuteBegin || K == Kind::ModelExecuteEnd || K == Kind::QueueBegin || K == Kind::QueueEnd;
}

/// Every same-thread Begin has its End on that thread, properly nested; "" when so.
std::string checkNesting(rt::ArrayRef<rt::ProfileEvent> Events) {
  std::map<uint32_t, std::vector<const rt::ProfileEvent *>> Open;
  for (const rt::ProfileEvent &E : Events) {
    if (crossesThreads(E.Kind))
      continue;
    auto &Stack = Open[E.ThreadID];
    if (isBegin(E.Kind)) {
      Stack.push_back(&E);
      continue;
    }
    if (Stack.empty())
      return std::string("unmatched ") + rt::toString(E.Kind) + " on thread " + std::to_string(E.ThreadID);
    const rt::ProfileEvent &B = *Stack.back();
    if (endOf(B.Kind) != E.Kind || B.Operation != E.Operation || B.TensorID != E.TensorID)
      return std::string(rt::toString(E.Kind)) + " of op " + std::to_string(E.Operation) + " closes " +
             rt::toString(B.Kind) + " of op " + std::to_string(B.Operation);
    if (E.TimeStamp < B.TimeStamp)
      return "end before begin";
    // A kernel launch and its ranges on the running thread lie inside the operation's layer event.
    if ((E.Kind == Kind::LaunchEnd) && (Stack.size() < 2 || Stack[Stack.size() - 2]->Kind != Kind::LayerExecuteBegin))
      return "a Launch outside its LayerExecute";
    Stack.pop_back();
  }
  for (auto &KV : Open)
    if (!KV.second.empty())
      return std::string("unclosed ") + rt::toString(KV.second.back()->Kind) + " on thread " + std::to_string(KV.first);
  return "";
}

rt::ProfileOptions opts(int Repeat, int WarmUp = 0) {
  rt::ProfileOptions O;
  O.Repeat = Repeat;
  O.WarmUp = WarmUp;
  O.EventBufferSize = 1 << 16;
  return O;
}

} // namespace

TEST(Profile, EventIsCompactAndKindsHaveNames) {
  EXPECT_LE(sizeof(rt::ProfileEvent), 32u);
  EXPECT_EQ(rt::kDefaultEventBufferSize, 4194304u);
  std::set<std::string> Names;
  for (int K = 0; K <= static_cast<int>(Kind::WaitEnd); ++K)
    Names.insert(rt::toString(static_cast<Kind>(K)));
  EXPECT_EQ(Names.size(), 14u);
  EXPECT_STREQ(rt::toString(Kind::LayerExecuteBegin), "LayerExecuteBegin");
}

class ProfileScheduler : public ::testing::TestWithParam<std::pair<rt::SchedulerType, int>> {};

TEST_P(ProfileScheduler, CountsPairingAndNesting) {
  rt::Model M = loadDigits(GetParam().first, GetParam().second);
  rt::InferRequest R = M.createRequest();
  const std::vector<rt::Tensor> In = digitInputs();
  const int Runs = 4;
  R.profile(rt::make_array(In), opts(Runs, /*WarmUp=*/3));
  rt::ArrayRef<rt::ProfileEvent> Ev = R.getProfileEvents();
  const size_t Layers = R.getModelOperations().size();
  ASSERT_GT(Layers, 3u);
  EXPECT_EQ(R.getDroppedProfileEvents(), 0u);
  // Warm-up runs are not recorded: exactly Runs of every per-run kind.
  for (Kind K : {Kind::ModelExecuteBegin, Kind::ModelExecuteEnd, Kind::QueueBegin, Kind::QueueEnd, Kind::WaitBegin,
                 Kind::WaitEnd})
    EXPECT_EQ(count(Ev, K), static_cast<size_t>(Runs)) << rt::toString(K);
  for (Kind K : {Kind::LayerExecuteBegin, Kind::LayerExecuteEnd, Kind::LaunchBegin, Kind::LaunchEnd})
    EXPECT_EQ(count(Ev, K), Layers * Runs) << rt::toString(K);
  // DeviceExecute events come from kernels that fan out through the pool (2+ threads, enough work).
  EXPECT_EQ(count(Ev, Kind::DeviceExecuteBegin), count(Ev, Kind::DeviceExecuteEnd));
  EXPECT_EQ(count(Ev, Kind::CopyBegin), 0u); // a float32 model converts nothing
  EXPECT_EQ(checkNesting(Ev), "");
  // Each operation ran once per measured run, and Layer events carry operation and thread.
  std::map<int32_t, int> PerOp;
  for (const rt::ProfileEvent &E : Ev)
    if (E.Kind == Kind::LayerExecuteBegin) {
      ++PerOp[E.Operation];
      EXPECT_NE(E.ThreadID, 0u);
    }
  ASSERT_EQ(PerOp.size(), Layers);
  for (auto &KV : PerOp)
    EXPECT_EQ(KV.second, Runs);
  // Runs are ordered: every run's model events bracket its layers.
  const rt::ProfileDurations D = R.getProfileDurations();
  EXPECT_EQ(D.ModelName, R.getModelName());
  EXPECT_EQ(D.ModelDurations.size(), static_cast<size_t>(Runs));
  EXPECT_EQ(D.LayerDurations.size(), Layers);
  for (const rt::OpInfo &Op : R.getModelOperations()) {
    auto It = D.LayerDurations.find(Op.Name);
    ASSERT_NE(It, D.LayerDurations.end()) << Op.Name;
    EXPECT_EQ(It->second.size(), static_cast<size_t>(Runs));
  }
  for (int64_t Ns : D.ModelDurations)
    EXPECT_GT(Ns, 0);
  const std::vector<rt::LayerDuration> L = R.getLayerDurations();
  ASSERT_EQ(L.size(), Layers);
  for (size_t I = 1; I < L.size(); ++I)
    EXPECT_GE(L[I - 1].TotalNs, L[I].TotalNs);
  for (const rt::LayerDuration &X : L) {
    EXPECT_EQ(X.Count, static_cast<uint64_t>(Runs));
    EXPECT_LE(X.MinNs, X.MaxNs);
    EXPECT_FALSE(X.Type.empty());
  }
  // The outputs of the last run are readable as after infer() + wait(), and recording changed nothing.
  EXPECT_EQ(R.getOutput(0).getShape(), rt::TensorShape({1, 10}));
  EXPECT_LT(maxAbsDiff(R.getOutput(0), readNpy(dataPath("models/digits/sample_output.npy"))), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(Schedulers, ProfileScheduler,
                         ::testing::Values(std::make_pair(rt::SchedulerType::Sequential, 1),
                                           std::make_pair(rt::SchedulerType::Sequential, 3),
                                           std::make_pair(rt::SchedulerType::Exclusive, 2),
                                           std::make_pair(rt::SchedulerType::Pipeline, 1),
                                           std::make_pair(rt::SchedulerType::Pipeline, 3)));

// One profiled batch of ParallelRangesAreRecordedOnTheThreadsThatRunThem: checks where every
// range ran and counts the operations whose ranges ran on two threads or more.
void checkParallelRanges(rt::InferRequest &R, const rt::Tensor &X, int Threads, int Ops, int Runs, size_t &FannedOut) {
  R.profile(rt::make_array(std::vector<rt::Tensor>{X}), opts(Runs));
  rt::ArrayRef<rt::ProfileEvent> Ev = R.getProfileEvents();
  ASSERT_EQ(R.getDroppedProfileEvents(), 0u);
  EXPECT_EQ(checkNesting(Ev), "");
  // The profiling thread is the one that waits: its Wait events carry this thread's ID.
  const uint32_t Self = rt::ProfileEventRecorder::currentThreadID();
  ASSERT_EQ(count(Ev, Kind::WaitBegin), static_cast<size_t>(Runs));
  for (const rt::ProfileEvent &E : Ev) {
    if (E.Kind == Kind::WaitBegin || E.Kind == Kind::WaitEnd) {
      EXPECT_EQ(E.ThreadID, Self);
    }
  }

  // Pair begin/end per thread (checkNesting verified they pair): [begin, end] of every layer
  // execution and every range, with the operation and the thread.
  struct Span {
    Kind K;
    int32_t Op;
    uint32_t Thread;
    std::chrono::high_resolution_clock::time_point Begin, End;
  };
  std::vector<Span> Layers, Ranges;
  std::map<uint32_t, std::vector<const rt::ProfileEvent *>> Open;
  for (const rt::ProfileEvent &E : Ev) {
    if (E.Kind != Kind::LayerExecuteBegin && E.Kind != Kind::LayerExecuteEnd && E.Kind != Kind::DeviceExecuteBegin &&
        E.Kind != Kind::DeviceExecuteEnd)
      continue;
    auto &Stack = Open[E.ThreadID];
    if (isBegin(E.Kind)) {
      Stack.push_back(&E);
      continue;
    }
    ASSERT_FALSE(Stack.empty());
    const rt::ProfileEvent &B = *Stack.back();
    Stack.pop_back();
    ASSERT_EQ(endOf(B.Kind), E.Kind);
    (B.Kind == Kind::LayerExecuteBegin ? Layers : Ranges).push_back({B.Kind, B.Operation, E.ThreadID, B.TimeStamp, E.TimeStamp});
  }
  ASSERT_EQ(Layers.size(), static_cast<size_t>(Ops * Runs));
  ASSERT_GE(Ranges.size(), Layers.size()); // every MatMul fans out

  std::set<uint32_t> RangeThreads;
  size_t OnOtherThreads = 0;
  std::map<const Span *, std::set<uint32_t>> ThreadsPerLayer;
  for (const Span &Rg : Ranges) {
    RangeThreads.insert(Rg.Thread);
    ASSERT_GE(Rg.Op, 0);
    ASSERT_LT(Rg.Op, Ops);
    // The range lies inside one execution of its own operation...
    const Span *Owner = nullptr;
    for (const Span &L : Layers)
      if (L.Op == Rg.Op && L.Begin <= Rg.Begin && Rg.End <= L.End)
        Owner = &L;
    ASSERT_NE(Owner, nullptr) << "a range of op " << Rg.Op << " outside that op's LayerExecute";
    // One span per thread and parallel-for (a MatMul fans out once), however many ranges it ran.
    EXPECT_TRUE(ThreadsPerLayer[Owner].insert(Rg.Thread).second) << "two spans of op " << Rg.Op << " on one thread";
    // ... on the thread running that operation or on a pool worker; the profiling thread (blocked
    // in wait()) takes no range of an operation a worker runs.
    if (Rg.Thread != Owner->Thread) {
      ++OnOtherThreads;
      EXPECT_NE(Rg.Thread, Self);
    }
  }
  // Ranges ran on more than one thread, on at most the pool's threads plus the profiling thread.
  EXPECT_GE(RangeThreads.size(), 2u);
  EXPECT_LE(RangeThreads.size(), static_cast<size_t>(Threads) + 1);
  EXPECT_GT(OnOtherThreads, 0u);
  FannedOut = 0;
  for (auto &KV : ThreadsPerLayer)
    FannedOut += KV.second.size() >= 2;
}

TEST(Profile, ParallelRangesAreRecordedOnTheThreadsThatRunThem) {
  // A chain of 256x256 MatMuls on a 3-thread pool: every MatMul fans out, so its ranges run on the
  // thread that runs the operation and on pool workers. Each range must be recorded with the ID of
  // the thread that ran it, inside its own operation's LayerExecute, and more than one thread must
  // show up (a recorder stamping one thread's ID, or a pool that never fans out, fails here).
  // Which thread claims which range is up to the OS: on a loaded 2-core machine (CI runs tests
  // two at a time) the thread running an operation can be preempted right after it fans out and
  // a worker takes every range. So the batch is repeated until one operation fanned out, up to 20
  // times; a pool that never fans out still fails.
  const int Threads = 3, Ops = 4, Size = 256, Runs = 5;
  rt::ModelLoadOptions O;
  O.ThreadCount = Threads;
  O.Scheduler = rt::SchedulerType::Sequential;
  rt::Model M = loadBytes(slowChainModel(Ops, Size), O);
  rt::InferRequest R = M.createRequest();
  rt::TypedTensor<float> X = rt::tensor<float>({Size, Size});
  X.fill(1.0f);
  size_t FannedOut = 0;
  for (int Attempt = 0; Attempt < 20 && FannedOut == 0 && !::testing::Test::HasFatalFailure(); ++Attempt)
    checkParallelRanges(R, X, Threads, Ops, Runs, FannedOut);
  EXPECT_GT(FannedOut, 0u) << "no operation had its ranges on two threads in 20 batches";
}

TEST(Profile, MapOverloadAndInputErrors) {
  rt::Model M = rt::loadModel(dataPath("tests/models/two_inputs/model.onnx"));
  rt::InferRequest R = M.createRequest();
  std::map<std::string, rt::Tensor> In{{"a", readNpy(dataPath("tests/models/two_inputs/input_0.npy"))},
                                       {"b", readNpy(dataPath("tests/models/two_inputs/input_1.npy"))}};
  R.profile(In, opts(2));
  EXPECT_EQ(count(R.getProfileEvents(), Kind::ModelExecuteEnd), 2u);
  In.erase("b");
  EXPECT_THROW(R.profile(In, opts(2)), rt::InvalidArgumentError);
  EXPECT_THROW(R.profile(rt::make_array(std::vector<rt::Tensor>{}), opts(2)), rt::InvalidArgumentError);
}

TEST(Profile, BadOptionsAreInvalidArguments) {
  rt::Model M = loadDigits(rt::SchedulerType::Sequential, 1);
  rt::InferRequest R = M.createRequest();
  const std::vector<rt::Tensor> In = digitInputs();
  auto Try = [&](rt::ProfileOptions O) { R.profile(rt::make_array(In), O); };
  rt::ProfileOptions O = opts(1);
  O.Repeat = 0;
  EXPECT_THROW(Try(O), rt::InvalidArgumentError);
  O = opts(1);
  O.Repeat = -3;
  EXPECT_THROW(Try(O), rt::InvalidArgumentError);
  O = opts(1);
  O.WarmUp = -1;
  EXPECT_THROW(Try(O), rt::InvalidArgumentError);
  O = opts(1);
  O.CheckPeriod = -1;
  EXPECT_THROW(Try(O), rt::InvalidArgumentError);
  O = opts(1);
  O.WarmUpTime = std::chrono::microseconds(-5);
  EXPECT_THROW(Try(O), rt::InvalidArgumentError);
  O = opts(1);
  O.StopThreshold = std::chrono::microseconds(-5);
  EXPECT_THROW(Try(O), rt::InvalidArgumentError);
  EXPECT_TRUE(R.getProfileEvents().empty()); // nothing ran
  EXPECT_THROW(rt::InferRequest().profile(rt::make_array(In), opts(1)), rt::InvalidStateError);
}

TEST(Profile, EarlyStopWhenTheMedianSettles) {
  rt::Model M = loadDigits(rt::SchedulerType::Sequential, 1);
  rt::InferRequest R = M.createRequest();
  const std::vector<rt::Tensor> In = digitInputs();
  rt::ProfileOptions O = opts(1000);
  O.CheckPeriod = 3;
  O.StopThreshold = std::chrono::seconds(10); // any two windows are "close": stop at the first check
  R.profile(rt::make_array(In), O);
  EXPECT_EQ(count(R.getProfileEvents(), Kind::ModelExecuteBegin), 6u);
  // Threshold 0 or period 0: no early stop.
  O.Repeat = 8;
  O.StopThreshold = std::chrono::microseconds(0);
  R.profile(rt::make_array(In), O);
  EXPECT_EQ(count(R.getProfileEvents(), Kind::ModelExecuteBegin), 8u);
  O.StopThreshold = std::chrono::seconds(10);
  O.CheckPeriod = 0;
  R.profile(rt::make_array(In), O);
  EXPECT_EQ(count(R.getProfileEvents(), Kind::ModelExecuteBegin), 8u);
  // A threshold nothing meets (1 ns apart is the best two medians can do... 0 would disable): a
  // real model's medians differ, so with period 1 and threshold 1 us on a slow chain most runs go.
}

TEST(Profile, StopFlagStopsBetweenRuns) {
  rt::Model M = loadDigits(rt::SchedulerType::Sequential, 1);
  rt::InferRequest R = M.createRequest();
  const std::vector<rt::Tensor> In = digitInputs();
  auto Stop = std::make_shared<std::atomic_bool>(false);
  std::atomic<int> Runs{0};
  R.addCallback([&](rt::InferStatus, std::exception_ptr) {
    if (++Runs == 5)
      Stop->store(true);
  });
  R.profile(rt::make_array(In), opts(1000, /*WarmUp=*/2), Stop);
  EXPECT_EQ(Runs.load(), 5);
  EXPECT_EQ(count(R.getProfileEvents(), Kind::ModelExecuteBegin), 3u);
  // Already set: nothing runs, profile() returns normally with no events.
  R.profile(rt::make_array(In), opts(10, 10), Stop);
  EXPECT_EQ(Runs.load(), 5);
  EXPECT_TRUE(R.getProfileEvents().empty());
}

TEST(Profile, WarmUpTimeCapsTheWarmUp) {
  rt::Model M = loadBytes(slowChainModel(20, 128));
  rt::InferRequest R = M.createRequest();
  rt::TypedTensor<float> X = rt::tensor<float>({128, 128});
  X.fill(1.0f);
  std::atomic<int> Runs{0};
  R.addCallback([&](rt::InferStatus, std::exception_ptr) { ++Runs; });
  rt::ProfileOptions O = opts(2, /*WarmUp=*/1000000);
  O.WarmUpTime = std::chrono::milliseconds(30);
  const auto T0 = std::chrono::steady_clock::now();
  R.profile(rt::make_array(std::vector<rt::Tensor>{X}), O);
  const double Seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - T0).count();
  EXPECT_LT(Seconds, 10.0);
  EXPECT_GE(Runs.load(), 3); // at least one warm-up run, plus the 2 measured ones
  EXPECT_LT(Runs.load(), 1000000);
  EXPECT_EQ(count(R.getProfileEvents(), Kind::ModelExecuteBegin), 2u);
}

TEST(Profile, SmallBufferDropsAndReports) {
  rt::Model M = loadDigits(rt::SchedulerType::Pipeline, 2);
  rt::InferRequest R = M.createRequest();
  const std::vector<rt::Tensor> In = digitInputs();
  rt::ProfileOptions O = opts(5);
  O.EventBufferSize = 10;
  R.profile(rt::make_array(In), O);
  EXPECT_EQ(R.getProfileEvents().size(), 10u);
  EXPECT_GT(R.getDroppedProfileEvents(), 0u);
  // Summaries of a truncated profile ignore what they cannot pair.
  EXPECT_NO_THROW(R.getProfileDurations());
  EXPECT_NO_THROW(R.getLayerDurations());
  EXPECT_EQ(R.getOutput(0).getShape(), rt::TensorShape({1, 10}));
}

TEST(Profile, RecorderTakesConcurrentAppends) {
  const int Threads = 8, PerThread = 20000;
  for (size_t Capacity : {size_t(Threads * PerThread), size_t(50000)}) {
    rt::ProfileEventRecorder Rec(Capacity);
    std::vector<std::thread> Pool;
    for (int T = 0; T < Threads; ++T)
      Pool.emplace_back([&Rec, T] {
        for (int I = 0; I < PerThread; ++I)
          Rec.record(rt::ProfileEventKind::CopyBegin, T, I);
      });
    for (auto &Th : Pool)
      Th.join();
    const size_t Total = static_cast<size_t>(Threads) * PerThread;
    EXPECT_EQ(Rec.size(), std::min(Capacity, Total));
    EXPECT_EQ(Rec.dropped(), Total - Rec.size());
    // Every stored event is intact, and from one thread they keep their order.
    std::map<int32_t, int32_t> LastSeen;
    std::set<std::pair<int32_t, int32_t>> Seen;
    for (const rt::ProfileEvent &E : Rec.events()) {
      ASSERT_EQ(E.Kind, rt::ProfileEventKind::CopyBegin);
      ASSERT_TRUE(E.Operation >= 0 && E.Operation < Threads);
      auto It = LastSeen.find(E.Operation);
      if (It != LastSeen.end()) {
        EXPECT_GT(E.TensorID, It->second);
      }
      LastSeen[E.Operation] = E.TensorID;
      Seen.insert({E.Operation, E.TensorID});
    }
    EXPECT_EQ(Seen.size(), Rec.size());
    Rec.clear();
    EXPECT_EQ(Rec.size(), 0u);
    EXPECT_EQ(Rec.dropped(), 0u);
  }
}

TEST(Profile, SetRecorderIsANoOpWhenOneIsSet) {
  rt::Model M = loadDigits(rt::SchedulerType::Exclusive, 1);
  rt::InferRequest R = M.createRequest();
  const std::vector<rt::Tensor> In = digitInputs();
  auto First = std::make_shared<rt::ProfileEventRecorder>(1024 * 1024);
  auto Second = std::make_shared<rt::ProfileEventRecorder>(1024);
  R.setRecorder(First);
  R.setRecorder(Second);
  R.profile(rt::make_array(In), opts(2));
  EXPECT_GT(First->size(), 0u);
  EXPECT_EQ(Second->size(), 0u);
  EXPECT_EQ(R.getProfileEvents().size(), First->size());
  EXPECT_EQ(R.getProfileEvents().data(), First->events().data());
  // A later profile appends to the same recorder; getProfileEvents() is that profile's part.
  const size_t Before = First->size();
  R.profile(rt::make_array(In), opts(1));
  EXPECT_GT(First->size(), Before);
  EXPECT_EQ(R.getProfileEvents().size(), First->size() - Before);
  EXPECT_EQ(count(R.getProfileEvents(), Kind::ModelExecuteBegin), 1u);
  // Plain infer() records nothing.
  const size_t AfterProfile = First->size();
  R.infer(rt::make_array(In));
  R.wait();
  EXPECT_EQ(First->size(), AfterProfile);
}

TEST(Profile, HalfPrecisionConversionsAreCopyEvents) {
  // MatMul has float32 kernels only: a float16 MatMul runs through the half adapter, which
  // converts both inputs and the output.
  OnnxBuilder B;
  B.input("x", onnx::TensorProto_DataType_FLOAT16, {8, 8});
  B.node("MatMul", {"x", "x"}, {"y"}, "square");
  B.output("y", onnx::TensorProto_DataType_FLOAT16);
  rt::Model M = loadBytes(B.bytes());
  rt::InferRequest R = M.createRequest();
  rt::Tensor X = rt::tensor(rt::ElementType::F16, rt::TensorShape({8, 8}));
  R.profile(rt::make_array(std::vector<rt::Tensor>{X}), opts(3));
  rt::ArrayRef<rt::ProfileEvent> Ev = R.getProfileEvents();
  EXPECT_EQ(count(Ev, Kind::CopyBegin), 3u * 3u);
  EXPECT_EQ(checkNesting(Ev), "");
  for (const rt::ProfileEvent &E : Ev)
    if (E.Kind == Kind::CopyBegin) {
      ASSERT_GE(E.TensorID, 0);
      EXPECT_EQ(E.Operation, 0);
      EXPECT_EQ(E.SourceDevice, E.DestDevice);
    }
  const rt::ProfileDurations D = R.getProfileDurations();
  ASSERT_EQ(D.CopyDurations.count("x"), 1u);
  ASSERT_EQ(D.CopyDurations.count("y"), 1u);
  EXPECT_EQ(D.CopyDurations.at("x").size(), 6u); // two inputs are "x", three runs
  EXPECT_EQ(D.CopyDurations.at("y").size(), 3u);
}

TEST(Profile, FailingRunSurfacesItsErrorAndStopsRecording) {
  rt::Model M = loadDigits(rt::SchedulerType::Sequential, 1);
  rt::InferRequest R = M.createRequest();
  rt::Tensor Wrong = rt::tensor(rt::ElementType::F32, rt::TensorShape({1, 1, 4, 4}));
  EXPECT_THROW(R.profile(rt::make_array(std::vector<rt::Tensor>{Wrong}), opts(2)), rt::ShapeError);
  const std::vector<rt::Tensor> In = digitInputs();
  R.profile(rt::make_array(In), opts(1));
  EXPECT_EQ(count(R.getProfileEvents(), Kind::ModelExecuteBegin), 1u);
}

TEST(Profile, DurationsPairBeginAndEndEvents) {
  const auto T0 = std::chrono::high_resolution_clock::now();
  auto Ev = [&](Kind K, int Ns, uint32_t Thread, int32_t Op = -1, int32_t Tensor = -1) {
    rt::ProfileEvent E;
    E.Kind = K;
    E.TimeStamp = T0 + std::chrono::nanoseconds(Ns);
    E.ThreadID = Thread;
    E.Operation = Op;
    E.TensorID = Tensor;
    return E;
  };
  // Runs end on another thread than they began (Pipeline); layers of two threads interleave.
  const std::vector<rt::ProfileEvent> Events{
      Ev(Kind::ModelExecuteBegin, 0, 1),     Ev(Kind::LayerExecuteBegin, 10, 1, 0),
      Ev(Kind::LayerExecuteBegin, 15, 2, 1), Ev(Kind::CopyBegin, 16, 2, 1, 1),
      Ev(Kind::CopyEnd, 20, 2, 1, 1),        Ev(Kind::LayerExecuteEnd, 30, 1, 0),
      Ev(Kind::LayerExecuteEnd, 45, 2, 1),   Ev(Kind::ModelExecuteEnd, 50, 2),
      Ev(Kind::LayerExecuteEnd, 60, 3, 7),   Ev(Kind::ModelExecuteBegin, 100, 2),
      Ev(Kind::LayerExecuteBegin, 110, 2, 0), Ev(Kind::LayerExecuteEnd, 150, 2, 0),
      Ev(Kind::ModelExecuteEnd, 170, 1)};
  std::vector<rt::OpInfo> Ops(2);
  Ops[0].Name = "conv";
  Ops[0].Type = "Conv";
  Ops[1].Type = "Relu"; // unnamed: "Relu#1"
  std::vector<rt::TensorInfo> Tensors(2);
  Tensors[0].Name = "x";
  Tensors[1].Name = "h";
  const rt::ProfileDurations D = rt::computeProfileDurations(Events, Ops, Tensors);
  EXPECT_EQ(D.ModelDurations, (std::vector<int64_t>{50, 70}));
  ASSERT_EQ(D.LayerDurations.size(), 2u); // the stray end of op 7 is ignored
  EXPECT_EQ(D.LayerDurations.at("conv"), (std::vector<int64_t>{20, 40}));
  EXPECT_EQ(D.LayerDurations.at("Relu#1"), (std::vector<int64_t>{30}));
  EXPECT_EQ(D.CopyDurations.at("h"), (std::vector<int64_t>{4}));
  const std::vector<rt::LayerDuration> L = rt::summarizeLayerDurations(Events, Ops);
  ASSERT_EQ(L.size(), 2u);
  EXPECT_EQ(L[0].Name, "conv");
  EXPECT_EQ(L[0].Type, "Conv");
  EXPECT_EQ(L[0].Count, 2u);
  EXPECT_EQ(L[0].TotalNs, 60);
  EXPECT_EQ(L[0].MinNs, 20);
  EXPECT_EQ(L[0].MaxNs, 40);
  EXPECT_DOUBLE_EQ(L[0].MeanNs, 30.0);
  EXPECT_EQ(L[1].Name, "Relu#1");
  EXPECT_EQ(L[1].Operation, 1);
}
