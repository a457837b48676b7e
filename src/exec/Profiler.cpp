// Profiling: the lock-free event recorder, the executor's recording helpers, InferRequest's
// profile() loop (warm-up, measured runs, early stop, stop flag) and the begin/end pairing behind
// the duration summaries.
#include "exec/Profiler.h"

#include <algorithm>
#include <cstdlib>
#include <new>
#include <unordered_map>

#include "Optimium/Runtime/Exceptions.h"
#include "core/ErrorConversion.h"
#include "core/Log.h"
#include "exec/Request.h"

namespace optimium {
namespace runtime {

using namespace detail;

const char *toString(ProfileEventKind Kind) {
  switch (Kind) {
  case ProfileEventKind::ModelExecuteBegin: return "ModelExecuteBegin";
  case ProfileEventKind::ModelExecuteEnd: return "ModelExecuteEnd";
  case ProfileEventKind::LayerExecuteBegin: return "LayerExecuteBegin";
  case ProfileEventKind::LayerExecuteEnd: return "LayerExecuteEnd";
  case ProfileEventKind::LaunchBegin: return "LaunchBegin";
  case ProfileEventKind::LaunchEnd: return "LaunchEnd";
  case ProfileEventKind::DeviceExecuteBegin: return "DeviceExecuteBegin";
  case ProfileEventKind::DeviceExecuteEnd: return "DeviceExecuteEnd";
  case ProfileEventKind::CopyBegin: return "CopyBegin";
  case ProfileEventKind::CopyEnd: return "CopyEnd";
  case ProfileEventKind::QueueBegin: return "QueueBegin";
  case ProfileEventKind::QueueEnd: return "QueueEnd";
  case ProfileEventKind::WaitBegin: return "WaitBegin";
  case ProfileEventKind::WaitEnd: return "WaitEnd";
  }
  return "Unknown";
}

// --- recorder ----------------------------------------------------------------------------------

ProfileEventRecorder::ProfileEventRecorder(size_t Cap) : Capacity(Cap ? Cap : kDefaultEventBufferSize) {
  // calloc: a large buffer is mapped lazily, so an unused default capacity costs no memory.
  Events = static_cast<ProfileEvent *>(std::calloc(Capacity, sizeof(ProfileEvent)));
  if (!Events)
    throw OutOfResourceError("ProfileEventRecorder: cannot allocate " + std::to_string(Capacity) + " events");
}

ProfileEventRecorder::~ProfileEventRecorder() { std::free(Events); }

bool ProfileEventRecorder::record(ProfileEventKind Kind, int32_t Operation, int32_t TensorID) noexcept {
  ProfileEvent E;
  E.Kind = Kind;
  E.Operation = Operation;
  E.TensorID = TensorID;
  E.ThreadID = currentThreadID();
  E.TimeStamp = std::chrono::high_resolution_clock::now();
  return record(E);
}

void ProfileEventRecorder::clear() {
  Next.store(0, std::memory_order_release);
  Dropped.store(0, std::memory_order_relaxed);
}

uint32_t ProfileEventRecorder::currentThreadID() noexcept {
  static std::atomic<uint32_t> Counter{0};
  thread_local uint32_t ID = 0;
  if (OPT_RT_UNLIKELY(ID == 0))
    ID = Counter.fetch_add(1, std::memory_order_relaxed) + 1;
  return ID;
}

// --- executor helpers --------------------------------------------------------------------------

namespace detail {

namespace {

using TimePoint = std::chrono::high_resolution_clock::time_point;

/// One profiled parallel-for. The ranges a thread runs in it follow each other without a gap (the
/// pool's participants run items until none is left, then leave), so each thread's share is
/// recorded as one DeviceExecute span: the begin of its first range to the end of its last. A
/// thread claims a slot on its first range and then only stamps its end time; the thread that fans
/// out records the spans when the parallel-for has returned. Recording two events per range (a
/// shared atomic slot index, a 32-byte store and a clock read each, from every worker) cost a
/// finely split depthwise layer ~10% at 2 threads. Threads beyond the slots record per range.
struct RangeWrapper {
  static constexpr size_t kSlots = 16;
  struct alignas(64) Span {
    TimePoint Begin, End;
  };

