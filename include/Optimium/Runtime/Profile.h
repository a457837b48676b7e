// Profiling: options of InferRequest::profile(), the timestamped events the executor records while
// profiling, the lock-free recorder they go into, and summaries computed from them.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "Optimium/Runtime/Device.h"
#include "Optimium/Runtime/Export.h"
#include "Optimium/Runtime/TensorInfo.h"
#include "Optimium/Runtime/Utils/ArrayRef.h"

namespace optimium {
namespace runtime {

/// Default event capacity of a profile: a number of events (1024 * 1024 * 4), not bytes.
constexpr size_t kDefaultEventBufferSize = 1024 * 1024 * 4;

/// Options of InferRequest::profile().
///
/// Run order: warm-up runs (not recorded) while fewer than WarmUp have run and WarmUpTime has not
/// elapsed (WarmUpTime 0 = no time cap), then up to Repeat measured runs, each recorded.
///
/// Early stop: with CheckPeriod = P > 0 and StopThreshold = T > 0, after every P-th measured run
/// from the 2P-th on, the median wall time of the last P runs is compared with the median of the P
/// runs before them; when they differ by less than T the profile stops (the timing has settled).
/// CheckPeriod 0 or StopThreshold 0 never stops early.
struct ProfileOptions {
  int Repeat = 100;                                        ///< Measured runs (>= 1).
  int WarmUp = 10;                                         ///< Warm-up runs (>= 0).
  std::chrono::microseconds WarmUpTime{1000000};           ///< Warm-up duration cap (0 = none).
  std::chrono::microseconds StopThreshold{0};              ///< Early-stop threshold (0 = off).
  int CheckPeriod = 0;                                     ///< Early-stop window in runs (0 = off).
  size_t EventBufferSize = kDefaultEventBufferSize;        ///< Event capacity (0 = the default).
};

enum class ProfileEventKind : uint8_t {
  ModelExecuteBegin = 0, ///< A run starts executing (after its queue wait).
  ModelExecuteEnd,       ///< A run ends (before wait() returns).
  LayerExecuteBegin,     ///< An operation starts on the worker that runs it (Operation, ThreadID).
  LayerExecuteEnd,
  LaunchBegin,           ///< The backend kernel call of an operation.
  LaunchEnd,
  DeviceExecuteBegin,    ///< A thread's share of a kernel's parallel-for on the pool, on that thread:
                         ///< from its first range to the end of its last (one pair per thread and
                         ///< parallel-for; none when a kernel does not fan out: 1 thread, or too
                         ///< little work). Recorded when the parallel-for returns.
  DeviceExecuteEnd,
  CopyBegin,             ///< The runtime converts/copies a tensor's data (TensorID, devices).
  CopyEnd,
  QueueBegin,            ///< A run is handed to the scheduler.
  QueueEnd,              ///< ... and leaves its queue to start.
  WaitBegin,             ///< The profiling thread waits for a run to end.
  WaitEnd,
};

/// "ModelExecuteBegin", ...
OPTIMIUM_RT_API const char *toString(ProfileEventKind Kind);

/// One timestamped event (32 bytes). Fields that do not apply to a kind hold -1 / a default
/// DeviceID. Operation is an index into InferRequest::getModelOperations(); TensorID an index into
/// getModelTensors(); ThreadID a small number the runtime gives each thread on its first event.
struct ProfileEvent {
  ProfileEventKind Kind = ProfileEventKind::ModelExecuteBegin;
  int32_t Operation = -1;
  std::chrono::high_resolution_clock::time_point TimeStamp;
  uint32_t ThreadID = 0;
  int32_t TensorID = -1;
  DeviceID SourceDevice;
  DeviceID DestDevice;
};
static_assert(sizeof(ProfileEvent) <= 32, "a ProfileEvent must stay within 32 bytes");

/// Preallocated event buffer that many threads append to without locks (an atomic index claims a
/// slot). When full, further events are dropped and counted. Reading (events()) is meant for when
/// no run records into it, e.g. after profile() returned.
class OPTIMIUM_RT_API ProfileEventRecorder {
public:
  /// Capacity is a number of events (memory is reserved, not touched, up front). 0 = the default.
  explicit ProfileEventRecorder(size_t Capacity = kDefaultEventBufferSize);
  ~ProfileEventRecorder();
  ProfileEventRecorder(const ProfileEventRecorder &) = delete;
  ProfileEventRecorder &operator=(const ProfileEventRecorder &) = delete;

  /// Appends an event; false (and counted as dropped) when the buffer is full. Thread-safe.
  bool record(const ProfileEvent &Event) noexcept {
    const size_t Slot = Next.fetch_add(1, std::memory_order_relaxed);
    if (Slot >= Capacity) {
      Dropped.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    Events[Slot] = Event;
    return true;
  }
  /// Stamps the current time and the calling thread's ThreadID, then appends.
  bool record(ProfileEventKind Kind, int32_t Operation = -1, int32_t TensorID = -1) noexcept;

  size_t capacity() const { return Capacity; }
  /// Events stored (at most capacity()).
  size_t size() const {
    const size_t N = Next.load(std::memory_order_acquire);
    return N < Capacity ? N : Capacity;
  }
  /// Events that did not fit.
  uint64_t dropped() const { return Dropped.load(std::memory_order_relaxed); }
  /// The stored events in the order their slots were claimed.
  ArrayRef<ProfileEvent> events() const { return ArrayRef<ProfileEvent>(Events, size()); }
  /// Forgets every event and the drop count (not while a run records).
  void clear();

  /// ThreadID of the calling thread (assigned on first use, from 1).
  static uint32_t currentThreadID() noexcept;

private:
  ProfileEvent *Events = nullptr;
  size_t Capacity = 0;
  std::atomic<size_t> Next{0};
  std::atomic<uint64_t> Dropped{0};
};

/// Durations of the last profile in nanoseconds (InferRequest::getProfileDurations()), with begin
/// and end events paired: per run (Model), per operation name (Layer), per tensor name (Copy).
struct ProfileDurations {
  std::string ModelName;
  std::vector<int64_t> ModelDurations;
  std::map<std::string, std::vector<int64_t>> LayerDurations;
  std::map<std::string, std::vector<int64_t>> CopyDurations;
};

/// Per-operation statistics over a profile (LayerExecuteBegin..End), in nanoseconds.
struct LayerDuration {
  std::string Name;  ///< Operation name ("<Type>#<index>" when the model leaves it empty).
  std::string Type;  ///< Operator type, e.g. "Conv".
  int32_t Operation = -1;
  uint64_t Count = 0;
  int64_t TotalNs = 0, MinNs = 0, MaxNs = 0;
  double MeanNs = 0;
};

/// Pairs begin/end events. Layer, Launch, DeviceExecute, Copy and Wait events begin and end on the
/// same thread and nest there; Model and Queue events of one request pair in order (a run may end
/// on another thread than it began). Unmatched events are ignored.
OPTIMIUM_RT_API ProfileDurations computeProfileDurations(ArrayRef<ProfileEvent> Events, ArrayRef<OpInfo> Ops,
                                                         ArrayRef<TensorInfo> Tensors);
/// One entry per operation that ran, grouped by operation, sorted by total time (largest first).
OPTIMIUM_RT_API std::vector<LayerDuration> summarizeLayerDurations(ArrayRef<ProfileEvent> Events,
                                                                   ArrayRef<OpInfo> Ops);

} // namespace runtime
} // namespace optimium
