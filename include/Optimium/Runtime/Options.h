// Options of loadModel(): per-model attributes, thread-pool tuning and the scheduler choice.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "Optimium/Runtime/Device.h"
#include "Optimium/Runtime/Shape.h"

namespace optimium {
namespace runtime {

/// How requests of one model share its thread pool.
enum class SchedulerType : uint8_t {
  /// Picks Pipeline when the graph has independent branches and the pool has 2+ threads,
  /// Sequential otherwise.
  Auto = 0,
  /// One request at a time owns the model's pool; others queue in FIFO order.
  Exclusive,
  /// Requests in flight share the pool; each runs its operations one at a time.
  Sequential,
  /// Independent operations of a request, and successive requests, overlap.
  Pipeline,
};

OPTIMIUM_RT_API const char *toString(SchedulerType Type);

/// The arithmetic of a float32 model's matrix products (PerModelOptions::Precision), like oneDNN's
/// fp-math mode or OpenVINO's inference precision hint. Inputs, outputs and every other op stay
/// float32 either way.
enum class ComputePrecision : uint8_t {
  /// float32 throughout (the default).
  Float32 = 0,
  /// MatMul and Gemm with constant weights and the convolutions that run as a GEMM (1x1 and
  /// im2col; not depthwise, not Winograd) round their operands to bfloat16 and accumulate in
  /// float32: weights are converted once at load, activations per run; bias and fused activations
  /// stay float32. About 2x the multiply rate on CPUs with AVX512_BF16 at bfloat16's accuracy
  /// (8 significant bits per operand: docs/optimizations.md lists the error per model). On a CPU
  /// without AVX512_BF16 the model runs float32 (logged once at info level), never an error.
  BFloat16,
};

/// "float32" / "bfloat16".
OPTIMIUM_RT_API const char *toString(ComputePrecision Precision);

#if defined(__ANDROID__)
constexpr int kDefaultSpinIterations = 100000;
constexpr int kDefaultSpinYieldIterations = 10;
#else
constexpr int kDefaultSpinIterations = 1000;
constexpr int kDefaultSpinYieldIterations = 0;
#endif

struct PerModelOptions {
  /// Devices to place operations on, in order of preference; empty = every local device.
  std::vector<DeviceID> Devices;
  /// Fail (DeviceError) instead of falling back to the local CPU when a requested device is absent.
  bool Strict = false;
  /// Share buffers between tensors whose lifetimes do not overlap. Off keeps every intermediate
  /// readable through InferRequest::getTensor().
  bool EnableMemoryOptimization = true;
  /// Folder to dump every intermediate tensor to after each run (debugging).
  std::string IntermediateSavePath;
  /// Prefix each dump with the run index (0_<name>, 1_<name>, ...) instead of overwriting.
  bool IndexedIntermediateSave = false;
  /// Passphrase of an encrypted model.
  std::string Passphrase;
  /// Worker threads of the model; 0 = one per available core.
  int ThreadCount = 0;
  /// Planned capacity of Resizable tensors.
  std::map<std::string, TensorShape> ResizableCapacities;
  /// Arithmetic of the matrix products of float32 models (opt-in bfloat16: see ComputePrecision).
  ComputePrecision Precision = ComputePrecision::Float32;
};

struct PoolTuning {
  /// CPU cores to pin workers to (worker i -> Cores[i % size]); empty = no pinning.
  std::vector<int> Cores;
  /// 0 parks at once; N > 0 spins N rounds (~0.5 us each, calibrated) then parks; negative spins
  /// while a request runs.
  /// A one-thread pool never spins (its worker never helps the caller's fan-outs). On a VM a
  /// negative value can cost more than it saves: vCPUs kept busy are descheduled by the host.
  int SpinIterations = kDefaultSpinIterations;
  /// sched_yield() calls after the spin budget, before parking (only when SpinIterations > 0).
  int SpinYieldIterations = kDefaultSpinYieldIterations;
  /// Flush denormals to zero (FTZ/DAZ) on the workers.
  bool DisableDenormals = true;
  /// Idle workers take unclaimed iterations from busy workers' chunks.
  bool EnableWorkStealing = true;
};

struct ModelLoadOptions : PerModelOptions, PoolTuning {
  SchedulerType Scheduler = SchedulerType::Auto;
};

} // namespace runtime
} // namespace optimium