  RangeWrapper(const KernelProfileScope *Scope, OptRtRangeFn Fn, void *User) : Scope(Scope), Fn(Fn), User(User) {}

  const KernelProfileScope *Scope;
  OptRtRangeFn Fn;
  void *User;
  std::atomic<uint32_t> Threads[kSlots] = {};
  Span Spans[kSlots];

  /// The calling thread's slot (claimed on first use), or kSlots when every slot is taken.
  size_t slotOf(uint32_t Thread) {
    for (size_t I = 0; I < kSlots; ++I) {
      uint32_t Owner = Threads[I].load(std::memory_order_relaxed);
      if (Owner == 0 && Threads[I].compare_exchange_strong(Owner, Thread, std::memory_order_relaxed))
        return I;
      if (Owner == Thread)
        return I;
    }
    return kSlots;
  }

  static void call(void *Self, size_t Begin, size_t End) {
    auto *W = static_cast<RangeWrapper *>(Self);
    const uint32_t Thread = ProfileEventRecorder::currentThreadID();
    const size_t Slot = W->slotOf(Thread);
    if (OPT_RT_UNLIKELY(Slot == kSlots)) {
      ProfileEventScope Range(W->Scope->Recorder, ProfileEventKind::DeviceExecuteBegin, W->Scope->Operation);
      W->Fn(W->User, Begin, End);
      return;
    }
    Span &S = W->Spans[Slot];
    if (S.End == TimePoint())
      S.Begin = std::chrono::high_resolution_clock::now();
    W->Fn(W->User, Begin, End);
    S.End = std::chrono::high_resolution_clock::now();
  }

