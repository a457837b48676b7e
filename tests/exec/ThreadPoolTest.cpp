// Tests of the runtime thread pool: parallelFor coverage, static split, work stealing, deadlock
// freedom of nested fan-outs, task order, idle CPU use, denormal flags and core pinning.
#include "exec/ThreadPool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <iostream>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <pthread.h>
#include <sched.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

using optimium::runtime::detail::PoolConfig;
using optimium::runtime::detail::ThreadPool;
using namespace std::chrono_literals;

namespace {

PoolConfig makeConfig(int Threads, bool Steal = true, int Spin = 1000) {
  PoolConfig C;
  C.Threads = Threads;
  C.EnableWorkStealing = Steal;
  C.SpinIterations = Spin;
  return C;
}

/// Runs Body on its own thread; false if it did not finish within Limit. A body that hangs is
/// left behind (detached) so that the test fails instead of blocking the whole run.
bool finishesWithin(std::function<void()> Body, std::chrono::seconds Limit = 20s) {
  auto Done = std::make_shared<std::promise<void>>();
  std::future<void> F = Done->get_future();
  std::thread([Body = std::move(Body), Done] {
    Body();
    Done->set_value();
  }).detach();
  return F.wait_for(Limit) == std::future_status::ready;
}

/// Counts down to zero; wait() blocks until then (C++17 has no std::latch).
class Latch {
public:
  explicit Latch(int Count) : Count(Count) {}
  void countDown() {
    std::lock_guard<std::mutex> L(M);
    if (--Count <= 0)
      CV.notify_all();
  }
  bool waitFor(std::chrono::milliseconds Limit) {
    std::unique_lock<std::mutex> L(M);
    return CV.wait_for(L, Limit, [&] { return Count <= 0; });
  }

private:
  std::mutex M;
  std::condition_variable CV;
  int Count;
};

/// A gate that blocked tasks wait on (with a deadline, so a failing test cannot hang forever).
class Gate {
public:
  void open() {
    std::lock_guard<std::mutex> L(M);
    Opened = true;
    CV.notify_all();
  }
  void wait(std::chrono::seconds Limit = 30s) {
    std::unique_lock<std::mutex> L(M);
    CV.wait_for(L, Limit, [&] { return Opened; });
  }

private:
  std::mutex M;
  std::condition_variable CV;
  bool Opened = false;
};

/// Calls parallelFor and checks that every index in [0, N) is visited exactly once and that
/// ranges are at least Grain long (except the one ending at N).
void expectCoversOnce(ThreadPool &Pool, size_t N, size_t Grain, const std::string &What) {
  std::vector<std::atomic<int>> Hits(N);
  std::atomic<int> ShortRanges{0}, BadRanges{0};
  Pool.parallelFor(N, Grain, [&](size_t Begin, size_t End) {
    if (Begin >= End || End > N)
      BadRanges.fetch_add(1);
    else if (End - Begin < Grain && End != N)
      ShortRanges.fetch_add(1);
    for (size_t I = Begin; I < End && I < N; ++I)
      Hits[I].fetch_add(1, std::memory_order_relaxed);
  });
  EXPECT_EQ(BadRanges.load(), 0) << What;
  EXPECT_EQ(ShortRanges.load(), 0) << What;
  size_t Wrong = 0, FirstWrong = N;
  for (size_t I = 0; I < N; ++I)
    if (Hits[I].load() != 1 && Wrong++ == 0)
      FirstWrong = I;
  EXPECT_EQ(Wrong, 0u) << What << ": first index not visited exactly once: " << FirstWrong;
}

double processCpuMs() {
  timespec T;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &T);
  return T.tv_sec * 1e3 + T.tv_nsec / 1e6;
}

double cpuMsDuringSleep(std::chrono::milliseconds Sleep) {
  double Before = processCpuMs();
  std::this_thread::sleep_for(Sleep);
  return processCpuMs() - Before;
}

