// Scheduler policies. Exclusive: one request at a time owns the pool, the rest wait in FIFO
// order. Sequential: every request runs as soon as a worker is free, ops in order, sharing the
// pool for intra-op work. Pipeline: a request's independent ops run as separate tasks.
#include <deque>

#include "exec/Request.h"

namespace optimium {
namespace runtime {
namespace detail {

namespace {

class ExclusiveScheduler : public Scheduler {
public:
  explicit ExclusiveScheduler(ThreadPool &Pool) : Pool(Pool) {}
  void enqueue(std::shared_ptr<RequestImpl> R) override {
    std::lock_guard<std::mutex> Lock(Mu);
    if (Busy) {
      Queue.push_back(std::move(R));
      return;
    }
    Busy = true;
    launch(std::move(R));
  }

private:
  void launch(std::shared_ptr<RequestImpl> R) {
    Pool.submit([this, R] {
      R->runSequential();
      std::shared_ptr<RequestImpl> Next;
      {
        std::lock_guard<std::mutex> Lock(Mu);
        if (Queue.empty()) {
          Busy = false;
          return;
        }
        Next = std::move(Queue.front());
        Queue.pop_front();
      }
      launch(std::move(Next));
    });
  }
  ThreadPool &Pool;
  std::mutex Mu;
  bool Busy = false;
  std::deque<std::shared_ptr<RequestImpl>> Queue;
};

/// How long a Sequential run waits for its caller to come and run it before a worker starts it.
constexpr std::chrono::microseconds kCallerHeadStart(20);

class SequentialScheduler : public Scheduler {
public:
  explicit SequentialScheduler(ThreadPool &Pool) : Pool(Pool) {}
  void enqueue(std::shared_ptr<RequestImpl> R) override {
    // Workers pinned to chosen cores keep every run on those cores.
    if (!R->M->Options.Cores.empty()) {
      Pool.submit([R] { R->runSequential(); });
      return;
    }
    // Workers hold off for kCallerHeadStart, so a caller that infers then waits (the usual
    // synchronous use) takes the task back and runs its request itself (runPendingHere): no
    // hand-off to a worker and back (two thread wake-ups, tens of microseconds on a VM), and the
    // caller is one of the compute threads.
    const uint64_t Ticket = Pool.submitDeferred([R] { R->runSequential(); }, kCallerHeadStart);
    std::lock_guard<std::mutex> Lock(R->Mu);
    R->PendingTicket = Ticket;
  }
  bool callerMayRun(const RequestImpl &R) const override { return R.M->Options.Cores.empty(); }

private:
  ThreadPool &Pool;
};

class GroupExclusiveScheduler : public Scheduler {
public:
  void enqueue(std::shared_ptr<RequestImpl> R) override { R->runSequential(); }
};

class PipelineScheduler : public Scheduler {
public:
  void enqueue(std::shared_ptr<RequestImpl> R) override { R->startPipeline(); }
};

} // namespace

std::unique_ptr<Scheduler> Scheduler::createGroupExclusive() { return std::make_unique<GroupExclusiveScheduler>(); }

std::unique_ptr<Scheduler> Scheduler::create(SchedulerType Type, ThreadPool &Pool) {
  switch (Type) {
  case SchedulerType::Exclusive: return std::make_unique<ExclusiveScheduler>(Pool);
  case SchedulerType::Pipeline: return std::make_unique<PipelineScheduler>();
  default: return std::make_unique<SequentialScheduler>(Pool);
  }
}

} // namespace detail
} // namespace runtime
} // namespace optimium