  /// After the parallel-for returned (every range done and visible to this thread).
  void recordSpans() const {
    ProfileEvent E;
    E.Operation = Scope->Operation;
    for (size_t I = 0; I < kSlots; ++I) {
      E.ThreadID = Threads[I].load(std::memory_order_relaxed);
      if (E.ThreadID == 0)
        break;
      E.Kind = ProfileEventKind::DeviceExecuteBegin;
      E.TimeStamp = Spans[I].Begin;
      Scope->Recorder->record(E);
      E.Kind = ProfileEventKind::DeviceExecuteEnd;
      E.TimeStamp = Spans[I].End;
      Scope->Recorder->record(E);
    }
  }
};

} // namespace

void recordKernelCopyAbi(void *Profile, int32_t Begin, int32_t IsOutput, uint32_t Index) {
  recordKernelCopy(*static_cast<const KernelProfileScope *>(Profile), Begin != 0, IsOutput != 0, Index);
}

void profiledParallelFor(void *ScopePtr, size_t N, size_t Grain, OptRtRangeFn Fn, void *User) {
  const auto *Scope = static_cast<const KernelProfileScope *>(ScopePtr);
  RangeWrapper W(Scope, Fn, User);
  Scope->PoolParallelFor(Scope->Pool, N, Grain, &RangeWrapper::call, &W);
  W.recordSpans();
}

void recordKernelCopy(const KernelProfileScope &Scope, bool Begin, bool IsOutput, size_t Index) {
  ProfileEvent E;
  E.Kind = Begin ? ProfileEventKind::CopyBegin : ProfileEventKind::CopyEnd;
  E.Operation = Scope.Operation;
  E.ThreadID = ProfileEventRecorder::currentThreadID();
  if (Scope.N && Scope.ValueToTensor) {
    const std::vector<int> &Values = IsOutput ? Scope.N->Outputs : Scope.N->Inputs;
    if (Index < Values.size() && Values[Index] >= 0)
      E.TensorID = Scope.ValueToTensor[Values[Index]];
  }
  E.SourceDevice = Scope.Device;
  E.DestDevice = Scope.Device;
  E.TimeStamp = std::chrono::high_resolution_clock::now();
  Scope.Recorder->record(E);
}

} // namespace detail

int32_t RequestImpl::runKernelProfiled(size_t NodeIndex, const OptRtTensor *Ins, uint32_t NumInputs,
                                       const OptRtTensor *Outs, uint32_t NumOutputs, const OptRtExecContext &Ctx,
                                       char *ErrorBuf, size_t ErrorSize) {
  const CompiledNode &CN = *M->Nodes[NodeIndex];
  KernelProfileScope Scope;
  Scope.Recorder = Recorder;
  Scope.Operation = static_cast<int32_t>(NodeIndex);
  Scope.N = &M->G->Nodes[NodeIndex];
  Scope.ValueToTensor = ValueToTensor.empty() ? nullptr : ValueToTensor.data();
  Scope.Device = CN.Backend->Device;
  Scope.Pool = Ctx.pool;
  Scope.PoolParallelFor = Ctx.parallel_for;
  OptRtExecContext Profiled = Ctx;
  Profiled.pool = &Scope;
  Profiled.parallel_for = &profiledParallelFor;
  Profiled.record_copy = &recordKernelCopyAbi;
  Profiled.profile = &Scope;
  ProfileEventScope Launch(Recorder, ProfileEventKind::LaunchBegin, Scope.Operation);
  const OptRtBackend &B = CN.Backend->Backend;
  return B.run_kernel(B.state, CN.Kernel, Ins, NumInputs, Outs, NumOutputs, &Profiled, ErrorBuf, ErrorSize);
}

// --- profile() ----------------------------------------------------------------------------------

namespace {

using Clock = std::chrono::steady_clock;

int64_t median(std::vector<int64_t> V) {
  std::sort(V.begin(), V.end());
  return V.empty() ? 0 : V[V.size() / 2];
}

void validate(const ProfileOptions &O) {
  if (O.Repeat < 1)
    throw InvalidArgumentError("profile: Repeat must be at least 1, got " + std::to_string(O.Repeat));
  if (O.WarmUp < 0)
    throw InvalidArgumentError("profile: WarmUp must not be negative, got " + std::to_string(O.WarmUp));
  if (O.WarmUpTime.count() < 0)
    throw InvalidArgumentError("profile: WarmUpTime must not be negative");
  if (O.StopThreshold.count() < 0)
    throw InvalidArgumentError("profile: StopThreshold must not be negative");
  if (O.CheckPeriod < 0)
    throw InvalidArgumentError("profile: CheckPeriod must not be negative, got " + std::to_string(O.CheckPeriod));
}

} // namespace

void RequestImpl::waitForRun(bool Record) {
  ProfileEventScope WaitScope(Record ? Recorder : nullptr, ProfileEventKind::WaitBegin, -1);
  runPendingHere(); // profile() blocks anyway: a run no worker has started runs here
  std::unique_lock<std::mutex> Lock(Mu);
  Cv.wait(Lock, [&] { return CompletedRuns == StartedRuns; });
  if (State == InferStatus::Fault && Error)
    std::rethrow_exception(Error);
}

void RequestImpl::profile(const std::vector<Tensor> &In, const ProfileOptions &O,
                          const std::shared_ptr<std::atomic_bool> &StopFlag) {
  validate(O);
  if (isInCallback())
    throw InvalidOperationError("profile: cannot be called from an inference callback of the same request");
  auto Stopped = [&] { return StopFlag && StopFlag->load(); };

  std::shared_ptr<ProfileEventRecorder> Rec;
  {
    std::lock_guard<std::mutex> Lock(Mu);
    if (State == InferStatus::Running)
      throw InvalidOperationError("profile: request of model '" + M->Name + "' is running; wait() for it first");
    Rec = UserRecorder;
  }
  if (!Rec)
    Rec = std::make_shared<ProfileEventRecorder>(O.EventBufferSize ? O.EventBufferSize : kDefaultEventBufferSize);
  if (ValueToTensor.empty()) {
    const Graph &G = *M->G;
    ValueToTensor.assign(G.Values.size(), -1);
    for (size_t V = 0; V < G.Values.size(); ++V) {
      auto It = M->TensorIndex.find(G.Values[V].Name);
      if (It != M->TensorIndex.end())
        ValueToTensor[V] = static_cast<int32_t>(It->second);
    }
  }

  // Warm-up: not recorded.
  const Clock::time_point WarmStart = Clock::now();
  for (int I = 0; I < O.WarmUp && !Stopped(); ++I) {
    if (O.WarmUpTime.count() > 0 && Clock::now() - WarmStart >= O.WarmUpTime)
      break;
    throwIfError(start(In, /*RunOnCaller=*/true)); // blocking anyway: no pool task to take back
    waitForRun(false);
  }

  const size_t FirstEvent = Rec->size();
  const uint64_t FirstDropped = Rec->dropped();
  struct RecorderReset {
    RequestImpl &R;
    ~RecorderReset() { R.Recorder = nullptr; }
  } Reset{*this};
  std::vector<int64_t> RunNs;
  const int64_t ThresholdNs = std::chrono::duration_cast<std::chrono::nanoseconds>(O.StopThreshold).count();
  const size_t Period = static_cast<size_t>(O.CheckPeriod);
  {
    std::lock_guard<std::mutex> Lock(ProfileMu);
    LastRecorder = Rec;
    LastFirstEvent = LastEndEvent = FirstEvent;
    LastDropped = 0;
  }
  for (int I = 0; I < O.Repeat && !Stopped(); ++I) {
    const Clock::time_point T0 = Clock::now();
    Recorder = Rec.get(); // read by the run's threads; start() publishes it under Mu
    throwIfError(start(In, /*RunOnCaller=*/true)); // blocking anyway: no pool task to take back
    waitForRun(true);
    Recorder = nullptr;
    RunNs.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - T0).count());
    {
      std::lock_guard<std::mutex> Lock(ProfileMu);
      LastEndEvent = Rec->size();
      LastDropped = Rec->dropped() - FirstDropped;
    }
    if (Period > 0 && ThresholdNs > 0 && RunNs.size() >= 2 * Period && RunNs.size() % Period == 0) {
      const auto End = RunNs.end();
      const int64_t Last = median(std::vector<int64_t>(End - Period, End));
      const int64_t Prev = median(std::vector<int64_t>(End - 2 * Period, End - Period));
      if (std::llabs(Last - Prev) < ThresholdNs)
        break;
    }
  }
  if (LastDropped)
    OPT_LOG(Warning, "profile of model '", M->Name, "': the event buffer (", Rec->capacity(), " events) was full; ",
            LastDropped, " event(s) were dropped (raise ProfileOptions::EventBufferSize)");
}

