// Builds the execution plan of one input-shape signature: concrete shapes by inference, then the
// arena layout. Values whose shape depends on data stay unresolved and are allocated per run.
#include <algorithm>

#include "exec/ModelState.h"
#include "ir/InferShapes.h"
#include "plan/MemoryPlanner.h"

namespace optimium {
namespace runtime {
namespace detail {

namespace {

bool allConst(const TensorShape &S) {
  for (const Expr &E : S)
    if (!E.isConst())
      return false;
  return true;
}

bool isAncestor(const ModelImpl &M, int Maybe, int Of) {
  return (M.Ancestors[Of][Maybe / 64] >> (Maybe % 64)) & 1u;
}

/// The device values of each backend whose buffers are address ranges: those its nodes produce
/// or read (constants aside: their device copy lives across runs), each live from its first to
/// its last node on that device (graph outputs to the end), placed by the same planner as the
/// host arena. A value two such backends touch keeps allocations of its own. Under the Pipeline
/// scheduler nodes overlap and a copied-in value's writer is whichever reader runs first: each
/// value gets bytes of its own there (still one allocation).
void planDeviceArenas(const ModelImpl &M, ExecutionPlan &Plan, const std::vector<ValueInfo> &Infos) {
  const Graph &G = *M.G;
  const size_t NV = G.Values.size();
  Plan.DeviceArenaOf.assign(NV, -1);
  Plan.DeviceOffsets.assign(NV, -1);
  if (!M.UsesDeviceMemory)
    return;
  const int End = static_cast<int>(G.Nodes.size());
  std::vector<int> First(NV, End), Last(NV, -1);
  std::vector<char> Produced(NV, 0);
  std::vector<int> Touch(NV, -1); // arena index; -2: several backends
  auto mark = [&](int V, int A, int Node) {
    if (V < 0)
      return;
    Touch[V] = Touch[V] == -1 || Touch[V] == A ? A : -2;
    First[V] = std::min(First[V], Node);
    Last[V] = std::max(Last[V], Node);
  };
  for (size_t NI = 0; NI < G.Nodes.size(); ++NI) {
    const std::shared_ptr<RegisteredBackend> &B = M.Nodes[NI]->Backend;
    if (!B || !B->hasDeviceAddresses())
      continue;
    int A = 0;
    while (A < static_cast<int>(Plan.DeviceArenas.size()) && Plan.DeviceArenas[A].Backend != B)
      ++A;
    if (A == static_cast<int>(Plan.DeviceArenas.size()))
      Plan.DeviceArenas.push_back(ExecutionPlan::DeviceArena{B, 0, 0});
    for (int V : G.Nodes[NI].Inputs)
      mark(V, A, static_cast<int>(NI));
    for (int V : G.Nodes[NI].Outputs) {
      mark(V, A, static_cast<int>(NI));
      if (V >= 0)
        Produced[V] = 1;
    }
  }
  const bool Share = M.Options.EnableMemoryOptimization && M.Options.IntermediateSavePath.empty() &&
                     M.EffectiveScheduler != SchedulerType::Pipeline;
  for (size_t A = 0; A < Plan.DeviceArenas.size(); ++A) {
    std::vector<int> Values;
    std::vector<BufferRequest> Requests;
    for (size_t V = 0; V < NV; ++V) {
      const Value &Val = G.Values[V];
      if (Touch[V] != static_cast<int>(A) || Val.Const || !Plan.Resolved[V] || !Infos[V].Present ||
          isContainerKind(Infos[V].Kind))
        continue;
      if (Val.IsGraphOutput || !Share)
        Last[V] = End;
      size_t Count = 1;
      for (int64_t D : Plan.Dims[V])
        Count *= static_cast<size_t>(D);
      Values.push_back(static_cast<int>(V));
      Requests.push_back(BufferRequest{Count * getElementSize(Plan.Types[V])});
    }
    // Sequential order: A's bytes are free once its last node ran, before B's first one writes.
    MemoryPlan MP = planMemory(
        Requests,
        [&](size_t X, size_t Y) {
          const int VX = Values[X], VY = Values[Y];
          return !(Last[VX] < First[VY]) && !(Last[VY] < First[VX]);
        },
        Share);
    for (size_t I = 0; I < Values.size(); ++I) {
      const int V = Values[I];
      Plan.DeviceArenaOf[V] = static_cast<int>(A);
      Plan.DeviceOffsets[V] = static_cast<int64_t>(MP.Offsets[I]);
      // Data only on the device (the host never copies it out) is readable after the run only
      // where its device bytes are its own.
      if (Produced[V] && !M.ReadOnHost[V] && !MP.Exclusive[I] && Last[V] != End)
        Plan.Readable[V] = 0;
    }
    Plan.DeviceArenas[A].Bytes = MP.ArenaBytes;
    Plan.DeviceArenas[A].Values = Values.size();
  }
}

Result<std::shared_ptr<const ExecutionPlan>> buildPlan(ModelImpl &M, const std::vector<std::vector<int64_t>> &InputDims) {
  const Graph &G = *M.G;
  std::vector<ValueInfo> Infos = initialValueInfos(G);
  for (size_t I = 0; I < G.Inputs.size(); ++I)
    if (!isContainerKind(G.Values[G.Inputs[I]].Kind)) // sequences/optionals keep their element shape
      Infos[G.Inputs[I]].Shape = TensorShape::fromDims(InputDims[I]);
  RETURN_IF_ERROR(propagateShapes(G, Infos, /*CheckDeclared=*/false));

  auto Plan = std::make_shared<ExecutionPlan>();
  const size_t NV = G.Values.size();
  Plan->Dims.resize(NV);
  Plan->Types.resize(NV);
  Plan->Resolved.assign(NV, 0);
  Plan->Offsets.assign(NV, -1);
  Plan->Readable.assign(NV, 0);
  for (size_t V = 0; V < NV; ++V) {
    if (!Infos[V].Present)
      continue;
    Plan->Types[V] = Infos[V].Type;
    if (isContainerKind(Infos[V].Kind)) {
      Plan->Resolved[V] = 1; // a per-run container (Request.cpp), never in the arena
      continue;
    }
    if (allConst(Infos[V].Shape) && !Infos[V].RankUnknown) {
      Plan->Dims[V] = Infos[V].Shape.getDims();
      Plan->Resolved[V] = 1;
    }
  }

  // Lifetimes in node order: first step = producer, last step = last consumer (graph outputs
  // and values read after the run live to the end). A block of several values (views, Concat
  // inputs in place) keeps every producer and reader: under Pipeline its producers may run in any
  // order, on different threads, each writing its own slice.
  const int End = static_cast<int>(G.Nodes.size());
  struct Life {
    int Value, First, Last;
    std::vector<int> Readers;
    std::vector<int> Producers;
  };
  std::vector<Life> Lives;
  std::vector<BufferRequest> Requests;
  // Outputs that update a Preserved input are written into that input's spare buffer instead.
  std::vector<char> External(NV, 0);
  for (const StatefulInput &S : M.Stateful)
    if (S.Preserved && S.UpdateFrom >= 0)
      External[S.UpdateFrom] = 1;
  for (size_t V = 0; V < NV; ++V) {
    const Value &Val = G.Values[V];
    if (Val.Const || Val.IsGraphInput || External[V] || !Plan->Resolved[V] || !Infos[V].Present ||
        isContainerKind(Infos[V].Kind))
      continue;
    if (Val.Producer < 0 && !Val.IsGraphOutput)
      continue;
    Life L{static_cast<int>(V), Val.Producer, Val.Producer, Val.Consumers, {}};
    if (Val.Producer >= 0)
      L.Producers.push_back(Val.Producer);
    for (int C : Val.Consumers)
      L.Last = std::max(L.Last, C);
    if (Val.IsGraphOutput || !M.Options.EnableMemoryOptimization || !M.Options.IntermediateSavePath.empty())
      L.Last = End;
    size_t Count = 1;
    for (int64_t D : Plan->Dims[V])
      Count *= static_cast<size_t>(D);
    Requests.push_back(BufferRequest{Count * getElementSize(Plan->Types[V])});
    Lives.push_back(std::move(L));
  }
  const bool Pipeline = M.EffectiveScheduler == SchedulerType::Pipeline;
  // Views share their input's bytes: the output of a Reshape/Flatten (a byte copy) gets the
  // input's block, whose lifetime grows to cover the output's readers, and the copy becomes a
  // no-op (ByteCopyKernel skips a copy onto itself). Safe under every scheduler: no kernel writes
  // a value's bytes but its producer, and the view's "write" stores the same bytes.
  // Concat inputs inside their output: along an axis with nothing before it (NCHW channels at
  // batch 1, SqueezeNet's and Inception's branch concats), input i is the output's bytes from the
  // sum of the earlier inputs' bytes, so its producer writes it in place and the Concat skips that
  // copy (ConcatKernel skips a copy onto itself). The block then starts at the first input's
  // producer. Only at 64-byte multiples (kernels may assume the arena's alignment) and for inputs
  // that are not yet part of another block. Also under the Pipeline scheduler, where the inputs'
  // producers may run at once on different threads: each writes only its own slice (no kernel
  // writes outside its output's bytes, the Concat skips the in-place inputs), and Precedes()
  // below orders blocks by all their producers.
  std::vector<int> Root(Lives.size());
  std::vector<size_t> Delta(Lives.size(), 0); // byte offset inside the parent's block
  for (size_t I = 0; I < Lives.size(); ++I)
    Root[I] = static_cast<int>(I);
  const auto RootOf = [&Root](int L) {
    while (Root[static_cast<size_t>(L)] != L)
      L = Root[static_cast<size_t>(L)];
    return L;
  };
  const auto OffsetInRoot = [&Root, &Delta](int L) {
    size_t D = 0;
    while (Root[static_cast<size_t>(L)] != L) {
      D += Delta[static_cast<size_t>(L)];
      L = Root[static_cast<size_t>(L)];
    }
    return D;
  };
  const auto isNative = [&G](int NodeIndex) {
    return NodeIndex >= 0 && G.Nodes[static_cast<size_t>(NodeIndex)].Device.getPlatform() == PlatformKind::Native;
  };
  if (M.Options.EnableMemoryOptimization && M.Options.IntermediateSavePath.empty()) {
    std::vector<int> LifeOf(NV, -1);
    for (size_t I = 0; I < Lives.size(); ++I)
      LifeOf[static_cast<size_t>(Lives[I].Value)] = static_cast<int>(I);
    const auto merge = [&](int Child, int Parent, size_t Offset) {
      Life &Into = Lives[static_cast<size_t>(Parent)];
      const Life &From = Lives[static_cast<size_t>(Child)];
      Into.Last = (Into.Last == End || From.Last == End) ? End : std::max(Into.Last, From.Last);
      Into.First = std::min(Into.First, From.First);
      Into.Readers.insert(Into.Readers.end(), From.Readers.begin(), From.Readers.end());
      Into.Producers.insert(Into.Producers.end(), From.Producers.begin(), From.Producers.end());
      Root[static_cast<size_t>(Child)] = Parent;
      Delta[static_cast<size_t>(Child)] = Offset;
    };
    for (size_t NI = 0; NI < G.Nodes.size(); ++NI) {
      const Node &N = G.Nodes[NI];
      if (!N.Domain.empty() || N.Outputs.size() != 1 || N.Outputs[0] < 0 || N.Inputs.empty() ||
          N.Device.getPlatform() != PlatformKind::Native)
        continue;
      const int LY = LifeOf[static_cast<size_t>(N.Outputs[0])];
      if (LY < 0 || Root[static_cast<size_t>(LY)] != LY)
        continue;
      if (N.OpType == "Reshape" || N.OpType == "Flatten") {
        const int LX = N.Inputs[0] < 0 ? -1 : LifeOf[static_cast<size_t>(N.Inputs[0])];
        if (LX < 0 || Requests[LX].Bytes != Requests[LY].Bytes)
          continue;
        const int R = RootOf(LX);
        merge(LY, R, OffsetInRoot(LX));
        continue;
      }
      if (N.OpType != "Concat" || N.Inputs.size() < 2)
        continue;
      const std::vector<int64_t> &YDims = Plan->Dims[static_cast<size_t>(N.Outputs[0])];
      const auto AxisAttr = N.getInt("axis", 0);
      if (!AxisAttr.isOk() || YDims.empty())
        continue;
      int64_t Axis = AxisAttr.value();
      if (Axis < 0)
        Axis += static_cast<int64_t>(YDims.size());
      if (Axis < 0 || Axis >= static_cast<int64_t>(YDims.size()))
        continue;
      int64_t Outer = 1;
      for (int64_t D = 0; D < Axis; ++D)
        Outer *= YDims[static_cast<size_t>(D)];
      if (Outer != 1)
        continue;
      size_t Offset = 0;
      std::vector<int> Seen;
      for (int In : N.Inputs) {
        if (In < 0)
          break;
        const int LX = LifeOf[static_cast<size_t>(In)];
        const size_t Bytes = LX >= 0 ? Requests[static_cast<size_t>(LX)].Bytes
                                     : [&] {
                                         size_t C = getElementSize(Plan->Types[static_cast<size_t>(In)]);
                                         for (int64_t D : Plan->Dims[static_cast<size_t>(In)])
                                           C *= static_cast<size_t>(D);
                                         return C;
                                       }();
        const bool Once = std::find(Seen.begin(), Seen.end(), In) == Seen.end();
        Seen.push_back(In);
        if (LX >= 0 && Once && LX != LY && Root[static_cast<size_t>(LX)] == LX && Offset % kArenaAlignment == 0 &&
            isNative(G.Values[static_cast<size_t>(In)].Producer) && Lives[static_cast<size_t>(LX)].First >= 0 &&
            Offset + Bytes <= Requests[static_cast<size_t>(LY)].Bytes)
          merge(LX, LY, Offset);
        Offset += Bytes;
      }
    }
  }
  // The blocks to place: one per root.
  std::vector<int> Slot(Lives.size(), -1);
  std::vector<Life> Placed;
  std::vector<BufferRequest> PlacedRequests;
  for (size_t I = 0; I < Lives.size(); ++I)
    if (Root[I] == static_cast<int>(I)) {
      Slot[I] = static_cast<int>(Placed.size());
      Placed.push_back(Lives[I]);
      PlacedRequests.push_back(Requests[I]);
    }
  auto Precedes = [&](const Life &A, const Life &B) {
    // A's bytes are free before any of B's producers writes: every node that touches A (its
    // producers and readers) has finished before the first of B's producers starts.
    if (A.Last == End || B.First < 0 || B.Producers.empty())
      return false;
    if (!Pipeline)
      return A.Last < B.First;
    // Under Pipeline any of B's producers may start first, and only the data dependencies order
    // nodes: each node touching A must be an ancestor of EVERY producer of B.
    if (A.Producers.empty() && A.Readers.empty())
      return false;
    const auto doneBefore = [&](const std::vector<int> &Nodes) {
      for (int T : Nodes)
        for (int P : B.Producers)
          if (T == P || !isAncestor(M, T, P))
            return false;
      return true;
    };
    return doneBefore(A.Producers) && doneBefore(A.Readers);
  };
  MemoryPlan MP = planMemory(
      PlacedRequests,
      [&](size_t A, size_t B) { return !Precedes(Placed[A], Placed[B]) && !Precedes(Placed[B], Placed[A]); },
      M.Options.EnableMemoryOptimization);
  for (size_t I = 0; I < Lives.size(); ++I) {
    const size_t S = static_cast<size_t>(Slot[static_cast<size_t>(RootOf(static_cast<int>(I)))]);
    Plan->Offsets[Lives[I].Value] = static_cast<int64_t>(MP.Offsets[S] + OffsetInRoot(static_cast<int>(I)));
    Plan->Readable[Lives[I].Value] = MP.Exclusive[S] || Placed[S].Last == End;
  }
  Plan->ArenaBytes = MP.ArenaBytes;
  planDeviceArenas(M, *Plan, Infos);
  return std::shared_ptr<const ExecutionPlan>(std::move(Plan));
}

} // namespace

Result<std::shared_ptr<const ExecutionPlan>> getExecutionPlan(ModelImpl &M, const std::vector<std::vector<int64_t>> &InputDims) {
  std::lock_guard<std::mutex> Lock(M.PlanMutex);
  auto It = M.PlanCache.find(InputDims);
  if (It != M.PlanCache.end())
    return It->second;
  ASSIGN_OR_RETURN(std::shared_ptr<const ExecutionPlan> Plan, buildPlan(M, InputDims));
  ++M.PlanBuilds;
  if (M.PlanCache.size() >= 16) // bound the cache for models fed ever-changing shapes
    M.PlanCache.erase(M.PlanCache.begin());
  M.PlanCache.emplace(InputDims, Plan);
  return Plan;
}

} // namespace detail
} // namespace runtime
} // namespace optimium
