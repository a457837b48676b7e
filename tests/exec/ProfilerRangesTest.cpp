// The profiler's parallel-for wrapper (exec/Profiler.h, profiledParallelFor): each thread that runs
// ranges of one parallel-for is recorded as one DeviceExecute span covering all its ranges, and
// threads beyond the wrapper's slots still have every range recorded.
#include "exec/Profiler.h"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace rt = optimium::runtime;
namespace detail = optimium::runtime::detail;
using Kind = rt::ProfileEventKind;
using TimePoint = std::chrono::high_resolution_clock::time_point;

namespace {

/// A stand-in pool: N items, one range each, dealt round-robin to Threads threads (the caller is
/// thread 0); returns when all ran. Remembers when each range ran, on which recorder thread ID.
struct FakePool {
  int Threads = 2;
  std::mutex Mu;
  std::vector<std::pair<uint32_t, std::pair<TimePoint, TimePoint>>> Ran;

  static void parallelFor(void *Self, size_t N, size_t, OptRtRangeFn Fn, void *User) {
    auto *P = static_cast<FakePool *>(Self);
    auto Work = [=](int T) {
      for (size_t I = static_cast<size_t>(T); I < N; I += static_cast<size_t>(P->Threads))
        Fn(User, I, I + 1);
    };
    std::vector<std::thread> Others;
    for (int T = 1; T < P->Threads; ++T)
      Others.emplace_back(Work, T);
    Work(0);
    for (std::thread &T : Others)
      T.join();
  }
};

struct Kernel {
  FakePool *Pool;
  static void range(void *Self, size_t, size_t) {
    auto *K = static_cast<Kernel *>(Self);
    const TimePoint B = std::chrono::high_resolution_clock::now();
    std::this_thread::sleep_for(std::chrono::microseconds(50));
    const TimePoint E = std::chrono::high_resolution_clock::now();
    std::lock_guard<std::mutex> L(K->Pool->Mu);
    K->Pool->Ran.push_back({rt::ProfileEventRecorder::currentThreadID(), {B, E}});
  }
};

/// Runs a profiled parallel-for of Items ranges on Threads threads; returns the recorded events.
std::vector<rt::ProfileEvent> profiledFanOut(int Threads, size_t Items, FakePool &Pool) {
  rt::ProfileEventRecorder Rec(1 << 12);
  Pool.Threads = Threads;
  detail::KernelProfileScope Scope;
  Scope.Recorder = &Rec;
  Scope.Operation = 7;
  Scope.Pool = &Pool;
  Scope.PoolParallelFor = &FakePool::parallelFor;
  Kernel K{&Pool};
  detail::profiledParallelFor(&Scope, Items, 1, &Kernel::range, &K);
  EXPECT_EQ(Rec.dropped(), 0u);
  return std::vector<rt::ProfileEvent>(Rec.events().begin(), Rec.events().end());
}

/// DeviceExecute begin/end pairs per thread (a thread's Begin is followed by its End before its next
/// Begin; other threads' events may come between).
std::multimap<uint32_t, std::pair<TimePoint, TimePoint>> spans(const std::vector<rt::ProfileEvent> &Ev) {
  std::multimap<uint32_t, std::pair<TimePoint, TimePoint>> Out;
  std::map<uint32_t, const rt::ProfileEvent *> Open;
  for (const rt::ProfileEvent &E : Ev) {
    EXPECT_EQ(E.Operation, 7);
    if (E.Kind == Kind::DeviceExecuteBegin) {
      EXPECT_EQ(Open.count(E.ThreadID), 0u) << "nested Begin on thread " << E.ThreadID;
      Open[E.ThreadID] = &E;
      continue;
    }
    EXPECT_EQ(E.Kind, Kind::DeviceExecuteEnd);
    auto It = Open.find(E.ThreadID);
    if (It == Open.end()) {
      ADD_FAILURE() << "an End without its Begin on thread " << E.ThreadID;
      continue;
    }
    EXPECT_LE(It->second->TimeStamp, E.TimeStamp);
    Out.insert({E.ThreadID, {It->second->TimeStamp, E.TimeStamp}});
    Open.erase(It);
  }
  EXPECT_TRUE(Open.empty()) << "a Begin without its End";
  return Out;
}

} // namespace

TEST(ProfilerRanges, OneSpanPerThreadCoversItsRanges) {
  FakePool Pool;
  const std::vector<rt::ProfileEvent> Ev = profiledFanOut(3, 60, Pool);
  ASSERT_EQ(Pool.Ran.size(), 60u);
  const auto S = spans(Ev);
  // 60 ranges on 3 threads: 3 spans (6 events), not 120 events.
  EXPECT_EQ(Ev.size(), 6u);
  std::map<uint32_t, int> RangesPerThread;
  for (const auto &R : Pool.Ran) {
    ++RangesPerThread[R.first];
    ASSERT_EQ(S.count(R.first), 1u) << "thread " << R.first;
    const auto &Span = S.find(R.first)->second;
    EXPECT_LE(Span.first, R.second.first); // the range lies inside its thread's span
    EXPECT_LE(R.second.second, Span.second);
  }
  EXPECT_EQ(RangesPerThread.size(), 3u);
  EXPECT_EQ(S.size(), 3u);
}

TEST(ProfilerRanges, ThreadsBeyondTheSlotsRecordEveryRange) {
  FakePool Pool;
  const int Threads = 20;
  const std::vector<rt::ProfileEvent> Ev = profiledFanOut(Threads, 2 * Threads, Pool);
  ASSERT_EQ(Pool.Ran.size(), 40u);
  const auto S = spans(Ev);
  std::map<uint32_t, int> RangesPerThread;
  for (const auto &R : Pool.Ran)
    ++RangesPerThread[R.first];
  ASSERT_EQ(RangesPerThread.size(), 20u);
  // Every thread is recorded: a span for each thread that got a slot, a span per range for the rest.
  size_t Coalesced = 0;
  for (const auto &KV : RangesPerThread) {
    const size_t N = S.count(KV.first);
    EXPECT_TRUE(N == 1 || N == static_cast<size_t>(KV.second)) << N;
    Coalesced += N == 1;
  }
  EXPECT_GE(Coalesced, 16u);
  for (const auto &R : Pool.Ran) {
    bool Inside = false;
    auto Range = S.equal_range(R.first);
    for (auto It = Range.first; It != Range.second; ++It)
      Inside |= It->second.first <= R.second.first && R.second.second <= It->second.second;
    EXPECT_TRUE(Inside) << "a range outside every span of its thread";
  }
}