// --- durations -----------------------------------------------------------------------------------

namespace {

std::string opName(ArrayRef<OpInfo> Ops, int32_t Op) {
  if (Op < 0 || static_cast<size_t>(Op) >= Ops.size())
    return "#" + std::to_string(Op);
  const OpInfo &Info = Ops[static_cast<size_t>(Op)];
  return Info.Name.empty() ? Info.Type + "#" + std::to_string(Op) : Info.Name;
}

int64_t nanos(const ProfileEvent &Begin, const ProfileEvent &End) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(End.TimeStamp - Begin.TimeStamp).count();
}

/// Calls Pair(begin, end) for each matched pair of Begin/End kinds on the same thread with the same
/// Key (operation or tensor), innermost first.
template <typename KeyFn, typename PairFn>
void pairPerThread(ArrayRef<ProfileEvent> Events, ProfileEventKind Begin, KeyFn Key, PairFn Pair) {
  const auto End = static_cast<ProfileEventKind>(static_cast<uint8_t>(Begin) + 1);
  std::unordered_map<uint32_t, std::vector<const ProfileEvent *>> Open;
  for (const ProfileEvent &E : Events) {
    if (E.Kind == Begin) {
      Open[E.ThreadID].push_back(&E);
    } else if (E.Kind == End) {
      auto &Stack = Open[E.ThreadID];
      for (size_t I = Stack.size(); I-- > 0;) {
        if (Key(*Stack[I]) == Key(E)) {
          Pair(*Stack[I], E);
          Stack.erase(Stack.begin() + static_cast<std::ptrdiff_t>(I));
          break;
        }
      }
    }
  }
}

} // namespace

