// The state machine of one InferRequest: Ready -> Running -> Ready | Fault. A run binds inputs,
// takes the plan of their shapes, and executes the nodes on the model's thread pool.
#pragma once

#include <atomic>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <vector>

#include "Optimium/Runtime/Extension/Backend.h"
#include "Optimium/Runtime/InferRequest.h"
#include "Optimium/Runtime/Profile.h"
#include "ir/Container.h"
#include "core/TensorImpl.h"
#include "exec/ModelState.h"

namespace optimium {
namespace runtime {

/// Run-time state of one manifest-marked input (parallel to ModelImpl::Stateful).
struct StatefulState {
  std::vector<int64_t> Dims;    ///< Current logical shape.
  bool HasPending = false;
  std::vector<int64_t> Pending; ///< Recorded by setTensorShape, applied lazily.
  std::vector<int64_t> Cap;     ///< Capacity (compared by element count).
  /// Preserved only: the value (Cur) and the buffer the update_from output is written to (Spare);
  /// they swap when a run succeeds.
  std::shared_ptr<detail::Buffer> Cur, Spare;
  ResizeMigrateFn Migrate;
};

struct RequestImpl : std::enable_shared_from_this<RequestImpl> {
  explicit RequestImpl(std::shared_ptr<ModelImpl> M) : M(std::move(M)) {}

  std::shared_ptr<ModelImpl> M;

  // Preserved / Resizable tensors. Guarded by Mu; a run commits update_from outputs in finish().
  std::vector<StatefulState> States;
  std::vector<std::shared_ptr<detail::Buffer>> Stale; ///< Retained by a reallocating applyShapeChanges.
  bool Dirty = false; ///< A reallocation failed: the next run starts from a fresh arena.

  /// Allocates the Preserved buffers at capacity, zero-filled at the base shape.
  detail::Status initStateful();
  /// Applies pending shapes (and ShrinkToFit); Mu held, not running. Throws the runtime's errors,
  /// or rethrows a migration callback's exception after moving the request to Fault.
  void applyShapeChangesLocked(bool ShrinkToFit);
  /// After a successful run: each update_from output becomes its input's value (buffer swap).
  detail::Status commitPreservedLocked();
  /// A view of a Preserved tensor's current value.
  Tensor preservedTensor(size_t StatefulIndex) const;

  // Guarded by Mu.
  std::mutex Mu;
  std::condition_variable Cv;
  InferStatus State = InferStatus::Ready;
  bool HasRun = false;
  std::exception_ptr Error;
  std::vector<InferCallback> Callbacks;
  uint64_t StartedRuns = 0, CompletedRuns = 0;

  // Owned by the run while Status == Running; readable after it ends.
  std::vector<Tensor> Inputs;
  std::shared_ptr<const detail::ExecutionPlan> Plan;
  std::shared_ptr<detail::Buffer> Arena;
  std::vector<std::vector<int64_t>> RunDims;          ///< Dims of every value in this run.
  std::vector<void *> Ptrs;                           ///< Data of every value in this run.
  std::vector<std::shared_ptr<detail::Buffer>> Owned; ///< Per-run buffers of unresolved values.
  /// Per value: the sequence/optional value of this run (null for tensors); Ptrs points to it.
  std::vector<std::shared_ptr<detail::ContainerValue>> Containers;
  /// Per graph input: sequence/optional values bound for the next run (exec/ContainerIO.h).
  std::vector<std::shared_ptr<detail::ContainerValue>> ContainerInputs;
  std::atomic<bool> CancelFlag{false};
  uint64_t RunIndex = 0;

  // Device memory (docs/devices.md, "Device memory in the executor"): active for a run of a model with a node
  // on a backend that has its own memory, or fed a device tensor. Per value: its buffer on that
  // device (kept across runs; constants stay valid once copied in), and where the current data is.
  bool DeviceOutputs = false;    ///< setDeviceOutputs(); guarded by Mu
  bool RunDeviceOutputs = false; ///< DeviceOutputs of the current run
  bool Tracking = false;         ///< the current run tracks residency
  std::vector<std::shared_ptr<detail::DeviceBuffer>> DevBuf;
  std::vector<char> DevValid, HostValid;
  std::mutex DevMu;
  /// The planned device values (ExecutionPlan::DeviceArenas): this request's allocation per
  /// arena, and per value its view into one (null: not planned). Replaced, not rewritten, when a
  /// handed-out device tensor still holds a view (its bytes never change) or the plan changes.
  std::vector<std::shared_ptr<detail::DeviceBuffer>> DevArenas, DevViews;
  std::shared_ptr<const detail::ExecutionPlan> DevViewsPlan; ///< held: a freed plan's address may come back
  /// prepareRun: DevArenas / DevViews for the current plan.
  detail::Status prepareDeviceArenas();
  /// DevMu held: V's planned view on B when it should use it this run, else null.
  const std::shared_ptr<detail::DeviceBuffer> *plannedView(int V, const std::shared_ptr<detail::RegisteredBackend> &B) const;
  /// DevMu held: V's data in host memory (copied out of the device when only there).
  detail::Status ensureOnHost(int V, size_t NodeIndex);
  /// DevMu held: V's data in B's memory (copied in when not there yet).
  detail::Status ensureOnDevice(int V, const std::shared_ptr<detail::RegisteredBackend> &B, size_t NodeIndex);
  /// DevMu held: a buffer of B for output O (a handed-out device output is never written again).
  detail::Status deviceOutput(int O, const std::shared_ptr<detail::RegisteredBackend> &B);
  size_t valueBytes(int V) const;
  void recordCopy(size_t NodeIndex, int V, bool Begin, const DeviceID &From, const DeviceID &To);

