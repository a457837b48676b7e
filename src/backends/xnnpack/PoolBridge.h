// XNNPACK's parallel loops on the runtime's pool. The extension hands XNNPACK a NULL pthreadpool
// (it never starts threads of its own) and defines the pthreadpool_parallelize_* functions
// libXNNPACK calls: loaded as this library's dependency, libXNNPACK binds to these before
// libpthreadpool's, and they split each loop with OptRtExecContext::parallel_for of the run in
// progress on this thread. Where the binding does not take (libXNNPACK already loaded by someone
// else), libpthreadpool runs a NULL pool's loop on the calling thread: single-threaded, still right.
#pragma once

#include <Optimium/Runtime/Extension/Backend.h>

#include <pthreadpool.h>

namespace optimium {
namespace xnnpack_ext {

/// Marks the runtime context of the kernel running on this thread for the duration of a run.
class ScopedPool {
public:
  explicit ScopedPool(const OptRtExecContext *Ctx);
  ~ScopedPool();
  ScopedPool(const ScopedPool &) = delete;
  ScopedPool &operator=(const ScopedPool &) = delete;
  /// The pthreadpool to pass XNNPACK: always NULL (see the file comment).
  pthreadpool_t threadpool() const { return nullptr; }

private:
  const OptRtExecContext *Prev;
};

/// How many XNNPACK loops went to the runtime's pool (split across more than one task) since load.
unsigned long poolSplits();

} // namespace xnnpack_ext
} // namespace optimium
