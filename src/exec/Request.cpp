// Running a request: input validation, binding, node execution (in order or as a DAG of pool
// tasks), completion with callbacks, and reading values back.
#include "exec/Request.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstring>

#include "core/ErrorConversion.h"
#include "core/Log.h"
#include "core/DeviceRegistry.h"
#include "core/Npy.h"
#include "exec/InputShapes.h"
#include "exec/Profiler.h"
#include "ir/InferShapes.h"

namespace optimium {
namespace runtime {

using namespace detail;

namespace {

thread_local const RequestImpl *CallbackOwner = nullptr;

std::string fileSafe(const std::string &Name) {
  std::string S = Name;
  for (char &C : S)
    if (C == '/' || C == '\\' || C == ':' || C == ' ')
      C = '_';
  return S;
}

/// One intermediate value as a .npy file (IntermediateSavePath).
Status saveNpy(const std::string &Path, ElementType Type, const std::vector<int64_t> &Dims, const void *Data) {
  const size_t ElementBytes = npy::elementByteSize(Type);
  if (!ElementBytes)
    return makeError(ErrorCode::Type, "cannot write ", toString(Type), " tensors as .npy ('", Path, "')");
  try {
    npy::writeNpyFile(Path, Type, Dims, Data, npy::dimsElementCount(Dims) * ElementBytes);
  } catch (const npy::NpyError &E) {
    return makeError(ErrorCode::IO, "failed writing ", E.what());
  }
  return Status::ok();
}

ErrorCode runErrorCode(int32_t RC) {
  const ErrorCode C = static_cast<ErrorCode>(RC);
  switch (C) {
  case ErrorCode::Shape:
  case ErrorCode::Type:
  case ErrorCode::OutOfResource:
  case ErrorCode::NotImplemented:
  case ErrorCode::Device: // a device failed the op (Backend.h OPT_RT_ERROR_DEVICE): DeviceError
    return C;
  default:
    return ErrorCode::Infer;
  }
}

} // namespace

namespace {
/// A run admitted by the model (ModelImpl::beginRun): given back on every way out of start()
/// but the one that hands the run to the scheduler (finish() gives it back then).
class RunAdmission {
public:
  explicit RunAdmission(ModelImpl &M) : M(M.beginRun() ? &M : nullptr) {}
  ~RunAdmission() {
    if (M)
      M->endRun();
  }
  RunAdmission(const RunAdmission &) = delete;
  RunAdmission &operator=(const RunAdmission &) = delete;
  bool admitted() const { return M != nullptr; }
  void handOver() { M = nullptr; }

private:
  ModelImpl *M;
};

/// The error of a run stopped before the node at Index: by cancel(), or by finalize().
Status cancelledError(const ModelImpl &M, size_t Index) {
  if (M.ShutDown.load(std::memory_order_relaxed))
    return makeError(ErrorCode::InvalidState, "inference of model '", M.Name, "' was stopped before ",
                     M.G->Nodes[Index].describe(), ": finalize() shut the runtime down");
  return makeError(ErrorCode::Infer, "inference of model '", M.Name, "' was cancelled before ",
                   M.G->Nodes[Index].describe());
}
} // namespace

Status RequestImpl::start(std::vector<Tensor> In, bool RunOnCaller) {
  const Graph &G = *M->G;
  RunAdmission Admission(*M);
  if (!Admission.admitted())
    return M->shutDownError("infer");
  if (In.size() != M->UserInputs.size())
    return makeError(ErrorCode::InvalidArgument, "model '", M->Name, "' takes ", M->UserInputs.size(), " input(s), got ",
                     In.size(), M->UserInputs.size() == G.Inputs.size() ? "" : " (preserved inputs live in the request)");
  std::unique_lock<std::mutex> Lock(Mu);
  if (State == InferStatus::Running)
    return makeError(ErrorCode::InvalidOperation, "request of model '", M->Name,
                     "' is already running; wait() for it before calling infer() again");
  applyShapeChangesLocked(/*ShrinkToFit=*/false); // throws on failure

  std::vector<Tensor> Full(G.Inputs.size());
  std::vector<std::vector<int64_t>> Dims(G.Inputs.size());
  SymbolBindings Symbols;
  for (size_t K = 0; K < In.size(); ++K) {
    const size_t I = M->UserInputs[K];
    const Value &V = G.Values[G.Inputs[I]];
    const Tensor &T = In[K];
    if (isContainerKind(V.Kind)) {
      // Bound through exec/ContainerIO.h (the public API passes tensors only).
      if (I >= ContainerInputs.size() || !ContainerInputs[I] || (T.impl() && T.impl()->data()))
        return makeError(ErrorCode::InvalidArgument, "input ", K, " ('", V.Name, "') is a ", toString(V.Kind),
                         " value; infer() takes tensor inputs only (sequence/optional inputs are supported through "
                         "the runtime's internal entry point, see docs/sequences.md)");
      const ContainerValue &C = *ContainerInputs[I];
      if (C.Type != V.Type && V.Type != ElementType::Undefined && !(C.Tensors.empty() && C.Type == ElementType::Undefined))
        return makeError(ErrorCode::Type, "input ", K, " ('", V.Name, "') holds ", toString(C.Type),
                         " elements, the model expects ", toString(V.Type));
      Dims[I].clear();
      continue;
    }
    const bool OnDevice = T.impl() && T.impl()->DeviceStorage;
    if (!T.impl() || (!T.impl()->data() && !OnDevice))
      return makeError(ErrorCode::InvalidArgument, "input ", K, " ('", V.Name, "') is an empty or released tensor");
    // A device tensor is bound like any input (prepareRun): a node on its device reads it in place,
    // any other node through one copy to the host (a resizable input's readers are such nodes:
    // its symbolic dims keep it off devices that need static shapes).
    if (OnDevice && !std::dynamic_pointer_cast<DeviceBuffer>(T.impl()->DeviceStorage))
      return makeError(ErrorCode::InvalidArgument, "input ", K, " ('", V.Name, "') is a device tensor of ",
                       T.impl()->DeviceStorage->Device.toString(), " this runtime did not allocate");
    if (T.getType() != V.Type)
      return makeError(ErrorCode::Type, "input ", K, " ('", V.Name, "') has element type ", toString(T.getType()),
                       ", the model expects ", toString(V.Type));
    Dims[I] = T.impl()->Dims;
    const int SI = M->StatefulOf[G.Inputs[I]];
    if (SI >= 0) {
      // A resizable input: its shape is the request's current one (setTensorShape changes it).
      if (Dims[I] != States[SI].Dims)
        return makeError(ErrorCode::Shape, "input ", K, " ('", V.Name, "') has shape ", dimsToString(Dims[I]),
                         ", the request expects ", dimsToString(States[SI].Dims),
                         " (a resizable input: call setTensorShape to change it)");
      Full[I] = T;
      continue;
    }
    RETURN_IF_ERROR(bindInputShape(G, I, TensorShape::fromDims(Dims[I]), Symbols));
    Full[I] = T;
  }
  for (size_t SI = 0; SI < M->Stateful.size(); ++SI) {
    const StatefulInput &S = M->Stateful[SI];
    if (!S.Preserved)
      continue;
    Full[S.InputIndex] = preservedTensor(SI);
    Dims[S.InputIndex] = States[SI].Dims;
  }
  ASSIGN_OR_RETURN(std::shared_ptr<const ExecutionPlan> NewPlan, getExecutionPlan(*M, Dims));
  // Each update_from output is written straight into its input's spare buffer: grow it when the
  // output will not fit (a declared capacity is a hard cap).
  for (size_t SI = 0; SI < M->Stateful.size(); ++SI) {
    const StatefulInput &S = M->Stateful[SI];
    StatefulState &St = States[SI];
    if (!S.Preserved || S.UpdateFrom < 0 || !NewPlan->Resolved[S.UpdateFrom])
      continue;
    const std::vector<int64_t> &Out = NewPlan->Dims[S.UpdateFrom];
    if (Out.size() != S.BaseDims.size())
      return makeError(ErrorCode::Shape, "output '", G.Values[S.UpdateFrom].Name, "' would have shape ", dimsToString(Out),
                       ", not the rank of the preserved input '", G.Values[S.Value].Name, "' it updates");
    const size_t Need = elementCountOf(Out);
    if (!S.DeclaredCap.empty() && Need > elementCountOf(S.DeclaredCap))
      return makeError(ErrorCode::Shape, "output '", G.Values[S.UpdateFrom].Name, "' would have shape ", dimsToString(Out),
                       ", beyond the declared capacity ", dimsToString(S.DeclaredCap), " of '", G.Values[S.Value].Name, "'");
    if (Need > elementCountOf(St.Cap))
      St.Cap = Out;
    const size_t Bytes = elementCountOf(St.Cap) * getElementSize(G.Values[S.Value].Type);
    // Keep the spare at full capacity: after the swap it holds the value, and later resizes
    // within capacity rely on the value's buffer holding Cap elements.
    if (St.Spare->Bytes < Bytes) {
      auto B = Buffer::allocate(Bytes);
      if (!B)
        return makeError(ErrorCode::OutOfResource, "cannot allocate ", Bytes, " bytes for preserved tensor '",
                         G.Values[S.Value].Name, "'");
      St.Spare = std::move(B);
    }
  }
  if (Dirty) {
    Arena.reset();
    Dirty = false;
  }
  if (!Arena || Arena->Bytes < NewPlan->ArenaBytes) {
    // A new arena; tensors still holding the old one keep it alive (output lifetime rule).
    // Plus kTensorPaddingBytes: the last tensor too may be read that far past its end (the padding
    // promise of Tensor.h, which vector tails and XNNPACK's XNN_EXTRA_BYTES rely on).
    auto NewArena = Buffer::allocateLongLived(NewPlan->ArenaBytes + kTensorPaddingBytes);
    if (!NewArena)
      return makeError(ErrorCode::OutOfResource, "cannot allocate ", NewPlan->ArenaBytes, " bytes for the tensors of model '",
                       M->Name, "'");
    Arena = std::move(NewArena);
  }
  Inputs = std::move(Full);
  Plan = std::move(NewPlan);
  RunDeviceOutputs = DeviceOutputs;
  State = InferStatus::Running;
  Error = nullptr;
  HasRun = true;
  CancelFlag = false;
  ++StartedRuns;
  Lock.unlock();
  if (OPT_RT_UNLIKELY(Recorder))
    Recorder->record(ProfileEventKind::QueueBegin);
  Admission.handOver(); // finish() ends it
  M->Pool->arm();
  if (RunOnCaller && M->Sched->callerMayRun(*this)) {
    // What wait() does with a run no worker has started (runPendingHere), minus the deferred pool
    // task: queueing it wakes a parked worker, which then sleeps until the task's due time and
    // wakes again, two wake-ups per run that cost MNIST's 93 us runs ~40 us of median on the
    // 2-vCPU Zen 3 VM (docs/benchmarks.md).
    runSequential();
    return Status::ok();
  }
  M->Sched->enqueue(shared_from_this());
  return Status::ok();
}

Status RequestImpl::prepareRun() {
  const Graph &G = *M->G;
  const size_t NV = G.Values.size();
  RunDims = Plan->Dims;
  Ptrs.assign(NV, nullptr);
  Owned.assign(NV, nullptr);
  Containers.assign(NV, nullptr);
  for (size_t V = 0; V < NV; ++V) {
    if (G.Values[V].Const) {
      Ptrs[V] = G.Values[V].Const->mutableData();
      RunDims[V] = G.Values[V].Const->Dims;
    } else if (Plan->Offsets[V] >= 0) {
      Ptrs[V] = static_cast<char *>(Arena->Data) + Plan->Offsets[V];
    }
  }
  for (size_t V = 0; V < NV; ++V) {
    const Value &Val = G.Values[V];
    if (isContainerKind(Val.Kind) && !Val.IsGraphInput && Val.Producer >= 0) {
      Containers[V] = makeContainer(Val.Kind, Val.Type); // the producing kernel fills it
      Ptrs[V] = Containers[V].get();
    }
  }
  for (size_t I = 0; I < G.Inputs.size(); ++I) {
    const int V = G.Inputs[I];
    if (isContainerKind(G.Values[V].Kind)) {
      Containers[V] = ContainerInputs[I];
      Ptrs[V] = Containers[V].get();
      RunDims[V].clear();
      continue;
    }
    Ptrs[V] = Inputs[I].impl()->data();
    RunDims[V] = Inputs[I].impl()->Dims;
  }
  bool DeviceInput = false;
  for (const Tensor &T : Inputs)
    DeviceInput |= T.impl() && T.impl()->DeviceStorage;
  Tracking = M->UsesDeviceMemory || DeviceInput;
  if (Tracking) {
    DevBuf.resize(NV);
    DevValid.resize(NV, 0);
    HostValid.assign(NV, 1);
    for (size_t V = 0; V < NV; ++V)
      if (!G.Values[V].Const) // a constant's device copy stays valid across runs
        DevValid[V] = 0;
    RETURN_IF_ERROR(prepareDeviceArenas());
    for (size_t I = 0; I < G.Inputs.size(); ++I) {
      const int V = G.Inputs[I];
      if (!Inputs[I].impl() || !Inputs[I].impl()->DeviceStorage)
        continue;
      DevBuf[V] = std::static_pointer_cast<DeviceBuffer>(Inputs[I].impl()->DeviceStorage); // checked in start()
      DevValid[V] = 1;
      HostValid[V] = 0;
      Ptrs[V] = nullptr;
    }
  }
  // update_from outputs are not in the arena: they go to the spare buffer of their input.
  for (size_t SI = 0; SI < M->Stateful.size(); ++SI) {
    const StatefulInput &S = M->Stateful[SI];
    if (S.Preserved && S.UpdateFrom >= 0 && Plan->Resolved[S.UpdateFrom])
      Ptrs[S.UpdateFrom] = States[SI].Spare->Data;
  }
  return Status::ok();
}

Status RequestImpl::runNode(size_t NodeIndex) {
  const Graph &G = *M->G;
  const Node &N = G.Nodes[NodeIndex];
  const CompiledNode &CN = *M->Nodes[NodeIndex];
  ProfileEventScope LayerEvents(Recorder, ProfileEventKind::LayerExecuteBegin, static_cast<int32_t>(NodeIndex));

  if (OPT_RT_UNLIKELY(Tracking) && !CN.Backend->hasDeviceMemory()) {
    // A host node's inputs in host memory before anything reads them (shape inference below too).
    std::lock_guard<std::mutex> Lock(DevMu);
    for (int V : N.Inputs)
      if (V >= 0)
        RETURN_IF_ERROR(ensureOnHost(V, NodeIndex));
  }
  // Outputs whose shape depends on data: infer with the actual values, then allocate.
  bool Unresolved = false;
  std::vector<int> Deferred; // outputs the kernel sizes while running (control flow)
  for (int O : N.Outputs)
    Unresolved |= O >= 0 && !Plan->Resolved[O];
  if (Unresolved) {
    ShapeContext Ctx(N);
    for (int In : N.Inputs)
      Ctx.Inputs.push_back(In < 0 ? ValueInfo()
                                  : runtimeValueInfo(G.Values[In].Kind, Plan->Types[In], RunDims[In], Ptrs[In],
                                                     G.Values[In].Const, G.Values[In].Shape, /*BorrowData=*/true));
    Ctx.Outputs.resize(N.Outputs.size());
    for (size_t I = 0; I < N.Outputs.size(); ++I)
      Ctx.Outputs[I].Present = N.Outputs[I] >= 0;
    RETURN_IF_ERROR(inferNode(Ctx));
    for (size_t I = 0; I < N.Outputs.size(); ++I) {
      const int O = N.Outputs[I];
      if (O < 0 || Plan->Resolved[O])
        continue;
      if (Ctx.Outputs[I].Shape.isDynamic()) {
        // Known only while the kernel runs (control flow): it allocates through allocate_output.
        RunDims[O].clear();
        Ptrs[O] = nullptr;
        Owned[O] = nullptr;
        Deferred.push_back(O);
        continue;
      }
      RunDims[O] = Ctx.Outputs[I].Shape.getDims();
      size_t Count = 1;
      for (int64_t D : RunDims[O])
        Count *= static_cast<size_t>(D);
      Owned[O] = Buffer::allocate(Count * getElementSize(Plan->Types[O]));
      if (!Owned[O])
        return makeError(ErrorCode::OutOfResource, N.describe(), ": cannot allocate output '", G.Values[O].Name, "'");
      Ptrs[O] = Owned[O]->Data;
    }
  }

  OptRtTensor InT[16], OutT[16];
  std::vector<OptRtTensor> InV, OutV;
  OptRtTensor *Ins = InT, *Outs = OutT;
  if (N.Inputs.size() > 16) {
    InV.resize(N.Inputs.size());
    Ins = InV.data();
  }
  if (N.Outputs.size() > 16) {
    OutV.resize(N.Outputs.size());
    Outs = OutV.data();
  }
  auto Bind = [&](int V, OptRtTensor &T) {
    if (V < 0) {
      T = OptRtTensor{sizeof(OptRtTensor), 0, 0, nullptr, nullptr};
      return;
    }
    T.struct_size = sizeof(OptRtTensor);
    T.type = static_cast<int32_t>(Plan->Types[V] == ElementType::Undefined ? G.Values[V].Type : Plan->Types[V]) |
             (static_cast<int32_t>(G.Values[V].Kind) << OPT_RT_VALUE_KIND_SHIFT);
    T.rank = static_cast<int32_t>(RunDims[V].size());
    T.dims = RunDims[V].data();
    T.data = Ptrs[V];
  };
  for (size_t I = 0; I < N.Inputs.size(); ++I)
    Bind(N.Inputs[I], Ins[I]);
  for (size_t I = 0; I < N.Outputs.size(); ++I)
    Bind(N.Outputs[I], Outs[I]);

  struct Allocation {
    RequestImpl *R;
    const Node *N;
    static void *allocate(void *Self, uint32_t Index, int32_t Rank, const int64_t *Dims) {
      Allocation &A = *static_cast<Allocation *>(Self);
      RequestImpl &R = *A.R;
      if (Index >= A.N->Outputs.size() || A.N->Outputs[Index] < 0 || Rank < 0)
        return nullptr;
      const int O = A.N->Outputs[Index];
      if (R.Plan->Resolved[O] || R.Ptrs[O])
        return nullptr; // preallocated, or allocated twice
      R.RunDims[O].assign(Dims, Dims + Rank);
      size_t Count = 1;
      for (int64_t D : R.RunDims[O])
        Count *= static_cast<size_t>(D);
      R.Owned[O] = Buffer::allocate(Count * getElementSize(R.Plan->Types[O]));
      if (!R.Owned[O])
        return nullptr;
      R.Ptrs[O] = R.Owned[O]->Data;
      return R.Ptrs[O];
    }
  };
  Allocation Alloc{this, &N};
  OptRtExecContext Ctx{sizeof(OptRtExecContext), M->Threads, &M->Slice, &poolSliceParallelFor, &Allocation::allocate,
                       &Alloc, nullptr, nullptr};
  char ErrorBuf[1024] = {0};
  const OptRtBackend &B = CN.Backend->Backend;
  const bool OnDevice = CN.Backend->hasDeviceMemory();
  if (OPT_RT_UNLIKELY(Tracking)) {
    // The kernel's tensors where its backend reads them: a device-memory backend gets its own
    // buffers (inputs copied in as needed), any other backend host memory (copied out as needed).
    if (OnDevice && !Deferred.empty())
      return makeError(ErrorCode::Infer, "while running ", N.describe(), " on ", CN.Backend->Device.toString(),
                       ": an output's shape is known only while the kernel runs, which a device with its own "
                       "memory cannot do");
    std::lock_guard<std::mutex> Lock(DevMu);
    for (size_t I = 0; I < N.Inputs.size(); ++I) {
      const int V = N.Inputs[I];
      if (V < 0)
        continue;
      if (OnDevice) {
        RETURN_IF_ERROR(ensureOnDevice(V, CN.Backend, NodeIndex));
        Ins[I].data = DevBuf[V] && DevValid[V] ? DevBuf[V]->Handle : nullptr; // null: a packed constant
      } else {
        RETURN_IF_ERROR(ensureOnHost(V, NodeIndex));
        Ins[I].data = Ptrs[V];
      }
    }
    if (OnDevice)
      for (size_t I = 0; I < N.Outputs.size(); ++I)
        if (N.Outputs[I] >= 0) {
          RETURN_IF_ERROR(deviceOutput(N.Outputs[I], CN.Backend));
          Outs[I].data = DevBuf[N.Outputs[I]]->Handle;
        }
  }
  int32_t RC =
      OPT_RT_UNLIKELY(Recorder)
          ? runKernelProfiled(NodeIndex, Ins, static_cast<uint32_t>(N.Inputs.size()), Outs,
                              static_cast<uint32_t>(N.Outputs.size()), Ctx, ErrorBuf, sizeof(ErrorBuf))
          : B.run_kernel(B.state, CN.Kernel, Ins, static_cast<uint32_t>(N.Inputs.size()), Outs,
                         static_cast<uint32_t>(N.Outputs.size()), &Ctx, ErrorBuf, sizeof(ErrorBuf));
  bool RanOnDevice = OnDevice;
  if (RC != OPT_RT_OK && CN.FallbackKernel) {
    // Not Strict: the node runs on the native CPU instead (ModelLoadOptions::Strict).
    if (!CN.FellBack.exchange(true))
      OPT_LOG(Warning, "while running ", N.describe(), " on ", CN.Backend->Device.toString(), ": ",
              ErrorBuf[0] ? ErrorBuf : "kernel failed", "; running it on ", CN.Fallback->Device.toString(),
              " instead (Strict is off)");
    if (OnDevice) {
      std::lock_guard<std::mutex> Lock(DevMu);
      for (size_t I = 0; I < N.Inputs.size(); ++I)
        if (N.Inputs[I] >= 0) {
          RETURN_IF_ERROR(ensureOnHost(N.Inputs[I], NodeIndex));
          Ins[I].data = Ptrs[N.Inputs[I]];
        }
      for (size_t I = 0; I < N.Outputs.size(); ++I)
        if (N.Outputs[I] >= 0)
          Outs[I].data = Ptrs[N.Outputs[I]];
    }
    ErrorBuf[0] = 0;
    const OptRtBackend &F = CN.Fallback->Backend;
    RC = F.run_kernel(F.state, CN.FallbackKernel, Ins, static_cast<uint32_t>(N.Inputs.size()), Outs,
                      static_cast<uint32_t>(N.Outputs.size()), &Ctx, ErrorBuf, sizeof(ErrorBuf));
    RanOnDevice = false;
    if (RC != OPT_RT_OK)
      return makeError(runErrorCode(RC), "while running ", N.describe(), " on ", CN.Fallback->Device.toString(),
                       " (after ", CN.Backend->Device.toString(), " failed it): ", ErrorBuf[0] ? ErrorBuf : "kernel failed");
  }
  if (RC != OPT_RT_OK)
    return makeError(runErrorCode(RC), "while running ", N.describe(), " on ", CN.Backend->Device.toString(), ": ",
                     ErrorBuf[0] ? ErrorBuf : "kernel failed",
                     CN.Backend->Device.getPlatform() != PlatformKind::Native && M->Options.Strict
                         ? " (Strict: no fallback to the CPU)"
                         : "");
  if (OPT_RT_UNLIKELY(Tracking)) {
    std::lock_guard<std::mutex> Lock(DevMu);
    for (int O : N.Outputs) {
      if (O < 0)
        continue;
      DevValid[O] = RanOnDevice ? 1 : 0;
      HostValid[O] = RanOnDevice ? 0 : 1;
      const char Read = M->ReadOnHost[O];
      if (RanOnDevice && ((Read & 1) || ((Read & 2) && !RunDeviceOutputs) || !M->Options.IntermediateSavePath.empty()))
        RETURN_IF_ERROR(ensureOnHost(O, NodeIndex));
    }
  }
  for (int O : Deferred)
    if (!Ptrs[O])
      return makeError(ErrorCode::Infer, "while running ", N.describe(), " on ", CN.Backend->Device.toString(),
                       ": the kernel did not produce output '", G.Values[O].Name, "'");

  if (!M->Options.IntermediateSavePath.empty()) {
    for (int O : N.Outputs) {
      if (O < 0 || isContainerKind(G.Values[O].Kind)) // sequences/optionals have no .npy form
        continue;
      const std::string Prefix = M->Options.IndexedIntermediateSave ? std::to_string(RunIndex) + "_" : "";
      RETURN_IF_ERROR(saveNpy(M->Options.IntermediateSavePath + "/" + Prefix + fileSafe(G.Values[O].Name) + ".npy",
                              Plan->Types[O], RunDims[O], Ptrs[O]));
    }
  }
  return Status::ok();
}

size_t RequestImpl::valueBytes(int V) const {
  const Value &Val = M->G->Values[V];
  const ElementType T = Val.Const ? Val.Const->Type : (Plan->Types[V] == ElementType::Undefined ? Val.Type : Plan->Types[V]);
  size_t Count = 1;
  for (int64_t D : RunDims[V])
    Count *= static_cast<size_t>(D < 0 ? 0 : D);
  return Count * getElementSize(T);
}

void RequestImpl::recordCopy(size_t NodeIndex, int V, bool Begin, const DeviceID &From, const DeviceID &To) {
  if (!Recorder)
    return;
  ProfileEvent E;
  E.Kind = Begin ? ProfileEventKind::CopyBegin : ProfileEventKind::CopyEnd;
  E.Operation = static_cast<int32_t>(NodeIndex);
  E.ThreadID = ProfileEventRecorder::currentThreadID();
  E.TensorID = V >= 0 && static_cast<size_t>(V) < ValueToTensor.size() ? ValueToTensor[V] : -1;
  E.SourceDevice = From;
  E.DestDevice = To;
  E.TimeStamp = std::chrono::high_resolution_clock::now();
  Recorder->record(E);
}

Status RequestImpl::ensureOnHost(int V, size_t NodeIndex) {
  if (HostValid[V] || !DevValid[V] || !DevBuf[V])
    return Status::ok();
  const size_t Bytes = valueBytes(V);
  if (!Ptrs[V]) { // a graph input bound from the device, read on the host too
    Owned[V] = Buffer::allocate(Bytes);
    if (!Owned[V])
      return makeError(ErrorCode::OutOfResource, "cannot allocate ", Bytes, " bytes for a host copy of '",
                       M->G->Values[V].Name, "'");
    Ptrs[V] = Owned[V]->Data;
  }
  const DeviceID Host = localDevices().front();
  recordCopy(NodeIndex, V, true, DevBuf[V]->Device, Host);
  Status S = DevBuf[V]->copyToHost(Ptrs[V], Bytes);
  recordCopy(NodeIndex, V, false, DevBuf[V]->Device, Host);
  if (!S.isOk())
    return makeError(S.code(), "while copying '", M->G->Values[V].Name, "' to the host: ", S.message());
  HostValid[V] = 1;
  return Status::ok();
}

Status RequestImpl::prepareDeviceArenas() {
  const std::vector<ExecutionPlan::DeviceArena> &Arenas = Plan->DeviceArenas;
  const size_t NV = M->G->Values.size();
  bool Fresh = DevViewsPlan != Plan || DevArenas.size() != Arenas.size();
  // A view held beyond this request (a device tensor of getTensor()/getOutput(), or fed back as
  // an input): its bytes must not change, so this run takes a new allocation and the held views
  // keep the old one alive.
  for (size_t V = 0; !Fresh && V < DevViews.size(); ++V)
    Fresh = DevViews[V] && DevViews[V].use_count() > 1 + (DevBuf[V] == DevViews[V] ? 1 : 0);
  if (!Fresh)
    return Status::ok();
  // Let go of the old allocation first: a full device may fit the new one then.
  for (std::shared_ptr<DeviceBuffer> &D : DevBuf)
    if (D && D->Parent)
      D.reset();
  DevViews.assign(NV, nullptr);
  DevArenas.clear();
  DevViewsPlan = nullptr;
  for (const ExecutionPlan::DeviceArena &A : Arenas) {
    Result<std::shared_ptr<DeviceBuffer>> R = DeviceBuffer::allocate(A.Backend, A.Bytes);
    if (!R.isOk()) {
      DevArenas.clear();
      return makeError(R.status().code(), "the device tensors of model '", M->Name, "' (", A.Values,
                       " values planned in ", A.Bytes, " bytes): ", R.status().message());
    }
    DevArenas.push_back(std::move(R.value()));
  }
  for (size_t V = 0; V < NV; ++V) {
    const int A = Plan->DeviceArenaOf[V];
    if (A < 0)
      continue;
    const std::shared_ptr<DeviceBuffer> &Arena = DevArenas[static_cast<size_t>(A)];
    const uint64_t Offset = static_cast<uint64_t>(Plan->DeviceOffsets[V]), Bytes = valueBytes(static_cast<int>(V));
    if (Offset > Arena->Bytes || Bytes > Arena->Bytes - Offset) { // the planner's contract, checked: never a view past the arena
      DevViews.assign(NV, nullptr);
      DevArenas.clear();
      return makeError(ErrorCode::Device, "the device plan of model '", M->Name, "' places value '",
                       M->G->Values[V].Name, "' (", Bytes, " bytes at offset ", Offset, ") outside its ", Arena->Bytes,
                       "-byte arena");
    }
    DevViews[V] = DeviceBuffer::view(Arena, Offset, Bytes);
  }
  DevViewsPlan = Plan;
  return Status::ok();
}

const std::shared_ptr<DeviceBuffer> *RequestImpl::plannedView(int V, const std::shared_ptr<RegisteredBackend> &B) const {
  if (static_cast<size_t>(V) >= DevViews.size() || !DevViews[V] || DevViews[V]->Owner != B)
    return nullptr;
  // A device output handed to the caller owns its buffer (setDeviceOutputs): not the plan's bytes.
  if (RunDeviceOutputs && M->G->Values[V].IsGraphOutput)
    return nullptr;
  return &DevViews[V];
}

Status RequestImpl::ensureOnDevice(int V, const std::shared_ptr<RegisteredBackend> &B, size_t NodeIndex) {
  if (DevValid[V] && DevBuf[V] && DevBuf[V]->Owner == B)
    return Status::ok();
  RETURN_IF_ERROR(ensureOnHost(V, NodeIndex)); // on another device: through the host
  if (!Ptrs[V] && M->G->Values[V].Const)
    return Status::ok(); // a constant its kernels packed and no longer read: nothing to copy
  const size_t Bytes = valueBytes(V);
  if (const std::shared_ptr<DeviceBuffer> *View = plannedView(V, B)) {
    DevBuf[V] = *View;
  } else if (!DevBuf[V] || DevBuf[V]->Owner != B || DevBuf[V]->Bytes < Bytes || DevBuf[V].use_count() > 1 ||
             DevBuf[V]->Parent) {
    DevBuf[V].reset(); // the old buffer goes first: a full device may fit the new one then
    Result<std::shared_ptr<DeviceBuffer>> R = DeviceBuffer::allocate(B, Bytes);
    if (!R.isOk())
      return makeError(R.status().code(), "input '", M->G->Values[V].Name, "' of ", M->G->Nodes[NodeIndex].describe(),
                       ": ", R.status().message());
    DevBuf[V] = std::move(R.value());
  }
  if (Ptrs[V] && Bytes) {
    const DeviceID Host = localDevices().front();
    recordCopy(NodeIndex, V, true, Host, B->Device);
    Status S = DevBuf[V]->copyFromHost(Ptrs[V], Bytes);
    recordCopy(NodeIndex, V, false, Host, B->Device);
    if (!S.isOk())
      return makeError(S.code(), "while copying '", M->G->Values[V].Name, "' to the device: ", S.message());
  }
  DevValid[V] = 1;
  return Status::ok();
}

Status RequestImpl::deviceOutput(int O, const std::shared_ptr<RegisteredBackend> &B) {
  if (const std::shared_ptr<DeviceBuffer> *View = plannedView(O, B)) {
    DevBuf[O] = *View;
    return Status::ok();
  }
  const size_t Bytes = valueBytes(O);
  if (DevBuf[O] && DevBuf[O]->Owner == B && DevBuf[O]->Bytes >= Bytes && DevBuf[O].use_count() == 1 && !DevBuf[O]->Parent)
    return Status::ok();
  DevBuf[O].reset();
  Result<std::shared_ptr<DeviceBuffer>> R = DeviceBuffer::allocate(B, Bytes);
  if (!R.isOk())
    return makeError(R.status().code(), "output '", M->G->Values[O].Name, "': ", R.status().message());
  DevBuf[O] = std::move(R.value());
  return Status::ok();
}

void RequestImpl::runSequential() {
  if (OPT_RT_UNLIKELY(Recorder)) {
    Recorder->record(ProfileEventKind::QueueEnd);
    Recorder->record(ProfileEventKind::ModelExecuteBegin);
  }
  const unsigned OldMode = M->Options.DisableDenormals ? disableDenormalsOnThisThread() : 0;
  Status S = prepareRun();
  const size_t NN = M->G->Nodes.size();
  for (size_t I = 0; S.isOk() && I < NN; ++I) {
    if (CancelFlag.load(std::memory_order_relaxed) || M->ShutDown.load(std::memory_order_relaxed)) {
      S = cancelledError(*M, I);
      break;
    }
    S = runNode(I);
  }
  if (M->Options.DisableDenormals)
    restoreDenormalsOnThisThread(OldMode);
  finish(S);
}

void RequestImpl::startPipeline() {
  if (OPT_RT_UNLIKELY(Recorder)) {
    Recorder->record(ProfileEventKind::QueueEnd);
    Recorder->record(ProfileEventKind::ModelExecuteBegin);
  }
  Status S = prepareRun();
  const size_t NN = M->G->Nodes.size();
  if (!S.isOk() || NN == 0) {
    finish(S);
    return;
  }
  PendingInputs.reset(new std::atomic<int>[NN]);
  for (size_t I = 0; I < NN; ++I)
    PendingInputs[I].store(M->NodeProducerCount[I], std::memory_order_relaxed);
  Outstanding.store(static_cast<int>(NN));
  Failed.store(false);
  FirstError = Status::ok();
  auto Self = shared_from_this();
  std::function<void(int)> Dispatch;
  // Each task runs one node, then releases the consumers that became ready.
  struct Runner {
    static void run(std::shared_ptr<RequestImpl> R, int Node) {
      if (!R->Failed.load()) {
        Status NS;
        if (R->CancelFlag.load() || R->M->ShutDown.load())
          NS = cancelledError(*R->M, static_cast<size_t>(Node));
        else
          NS = R->runNode(static_cast<size_t>(Node));
        if (!NS.isOk()) {
          std::lock_guard<std::mutex> Lock(R->ErrorMu);
          if (R->FirstError.isOk())
            R->FirstError = NS;
          R->Failed.store(true);
        }
      }
      for (int U : R->M->NodeUsers[Node])
        if (R->PendingInputs[U].fetch_sub(1) == 1)
          R->M->Pool->submit([R, U] { run(R, U); });
      if (R->Outstanding.fetch_sub(1) == 1) {
        Status Final;
        {
          std::lock_guard<std::mutex> Lock(R->ErrorMu);
          Final = R->FirstError;
        }
        R->finish(Final);
      }
    }
  };
  for (size_t I = 0; I < NN; ++I)
    if (M->NodeProducerCount[I] == 0)
      M->Pool->submit([Self, I] { Runner::run(Self, static_cast<int>(I)); });
}

void RequestImpl::finish(const Status &RunStatus) {
  if (OPT_RT_UNLIKELY(Recorder))
    Recorder->record(ProfileEventKind::ModelExecuteEnd);
  M->Pool->disarm();
  Status S = RunStatus;
  std::exception_ptr E;
  std::vector<InferCallback> CBs;
  {
    std::lock_guard<std::mutex> Lock(Mu);
    if (S.isOk())
      S = commitPreservedLocked(); // the cache advances only when the whole run succeeded
    if (S.isOk())
      ++RunIndex;
    E = toExceptionPtr(S);
    State = S.isOk() ? InferStatus::Ready : InferStatus::Fault;
    Error = E;
    CBs = Callbacks;
  }
  if (!S.isOk())
    OPT_LOG(Debug, "inference failed: ", S.message());
  const RequestImpl *Prev = CallbackOwner;
  CallbackOwner = this;
  for (auto &CB : CBs) {
    try {
      CB(S.isOk() ? InferStatus::Ready : InferStatus::Fault, E);
    } catch (const std::exception &Ex) {
      OPT_LOG(Warning, "an inference callback threw: ", Ex.what());
    } catch (...) {
      OPT_LOG(Warning, "an inference callback threw a non-standard exception");
    }
  }
  CallbackOwner = Prev;
  {
    std::lock_guard<std::mutex> Lock(Mu);
    ++CompletedRuns;
  }
  Cv.notify_all();
  // Last: finalize() may release the model's threads and kernels once every run has ended. The
  // request (and so the model) is still referenced by whoever called finish().
  M->endRun();
}

bool RequestImpl::isInCallback() const { return CallbackOwner == this; }

bool RequestImpl::isInAnyCallback() { return CallbackOwner != nullptr; }

void RequestImpl::runPendingHere() {
  uint64_t Ticket = 0;
  {
    std::lock_guard<std::mutex> Lock(Mu);
    if (CompletedRuns != StartedRuns)
      Ticket = PendingTicket;
    PendingTicket = 0;
  }
  // Taken back before any worker started it: no worker will; run it here. finish() records the
  // completion for the wait that follows.
  if (Ticket && M->Pool->cancelDeferred(Ticket))
    runSequential();
}

Tensor RequestImpl::valueTensor(int V) const {
  const Graph &G = *M->G;
  const Value &Val = G.Values[V];
  for (size_t SI = 0; SI < M->Stateful.size(); ++SI) {
    const StatefulInput &S = M->Stateful[SI];
    if (S.Preserved && (S.Value == V || S.UpdateFrom == V))
      return preservedTensor(SI); // after a run the output was swapped in as the input's value
  }
  if (Val.Const) {
    Tensor T = tensor(Val.Const->Type, TensorShape::fromDims(Val.Const->Dims));
    if (Val.Const->Type == ElementType::String) {
      auto *Dst = static_cast<std::string *>(T.data());
      for (size_t I = 0; I < Val.Const->Strings.size(); ++I)
        Dst[I] = Val.Const->Strings[I];
    } else if (Val.Const->Bytes) { // a copy dropped after packing is re-read from the model file
      std::memcpy(T.data(), Val.Const->Data ? Val.Const->Data : Val.Const->Source, Val.Const->Bytes);
    }
    return T;
  }
  for (size_t I = 0; I < G.Inputs.size(); ++I)
    if (G.Inputs[I] == V)
      return Inputs[I];
  if (Tracking && static_cast<size_t>(V) < DevValid.size() && DevValid[V] && !HostValid[V] && DevBuf[V])
    return makeDeviceTensor(Plan->Types[V], RunDims[V], DevBuf[V]); // setDeviceOutputs(true)
  if (Owned[V])
    return makeTensorView(Plan->Types[V], RunDims[V], Owned[V], 0);
  return makeTensorView(Plan->Types[V], RunDims[V], Arena, static_cast<size_t>(Plan->Offsets[V]));
}

} // namespace runtime
} // namespace optimium