/// Gives the pool some work of both kinds, and waits until it is done.
void exercise(ThreadPool &Pool) {
  expectCoversOnce(Pool, 10000, 16, "warm-up");
  Latch L(20);
  for (int I = 0; I < 20; ++I)
    Pool.submit([&L] { L.countDown(); });
  ASSERT_TRUE(L.waitFor(10000ms));
}

std::vector<std::pair<size_t, size_t>> recordRanges(ThreadPool &Pool, size_t N, size_t Grain) {
  std::mutex M;
  std::vector<std::pair<size_t, size_t>> Ranges;
  Pool.parallelFor(N, Grain, [&](size_t Begin, size_t End) {
    std::lock_guard<std::mutex> L(M);
    Ranges.emplace_back(Begin, End);
  });
  std::sort(Ranges.begin(), Ranges.end());
  return Ranges;
}

} // namespace

TEST(ThreadPoolTest, ParallelForCoversEveryIndexOnce) {
  const size_t Sizes[] = {0, 1, 2, 7, 1000, 100003};
  const size_t Grains[] = {0, 1, 3, 64, 5000};
  for (int Threads = 1; Threads <= 4; ++Threads)
    for (bool Steal : {true, false})
      for (int Spin : {1000, 0}) {
        std::string Config = "threads=" + std::to_string(Threads) +
                             " steal=" + std::to_string(Steal) + " spin=" + std::to_string(Spin);
        // Lost work would hang the caller: guard so that it fails instead.
        ASSERT_TRUE(finishesWithin([&] {
          ThreadPool Pool(makeConfig(Threads, Steal, Spin));
          EXPECT_EQ(Pool.threadCount(), Threads);
          for (size_t N : Sizes)
            for (size_t Grain : Grains)
              expectCoversOnce(Pool, N, Grain,
                               Config + " N=" + std::to_string(N) +
                                   " grain=" + std::to_string(Grain));
        })) << "parallelFor did not return: " << Config;
      }
}

TEST(ThreadPoolTest, NestedParallelFor) {
  for (bool Steal : {true, false}) {
    ASSERT_TRUE(finishesWithin([Steal] {
      ThreadPool Pool(makeConfig(3, Steal));
      const size_t Outer = 8, Inner = 300;
      std::vector<std::atomic<int>> Hits(Outer * Inner);
      Pool.parallelFor(Outer, 1, [&](size_t B, size_t E) {
        for (size_t O = B; O < E; ++O)
          Pool.parallelFor(Inner, 3, [&](size_t IB, size_t IE) {
            for (size_t I = IB; I < IE; ++I)
              Hits[O * Inner + I].fetch_add(1);
          });
      });
      for (size_t I = 0; I < Hits.size(); ++I)
        ASSERT_EQ(Hits[I].load(), 1) << "index " << I << " steal=" << Steal;
    })) << "nested parallelFor deadlocked (steal=" << Steal << ")";
  }
}

TEST(ThreadPoolTest, ConcurrentParallelForFromExternalThreads) {
  for (bool Steal : {true, false}) {
    ASSERT_TRUE(finishesWithin([Steal] {
      ThreadPool Pool(makeConfig(3, Steal));
      std::vector<std::thread> Callers;
      for (int T = 0; T < 4; ++T)
        Callers.emplace_back([&Pool, T] {
          for (int Iter = 0; Iter < 30; ++Iter)
            expectCoversOnce(Pool, 3000 + 17 * T + Iter, 1 + Iter % 5, "concurrent caller");
        });
      for (std::thread &C : Callers)
        C.join();
    })) << "concurrent parallelFor deadlocked (steal=" << Steal << ")";
  }
}

