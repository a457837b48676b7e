// The runtime's thread pool: FIFO tasks plus parallel-for fan-outs with per-chunk work stealing.
// Idle workers spin on an epoch counter, optionally yield, then park; an idle pool uses no CPU.
#include "exec/ThreadPool.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <exception>
#include <limits>

#include <pthread.h>
#include <sched.h>

#if defined(__x86_64__) || defined(__i386__) || defined(_M_X64)
#include <immintrin.h>
#define OPTIMIUM_POOL_X86 1
#endif

namespace optimium {
namespace runtime {
namespace detail {

namespace {

inline void cpuRelax() {
#if defined(OPTIMIUM_POOL_X86)
  _mm_pause();
#elif defined(__aarch64__) || defined(__arm__)
  asm volatile("yield" ::: "memory");
#else
  std::atomic_signal_fence(std::memory_order_seq_cst);
#endif
}

// One spin round: a look at the work counter, then about kRoundNs of pause instructions. PAUSE
// takes ~25 ns on AMD Zen 4 and ~40 ns on Intel since Skylake (a few ns before it), so a count of
// bare pauses meant a different window on every machine; rounds are calibrated once per process.
// The default 1000 rounds keep an idle worker warm ~0.5 ms: long enough to bridge the gaps between
// one request's fan-outs and a caller's next request (on a 2-vCPU VM a worker that parked in every
// gap left its vCPU halted, and each fan-out paid the host's wake-up: MobileNetV3-Small at 2 threads
// 2.0-2.9 ms instead of 1.6-1.7), short enough that an idle model stops spinning at once.
constexpr double kRoundNs = 500.0;

int pausesPerRound() {
  static const int N = [] {
    double Best = 1e9;
    for (int Try = 0; Try < 3; ++Try) {
      const auto T0 = std::chrono::steady_clock::now();
      for (int I = 0; I < 256; ++I)
        cpuRelax();
      const double Ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - T0).count() / 256;
      Best = std::min(Best, Ns);
    }
    return static_cast<int>(std::max(1.0, std::min(1000.0, kRoundNs / std::max(Best, 0.1))));
  }();
  return N;
}

/// One spin round; returns early (true) as soon as Changed() holds (checked between pauses).
template <typename Pred> inline bool spinRound(Pred Changed) {
  static thread_local const int N = pausesPerRound();
  for (int I = 0; I < N; ++I) {
    if (Changed())
      return true;
    cpuRelax();
  }
  return Changed();
}

// The pool whose worker the current thread is (null on other threads).
thread_local const void *CurrentPool = nullptr;

// A chunk's unclaimed items [Front, Back) packed into one word, so that the owner (taking from the
// front) and thieves (taking from the back) can never claim the same item.
constexpr uint64_t packRange(uint64_t Front, uint64_t Back) { return (Front << 32) | Back; }
constexpr uint64_t frontOf(uint64_t S) { return S >> 32; }
constexpr uint64_t backOf(uint64_t S) { return S & 0xFFFFFFFFull; }
constexpr size_t NoItem = std::numeric_limits<size_t>::max();

struct alignas(64) Chunk {
  std::atomic<uint64_t> State{0};
  size_t Begin = 0, End = 0; // Fixed item boundaries (static split).
};

/// One parallelFor call. Shared with the workers that join it; lives until the last one leaves.
struct Job {
  const std::function<void(size_t, size_t)> *Fn = nullptr; // Valid while items remain unclaimed.
  size_t N = 0, Grain = 1, Items = 0, Parts = 0;
  bool Steal = false;
  std::atomic<size_t> NextSlot{1}; // Slot 0 is the caller's.
  std::atomic<bool> Closed{false}; // Every item claimed: nothing left for late arrivals.
  std::atomic<size_t> Done{0};     // Items finished (executed, or skipped after an error).
  std::atomic<bool> Failed{false};
  std::exception_ptr Error;        // First exception thrown by Fn; guarded by M.
  std::mutex M;
  std::condition_variable CV;      // The caller waits here for the last participant.
  std::vector<Chunk> Chunks;

