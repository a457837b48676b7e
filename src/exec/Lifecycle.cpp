// Live models and their shutdown at finalize(); see Lifecycle.h.
#include "exec/Lifecycle.h"

#include <mutex>
#include <vector>

#include "core/Log.h"
#include "exec/Request.h"

namespace optimium {
namespace runtime {

bool ModelImpl::beginRun() {
  std::lock_guard<std::mutex> Lock(RunsMu);
  if (ShutDown.load(std::memory_order_relaxed))
    return false;
  ++RunsInFlight;
  return true;
}

void ModelImpl::endRun() {
  std::lock_guard<std::mutex> Lock(RunsMu);
  if (--RunsInFlight == 0)
    RunsCv.notify_all();
}

void ModelImpl::beginShutdown() {
  std::lock_guard<std::mutex> Lock(RunsMu);
  ShutDown.store(true);
}

void ModelImpl::finishShutdown() {
  {
    std::unique_lock<std::mutex> Lock(RunsMu);
    RunsCv.wait(Lock, [this] { return RunsInFlight == 0; });
  }
  if (Pool)
    Pool->shutdown(); // a group's pool: the first member joins it, the others find it joined
  for (auto &CN : Nodes)
    if (CN)
      CN->release();
  std::lock_guard<std::mutex> Lock(PlanMutex);
  PlanCache.clear();
}

detail::Status ModelImpl::shutDownError(const char *What) const {
  return detail::makeError(detail::ErrorCode::InvalidState, What, ": model '", Name,
                           "' was released by finalize(); initialize() the runtime and load the model again");
}

namespace detail {

namespace {

struct LiveModels {
  std::mutex Mu;
  bool Open = false;
  uint64_t Session = 0; ///< Bumped by every shutdown.
  std::vector<std::weak_ptr<ModelImpl>> Models;
};

LiveModels &live() {
  static auto *L = new LiveModels(); // leaked: models may outlive static destructors
  return *L;
}

} // namespace

void openRuntime() {
  LiveModels &L = live();
  std::lock_guard<std::mutex> Lock(L.Mu);
  L.Open = true;
}

Result<uint64_t> beginModelLoad() {
  LiveModels &L = live();
  std::lock_guard<std::mutex> Lock(L.Mu);
  if (!L.Open)
    return makeError(ErrorCode::InvalidState, "the runtime is not initialized; call rt::initialize() first");
  return L.Session;
}

Status trackLiveModel(const std::shared_ptr<ModelImpl> &M, uint64_t Session) {
  LiveModels &L = live();
  std::lock_guard<std::mutex> Lock(L.Mu);
  if (!L.Open || L.Session != Session)
    return makeError(ErrorCode::InvalidState, "model '", M->Name,
                     "': the runtime was finalized while it was loading; initialize() and load it again");
  // Forget models that are gone (amortized: the list is pruned whenever it doubles).
  if (L.Models.size() >= 64 && (L.Models.size() & (L.Models.size() - 1)) == 0) {
    std::vector<std::weak_ptr<ModelImpl>> Kept;
    for (auto &W : L.Models)
      if (!W.expired())
        Kept.push_back(std::move(W));
    L.Models.swap(Kept);
  }
  L.Models.push_back(M);
  return Status::ok();
}

void shutDownLiveModels() {
  std::vector<std::shared_ptr<ModelImpl>> Models;
  {
    LiveModels &L = live();
    std::lock_guard<std::mutex> Lock(L.Mu);
    L.Open = false;
    ++L.Session;
    for (const auto &W : L.Models)
      if (auto M = W.lock())
        Models.push_back(std::move(M));
    L.Models.clear();
  }
  // Every model refuses new runs first, so a run in flight cannot start another (a callback
  // calling infer()) while we wait; then each waits for its runs and lets go of its resources.
  for (const auto &M : Models)
    M->beginShutdown();
  for (const auto &M : Models)
    M->finishShutdown();
  if (!Models.empty())
    OPT_LOG(Info, "finalize: released ", Models.size(), " live model(s)");
}

bool onRuntimeThread() { return ThreadPool::isAnyWorkerThread() || RequestImpl::isInAnyCallback(); }

} // namespace detail
} // namespace runtime
} // namespace optimium