// A fan-out from a task while every other worker is busy: the caller must do it alone.
TEST(ThreadPoolTest, ParallelForInsideTaskWhileWorkersBusyDoesNotDeadlock) {
  for (int Threads : {2, 3})
    for (bool Steal : {true, false}) {
      ASSERT_TRUE(finishesWithin([Threads, Steal] {
        ThreadPool Pool(makeConfig(Threads, Steal));
        Gate Release;
        Latch Started(Threads - 1);
        for (int I = 0; I < Threads - 1; ++I)
          Pool.submit([&] {
            Started.countDown();
            Release.wait();
          });
        ASSERT_TRUE(Started.waitFor(10000ms));
        std::promise<bool> Result;
        Pool.submit([&] {
          std::vector<std::atomic<int>> Hits(1000);
          Pool.parallelFor(1000, 1, [&](size_t B, size_t E) {
            for (size_t I = B; I < E; ++I) {
              Hits[I].fetch_add(1);
              if (I % 250 == 0) // A nested fan-out too, with nobody free to help.
                Pool.parallelFor(10, 1, [](size_t, size_t) {});
            }
          });
          bool Ok = std::all_of(Hits.begin(), Hits.end(), [](auto &H) { return H.load() == 1; });
          Result.set_value(Ok);
        });
        auto F = Result.get_future();
        bool Finished = F.wait_for(15s) == std::future_status::ready;
        Release.open();
        ASSERT_TRUE(Finished) << "fan-out from a task did not finish";
        EXPECT_TRUE(F.get()) << "fan-out from a task missed or repeated an index";
      })) << "threads=" << Threads << " steal=" << Steal;
    }
}

TEST(ThreadPoolTest, StaticSplitIsDeterministicWithoutStealing) {
  ASSERT_TRUE(finishesWithin([] {
    ThreadPool Pool(makeConfig(4, /*Steal=*/false));
    const size_t N = 1000, Grain = 7; // 143 items over 4 chunks.
    auto First = recordRanges(Pool, N, Grain);
    ASSERT_EQ(First.size(), 4u) << "one range per chunk";
    EXPECT_EQ(First.front().first, 0u);
    EXPECT_EQ(First.back().second, N);
    for (size_t I = 1; I < First.size(); ++I) {
      EXPECT_EQ(First[I].first, First[I - 1].second) << "chunks must tile [0, N)";
      EXPECT_EQ(First[I].first % Grain, 0u) << "chunk boundaries fall on items";
    }
    for (int Run = 0; Run < 20; ++Run)
      ASSERT_EQ(recordRanges(Pool, N, Grain), First) << "run " << Run;

    // Owners that never show up (3 of 4 workers blocked): same chunks, run by the caller.
    Gate Release;
    Latch Started(3);
    for (int I = 0; I < 3; ++I)
      Pool.submit([&] {
        Started.countDown();
        Release.wait();
      });
    ASSERT_TRUE(Started.waitFor(10000ms));
    auto WhileBusy = recordRanges(Pool, N, Grain);
    Release.open();
    EXPECT_EQ(WhileBusy, First);
  }));
}

TEST(ThreadPoolTest, WorkStealingTakesItemsBehindASlowOne) {
  ASSERT_TRUE(finishesWithin([] {
    ThreadPool Pool(makeConfig(2, /*Steal=*/true));
    const size_t N = 64; // Two chunks: [0, 32) for the caller, [32, 64) for the worker.
    std::vector<std::thread::id> Ran(N);
    std::atomic<size_t> OthersDone{0};
    bool OthersDoneWhileSlow = false;
    Pool.parallelFor(N, 1, [&](size_t B, size_t E) {
      for (size_t I = B; I < E; ++I) {
        Ran[I] = std::this_thread::get_id();
        if (I == 0) {
          // The slow item: at least 50 ms, and until every other item is done (bounded), which
          // only happens if someone takes the rest of chunk 0 from behind it.
          std::this_thread::sleep_for(50ms);
          auto Deadline = std::chrono::steady_clock::now() + 5s;
          while (OthersDone.load() != N - 1 && std::chrono::steady_clock::now() < Deadline)
            std::this_thread::sleep_for(1ms);
          OthersDoneWhileSlow = OthersDone.load() == N - 1;
        } else {
          std::this_thread::sleep_for(1ms);
          OthersDone.fetch_add(1);
        }
      }
    });
    EXPECT_TRUE(OthersDoneWhileSlow) << "items queued behind the slow one waited for it";
    std::set<std::thread::id> Threads(Ran.begin(), Ran.end());
    EXPECT_GE(Threads.size(), 2u) << "only one thread participated";
    size_t StolenFromChunk0 = 0;
    for (size_t I = 1; I < N / 2; ++I)
      StolenFromChunk0 += Ran[I] != Ran[0];
    EXPECT_GT(StolenFromChunk0, 0u);
    std::cout << "[ info ] items of the slow chunk run by another thread: " << StolenFromChunk0
              << " of " << N / 2 - 1 << "\n";
  }));
}

