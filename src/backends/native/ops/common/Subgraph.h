// Subgraphs of the control-flow ops (If, Loop, Scan): inference over a body at load/plan time,
// and a small interpreter that runs a body on the calling thread. The interpreter creates the
// body's kernels once (native registry, like the planner) and per run infers concrete shapes
// (memoized per node while input types and dims repeat), takes intermediates from a per-value
// buffer cache (RunValueCache: no allocation while shapes repeat) and runs the nodes in order;
// nested control flow recurses.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/TensorImpl.h"
#include "ir/Container.h"
#include "backends/native/OutputAllocator.h"
#include "backends/native/ops/common/Indexing.h"
#include "backends/native/ops/common/OpUtil.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

/// A value of a run: the view plus whatever keeps its bytes alive (null for borrowed data). For a
/// sequence/optional value the view points to a ContainerValue and Keep owns it.
using RunValue = OwnedTensor;

/// A heap tensor of Type and Dims (strings are not supported inside subgraphs).
Result<RunValue> allocateRunValue(ElementType Type, const std::vector<int64_t> &Dims);

/// Buffers reused across runs of a subgraph, a few slots per value: a slot is handed out again
/// only while nothing but the cache holds it (shared_ptr use_count 1), so a value the caller
/// keeps (a Loop-carried output feeding the next iteration, a scan output awaiting stacking, a
/// sequence element) is never overwritten; a second slot lets a carried value alternate between
/// two buffers. A slot is reused when it is large enough, so repeating shapes allocate nothing and
/// a shape that grows reallocates. Not thread-safe (SubgraphRunner guards it).
class RunValueCache {
public:
  static constexpr size_t kSlots = 2;
  void resize(size_t Values) { Slots.resize(Values); }
  /// allocateRunValue(Type, Dims) backed by a free slot of value V (or a fresh buffer that
  /// replaces the smallest free slot, when none fits; an uncached one when all are taken).
  Result<RunValue> allocate(size_t V, ElementType Type, const std::vector<int64_t> &Dims);

private:
  std::vector<std::array<std::shared_ptr<Buffer>, kSlots>> Slots;
};

/// The graph attribute Attr of N, or null when N has none (or an empty one).
const Graph *graphAttr(const Node &N, const std::string &Attr);

/// Number of inputs N has before the outer-scope values its subgraphs read (see ir/Scopes.h).
size_t explicitInputCount(const Node &N);

/// The outer-scope values of N's subgraphs, by name, from the trailing entries of Inputs.
/// KeepConst = false drops known values (inference then stays symbolic instead of folding a
/// whole body when the executor re-infers with actual values).
std::map<std::string, ValueInfo> outerInfos(const Node &N, const std::vector<ValueInfo> &Inputs, bool KeepConst);

/// Shape/type inference through subgraph Attr of Owner: Formal binds its graph inputs (their
/// constant values are dropped: they change per iteration), Outer its outer-scope names.
/// Returns one info per graph output.
Result<std::vector<ValueInfo>> inferSubgraph(const Node &Owner, const std::string &Attr, const Graph &G,
                                             const std::vector<ValueInfo> &Formal,
                                             const std::map<std::string, ValueInfo> &Outer);

/// Prefix of errors raised inside subgraph Attr of Owner: "node 'loop' (Loop), subgraph 'body'".
std::string subgraphContext(const Node &Owner, const std::string &Attr);

class SubgraphRunner {
public:
  /// Infers the body with Formal/Outer (symbolic shapes allowed) and creates a native kernel for
  /// every node that does not fold to a constant. ModelError naming Owner and the inner node.
  static Result<std::unique_ptr<SubgraphRunner>> create(const Node &Owner, const std::string &Attr,
                                                        std::shared_ptr<const Graph> G,
                                                        const std::vector<ValueInfo> &Formal,
                                                        const std::map<std::string, ValueInfo> &Outer);
  ~SubgraphRunner();

  /// Runs the body once. Formal binds the graph inputs; Captured the owner's trailing inputs (in
  /// capturedNames(Owner) order). Outputs gets one value per graph output.
  Status run(const std::vector<RunValue> &Formal, const std::vector<TensorView> &Captured,
             std::vector<RunValue> &Outputs, const Parallel &Par) const;

  size_t numInputs() const { return G->Inputs.size(); }
  size_t numOutputs() const { return G->Outputs.size(); }
  const Graph &graph() const { return *G; }

private:
  SubgraphRunner() = default;
  struct Step;
  std::string Context; ///< subgraphContext(Owner, Attr)
  std::shared_ptr<const Graph> G;
  std::vector<ValueInfo> Infos;                 ///< Load-time info per value (Const: known value).
  std::vector<std::pair<int, size_t>> Captures; ///< body value -> index in the owner's captured inputs
  std::vector<std::unique_ptr<Step>> Steps;     ///< Nodes that run (folded ones are skipped).
  /// Guards Cache and the steps' memoized inference: a run that finds it taken (the same kernel
  /// running concurrently) allocates on the heap and infers every node as before.
  mutable std::mutex CacheMutex;
  mutable RunValueCache Cache; ///< Intermediate and output buffers, by body value.
};

/// The output view of a control-flow kernel: the preallocated one (whose dims must be Dims) or
/// one from Alloc when the executor could not size it before the run.
Result<TensorView> controlFlowOutput(const Node &N, const KernelContext &Ctx, const OutputAllocator *Alloc, size_t I,
                                     const std::vector<int64_t> &Dims);

/// Copies V into output I of the kernel (allocated or checked as for controlFlowOutput); a
/// sequence/optional output takes V's elements (shared, see assignContainer).
Status writeControlFlowOutput(const Node &N, const KernelContext &Ctx, const OutputAllocator *Alloc, size_t I,
                              const TensorView &V);

/// Reads the single boolean (or numeric, non-zero = true) element of V.
Result<bool> readCondition(const Node &N, const TensorView &V, const char *What);

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