  // Pipeline bookkeeping.
  std::unique_ptr<std::atomic<int>[]> PendingInputs;
  std::atomic<int> Outstanding{0};
  std::atomic<bool> Failed{false};
  std::mutex ErrorMu;
  detail::Status FirstError;

  // Profiling (exec/Profiler.cpp). Recorder is set by profile() for its measured runs only and is
  // null otherwise: every recording site costs one predictable branch when not profiling.
  ProfileEventRecorder *Recorder = nullptr;
  std::vector<int32_t> ValueToTensor;                 ///< value index -> index in M->Tensors
  std::shared_ptr<ProfileEventRecorder> UserRecorder; ///< setRecorder(); guarded by Mu
  std::mutex ProfileMu;                               ///< guards the Last* fields
  std::shared_ptr<ProfileEventRecorder> LastRecorder; ///< events [LastFirstEvent, LastEndEvent)
  size_t LastFirstEvent = 0, LastEndEvent = 0;
  uint64_t LastDropped = 0;

  /// Validates and binds inputs (those infer() takes: every graph input but the Preserved ones),
  /// then hands the run to the scheduler. Pending shape changes are applied first (may throw).
  /// RunOnCaller (InferRequest::run): where the scheduler allows it, the run happens here before
  /// start() returns, with no pool task at all (no deferred hand-off, no worker wake-up).
  detail::Status start(std::vector<Tensor> Inputs, bool RunOnCaller = false);
  /// Runs every node in order on the calling thread (Exclusive / Sequential).
  void runSequential();
  /// Dispatches ready nodes as pool tasks (Pipeline); the last one to finish completes the run.
  void startPipeline();
  /// Ends the run: callbacks, status, wake waiters.
  void finish(const detail::Status &S);
  /// Blocking warm-up + measured runs (see ProfileOptions); throws the documented exceptions.
  void profile(const std::vector<Tensor> &Inputs, const ProfileOptions &Options,
               const std::shared_ptr<std::atomic_bool> &StopFlag);
  /// Waits for the current run and rethrows its error; Record adds WaitBegin/End.
  void waitForRun(bool Record);
  /// The kernel call of a profiled run: Launch events, DeviceExecute per parallel range, copies.
  int32_t runKernelProfiled(size_t NodeIndex, const OptRtTensor *Inputs, uint32_t NumInputs,
                            const OptRtTensor *Outputs, uint32_t NumOutputs, const OptRtExecContext &Ctx,
                            char *Error, size_t ErrorSize);

  detail::Status runNode(size_t NodeIndex);
  detail::Status prepareRun();
  detail::Status afterRun();
  Tensor valueTensor(int Value) const;
  /// Whether the calling thread is running one of this request's callbacks (wait() must not block).
  bool isInCallback() const;
  /// Whether the calling thread is running any request's callbacks.
  static bool isInAnyCallback();

  /// The pool task of a Sequential run that may still be taken back (ThreadPool::submitDeferred;
  /// 0: none; guarded by Mu): a thread that blocks in wait() and cancels it runs the run itself.
  uint64_t PendingTicket = 0;
  /// Called by wait() before blocking: runs the pending run on the calling thread when no worker
  /// has taken it yet (saves the hand-off to a worker and back: two thread wake-ups per run).
  void runPendingHere();
};

namespace detail {

/// Decides how requests of a model share its pool.
class Scheduler {
public:
  virtual ~Scheduler() = default;
  virtual void enqueue(std::shared_ptr<RequestImpl> R) = 0;
  /// Whether a run started with RunOnCaller (InferRequest::run) may run on the calling thread
  /// instead of being enqueued: only where the policy would let the caller take it back anyway.
  virtual bool callerMayRun(const RequestImpl &) const { return false; }
  static std::unique_ptr<Scheduler> create(SchedulerType Type, ThreadPool &Pool);
  /// A model group's shared Exclusive scheduler: the group lets one member's run() at a time in
  /// (FIFO, exec/Group.cpp) and that caller runs its request itself, the pool's workers joining
  /// its fan-outs; no hand-off to a worker and back.
  static std::unique_ptr<Scheduler> createGroupExclusive();
};

} // namespace detail
} // namespace runtime
} // namespace optimium