TEST(ThreadPoolTest, ParallelForRethrowsAndPoolStaysUsable) {
  ThreadPool Pool(makeConfig(2));
  EXPECT_THROW(Pool.parallelFor(100, 1,
                                [](size_t B, size_t E) {
                                  for (size_t I = B; I < E; ++I)
                                    if (I == 57)
                                      throw std::runtime_error("item 57");
                                }),
               std::runtime_error);
  expectCoversOnce(Pool, 1000, 1, "after an exception");
}

TEST(ThreadPoolTest, SubmitIsFifoWithOneThread) {
  std::vector<int> Order;
  {
    ThreadPool Pool(makeConfig(1));
    for (int I = 0; I < 200; ++I)
      Pool.submit([&Order, I] { Order.push_back(I); });
  } // The destructor runs everything queued; join orders the writes before the reads.
  ASSERT_EQ(Order.size(), 200u);
  for (int I = 0; I < 200; ++I)
    ASSERT_EQ(Order[I], I);
}

TEST(ThreadPoolTest, DestructorRunsQueuedTasks) {
  std::atomic<int> Count{0};
  {
    ThreadPool Pool(makeConfig(2, true, 0));
    for (int I = 0; I < 2; ++I)
      Pool.submit([] { std::this_thread::sleep_for(20ms); });
    for (int I = 0; I < 500; ++I)
      Pool.submit([&Count] { Count.fetch_add(1); });
  }
  EXPECT_EQ(Count.load(), 500);
}

TEST(ThreadPoolTest, ThrowingTaskDoesNotKillWorker) {
  std::atomic<bool> Ran{false};
  {
    ThreadPool Pool(makeConfig(1));
    Pool.submit([] { throw std::runtime_error("task failure"); });
    Pool.submit([&Ran] { Ran = true; });
  }
  EXPECT_TRUE(Ran.load());
}

TEST(ThreadPoolTest, IsWorkerThread) {
  ThreadPool A(makeConfig(1)), B(makeConfig(1));
  EXPECT_FALSE(A.isWorkerThread());
  std::promise<std::pair<bool, bool>> P;
  A.submit([&] { P.set_value({A.isWorkerThread(), B.isWorkerThread()}); });
  auto R = P.get_future().get();
  EXPECT_TRUE(R.first);
  EXPECT_FALSE(R.second);
}