  Job(size_t Count) : Chunks(Count) {}

  bool open() const {
    return !Closed.load(std::memory_order_acquire) &&
           NextSlot.load(std::memory_order_relaxed) < Parts;
  }

  // Runs items [ItemBegin, ItemEnd) as one range; returns how many items it accounted for.
  size_t runItems(size_t ItemBegin, size_t ItemEnd) {
    if (!Failed.load(std::memory_order_relaxed)) {
      try {
        (*Fn)(ItemBegin * Grain, std::min(N, ItemEnd * Grain));
      } catch (...) {
        std::lock_guard<std::mutex> L(M);
        if (!Error) Error = std::current_exception();
        Failed.store(true, std::memory_order_relaxed);
      }
    }
    return ItemEnd - ItemBegin;
  }

  size_t claimFront(size_t C) {
    std::atomic<uint64_t> &S = Chunks[C].State;
    uint64_t Cur = S.load(std::memory_order_relaxed);
    while (frontOf(Cur) < backOf(Cur))
      if (S.compare_exchange_weak(Cur, packRange(frontOf(Cur) + 1, backOf(Cur)),
                                  std::memory_order_acq_rel, std::memory_order_relaxed))
        return frontOf(Cur);
    return NoItem;
  }

  size_t claimBack(size_t C) {
    std::atomic<uint64_t> &S = Chunks[C].State;
    uint64_t Cur = S.load(std::memory_order_relaxed);
    while (frontOf(Cur) < backOf(Cur))
      if (S.compare_exchange_weak(Cur, packRange(frontOf(Cur), backOf(Cur) - 1),
                                  std::memory_order_acq_rel, std::memory_order_relaxed))
        return backOf(Cur) - 1;
    return NoItem;
  }

  /// Does the work of participant Slot. Returns after every item is claimed (by someone).
  void participate(size_t Slot, bool IsCaller) {
    size_t Local = 0;
    if (!Steal) {
      // Static split: whole chunks with fixed boundaries. A finished participant also takes the
      // chunks whose owners have not shown up, so none is ever left behind.
      for (size_t C = Slot; C < Parts; C = NextSlot.fetch_add(1, std::memory_order_relaxed))
        Local += runItems(Chunks[C].Begin, Chunks[C].End);
    } else {
      for (size_t I; (I = claimFront(Slot)) != NoItem;)
        Local += runItems(I, I + 1);
      // Out of own work: take items from the tails of the other chunks. Claims only shrink a
      // chunk, so one pass over the victims leaves nothing unclaimed behind.
      for (size_t K = 1; K < Parts; ++K) {
        size_t Victim = (Slot + K) % Parts;
        for (size_t I; (I = claimBack(Victim)) != NoItem;)
          Local += runItems(I, I + 1);
      }
    }
    Closed.store(true, std::memory_order_release);
    if (Local == 0)
      return;
    size_t Prev = Done.fetch_add(Local, std::memory_order_acq_rel);
    if (Prev + Local == Items && !IsCaller) {
      std::lock_guard<std::mutex> L(M);
      CV.notify_one();
    }
  }
};

} // namespace

struct ThreadPool::Impl {
  PoolConfig Config;
  std::vector<std::thread> Workers;

