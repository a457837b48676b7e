// Everything a loaded model owns: the graph, kernels placed on backends, metadata, the thread
// pool and scheduler, and execution plans cached per input-shape signature.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "Optimium/Runtime/InferRequest.h"
#include "Optimium/Runtime/Options.h"
#include "Optimium/Runtime/TensorInfo.h"
#include "backends/BackendRegistry.h"
#include "backends/NodeHandle.h"
#include "exec/ThreadPool.h"
#include "ir/Graph.h"

namespace optimium {
namespace runtime {
namespace detail {

/// A node placed on a backend with its kernel created.
struct CompiledNode {
  std::shared_ptr<RegisteredBackend> Backend;
  void *Kernel = nullptr;
  std::unique_ptr<KernelCreateInfo> Info;
  NodeHandle Handle;
  /// Without Strict, a node placed on an extension also gets a native kernel: it runs the node
  /// when the extension fails it at run time (the run goes on on the CPU, with a warning).
  std::shared_ptr<RegisteredBackend> Fallback;
  void *FallbackKernel = nullptr;
  mutable std::atomic<bool> FellBack{false}; ///< Warned once.
  ~CompiledNode() { release(); }
  /// Destroys the kernel and lets go of its backend (finalize() unloads the backend next).
  void release() {
    if (Kernel && Backend && Backend->Backend.destroy_kernel)
      Backend->Backend.destroy_kernel(Backend->Backend.state, Kernel);
    if (FallbackKernel && Fallback && Fallback->Backend.destroy_kernel)
      Fallback->Backend.destroy_kernel(Fallback->Backend.state, FallbackKernel);
    Kernel = FallbackKernel = nullptr;
    Backend.reset();
    Fallback.reset();
  }
};

/// Shapes and memory of one input-shape signature.
struct ExecutionPlan {
  std::vector<std::vector<int64_t>> Dims; ///< Per value; valid where Resolved.
  std::vector<ElementType> Types;
  std::vector<char> Resolved;      ///< Shape known before running (else computed per run).
  std::vector<int64_t> Offsets;    ///< Arena offset, -1 when not in the arena.
  std::vector<char> Readable;      ///< Intermediate keeps its bytes until the run ends.
  size_t ArenaBytes = 0;
  /// The device values of a backend with OPT_RT_BACKEND_DEVICE_ADDRESSES, planned as the arena:
  /// one allocation of Bytes per request, each value at its offset (docs/devices.md).
  struct DeviceArena {
    std::shared_ptr<RegisteredBackend> Backend;
    size_t Bytes = 0;
    size_t Values = 0;
  };
  std::vector<DeviceArena> DeviceArenas;
  std::vector<int> DeviceArenaOf;      ///< Per value: index in DeviceArenas, -1 when not planned.
  std::vector<int64_t> DeviceOffsets;  ///< Per value: offset in its device arena.
};

class Scheduler;

/// A graph input marked by the model manifest as Preserved and/or Resizable.
struct StatefulInput {
  int Value = -1;          ///< Value index of the graph input.
  size_t InputIndex = 0;   ///< Position in Graph::Inputs.
  bool Preserved = false;  ///< Kept in the request between runs (not an infer() argument).
  bool Resizable = false;  ///< Shape may change at run time.
  int UpdateFrom = -1;     ///< Output value whose result becomes the next value (-1: none).
  std::vector<int64_t> BaseDims;     ///< Initial (and floor) shape.
  std::vector<int64_t> DeclaredCap;  ///< ResizableCapacities entry; empty when none.
};

} // namespace detail

struct ModelImpl {
  std::string Name;
  /// Packed-weights cache lookups at kernel creation (a compiled folder's packed.bin): hits
  /// borrowed their packing, misses packed at load.
  uint64_t PackedHits = 0, PackedMisses = 0;
  std::unique_ptr<detail::Graph> G;
  std::vector<std::shared_ptr<const void>> KeepAlive;
  ModelLoadOptions Options;
  SchedulerType EffectiveScheduler = SchedulerType::Sequential;
  int Threads = 1;
  std::vector<std::unique_ptr<detail::CompiledNode>> Nodes; ///< Parallel to G->Nodes.
  /// Per value: whether a node on another backend than a device-memory producer's, or the
  /// caller (a graph output), reads it on the host (exec/DeviceResidency.cpp).
  std::vector<char> ReadOnHost;
  bool UsesDeviceMemory = false; ///< Some node runs on a backend with its own memory.