TEST(ThreadPoolTest, IdlePoolUsesNoCpu) {
  {
    PoolConfig C = makeConfig(2, true, 1000);
    ThreadPool Pool(C);
    exercise(Pool);
    std::this_thread::sleep_for(100ms); // Let the spin budget run out.
    double Ms = cpuMsDuringSleep(1000ms);
    std::cout << "[ info ] idle pool, 2 threads, SpinIterations=1000: " << Ms
              << " ms CPU over 1 s\n";
    EXPECT_LT(Ms, 20.0);
  }
  {
    PoolConfig C = makeConfig(2, true, 1000);
    C.SpinYieldIterations = 100;
    ThreadPool Pool(C);
    exercise(Pool);
    std::this_thread::sleep_for(100ms);
    double Ms = cpuMsDuringSleep(1000ms);
    std::cout << "[ info ] idle pool, 2 threads, SpinIterations=1000 SpinYieldIterations=100: "
              << Ms << " ms CPU over 1 s\n";
    EXPECT_LT(Ms, 20.0);
  }
  {
    ThreadPool Pool(makeConfig(2, true, -1)); // Never armed: parks.
    exercise(Pool);
    std::this_thread::sleep_for(100ms);
    double Ms = cpuMsDuringSleep(1000ms);
    std::cout << "[ info ] idle pool, 2 threads, SpinIterations=-1 disarmed: " << Ms
              << " ms CPU over 1 s\n";
    EXPECT_LT(Ms, 20.0);
  }
}

TEST(ThreadPoolTest, NegativeSpinSpinsWhileArmedOnly) {
  ThreadPool Pool(makeConfig(2, true, -1));
  exercise(Pool);
  std::this_thread::sleep_for(100ms); // All parked: arm() itself must get them spinning.
  Pool.arm();
  double Armed = cpuMsDuringSleep(300ms);
  exercise(Pool); // Work while armed still runs.
  Pool.disarm();
  std::cout << "[ info ] 2 threads, SpinIterations=-1, armed and idle: " << Armed
            << " ms CPU over 300 ms\n";
  EXPECT_GT(Armed, 50.0) << "armed workers should spin";
  std::this_thread::sleep_for(100ms);
  double Disarmed = cpuMsDuringSleep(1000ms);
  std::cout << "[ info ] same pool after disarm: " << Disarmed << " ms CPU over 1 s\n";
  EXPECT_LT(Disarmed, 20.0) << "disarmed workers should park";
}

namespace {
struct FpResult {
  unsigned Csr = 0;
  float Product = 1, DenormalInput = 1;
};

FpResult probeFloatingPoint() {
  FpResult R;
#if defined(__x86_64__) || defined(__i386__)
  R.Csr = _mm_getcsr();
#endif
  volatile float A = 1e-30f, B = 1e-10f; // 1e-40 is denormal: flushed to 0 under FTZ.
  R.Product = A * B;
  volatile float D = 1e-40f, One = 1.0f; // A denormal input: read as 0 under DAZ.
  R.DenormalInput = D * One;
  return R;
}

FpResult probeOnWorker(bool DisableDenormals) {
  PoolConfig C = makeConfig(1);
  C.DisableDenormals = DisableDenormals;
  ThreadPool Pool(C);
  std::promise<FpResult> P;
  Pool.submit([&P] { P.set_value(probeFloatingPoint()); });
  return P.get_future().get();
}
} // namespace

TEST(ThreadPoolTest, WorkersFlushDenormals) {
#if !defined(__x86_64__) && !defined(__i386__) && !defined(__aarch64__)
  GTEST_SKIP() << "no denormal control on this architecture";
#endif
  FpResult On = probeOnWorker(true);
  FpResult Off = probeOnWorker(false);
#if defined(__x86_64__) || defined(__i386__)
  EXPECT_EQ(On.Csr & 0x8040u, 0x8040u) << "FTZ and DAZ set";
  EXPECT_EQ(Off.Csr & 0x8040u, 0u);
  EXPECT_EQ(On.DenormalInput, 0.0f);
#endif
  EXPECT_EQ(On.Product, 0.0f);
  EXPECT_NE(Off.Product, 0.0f);
  EXPECT_NE(Off.DenormalInput, 0.0f);
}

