// The runtime's lifetime as exec sees it: initialize() opens it, finalize() shuts down every live
// model (cancels and waits for its runs, joins its threads, destroys its kernels) so the backends
// can be unloaded after. Models loaded across a finalize() are refused.
#pragma once

#include <cstdint>
#include <memory>

#include "core/Status.h"

namespace optimium {
namespace runtime {

struct ModelImpl;

namespace detail {

/// initialize(): models may load from now on.
void openRuntime();
/// The session a load starts in; an InvalidStateError when the runtime is not open.
Result<uint64_t> beginModelLoad();
/// Records a loaded model for finalize(); an InvalidStateError (the model must be dropped) when
/// finalize() ran since its beginModelLoad().
Status trackLiveModel(const std::shared_ptr<ModelImpl> &M, uint64_t Session);
/// finalize(): closes the runtime (new loads fail), stops every run in flight before its next
/// op (a run ends with an InvalidStateError), waits for them to end, then releases each live
/// model's threads and kernels. Live models stay as objects whose runs are refused.
void shutDownLiveModels();
/// Whether the calling thread is one the runtime runs work on (a pool worker, or an inference
/// callback): finalize() there would wait for itself.
bool onRuntimeThread();

} // namespace detail
} // namespace runtime
} // namespace optimium