  // Metadata.
  std::vector<TensorInfo> Tensors;
  std::map<std::string, size_t> TensorIndex; ///< name -> index in Tensors
  std::vector<int> TensorValue;              ///< index in Tensors -> value index
  std::vector<OpInfo> Ops;
  std::vector<StringRef> InputNames, OutputNames;
  std::vector<std::string> AttributeKeys;
  std::vector<StringRef> AttributeKeyRefs;
  bool Dynamic = false;

  // Manifest (optimium.json): Preserved / Resizable graph inputs.
  std::string ManifestPath;
  std::vector<detail::StatefulInput> Stateful;
  std::vector<int> StatefulOf;        ///< Per value: index in Stateful, -1 when not stateful.
  std::vector<size_t> UserInputs;     ///< Positions in Graph::Inputs that infer() takes.
  const detail::StatefulInput *findStateful(const std::string &Name) const;

  // Execution. A model owns its pool and scheduler; the members of a model group share the
  // group's (set when the group seals; null before). Slice is what kernels get as their pool: the
  // pool and this model's Threads, which bound its fan-outs on a larger shared pool.
  std::shared_ptr<detail::ThreadPool> Pool;
  std::shared_ptr<detail::Scheduler> Sched;
  detail::PoolSlice Slice;
  /// Set for a model group's member: runs go through GroupMember::run (exec/Group.cpp).
  bool GroupMember = false;
  /// For Pipeline plans: Ancestors[n] has bit m set when node m must finish before node n starts.
  std::vector<std::vector<uint64_t>> Ancestors;
  /// Distinct consumer nodes of each node, and the number of distinct producer nodes it waits on.
  std::vector<std::vector<int>> NodeUsers;
  std::vector<int> NodeProducerCount;
  std::mutex PlanMutex;
  std::map<std::vector<std::vector<int64_t>>, std::shared_ptr<const detail::ExecutionPlan>> PlanCache;
  size_t PlanBuilds = 0; ///< Plans built so far (guarded by PlanMutex; tests check the cache with it).

  // finalize() (exec/Lifecycle.h): every run is admitted here and counted until it ends, so a
  // shutdown can refuse new runs, cancel the ones in flight and wait for them.
  std::mutex RunsMu;
  std::condition_variable RunsCv;
  int RunsInFlight = 0;             ///< Guarded by RunsMu.
  std::atomic<bool> ShutDown{false}; ///< Set once by finalize(), never cleared.
  /// Admits one run (false once finalize() shut the model down); endRun() when it has ended.
  bool beginRun();
  void endRun();
  /// finalize(): refuses new runs (running ones see ShutDown and stop before their next op).
  void beginShutdown();
  /// finalize(): waits for the runs in flight, then joins the pool's threads and destroys the
  /// kernels. The object stays (metadata readable); runs and requests are refused.
  void finishShutdown();
  /// "<What>: model '<Name>' was released by finalize() ..." (an InvalidStateError).
  detail::Status shutDownError(const char *What) const;

  ~ModelImpl();

  const TensorInfo *findTensor(const std::string &Name) const {
    auto It = TensorIndex.find(Name);
    return It == TensorIndex.end() ? nullptr : &Tensors[It->second];
  }
};

namespace detail {

/// Whether the loaded model gets a pool and scheduler of its own (loadModel) or is a group
/// member that receives the group's when the group seals (attachSharedPool).
enum class PoolOwnership { Own, Shared };

/// Import + inference + placement + kernel creation + metadata (exec/ModelLoader.cpp).
Result<std::shared_ptr<ModelImpl>> loadModelFromPath(const std::string &Path, const ModelLoadOptions &Options,
                                                     PoolOwnership Ownership = PoolOwnership::Own);
/// Owner, when given, owns the bytes and lives as long as the model (see importOnnxBuffer).
Result<std::shared_ptr<ModelImpl>> loadModelFromBuffer(const uint8_t *Data, size_t Size, const ModelLoadOptions &Options,
                                                       std::shared_ptr<const void> Owner = nullptr,
                                                       PoolOwnership Ownership = PoolOwnership::Own);
/// The pool knobs' rules (cores that exist, each once; SpinYieldIterations >= 0).
Status validatePoolTuning(const PoolTuning &O);
/// Gives a group member the group's pool and scheduler.
void attachSharedPool(ModelImpl &M, std::shared_ptr<ThreadPool> Pool, std::shared_ptr<Scheduler> Sched);

/// The plan for concrete input dims (cached per signature).
Result<std::shared_ptr<const ExecutionPlan>> getExecutionPlan(ModelImpl &M, const std::vector<std::vector<int64_t>> &InputDims);

} // namespace detail
} // namespace runtime
} // namespace optimium