TEST(ThreadPoolTest, DisableAndRestoreDenormalsOnCallingThread) {
#if !defined(__x86_64__) && !defined(__i386__) && !defined(__aarch64__)
  GTEST_SKIP() << "no denormal control on this architecture";
#endif
  float Before = probeFloatingPoint().Product;
  unsigned Old = optimium::runtime::detail::disableDenormalsOnThisThread();
  float During = probeFloatingPoint().Product;
  optimium::runtime::detail::restoreDenormalsOnThisThread(Old);
  float After = probeFloatingPoint().Product;
  EXPECT_NE(Before, 0.0f);
  EXPECT_EQ(During, 0.0f);
  EXPECT_NE(After, 0.0f);
}

TEST(ThreadPoolTest, WorkersArePinnedToCores) {
  cpu_set_t Allowed;
  CPU_ZERO(&Allowed);
  ASSERT_EQ(sched_getaffinity(0, sizeof(Allowed), &Allowed), 0);
  if (CPU_COUNT(&Allowed) < 1)
    GTEST_SKIP() << "no core available";
  int Target = 0;
  while (!CPU_ISSET(Target, &Allowed)) // Core 0 normally; else the first one we may use.
    ++Target;
  PoolConfig C = makeConfig(2);
  C.Cores = {Target};
  ThreadPool Pool(C);
  for (int I = 0; I < 10; ++I) {
    std::promise<std::pair<int, bool>> P;
    Pool.submit([&P, Target] {
      cpu_set_t Mask;
      CPU_ZERO(&Mask);
      bool OnlyTarget = pthread_getaffinity_np(pthread_self(), sizeof(Mask), &Mask) == 0 &&
                        CPU_COUNT(&Mask) == 1 && CPU_ISSET(Target, &Mask);
      P.set_value({sched_getcpu(), OnlyTarget});
    });
    auto R = P.get_future().get();
    EXPECT_EQ(R.first, Target);
    EXPECT_TRUE(R.second) << "worker affinity mask is not {" << Target << "}";
  }
  std::atomic<int> Elsewhere{0};
  Pool.parallelFor(1000, 1, [&](size_t, size_t) {
    if (Pool.isWorkerThread() && sched_getcpu() != Target)
      Elsewhere.fetch_add(1);
  });
  EXPECT_EQ(Elsewhere.load(), 0);
}

TEST(ThreadPool, DeferredTasksStartAfterTheirDelayUnlessCancelled) {
  using Clock = std::chrono::steady_clock;
  PoolConfig C;
  C.Threads = 2;
  ThreadPool Pool(C);
  // Runs, and not before its delay.
  std::atomic<bool> Ran{false};
  std::atomic<int64_t> StartedAfterUs{-1};
  const auto T0 = Clock::now();
  Pool.submitDeferred(
      [&] {
        StartedAfterUs = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - T0).count();
        Ran = true;
      },
      std::chrono::microseconds(3000));
  while (!Ran)
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  EXPECT_GE(StartedAfterUs.load(), 3000);
  // Cancelled before it is due: never runs; a second cancel finds nothing.
  std::atomic<bool> Cancelled{false};
  const uint64_t T = Pool.submitDeferred([&] { Cancelled = true; }, std::chrono::seconds(5));
  EXPECT_NE(T, 0u);
  EXPECT_TRUE(Pool.cancelDeferred(T));
  EXPECT_FALSE(Pool.cancelDeferred(T));
  // Already run: cancel says so.
  std::atomic<bool> Quick{false};
  const uint64_t Q = Pool.submitDeferred([&] { Quick = true; }, std::chrono::microseconds(0));
  while (!Quick)
    std::this_thread::yield();
  EXPECT_FALSE(Pool.cancelDeferred(Q));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(Cancelled.load());
}

TEST(ThreadPool, DestroyingThePoolRunsDeferredTasksStillQueued) {
  std::atomic<bool> Ran{false};
  {
    PoolConfig C;
    C.Threads = 1;
    ThreadPool Pool(C);
    Pool.submitDeferred([&] { Ran = true; }, std::chrono::seconds(30));
  }
  EXPECT_TRUE(Ran.load());
}