  std::mutex M;                  // Guards Tasks, Jobs, Stop, Parked.
  std::condition_variable Wake;  // Parked workers.
  std::deque<std::function<void()>> Tasks;
  struct DeferredTask {
    uint64_t Ticket;
    std::chrono::steady_clock::time_point Due;
    std::function<void()> Fn;
  };
  std::deque<DeferredTask> Deferred; // by due time (one delay for all: FIFO is due order)
  uint64_t NextTicket = 1;
  std::vector<std::shared_ptr<Job>> Jobs; // Fan-outs that may still take helpers.
  bool Stop = false;
  int Parked = 0;
  std::atomic<uint64_t> Epoch{0}; // Bumped (under M) whenever work appears; spinners watch it.
  std::atomic<int> Armed{0};
  // keepWarmUntil(): steady_clock ticks until which negative-spin workers spin unarmed.
  std::atomic<int64_t> WarmUntil{0};
  bool warm() const {
    if (Armed.load(std::memory_order_relaxed) > 0)
      return true;
    const int64_t Until = WarmUntil.load(std::memory_order_relaxed);
    return Until != 0 && std::chrono::steady_clock::now().time_since_epoch().count() < Until;
  }
  // Workers between going idle and parking (spinning, or about to park). At most
  // maxSpinners() spin: a caller running a request on its own thread (Sequential) is the pool's
  // other compute thread, and one more spinner would only take a core from it and from the
  // workers it fans out to. With one thread none spins: fan-outs never take a helper then, and a
  // worker spinning through every request (it wakes for each one's deferred start) burned 40% of
  // a second core beside MNIST's runs.
  std::atomic<int> Spinners{0};
  // Threads computing for the pool right now, besides spinners: workers inside a fan-out
  // (InJob) and the threads driving requests (a worker running a task, or a caller running its
  // own request: one per armed request). A spinner only takes a core nobody computes on: with 2
  // threads, a second worker that spun while the caller and the first worker ran a fan-out had 3
  // threads time-slicing 2 vCPUs (squeezenet1_1 at 2 threads: 4.3 -> 6.3 ms at a 250 us spin).
  std::atomic<int> InJob{0};
  std::atomic<int> BusyTasks{0};

  int maxSpinners() const {
    const int Drivers = std::max(Armed.load(std::memory_order_relaxed), BusyTasks.load(std::memory_order_relaxed));
    const int Free = Config.Threads - std::max(Drivers, 1) - InJob.load(std::memory_order_relaxed);
    return std::min(Free, Config.Threads - 1);
  }

  explicit Impl(const PoolConfig &C) : Config(C) {
    if (Config.Threads < 1)
      Config.Threads = 1;
  }

  // Called with M held: the oldest job that still takes participants; drops finished ones.
  std::shared_ptr<Job> takeOpenJobLocked() {
    std::shared_ptr<Job> Found;
    auto Out = Jobs.begin();
    for (auto &J : Jobs) {
      if (!J->open())
        continue;
      if (!Found)
        Found = J;
      *Out++ = std::move(J);
    }
    Jobs.erase(Out, Jobs.end());
    return Found;
  }

  // Spins/yields until the epoch moves past Seen (or Due passes, when a deferred task waits);
  // false when the budget ran out (time to park).
  bool spinForWork(uint64_t Seen, bool HasDue, std::chrono::steady_clock::time_point Due) {
    int Spin = Config.SpinIterations;
    if (Spin == 0)
      return false;
    if (Spin < 0) {
      while (warm()) {
        for (int I = 0; I < 8; ++I)
          if (spinRound([&] { return Epoch.load(std::memory_order_relaxed) != Seen; }))
            return true;
        if (HasDue && std::chrono::steady_clock::now() >= Due)
          return true; // a deferred task is due: go and take it
      }
      return Epoch.load(std::memory_order_relaxed) != Seen;
    }
    for (int I = 0; I < Spin; ++I) {
      if (Epoch.load(std::memory_order_relaxed) != Seen)
        return true;
      if (HasDue && (I & 15) == 15 && std::chrono::steady_clock::now() >= Due)
        return true;
      if (spinRound([&] { return Epoch.load(std::memory_order_relaxed) != Seen; }))
        return true;
    }
    for (int I = 0; I < Config.SpinYieldIterations; ++I) {
      if (Epoch.load(std::memory_order_relaxed) != Seen)
        return true;
      sched_yield();
    }
    return Epoch.load(std::memory_order_relaxed) != Seen;
  }

