// Model groups (spec section 11): models that never run concurrently share one thread pool and
// one Exclusive scheduler. Members run through a blocking run(); a run of another member from
// another thread waits until the current one ends.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "Optimium/Runtime/Export.h"
#include "Optimium/Runtime/Options.h"
#include "Optimium/Runtime/Profile.h"
#include "Optimium/Runtime/Shape.h"
#include "Optimium/Runtime/Tensor.h"
#include "Optimium/Runtime/TensorInfo.h"
#include "Optimium/Runtime/Utils/ArrayRef.h"
#include "Optimium/Runtime/Utils/StringRef.h"

namespace optimium {
namespace runtime {

/// The shared pool's knobs (Cores, SpinIterations, SpinYieldIterations, DisableDenormals,
/// EnableWorkStealing). The pool's size is not a knob: it is the largest member's ThreadCount.
/// With SpinIterations < 0 the workers stay warm from one member's run to the next (up to
/// kGroupWarmWindowUs after a run ends), then park: an idle group uses no CPU.
struct ModelGroupOptions : PoolTuning {};

/// Per-member options (Devices, Strict, EnableMemoryOptimization, IntermediateSavePath,
/// IndexedIntermediateSave, Passphrase, ThreadCount, ResizableCapacities). ThreadCount bounds the
/// member's parallel ranges; 0 = one per core (the size of ModelGroupOptions::Cores when given).
struct GroupMemberOptions : PerModelOptions {};

/// How long (microseconds) the workers of a group with SpinIterations < 0 keep spinning after a
/// member's run ends, waiting for the next member's run (the alternation of a pipeline).
constexpr int kGroupWarmWindowUs = 2000;

struct GroupImpl;
struct GroupMemberImpl;

/// One model of a group. Not a Model: no createRequest(); the member owns one request, reused by
/// every run() (Preserved / Resizable tensors keep their state between runs). Copies share the
/// member. A member (any copy) keeps its group alive.
class OPTIMIUM_RT_API GroupMember {
public:
  GroupMember() {}

  /// Runs the model and returns when it ends (BLOCKING). Inputs in the model's input order, or by
  /// name. Waits while another member of the group runs (FIFO). The first run() of any member
  /// seals the group. Validation errors (InvalidArgumentError / TypeError / ShapeError) and run
  /// errors (InferError, ...) are thrown here; the member and the group stay usable.
  void run(ArrayRef<Tensor> Inputs);
  void run(const std::map<std::string, Tensor> &Inputs);

  /// Output of the last run(), by index or name. Points into the member's reused memory: the next
  /// run() overwrites it in place. Tensor::copyTo() takes a snapshot.
  Tensor getOutput(size_t Index) const;
  Tensor getOutput(StringRef Name) const;
  /// Any tensor of the last run by name (inputs, outputs, Preserved tensors, readable intermediates).
  Tensor getTensor(StringRef Name) const;
  /// Records a new shape for a Resizable tensor; applied at the next run() (see
  /// InferRequest::setTensorShape for the rules).
  void setTensorShape(StringRef Name, const TensorShape &Shape);

  ArrayRef<StringRef> getInputNames() const;
  ArrayRef<StringRef> getOutputNames() const;
  const TensorInfo &getTensorInfo(StringRef Name) const;
  const TensorInfo &getInputTensorInfo(size_t Index) const;
  const TensorInfo &getOutputTensorInfo(size_t Index) const;
  std::string getName() const;

  /// Extension (not in the reference API): records every later run() of this member into
  /// Recorder (appending; nullptr stops recording), so a pipeline can time its stages with the
  /// profiler. getProfileDurations() / getLayerDurations() summarize what it holds.
  void setRecorder(std::shared_ptr<ProfileEventRecorder> Recorder);
  ProfileDurations getProfileDurations() const;
  std::vector<LayerDuration> getLayerDurations() const;

  explicit operator bool() const { return static_cast<bool>(Impl); }

  // Internal.
  explicit GroupMember(std::shared_ptr<GroupMemberImpl> I) : Impl(std::move(I)) {}
  const std::shared_ptr<GroupMemberImpl> &impl() const { return Impl; }

private:
  std::shared_ptr<GroupMemberImpl> Impl;
};

/// A group of models sharing one pool. Copies share the group. Destroying the last ModelGroup
/// handle does not stop anything: the pool and the members live until the last GroupMember
/// handle is gone too, and a run in progress completes normally.
class OPTIMIUM_RT_API ModelGroup {
public:
  ModelGroup() {}

  /// Loads a model (as loadModel() does) into the group. InvalidStateError once the group is
  /// sealed; the loader's errors (IOError, ContainerError, ModelError, ...) when the model does not
  /// load, leaving the group as it was.
  GroupMember add(const std::string &Path, const GroupMemberOptions &Options = {});
  /// From the bytes of an ONNX file; NOT copied: keep them alive as long as the member.
  GroupMember add(const uint8_t *Data, size_t Size, const GroupMemberOptions &Options);
  /// Members added so far.
  size_t size() const;
  /// Whether a member has run (no add() after that).
  bool sealed() const;

  explicit operator bool() const { return static_cast<bool>(Impl); }

  // Internal.
  explicit ModelGroup(std::shared_ptr<GroupImpl> I) : Impl(std::move(I)) {}
  const std::shared_ptr<GroupImpl> &impl() const { return Impl; }

private:
  std::shared_ptr<GroupImpl> Impl;
};

/// Creates an empty group. InvalidArgumentError on bad pool options (a negative core index).
OPTIMIUM_RT_API ModelGroup createModelGroup(const ModelGroupOptions &Options = {});

} // namespace runtime
} // namespace optimium
