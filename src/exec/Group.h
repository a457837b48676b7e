// Model groups: members share one thread pool and one Exclusive scheduler. The group admits one
// member's run at a time, in arrival order (a FIFO turn); the admitted caller runs the request on
// its own thread while the shared pool's workers join its fan-outs.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "Optimium/Runtime/InferRequest.h"
#include "Optimium/Runtime/Model.h"
#include "Optimium/Runtime/ModelGroup.h"
#include "exec/ModelState.h"

namespace optimium {
namespace runtime {

struct GroupImpl {
  explicit GroupImpl(const ModelGroupOptions &O) : Options(O) {}
  ~GroupImpl();

  ModelGroupOptions Options;

  // Membership: guarded by Mu.
  mutable std::mutex Mu;
  bool Sealed = false;
  std::vector<std::shared_ptr<ModelImpl>> Members;

  /// Set once at seal (under Mu); read-only afterwards.
  std::shared_ptr<detail::ThreadPool> Pool;
  std::shared_ptr<detail::Scheduler> Sched;

  /// Seals the group on the first call: creates the shared pool, sized to the largest member's
  /// Threads, and hands it and the scheduler to every member.
  void seal();

  // The FIFO turn: tickets handed out in arrival order; Serving is the ticket allowed to run.
  std::mutex TurnMu;
  std::condition_variable TurnCv;
  uint64_t NextTicket = 0, Serving = 0;
  uint64_t Runs = 0;        ///< run() calls admitted (guarded by TurnMu)
  uint64_t WaitedRuns = 0;  ///< of those, how many had to wait for another member (guarded by TurnMu)
  /// Waits for the turn (FIFO). CountRun: a member's run (counted in Runs / WaitedRuns), not a
  /// setter that only needs the group quiet.
  void beginTurn(bool CountRun = true);
  void endTurn();
};

struct GroupMemberImpl {
  std::shared_ptr<GroupImpl> Group; ///< a member keeps its group alive
  Model M;
  InferRequest Request;             ///< reused by every run()
  std::shared_ptr<ProfileEventRecorder> Recorder; ///< guarded by the group's turn
};

} // namespace runtime
} // namespace optimium
