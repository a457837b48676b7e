// Executor side of profiling: the helpers the request, the pool fan-out and the half-precision
// adapter use to record events. Every site tests one recorder pointer; null (the normal case when
// not profiling) costs a predictable branch and nothing else.
#pragma once

#include "Optimium/Runtime/Extension/Backend.h"
#include "Optimium/Runtime/Profile.h"

#if defined(__GNUC__)
#define OPT_RT_UNLIKELY(X) __builtin_expect(!!(X), 0)
#else
#define OPT_RT_UNLIKELY(X) (X)
#endif

namespace optimium {
namespace runtime {
namespace detail {

struct Node;

/// Records Begin on construction and End on destruction (any return path) when Recorder is set.
class ProfileEventScope {
public:
  ProfileEventScope(ProfileEventRecorder *Recorder, ProfileEventKind Begin, int32_t Operation)
      : Recorder(Recorder), Operation(Operation), Begin(Begin) {
    if (OPT_RT_UNLIKELY(Recorder))
      Recorder->record(Begin, Operation);
  }
  ~ProfileEventScope() {
    if (OPT_RT_UNLIKELY(Recorder))
      Recorder->record(static_cast<ProfileEventKind>(static_cast<uint8_t>(Begin) + 1), Operation);
  }
  ProfileEventScope(const ProfileEventScope &) = delete;
  ProfileEventScope &operator=(const ProfileEventScope &) = delete;

private:
  ProfileEventRecorder *Recorder;
  int32_t Operation;
  ProfileEventKind Begin;
};

/// What a profiled kernel call records into; backends reach it through OptRtExecContext's
/// parallel_for (profiledParallelFor) and record_copy (recordKernelCopyAbi).
struct KernelProfileScope {
  ProfileEventRecorder *Recorder = nullptr;
  int32_t Operation = -1;
  const Node *N = nullptr;
  const int32_t *ValueToTensor = nullptr; ///< Value index -> index in getModelTensors().
  DeviceID Device;
  void *Pool = nullptr;                   ///< The real pool behind profiledParallelFor.
  void (*PoolParallelFor)(void *, size_t, size_t, OptRtRangeFn, void *) = nullptr;
};

/// OptRtExecContext::parallel_for for profiled runs: Pool is a KernelProfileScope; each thread that
/// runs ranges gets one DeviceExecuteBegin/End span (its first range's begin to its last's end).
void profiledParallelFor(void *Scope, size_t N, size_t Grain, OptRtRangeFn Fn, void *User);

/// CopyBegin/End of input (IsOutput false) or output Index of the current profiled kernel.
void recordKernelCopy(const KernelProfileScope &Scope, bool Begin, bool IsOutput, size_t Index);
/// OptRtExecContext::record_copy for profiled runs: Profile is a KernelProfileScope.
void recordKernelCopyAbi(void *Profile, int32_t Begin, int32_t IsOutput, uint32_t Index);

} // namespace detail
} // namespace runtime
} // namespace optimium
