// InferRequest: thin public wrapper over RequestImpl.
#include "Optimium/Runtime/InferRequest.h"
#include "Optimium/Runtime/Exceptions.h"
#include "Optimium/Runtime/Model.h"

#include <algorithm>
#include <cstdint>

#include "core/ErrorConversion.h"
#include "exec/InputShapes.h"
#include "exec/Request.h"

namespace optimium {
namespace runtime {

using namespace detail;

namespace {
RequestImpl &checked(const std::shared_ptr<RequestImpl> &Impl) {
  if (!Impl)
    throw InvalidStateError("this InferRequest is empty (default-constructed); use Model::createRequest()");
  return *Impl;
}

/// For calls the runtime must serve: an InvalidStateError once finalize() released the model.
RequestImpl &live(const std::shared_ptr<RequestImpl> &Impl, const char *What) {
  RequestImpl &R = checked(Impl);
  if (R.M->ShutDown.load())
    throwIfError(R.M->shutDownError(What));
  return R;
}

/// Outputs and intermediates are only readable between runs.
void requireFinishedRun(RequestImpl &R, std::unique_lock<std::mutex> &, const std::string &What) {
  if (R.State == InferStatus::Running)
    throw InvalidOperationError(What + ": the request is still running; call wait() first");
  if (!R.HasRun)
    throw InvalidOperationError(What + ": no inference has run on this request yet");
  if (R.State == InferStatus::Fault)
    throw InvalidOperationError(What + ": the last inference failed; its outputs are not valid");
}
} // namespace

void InferRequest::infer(ArrayRef<Tensor> Inputs) { throwIfError(live(Impl, "infer").start(Inputs.vec())); }

namespace {
/// Inputs by name in the model's input order; every model input must be given, no other.
std::vector<Tensor> orderInputs(const RequestImpl &R, const std::map<std::string, Tensor> &Inputs,
                                const char *What) {
  const ModelImpl &M = *R.M;
  std::vector<Tensor> Ordered;
  for (const StringRef &Name : M.InputNames) {
    auto It = Inputs.find(Name.str());
    if (It == Inputs.end())
      throw InvalidArgumentError(std::string(What) + ": input '" + Name.str() + "' of model '" + M.Name +
                                 "' is missing");
    Ordered.push_back(It->second);
  }
  for (const auto &KV : Inputs) {
    if (std::find(M.InputNames.begin(), M.InputNames.end(), StringRef(KV.first)) != M.InputNames.end())
      continue;
    const StatefulInput *S = M.findStateful(KV.first);
    if (S && S->Preserved) // host or device tensor alike: the value is the request's own
      throw InvalidArgumentError(std::string(What) + ": '" + KV.first + "' is a preserved input of model '" + M.Name +
                                 "': its value lives in the request (write it through getTensor('" + KV.first +
                                 "') between runs), " + What + "() does not take it");
    throw InvalidArgumentError(std::string(What) + ": model '" + M.Name + "' has no input named '" + KV.first +
                                 "'");
  }
  return Ordered;
}
} // namespace

void InferRequest::profile(ArrayRef<Tensor> Inputs, const ProfileOptions &Options,
                           std::shared_ptr<std::atomic_bool> StopFlag) {
  live(Impl, "profile").profile(Inputs.vec(), Options, StopFlag);
}

void InferRequest::profile(const std::map<std::string, Tensor> &Inputs, const ProfileOptions &Options,
                           std::shared_ptr<std::atomic_bool> StopFlag) {
  RequestImpl &R = live(Impl, "profile");
  R.profile(orderInputs(R, Inputs, "profile"), Options, StopFlag);
}

ArrayRef<ProfileEvent> InferRequest::getProfileEvents() const {
  RequestImpl &R = checked(Impl);
  std::lock_guard<std::mutex> Lock(R.ProfileMu);
  if (!R.LastRecorder)
    return {};
  ArrayRef<ProfileEvent> All = R.LastRecorder->events();
  const size_t End = std::min(R.LastEndEvent, All.size());
  const size_t Begin = std::min(R.LastFirstEvent, End);
  return ArrayRef<ProfileEvent>(All.data() + Begin, End - Begin);
}

uint64_t InferRequest::getDroppedProfileEvents() const {
  RequestImpl &R = checked(Impl);
  std::lock_guard<std::mutex> Lock(R.ProfileMu);
  return R.LastDropped;
}

ProfileDurations InferRequest::getProfileDurations() const {
  ProfileDurations D = computeProfileDurations(getProfileEvents(), getModelOperations(), getModelTensors());
  D.ModelName = getModelName();
  return D;
}

std::vector<LayerDuration> InferRequest::getLayerDurations() const {
  return summarizeLayerDurations(getProfileEvents(), getModelOperations());
}

void InferRequest::setDeviceOutputs(bool Enable) {
  RequestImpl &R = checked(Impl);
  std::lock_guard<std::mutex> Lock(R.Mu);
  R.DeviceOutputs = Enable;
}

bool InferRequest::getDeviceOutputs() const {
  RequestImpl &R = checked(Impl);
  std::lock_guard<std::mutex> Lock(R.Mu);
  return R.DeviceOutputs;
}

void InferRequest::setRecorder(std::shared_ptr<ProfileEventRecorder> Recorder) {
  RequestImpl &R = checked(Impl);
  std::lock_guard<std::mutex> Lock(R.Mu);
  if (!R.UserRecorder)
    R.UserRecorder = std::move(Recorder);
}

void InferRequest::infer(const std::map<std::string, Tensor> &Inputs) {
  RequestImpl &R = live(Impl, "infer");
  throwIfError(R.start(orderInputs(R, Inputs, "infer")));
}

void InferRequest::run(ArrayRef<Tensor> Inputs) {
  RequestImpl &R = live(Impl, "run");
  // From inside a callback of this request wait() returns at once: run there as infer() would.
  throwIfError(R.start(Inputs.vec(), /*RunOnCaller=*/!R.isInCallback()));
  wait();
}

void InferRequest::run(const std::map<std::string, Tensor> &Inputs) {
  RequestImpl &R = live(Impl, "run");
  throwIfError(R.start(orderInputs(R, Inputs, "run"), /*RunOnCaller=*/!R.isInCallback()));
  wait();
}

bool InferRequest::wait(std::chrono::microseconds Timeout) {
  RequestImpl &R = checked(Impl);
  if (R.isInCallback())
    return false; // a callback runs while the run completes: waiting here would deadlock
  if (Timeout.count() <= 0)
    R.runPendingHere(); // a run no worker has started yet runs here, as the caller would wait anyway
  std::unique_lock<std::mutex> Lock(R.Mu);
  auto Done = [&] { return R.CompletedRuns == R.StartedRuns; };
  if (Timeout.count() <= 0)
    R.Cv.wait(Lock, Done);
  else if (!R.Cv.wait_for(Lock, Timeout, Done))
    return true;
  if (R.State == InferStatus::Fault && R.Error)
    std::rethrow_exception(R.Error);
  return false;
}

InferStatus InferRequest::getStatus() const {
  RequestImpl &R = checked(Impl);
  std::lock_guard<std::mutex> Lock(R.Mu);
  return R.State;
}

void InferRequest::addCallback(InferCallback Callback) {
  RequestImpl &R = checked(Impl);
  if (!Callback)
    throw InvalidArgumentError("addCallback: the callback is empty");
  std::lock_guard<std::mutex> Lock(R.Mu);
  R.Callbacks.push_back(std::move(Callback));
}

void InferRequest::cancel() { checked(Impl).CancelFlag.store(true); }

Tensor InferRequest::getOutput(size_t Index) const {
  RequestImpl &R = live(Impl, "getOutput");
  std::unique_lock<std::mutex> Lock(R.Mu);
  const Graph &G = *R.M->G;
  if (Index >= G.Outputs.size())
    throw InvalidArgumentError("getOutput: index " + std::to_string(Index) + " is out of range: model '" + R.M->Name +
                               "' has " + std::to_string(G.Outputs.size()) + " output(s)");
  requireFinishedRun(R, Lock, "getOutput");
  const Value &V = G.Values[G.Outputs[Index]];
  if (isContainerKind(V.Kind))
    throw InvalidArgumentError("getOutput: output '" + V.Name + "' of model '" + R.M->Name + "' is a " +
                               toString(V.Kind) + " value; the public API returns tensors only (see docs/sequences.md)");
  return R.valueTensor(G.Outputs[Index]);
}

Tensor InferRequest::getOutput(StringRef Name) const {
  RequestImpl &R = live(Impl, "getOutput");
  const Graph &G = *R.M->G;
  for (size_t I = 0; I < G.Outputs.size(); ++I)
    if (G.Values[G.Outputs[I]].Name == Name.str())
      return getOutput(I);
  std::string Names;
  for (int O : G.Outputs)
    Names += (Names.empty() ? "" : ", ") + G.Values[O].Name;
  throw InvalidArgumentError("getOutput: model '" + R.M->Name + "' has no output named '" + Name.str() +
                             "' (outputs: " + Names + ")");
}

Tensor InferRequest::getTensor(StringRef Name) const {
  RequestImpl &R = live(Impl, "getTensor");
  const Graph &G = *R.M->G;
  const int V = G.findValue(Name.str());
  if (V < 0 || !R.M->findTensor(Name.str()))
    throw InvalidArgumentError("getTensor: model '" + R.M->Name + "' has no tensor named '" + Name.str() + "'");
  std::unique_lock<std::mutex> Lock(R.Mu);
  const Value &Val = G.Values[V];
  if (isContainerKind(Val.Kind))
    throw InvalidArgumentError("getTensor: '" + Name.str() + "' of model '" + R.M->Name + "' is a " +
                               toString(Val.Kind) + " value, not a tensor (see docs/sequences.md)");
  if (Val.Const)
    return R.valueTensor(V);
  const StatefulInput *S = R.M->findStateful(Name.str());
  if (S && S->Preserved) {
    // The request's own value: readable and writable between runs, even before the first one.
    if (R.State == InferStatus::Running)
      throw InvalidOperationError("getTensor('" + Name.str() + "'): the request is still running; call wait() first");
    return R.preservedTensor(static_cast<size_t>(S - R.M->Stateful.data()));
  }
  requireFinishedRun(R, Lock, "getTensor('" + Name.str() + "')");
  for (const StatefulInput &SI : R.M->Stateful)
    if (SI.Preserved && SI.UpdateFrom == V)
      return R.valueTensor(V); // swapped in as its input's value
  if (!Val.IsGraphInput && !R.Owned[V] && !R.Plan->Readable[V])
    throw InvalidOperationError("getTensor: '" + Name.str() +
                                "' is an intermediate whose memory is reused by later operations; load the model "
                                "with EnableMemoryOptimization = false to read every intermediate");
  return R.valueTensor(V);
}

namespace {
/// The manifest entry of a tensor by name, with the errors section 10 specifies.
size_t statefulIndex(const RequestImpl &R, StringRef Name, const char *What) {
  const ModelImpl &M = *R.M;
  if (!M.findTensor(Name.str()))
    throw InvalidArgumentError(std::string(What) + ": model '" + M.Name + "' has no tensor named '" + Name.str() + "'");
  const StatefulInput *S = M.findStateful(Name.str());
  return S ? static_cast<size_t>(S - M.Stateful.data()) : SIZE_MAX;
}
} // namespace

void InferRequest::setTensorShape(StringRef Name, const TensorShape &Shape) {
  RequestImpl &R = live(Impl, "setTensorShape");
  const size_t SI = statefulIndex(R, Name, "setTensorShape");
  const TensorInfo &TI = *R.M->findTensor(Name.str());
  if (SI == SIZE_MAX || !R.M->Stateful[SI].Resizable)
    throw InvalidArgumentError("setTensorShape: tensor '" + Name.str() + "' (shape " + TI.Shape.toString() +
                               ") is not resizable; cannot set shape " + Shape.toString() +
                               " (mark it \"resizable\" in the model's optimium.json)");
  const StatefulInput &S = R.M->Stateful[SI];
  if (Shape.isDynamic())
    throw InvalidArgumentError("setTensorShape: shape " + Shape.toString() + " for '" + Name.str() +
                               "' is symbolic; a resizable tensor takes a concrete shape");
  const std::vector<int64_t> Dims = Shape.getDims();
  for (int64_t D : Dims)
    if (D < 0)
      throw InvalidArgumentError("setTensorShape: shape " + Shape.toString() + " for '" + Name.str() +
                                 "' has a negative dimension");
  size_t Count = 1;
  for (int64_t D : Dims)
    if (__builtin_mul_overflow(Count, static_cast<size_t>(D), &Count) || Count > (SIZE_MAX >> 5))
      throw InvalidArgumentError("setTensorShape: shape " + Shape.toString() + " for '" + Name.str() +
                                 "' has too many elements");
  if (Dims.size() != S.BaseDims.size())
    throw ShapeError("setTensorShape: shape " + Shape.toString() + " for '" + Name.str() + "' has rank " +
                     std::to_string(Dims.size()) + ", the tensor's base shape " + dimsText(S.BaseDims) + " has rank " +
                     std::to_string(S.BaseDims.size()));
  if (!S.DeclaredCap.empty() && elementCountOf(Dims) > elementCountOf(S.DeclaredCap))
    throw InvalidArgumentError("setTensorShape: shape " + Shape.toString() + " for '" + Name.str() + "' (" +
                               std::to_string(elementCountOf(Dims)) + " elements) is beyond its declared capacity " +
                               dimsText(S.DeclaredCap) + " (" + std::to_string(elementCountOf(S.DeclaredCap)) + " elements)");
  std::lock_guard<std::mutex> Lock(R.Mu);
  R.States[SI].Pending = Dims;
  R.States[SI].HasPending = true;
}

void InferRequest::applyShapeChanges(bool ShrinkToFit) {
  RequestImpl &R = live(Impl, "applyShapeChanges");
  std::lock_guard<std::mutex> Lock(R.Mu);
  if (R.State == InferStatus::Running)
    throw InvalidStateError("applyShapeChanges: an inference of model '" + R.M->Name +
                            "' is running on this request; call wait() first");
  R.applyShapeChangesLocked(ShrinkToFit);
}

void InferRequest::releaseStaleShapeMemory() {
  RequestImpl &R = checked(Impl);
  std::lock_guard<std::mutex> Lock(R.Mu);
  R.Stale.clear();
}

void InferRequest::setResizeMigration(StringRef Name, ResizeMigrateFn Fn) {
  RequestImpl &R = checked(Impl);
  const size_t SI = statefulIndex(R, Name, "setResizeMigration");
  if (SI == SIZE_MAX || !R.M->Stateful[SI].Preserved)
    throw InvalidArgumentError("setResizeMigration: tensor '" + Name.str() + "' of model '" + R.M->Name +
                               "' is not a preserved (cached) tensor");
  std::lock_guard<std::mutex> Lock(R.Mu);
  R.States[SI].Migrate = std::move(Fn);
}

std::string InferRequest::getModelName() const { return checked(Impl).M->Name; }
ArrayRef<OpInfo> InferRequest::getModelOperations() const { return checked(Impl).M->Ops; }
ArrayRef<TensorInfo> InferRequest::getModelTensors() const { return checked(Impl).M->Tensors; }
const TensorInfo &InferRequest::getTensorInfo(StringRef Name) const {
  return Model(checked(Impl).M).getTensorInfo(Name);
}
const TensorInfo &InferRequest::getInputTensorInfo(size_t Index) const {
  return Model(checked(Impl).M).getInputTensorInfo(Index);
}
const TensorInfo &InferRequest::getOutputTensorInfo(size_t Index) const {
  return Model(checked(Impl).M).getOutputTensorInfo(Index);
}

} // namespace runtime
} // namespace optimium
