// One inference context of a model: infer() starts a run and returns at once; wait() blocks until
// it ends and surfaces its error. Outputs are owned by the request and shared by reference count.
#pragma once

#include <atomic>
#include <chrono>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "Optimium/Runtime/Export.h"
#include "Optimium/Runtime/Profile.h"
#include "Optimium/Runtime/Tensor.h"
#include "Optimium/Runtime/TensorInfo.h"
#include "Optimium/Runtime/Utils/ArrayRef.h"
#include "Optimium/Runtime/Utils/StringRef.h"

namespace optimium {
namespace runtime {

enum class InferStatus : uint8_t { Ready = 0, Running, Fault };

OPTIMIUM_RT_API const char *toString(InferStatus Status);

/// Called once per run when it ends: Ready with a null error, or Fault with the error.
using InferCallback = std::function<void(InferStatus, std::exception_ptr)>;

/// Moves a Preserved tensor's content across a resize: Old is a read-only view laid out for the
/// pre-resize shape, New is writable and zero-initialized for the new shape (spec section 10).
using ResizeMigrateFn = std::function<void(const Tensor &Old, Tensor &New)>;

struct RequestImpl;

class OPTIMIUM_RT_API InferRequest {
public:
  InferRequest() {}

  /// Starts a run with inputs in the model's input order. Validates count, element types and
  /// shapes first (InvalidArgumentError / TypeError / ShapeError); InvalidOperationError while a
  /// run is in progress. The input tensors must stay unchanged until the run ends.
  void infer(ArrayRef<Tensor> Inputs);
  /// Starts a run with inputs by name; every model input must be given.
  void infer(const std::map<std::string, Tensor> &Inputs);

  /// Synchronous infer() + wait(): runs on the calling thread where the scheduler allows it
  /// (Sequential without pinned Cores; the others enqueue as infer() does and wait), so no pool
  /// task is queued and no worker is woken to start it. Same errors as infer() and wait().
  void run(ArrayRef<Tensor> Inputs);
  void run(const std::map<std::string, Tensor> &Inputs);

  /// Blocks until the run ends (Timeout 0 = no limit). Returns true when the timeout was reached
  /// first. Rethrows the run's error if it failed.
  bool wait(std::chrono::microseconds Timeout = std::chrono::microseconds(0));
  InferStatus getStatus() const;
  void addCallback(InferCallback Callback);
  /// Cooperative: the run stops before its next operation and ends in Fault (InferError).
  void cancel();

  /// Output by index or name. Shares the request's buffer (see "Output lifetime").
  Tensor getOutput(size_t Index) const;
  Tensor getOutput(StringRef Name) const;
  /// Device-resident outputs: with Enable, an output computed on a device with its own memory (the
  /// simulated accelerator) stays there after later runs too: getOutput() returns a device tensor
  /// (Tensor::isDeviceTensor(); toHost() copies it) that owns its buffer, so it may be passed to
  /// infer() of this or another model on that device without a copy. Takes effect at the next
  /// infer(); outputs computed on the host are host tensors either way. Off by default.
  void setDeviceOutputs(bool Enable);
  bool getDeviceOutputs() const;
  /// Any tensor by name: inputs, outputs, constants, and intermediates that are still readable
  /// (all of them with EnableMemoryOptimization = false).
  Tensor getTensor(StringRef Name) const;

  /// Resizable tensors (spec section 10). setTensorShape records a concrete shape of the same
  /// rank for a Resizable tensor (InvalidArgumentError: unknown or not resizable, symbolic, or
  /// beyond a declared capacity; ShapeError: other rank); it takes effect at applyShapeChanges()
  /// or the next infer().
  void setTensorShape(StringRef Name, const TensorShape &Shape);
  /// Applies pending shapes now: metadata-only within capacity, reallocation (content preserved,
  /// previous buffers retained) on overflow; ShrinkToFit also lowers capacities to
  /// max(current shape, floor) by element count. InvalidStateError while a run is in progress.
  void applyShapeChanges(bool ShrinkToFit = false);
  /// Frees the buffers a reallocating applyShapeChanges() retained; no-op when none are.
  void releaseStaleShapeMemory();
  /// Replaces the default index-preserving migration of a Preserved tensor; nullptr restores it.
  /// InvalidArgumentError for an unknown or non-Preserved tensor.
  void setResizeMigration(StringRef Name, ResizeMigrateFn Fn);
  /// Profiling (BLOCKING): warm-up runs, then up to Options.Repeat measured runs that record
  /// ProfileEvents (see ProfileOptions for the order and the early-stop rule). StopFlag, when given,
  /// is read between runs: once true, no further run starts and profile() returns normally.
  /// InvalidArgumentError on bad options; the errors of infer()/wait() otherwise.
  void profile(ArrayRef<Tensor> Inputs, const ProfileOptions &Options,
               std::shared_ptr<std::atomic_bool> StopFlag = nullptr);
  void profile(const std::map<std::string, Tensor> &Inputs, const ProfileOptions &Options,
               std::shared_ptr<std::atomic_bool> StopFlag = nullptr);
  /// Events of the last profile(), in record order. Valid until the next profile() (or until a
  /// recorder given to setRecorder() is cleared). Empty before the first profile().
  ArrayRef<ProfileEvent> getProfileEvents() const;
  /// Events of the last profile() that did not fit in the buffer (also logged as a warning).
  uint64_t getDroppedProfileEvents() const;
  /// Durations of the last profile(), begin/end paired and resolved to names (nanoseconds).
  ProfileDurations getProfileDurations() const;
  /// Per-operation statistics of the last profile(), largest total time first.
  std::vector<LayerDuration> getLayerDurations() const;
  /// Records every later profile() into Recorder (appending; EventBufferSize is then unused).
  /// Does nothing if a recorder is already set.
  void setRecorder(std::shared_ptr<ProfileEventRecorder> Recorder);

  std::string getModelName() const;
  ArrayRef<OpInfo> getModelOperations() const;
  ArrayRef<TensorInfo> getModelTensors() const;
  const TensorInfo &getTensorInfo(StringRef Name) const;
  const TensorInfo &getInputTensorInfo(size_t Index) const;
  const TensorInfo &getOutputTensorInfo(size_t Index) const;

  explicit operator bool() const { return static_cast<bool>(Impl); }

  // Internal.
  explicit InferRequest(std::shared_ptr<RequestImpl> I) : Impl(std::move(I)) {}
  const std::shared_ptr<RequestImpl> &impl() const { return Impl; }

private:
  std::shared_ptr<RequestImpl> Impl;
};

} // namespace runtime
} // namespace optimium