ProfileDurations computeProfileDurations(ArrayRef<ProfileEvent> Events, ArrayRef<OpInfo> Ops,
                                         ArrayRef<TensorInfo> Tensors) {
  ProfileDurations D;
  std::vector<const ProfileEvent *> ModelBegins;
  size_t NextModel = 0;
  for (const ProfileEvent &E : Events) {
    if (E.Kind == ProfileEventKind::ModelExecuteBegin)
      ModelBegins.push_back(&E);
    else if (E.Kind == ProfileEventKind::ModelExecuteEnd && NextModel < ModelBegins.size())
      D.ModelDurations.push_back(nanos(*ModelBegins[NextModel++], E));
  }
  pairPerThread(Events, ProfileEventKind::LayerExecuteBegin, [](const ProfileEvent &E) { return E.Operation; },
                [&](const ProfileEvent &B, const ProfileEvent &E) {
                  D.LayerDurations[opName(Ops, B.Operation)].push_back(nanos(B, E));
                });
  pairPerThread(Events, ProfileEventKind::CopyBegin, [](const ProfileEvent &E) { return E.TensorID; },
                [&](const ProfileEvent &B, const ProfileEvent &E) {
                  const std::string Name = B.TensorID >= 0 && static_cast<size_t>(B.TensorID) < Tensors.size()
                                               ? Tensors[static_cast<size_t>(B.TensorID)].Name
                                               : "#" + std::to_string(B.TensorID);
                  D.CopyDurations[Name].push_back(nanos(B, E));
                });
  return D;
}

std::vector<LayerDuration> summarizeLayerDurations(ArrayRef<ProfileEvent> Events, ArrayRef<OpInfo> Ops) {
  std::map<std::string, LayerDuration> ByName;
  pairPerThread(Events, ProfileEventKind::LayerExecuteBegin, [](const ProfileEvent &E) { return E.Operation; },
                [&](const ProfileEvent &B, const ProfileEvent &E) {
                  const std::string Name = opName(Ops, B.Operation);
                  LayerDuration &L = ByName[Name];
                  const int64_t Ns = nanos(B, E);
                  if (L.Count == 0) {
                    L.Name = Name;
                    L.Operation = B.Operation;
                    if (B.Operation >= 0 && static_cast<size_t>(B.Operation) < Ops.size())
                      L.Type = Ops[static_cast<size_t>(B.Operation)].Type;
                    L.MinNs = L.MaxNs = Ns;
                  }
                  ++L.Count;
                  L.TotalNs += Ns;
                  L.MinNs = std::min(L.MinNs, Ns);
                  L.MaxNs = std::max(L.MaxNs, Ns);
                });
  std::vector<LayerDuration> Out;
  for (auto &KV : ByName) {
    KV.second.MeanNs = static_cast<double>(KV.second.TotalNs) / static_cast<double>(KV.second.Count);
    Out.push_back(std::move(KV.second));
  }
  std::stable_sort(Out.begin(), Out.end(),
                   [](const LayerDuration &A, const LayerDuration &B) { return A.TotalNs > B.TotalNs; });
  return Out;
}

} // namespace runtime
} // namespace optimium