  void workerMain(int Index) {
    CurrentPool = this;
    if (!Config.Cores.empty()) {
      int Core = Config.Cores[static_cast<size_t>(Index) % Config.Cores.size()];
      if (Core >= 0 && Core < CPU_SETSIZE) {
        cpu_set_t Set;
        CPU_ZERO(&Set);
        CPU_SET(Core, &Set);
        // A failure (core offline or outside our cgroup) leaves the thread unpinned: still correct.
        (void)pthread_setaffinity_np(pthread_self(), sizeof(Set), &Set);
      }
    }
    if (Config.DisableDenormals)
      disableDenormalsOnThisThread();

    std::unique_lock<std::mutex> L(M);
    for (;;) {
      if (std::shared_ptr<Job> J = takeOpenJobLocked()) {
        L.unlock();
        size_t Slot = J->NextSlot.fetch_add(1, std::memory_order_relaxed);
        if (Slot < J->Parts) {
          InJob.fetch_add(1, std::memory_order_relaxed);
          J->participate(Slot, /*IsCaller=*/false);
          InJob.fetch_sub(1, std::memory_order_relaxed);
        }
        J.reset();
        L.lock();
        continue;
      }
      if (!Tasks.empty()) {
        std::function<void()> Task = std::move(Tasks.front());
        Tasks.pop_front();
        L.unlock();
        BusyTasks.fetch_add(1, std::memory_order_relaxed);
        try {
          Task();
        } catch (...) {
          // Tasks are expected not to throw; swallowing keeps the worker alive.
        }
        BusyTasks.fetch_sub(1, std::memory_order_relaxed);
        Task = nullptr; // Destroy captures outside the lock.
        L.lock();
        continue;
      }
      if (!Deferred.empty() && (Stop || std::chrono::steady_clock::now() >= Deferred.front().Due)) {
        Tasks.push_back(std::move(Deferred.front().Fn)); // due: an ordinary task now
        Deferred.pop_front();
        continue;
      }
      if (Stop)
        return;
      uint64_t Seen = Epoch.load(std::memory_order_relaxed);
      const bool HasDue = !Deferred.empty();
      const auto Due = HasDue ? Deferred.front().Due : std::chrono::steady_clock::time_point();
      L.unlock();
      bool Moved = false;
      if (Spinners.fetch_add(1, std::memory_order_relaxed) < maxSpinners())
        Moved = spinForWork(Seen, HasDue, Due);
      Spinners.fetch_sub(1, std::memory_order_relaxed);
      L.lock();
      if (Moved)
        continue;
      ++Parked;
      // The predicate makes spurious wakeups harmless; an armed pool with negative spin wakes
      // its workers so they spin through the request, as many as may spin (the others would
      // wake, find no spinner slot and come back here at once, round and round under M). A
      // waiting deferred task bounds the sleep.
      const auto Pred = [&] {
        return Stop || Epoch.load(std::memory_order_relaxed) != Seen ||
               (Config.SpinIterations < 0 && Armed.load(std::memory_order_relaxed) > 0 &&
                Spinners.load(std::memory_order_relaxed) < maxSpinners());
      };
      if (Deferred.empty()) {
        Wake.wait(L, Pred);
      } else {
        // A copy: wait_until re-reads its deadline after each wakeup, when another worker may
        // have popped (freed) the front task (found by the ASan run of the Python tests).
        const auto WakeBy = Deferred.front().Due;
        Wake.wait_until(L, WakeBy, Pred);
      }
      --Parked;
    }
  }
};

ThreadPool::ThreadPool(const PoolConfig &Config) : P(new Impl(Config)) {
  P->Workers.reserve(static_cast<size_t>(P->Config.Threads));
  for (int I = 0; I < P->Config.Threads; ++I)
    P->Workers.emplace_back([this, I] { P->workerMain(I); });
}

ThreadPool::~ThreadPool() { shutdown(); }

void ThreadPool::shutdown() {
  {
    std::lock_guard<std::mutex> L(P->M);
    P->Stop = true;
    P->Epoch.fetch_add(1, std::memory_order_relaxed);
  }
  P->Wake.notify_all();
  for (std::thread &T : P->Workers)
    if (T.joinable())
      T.join();
}

int ThreadPool::threadCount() const { return P->Config.Threads; }

const PoolConfig &ThreadPool::config() const { return P->Config; }

void ThreadPool::submit(std::function<void()> Task) {
  bool Notify;
  {
    std::lock_guard<std::mutex> L(P->M);
    // Shutting down: only the pool's own tasks may still queue work (a worker drains it).
    if (P->Stop && CurrentPool != P.get())
      return;
    P->Tasks.push_back(std::move(Task));
    P->Epoch.fetch_add(1, std::memory_order_relaxed);
    Notify = P->Parked > 0;
  }
  if (Notify)
    P->Wake.notify_one();
}

uint64_t ThreadPool::submitDeferred(std::function<void()> Task, std::chrono::microseconds Delay) {
  uint64_t Ticket;
  bool Notify;
  {
    std::lock_guard<std::mutex> L(P->M);
    Ticket = P->NextTicket++;
    P->Deferred.push_back({Ticket, std::chrono::steady_clock::now() + Delay, std::move(Task)});
    // Spinning workers learn the due time on their next round; a parked one sleeps until it.
    // With a spinner about, waking a parked worker only to have it sleep until the due time
    // costs two wake-ups (an IPI to an idle vCPU each) per request for nothing.
    P->Epoch.fetch_add(1, std::memory_order_relaxed);
    Notify = P->Parked > 0 && P->Spinners.load(std::memory_order_relaxed) == 0;
  }
  if (Notify)
    P->Wake.notify_one();
  return Ticket;
}

bool ThreadPool::cancelDeferred(uint64_t Ticket) {
  std::function<void()> Dropped; // destroyed outside the lock
  {
    std::lock_guard<std::mutex> L(P->M);
    for (auto It = P->Deferred.begin(); It != P->Deferred.end(); ++It)
      if (It->Ticket == Ticket) {
        Dropped = std::move(It->Fn);
        P->Deferred.erase(It);
        return true;
      }
  }
  return false;
}

void ThreadPool::parallelFor(size_t N, size_t Grain,
                             const std::function<void(size_t, size_t)> &Fn, int MaxParts) {
  if (N == 0)
    return;
  Grain = std::max<size_t>(Grain, 1);
  constexpr size_t MaxItems = 0xFFFFFFFFull; // Item indices must fit half of a packed word.
  if ((N - 1) / Grain + 1 > MaxItems)
    Grain = (N - 1) / MaxItems + 1;
  size_t Items = (N - 1) / Grain + 1;
  const size_t Threads = MaxParts > 0 ? std::min<size_t>(static_cast<size_t>(MaxParts),
                                                          static_cast<size_t>(P->Config.Threads))
                                       : static_cast<size_t>(P->Config.Threads);
  size_t Parts = std::min(Threads, Items);
  if (Parts <= 1) {
    Fn(0, N);
    return;
  }

  auto J = std::make_shared<Job>(Parts);
  J->Fn = &Fn;
  J->N = N;
  J->Grain = Grain;
  J->Items = Items;
  J->Parts = Parts;
  // With no more items than workers each chunk is one item: keep that split as it is.
  J->Steal = P->Config.EnableWorkStealing && Items > Threads;
  for (size_t C = 0; C < Parts; ++C) {
    Chunk &Ch = J->Chunks[C];
    Ch.Begin = C * Items / Parts;
    Ch.End = (C + 1) * Items / Parts;
    Ch.State.store(packRange(Ch.Begin, Ch.End), std::memory_order_relaxed);
  }

  size_t ToWake;
  {
    std::lock_guard<std::mutex> L(P->M);
    P->takeOpenJobLocked(); // Prune finished fan-outs.
    P->Jobs.push_back(J);
    P->Epoch.fetch_add(1, std::memory_order_relaxed);
    // Spinning workers join without a wake-up; wake parked ones only for the parts left over.
    const size_t Spinning = static_cast<size_t>(std::max(0, P->Spinners.load(std::memory_order_relaxed)));
    ToWake = Parts - 1 > Spinning ? std::min(Parts - 1 - Spinning, static_cast<size_t>(P->Parked)) : 0;
  }
  if (ToWake >= static_cast<size_t>(P->Config.Threads))
    P->Wake.notify_all();
  else
    for (size_t I = 0; I < ToWake; ++I)
      P->Wake.notify_one();

  // The caller always participates and takes whatever nobody claimed, so it never waits for a
  // worker that is busy elsewhere: only for items already running.
  J->participate(0, /*IsCaller=*/true);

  if (J->Done.load(std::memory_order_acquire) != Items) {
    // Wait for items still running elsewhere: spin a while (longer when armed), then block.
    int Spin = P->Config.SpinIterations;
    bool Armed = P->Armed.load(std::memory_order_relaxed) > 0;
    // Rounds are ~0.5 us (spinRound); armed with negative spin: up to ~2.5 ms.
    int Budget = Spin > 0 ? Spin : (Spin < 0 && Armed ? 5000 : 0);
    for (int I = 0; I < Budget; ++I)
      if (spinRound([&] { return J->Done.load(std::memory_order_acquire) == Items; }))
        break;
    std::unique_lock<std::mutex> L(J->M);
    J->CV.wait(L, [&] { return J->Done.load(std::memory_order_acquire) == Items; });
  }
  std::exception_ptr Error;
  {
    std::lock_guard<std::mutex> L(J->M);
    Error = J->Error;
  }
  if (Error)
    std::rethrow_exception(Error);
}

void ThreadPool::arm() {
  if (P->Armed.fetch_add(1, std::memory_order_relaxed) == 0 && P->Config.SpinIterations < 0) {
    // Wake parked workers so they spin through the request. Taking M orders this with a worker
    // that is about to park (it checks Armed in its wait predicate under M).
    std::lock_guard<std::mutex> L(P->M);
    if (P->Parked > 0)
      P->Wake.notify_all();
  }
}

void ThreadPool::disarm() { P->Armed.fetch_sub(1, std::memory_order_relaxed); }

void ThreadPool::keepWarmUntil(std::chrono::steady_clock::time_point Until) {
  P->WarmUntil.store(Until.time_since_epoch().count(), std::memory_order_relaxed);
}

void poolSliceParallelFor(void *Slice, size_t N, size_t Grain, void (*Fn)(void *, size_t, size_t), void *User) {
  const PoolSlice &S = *static_cast<const PoolSlice *>(Slice);
  S.Pool->parallelFor(N, Grain, [Fn, User](size_t B, size_t E) { Fn(User, B, E); }, S.Parts);
}

bool ThreadPool::isWorkerThread() const { return CurrentPool == P.get(); }

bool ThreadPool::isAnyWorkerThread() { return CurrentPool != nullptr; }

unsigned disableDenormalsOnThisThread() {
#if defined(OPTIMIUM_POOL_X86)
  unsigned Old = _mm_getcsr();
  _mm_setcsr(Old | 0x8040u); // FTZ (bit 15) + DAZ (bit 6).
  return Old;
#elif defined(__aarch64__)
  uint64_t Old;
  asm volatile("mrs %0, fpcr" : "=r"(Old));
  asm volatile("msr fpcr, %0" ::"r"(Old | (uint64_t(1) << 24))); // FZ.
  return static_cast<unsigned>(Old);
#else
  return 0;
#endif
}

void restoreDenormalsOnThisThread(unsigned OldState) {
#if defined(OPTIMIUM_POOL_X86)
  _mm_setcsr(OldState);
#elif defined(__aarch64__)
  asm volatile("msr fpcr, %0" ::"r"(static_cast<uint64_t>(OldState)));
#else
  (void)OldState;
#endif
}

} // namespace detail
} // namespace runtime
} // namespace optimium
