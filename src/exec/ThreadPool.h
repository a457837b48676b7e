// The runtime's thread pool: it owns every thread that runs model work. Tasks (request drivers,
// pipeline ops) and parallel-for fan-outs share the same workers. Idle workers spin a bounded
// budget, optionally yield, then park on a condition variable: an idle pool uses no CPU.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace optimium {
namespace runtime {
namespace detail {

struct PoolConfig {
  int Threads = 1;               ///< Worker threads (>= 1).
  std::vector<int> Cores;        ///< Worker i is pinned to Cores[i % size]; empty = no pinning.
  int SpinIterations = 1000;     ///< 0 park at once, N bounded spin, < 0 spin while armed.
  int SpinYieldIterations = 0;   ///< sched_yield() calls after the spin budget (SpinIterations > 0).
  bool EnableWorkStealing = true;
  bool DisableDenormals = true;  ///< FTZ/DAZ on every worker.
};

class ThreadPool;

/// What a kernel's exec context carries as its opaque pool: the pool and how many threads one
/// fan-out of this model may use (Parts <= the pool's size; 0 = the pool's size).
struct PoolSlice {
  ThreadPool *Pool = nullptr;
  int Parts = 0;
};

/// OptRtExecContext::parallel_for over a PoolSlice.
void poolSliceParallelFor(void *Slice, size_t N, size_t Grain, void (*Fn)(void *, size_t, size_t), void *User);

class ThreadPool {
public:
  explicit ThreadPool(const PoolConfig &Config);
  ~ThreadPool(); ///< shutdown()
  /// Runs queued tasks to completion, then joins the workers (idempotent; not from a worker of
  /// this pool). Afterwards parallelFor runs on the calling thread alone and submit() drops tasks.
  void shutdown();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  int threadCount() const;
  const PoolConfig &config() const;

  /// Queues a task (FIFO). Runs on a worker thread.
  void submit(std::function<void()> Task);

  /// Queues a task that workers start only once Delay has passed, unless cancelDeferred() takes it
  /// back first (a caller about to wait for it runs it itself). Returns its ticket (never 0).
  uint64_t submitDeferred(std::function<void()> Task, std::chrono::microseconds Delay);
  /// Removes a deferred task no worker has started; false when it already started (or ran).
  bool cancelDeferred(uint64_t Ticket);

  /// Calls Fn(Begin, End) on disjoint ranges covering [0, N), using the calling thread plus idle
  /// workers; returns when all ranges are done. Ranges are at least Grain long (except the last).
  /// Callable from workers (nested fan-outs and concurrent callers are fine) and outside threads.
  /// With work stealing off the split into chunks is static and deterministic. MaxParts (> 0)
  /// caps the threads taking part (a group member's ThreadCount on a larger shared pool).
  void parallelFor(size_t N, size_t Grain, const std::function<void(size_t, size_t)> &Fn, int MaxParts = 0);

  /// Arm/disarm: while armed (a request runs) a negative SpinIterations spins instead of parking.
  void arm();
  void disarm();
  /// With negative SpinIterations: spinning workers keep spinning until Until even when nothing
  /// is armed (a model group's alternation window: the next member's run finds them warm). Call it
  /// before the disarm() that ends a run. A later call replaces the deadline.
  void keepWarmUntil(std::chrono::steady_clock::time_point Until);

  /// Whether the calling thread is one of this pool's workers.
  bool isWorkerThread() const;
  /// Whether the calling thread is a worker of any pool.
  static bool isAnyWorkerThread();

private:
  struct Impl;
  std::unique_ptr<Impl> P;
};

/// Sets FTZ/DAZ on the calling thread (x86 MXCSR; FZ on AArch64 FPCR); returns the old state.
unsigned disableDenormalsOnThisThread();
void restoreDenormalsOnThisThread(unsigned OldState);

} // namespace detail
} // namespace runtime
} // namespace optimium
