// loadModel's pipeline: validate options -> import -> infer shapes -> place nodes on devices ->
// create kernels (weights packed once) -> metadata -> thread pool and scheduler.
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include "core/CpuFeatureMask.h"
#include "core/CpuFeatures.h"
#include "core/LargeAlloc.h"
#include "core/Log.h"
#include "exec/InputShapes.h"
#include "exec/Lifecycle.h"
#include "exec/ModelCompiler.h"
#include "exec/Request.h"
#include "import/Manifest.h"
#include "import/MappedFile.h"
#include "import/SealedFolder.h"
#include "import/compiled/CompiledModel.h"
#include "import/onnx/OnnxImporter.h"
#include "ir/InferShapes.h"
#include "passes/Pipeline.h"

namespace optimium {
namespace runtime {

const detail::StatefulInput *ModelImpl::findStateful(const std::string &Name) const {
  const int V = G->findValue(Name);
  if (V < 0 || static_cast<size_t>(V) >= StatefulOf.size() || StatefulOf[V] < 0)
    return nullptr;
  return &Stateful[StatefulOf[V]];
}

ModelImpl::~ModelImpl() {
  Sched.reset();
  // The last reference may be dropped by a task on this model's own pool: a pool cannot join
  // itself, so hand it to another thread.
  if (Pool && Pool.use_count() == 1 && Pool->isWorkerThread())
    std::thread([P = std::move(Pool)] {}).detach();
  Pool.reset();
  Nodes.clear();
}

namespace detail {

namespace {

int availableCores() {
  cpu_set_t Set;
  CPU_ZERO(&Set);
  if (sched_getaffinity(0, sizeof(Set), &Set) == 0)
    return std::max(1, CPU_COUNT(&Set));
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

Status validateOptions(const ModelLoadOptions &O) {
  if (O.ThreadCount < 0)
    return makeError(ErrorCode::InvalidArgument, "ThreadCount must be >= 0 (0 = one per core), got ", O.ThreadCount);
  if (O.ThreadCount > 1024)
    return makeError(ErrorCode::InvalidArgument, "ThreadCount ", O.ThreadCount, " is unreasonably large");
  if (O.Precision != ComputePrecision::Float32 && O.Precision != ComputePrecision::BFloat16)
    return makeError(ErrorCode::InvalidArgument, "Precision ", static_cast<int>(O.Precision),
                     " is not a ComputePrecision");
  RETURN_IF_ERROR(validatePoolTuning(O));
  if (O.Scheduler != SchedulerType::Auto && O.Scheduler != SchedulerType::Exclusive &&
      O.Scheduler != SchedulerType::Sequential && O.Scheduler != SchedulerType::Pipeline)
    return makeError(ErrorCode::InvalidArgument, "unknown scheduler type ", static_cast<int>(O.Scheduler));
  if (O.IndexedIntermediateSave && O.IntermediateSavePath.empty())
    return makeError(ErrorCode::InvalidArgument, "IndexedIntermediateSave needs IntermediateSavePath");
  if (!O.IntermediateSavePath.empty()) {
    struct stat St;
    if (::stat(O.IntermediateSavePath.c_str(), &St) != 0 || !S_ISDIR(St.st_mode))
      return makeError(ErrorCode::IO, "IntermediateSavePath '", O.IntermediateSavePath, "' is not an existing folder");
  }
  for (const auto &KV : O.ResizableCapacities)
    if (KV.second.isDynamic())
      return makeError(ErrorCode::InvalidArgument, "ResizableCapacities['", KV.first, "'] must be a concrete shape, got ",
                       KV.second.toString());
  return Status::ok();
}

/// The backends nodes may be placed on, in order of preference.
Result<std::vector<std::shared_ptr<RegisteredBackend>>> resolveDevices(const ModelLoadOptions &O) {
  std::vector<std::shared_ptr<RegisteredBackend>> All = registeredBackends();
  std::vector<std::shared_ptr<RegisteredBackend>> Out;
  auto AvailableList = [&] {
    std::string S;
    for (const auto &B : All)
      S += (S.empty() ? "" : ", ") + B->Device.toString();
    return S;
  };
  if (O.Devices.empty()) {
    // Accelerators first, the native CPU as the universal fallback. An extension that runs on the
    // CPU itself (XNNPack) comes after the native backend: it runs a model only when Devices asks
    // for it (the native kernels are the faster default on the CPUs we measure, docs/benchmarks.md).
    // A simulator (explicit-only) is used only where Devices names it.
    const auto OnCpu = [](const std::shared_ptr<RegisteredBackend> &B) { return isDeviceCPU(B->Device.getDeviceKind()); };
    for (const auto &B : All)
      if (B->Device.getPlatform() != PlatformKind::Native && !OnCpu(B) && !B->explicitOnly())
        Out.push_back(B);
    for (const auto &B : All)
      if (B->Device.getPlatform() == PlatformKind::Native)
        Out.push_back(B);
    for (const auto &B : All)
      if (B->Device.getPlatform() != PlatformKind::Native && OnCpu(B) && !B->explicitOnly())
        Out.push_back(B);
    return Out;
  }
  for (const DeviceID &Want : O.Devices) {
    std::shared_ptr<RegisteredBackend> Found;
    for (const auto &B : All) {
      const DeviceID &Have = B->Device;
      const bool KindOk = Want.getDeviceKind() == Have.getDeviceKind() || Want.getDeviceKind() == DeviceKind::Unspecified ||
                          (Want.getDeviceKind() == DeviceKind::AnyCPU && isDeviceCPU(Have.getDeviceKind())) ||
                          (Want.getDeviceKind() == DeviceKind::AnyGPU && isDeviceGPU(Have.getDeviceKind())) ||
                          (Want.getDeviceKind() == DeviceKind::AnyNPU && isDeviceNPU(Have.getDeviceKind()));
      if (Have.getPlatform() == Want.getPlatform() && KindOk && Have.getIndex() == Want.getIndex() &&
          Want.getHostID() == 0) {
        Found = B;
        break;
      }
    }
    if (!Found) {
      if (O.Strict)
        return makeError(ErrorCode::Device, "requested device ", Want.toString(), " is not available (available: ",
                         AvailableList(), ")");
      OPT_LOG(Warning, "requested device ", Want.toString(), " is not available; falling back to the local CPU");
      continue;
    }
    if (std::find(Out.begin(), Out.end(), Found) == Out.end())
      Out.push_back(Found);
  }
  if (!O.Strict) {
    for (const auto &B : All)
      if (B->Device.getPlatform() == PlatformKind::Native && std::find(Out.begin(), Out.end(), B) == Out.end())
        Out.push_back(B);
  }
  if (Out.empty())
    return makeError(ErrorCode::Device, "none of the requested devices is available (available: ", AvailableList(), ")");
  return Out;
}

Attribute toAttribute(const AttrValue &A) {
  switch (A.K) {
  case AttrValue::Kind::Int: return Attribute::getInt(AttributeKind::I64, A.I);
  case AttrValue::Kind::Float: return Attribute::getFloat(AttributeKind::F32, A.F);
  case AttrValue::Kind::String: return Attribute::getString(A.S);
  case AttrValue::Kind::Ints: {
    std::vector<Attribute> L;
    for (int64_t V : A.Ints)
      L.push_back(Attribute::getInt(AttributeKind::I64, V));
    return Attribute::getList(L);
  }
  case AttrValue::Kind::Floats: {
    std::vector<Attribute> L;
    for (float V : A.Floats)
      L.push_back(Attribute::getFloat(AttributeKind::F32, V));
    return Attribute::getList(L);
  }
  case AttrValue::Kind::Strings: {
    std::vector<Attribute> L;
    for (const std::string &V : A.Strings)
      L.push_back(Attribute::getString(V));
    return Attribute::getList(L);
  }
  case AttrValue::Kind::Tensor: {
    std::string S = std::string("tensor ") + toString(A.T->Type) + "[";
    for (size_t I = 0; I < A.T->Dims.size(); ++I)
      S += (I ? "," : "") + std::to_string(A.T->Dims[I]);
    return Attribute::getString(S + "]");
  }
  case AttrValue::Kind::Graph: return Attribute::getString("graph " + (A.G ? A.G->Name : std::string()));
  case AttrValue::Kind::Type:
    return Attribute::getString(std::string("type ") + toString(A.Ty.Kind) + " of " + toString(A.Ty.Elem));
  }
  return Attribute();
}

std::vector<OptRtTensorDesc> describeValues(const std::vector<ValueInfo> &Infos, std::vector<std::vector<int64_t>> &DimStore) {
  std::vector<OptRtTensorDesc> Out(Infos.size());
  DimStore.resize(Infos.size());
  for (size_t I = 0; I < Infos.size(); ++I) {
    const ValueInfo &VI = Infos[I];
    OptRtTensorDesc &D = Out[I];
    D.struct_size = sizeof(OptRtTensorDesc);
    D.present = VI.Present ? 1 : 0;
    D.type = static_cast<int32_t>(VI.Type) | (static_cast<int32_t>(VI.Kind) << OPT_RT_VALUE_KIND_SHIFT);
    for (const Expr &E : VI.Shape)
      DimStore[I].push_back(E.isConst() ? E.value() : -1);
    D.rank = static_cast<int32_t>(DimStore[I].size());
    D.dims = DimStore[I].data();
    D.const_data = VI.Const ? VI.Const->Data : nullptr;
    D.const_bytes = VI.Const ? VI.Const->Bytes : 0;
  }
  return Out;
}

/// Kernel creation packs weights: once a node's kernel exists, the mapped-file pages of its
/// constant inputs leave the resident set (a kernel that reads them in place at run time faults
/// them back in), so loading never holds a weight twice (file pages + packed copy) for long and
/// peak memory stays near one copy of the weights.
void releaseConstPages(const Graph &G, const Node &N, const std::vector<std::shared_ptr<MappedFile>> &Maps) {
  for (int In : N.Inputs) {
    if (In < 0 || !G.Values[In].Const)
      continue;
    const ConstData &C = *G.Values[In].Const;
    for (const auto &F : Maps)
      if (F->releaseResidentPages(C.Source ? C.Source : C.Data, C.Bytes))
        break;
  }
}

/// The packed-weights cache one node's kernel creation sees (OptRtWeightsCache): lookups in a
/// compiled folder's packed.bin, stores into optimium-compile's record; keys scoped by the node's
/// position, name and backend.
struct NodeWeightsCache {
  const PackedWeights *Served = nullptr;
  PackedRecord *Record = nullptr;
  std::string Prefix;
  uint64_t *Hits = nullptr, *Misses = nullptr;

  static int32_t lookup(void *State, const char *Key, size_t KeySize, uint64_t Size, const void **Data) {
    auto &C = *static_cast<NodeWeightsCache *>(State);
    if (!C.Served || !Data)
      return 0;
    auto It = C.Served->Entries.find(C.Prefix + std::string(Key, KeySize));
    if (It == C.Served->Entries.end()) {
      ++*C.Misses;
      OPT_LOG(Debug, "packed weights: no entry '", C.Prefix, std::string(Key, KeySize), "' in '", C.Served->Path,
              "': packing at load");
      return 0;
    }
    if (It->second.Size != Size) {
      ++*C.Misses;
      OPT_LOG(Warning, "packed weights '", C.Prefix, std::string(Key, KeySize), "' in '", C.Served->Path, "' have ",
              It->second.Size, " bytes, the kernel packs ", Size, "; packing at load");
      return 0;
    }
    ++*C.Hits;
    *Data = It->second.Data;
    return 1;
  }
  static int32_t store(void *State, const char *Key, size_t KeySize, const void *Data, uint64_t Size) {
    auto &C = *static_cast<NodeWeightsCache *>(State);
    if (!C.Record || !Data)
      return 0;
    const uint8_t *P = static_cast<const uint8_t *>(Data);
    (*C.Record)[C.Prefix + std::string(Key, KeySize)].assign(P, P + Size);
    return 1;
  }
};

Status placeAndCreateKernels(ModelImpl &M, const std::vector<std::shared_ptr<RegisteredBackend>> &Candidates,
                             const std::vector<std::shared_ptr<MappedFile>> &Maps, const PackedWeights *Served = nullptr,
                             PackedRecord *Record = nullptr) {
  Graph &G = *M.G;
  auto InfoOf = [&](int V) {
    ValueInfo VI;
    if (V < 0)
      return VI;
    const Value &Val = G.Values[V];
    VI.Present = true;
    VI.Kind = Val.Kind;
    VI.Type = Val.Type;
    VI.Shape = Val.Shape;
    VI.Const = Val.Const;
    VI.RankUnknown = Val.RankUnknown;
    return VI;
  };
  // Constants (by storage) and how many of their readers still need them after creation: a copy
  // that every reader has packed into a form of its own is dropped (it can be re-read from its
  // Source in the model file when asked for by name).
  std::map<const ConstData *, int> Readers;
  std::set<const ConstData *> Pinned; // graph inputs/outputs and constants a kernel reads at run time
  for (const Value &V : G.Values)
    if (V.Const) {
      Readers[V.Const.get()] += static_cast<int>(V.Consumers.size());
      if (V.IsGraphOutput || V.IsGraphInput)
        Pinned.insert(V.Const.get());
    }
  const auto doneReading = [&](const Node &N, const KernelCreateInfo &Info) {
    for (size_t I = 0; I < N.Inputs.size(); ++I) {
      const int In = N.Inputs[I];
      if (In < 0 || !G.Values[In].Const)
        continue;
      ConstData &C = *G.Values[In].Const;
      if (I >= Info.ConstConsumed.size() || !Info.ConstConsumed[I])
        Pinned.insert(&C);
      if (--Readers[&C] == 0 && !Pinned.count(&C) && C.Source && C.Data && C.Data != C.Source) {
        C.Data = nullptr; // the owned copy goes; Source still has the bytes
        C.KeepAlive.reset();
      }
    }
  };
  // Constants the importer left in the file (ConstData::Source, no Data) for readers other than
  // the in-place ones (Gather data, MatMul B): Conv weights. Each gets its aligned copy right before
  // its kernel is created; once every reader has packed it, the copy is dropped (doneReading) and
  // its block serves the next weight, so the copies cost one block of fresh memory, not one each.
  struct Recycler {
    std::vector<std::pair<void *, size_t>> Free; // (block, mapped bytes) of dropped copies
    ~Recycler() {
      for (auto &B : Free)
        freeBlock(B.first, B.second);
    }
  };
  auto Blocks = std::make_shared<Recycler>();
  const auto materialize = [&](const Node &N, size_t I, ConstData &C) -> Status {
    if (C.Data || !C.Source || C.Type == ElementType::String || (N.Domain.empty() && readsFileBytesInPlace(N.OpType, I)))
      return Status::ok();
    void *P = nullptr;
    size_t Mapped = 0, Cap = 0;
    for (auto It = Blocks->Free.begin(); It != Blocks->Free.end(); ++It)
      if (It->second >= C.Bytes) {
        P = It->first, Mapped = Cap = It->second;
        Blocks->Free.erase(It);
        break;
      }
    if (!P) {
      // None fits: the smaller ones go (they would stay resident unused), a bigger one comes.
      for (auto &B : Blocks->Free)
        freeBlock(B.first, B.second);
      Blocks->Free.clear();
      P = allocateBlock(C.Bytes, /*Zero=*/false, Mapped);
      if (!P)
        return makeError(ErrorCode::OutOfResource, "cannot allocate ", C.Bytes, " bytes for the weights of ", N.describe());
      Cap = Mapped;
    }
    std::memcpy(P, C.Source, C.Bytes);
    for (const auto &F : Maps) // the file's pages of it leave the resident set at once
      if (F->releaseResidentPages(C.Source, C.Bytes))
        break;
    std::weak_ptr<Recycler> Pool = Blocks;
    C.KeepAlive = std::shared_ptr<const void>(P, [Pool, Mapped, Cap](const void *Ptr) {
      auto R = Pool.lock();
      if (R && Mapped) { // a mapped block goes back for the next weight while the model loads
        R->Free.push_back({const_cast<void *>(Ptr), Cap});
        return;
      }
      freeBlock(const_cast<void *>(Ptr), Mapped);
    });
    C.Data = P;
    return Status::ok();
  };
  for (size_t NI = 0; NI < G.Nodes.size(); ++NI) {
    Node &N = G.Nodes[NI];
    for (size_t I = 0; I < N.Inputs.size(); ++I)
      if (N.Inputs[I] >= 0 && G.Values[N.Inputs[I]].Const)
        RETURN_IF_ERROR(materialize(N, I, *G.Values[N.Inputs[I]].Const));
    auto CN = std::make_unique<CompiledNode>();
    CN->Info.reset(new KernelCreateInfo{N, {}, {}});
    for (int In : N.Inputs)
      CN->Info->Inputs.push_back(InfoOf(In));
    for (int O : N.Outputs)
      CN->Info->Outputs.push_back(InfoOf(O));
    CN->Handle = NodeHandle{&N, CN->Info.get()};
    std::vector<std::vector<int64_t>> InDims, OutDims;
    std::vector<OptRtTensorDesc> InDesc = describeValues(CN->Info->Inputs, InDims);
    std::vector<OptRtTensorDesc> OutDesc = describeValues(CN->Info->Outputs, OutDims);
    OptRtNode Desc{sizeof(OptRtNode), N.Name.c_str(), N.OpType.c_str(), N.Domain.c_str(), N.OpsetVersion,
                   static_cast<uint32_t>(InDesc.size()), InDesc.data(), static_cast<uint32_t>(OutDesc.size()),
                   OutDesc.data(), &CN->Handle, nullptr};
    NodeWeightsCache CacheState;
    CacheState.Served = Served;
    CacheState.Record = Record;
    CacheState.Hits = &M.PackedHits;
    CacheState.Misses = &M.PackedMisses;
    const OptRtWeightsCache Cache{sizeof(OptRtWeightsCache), &CacheState, &NodeWeightsCache::lookup,
                                  &NodeWeightsCache::store};
    if (Served || Record)
      Desc.weights_cache = &Cache;
    // Sequence/optional values exist only as the native backend's containers (Backend.h).
    bool TouchesContainers = false;
    for (const std::vector<ValueInfo> *Side : {&CN->Info->Inputs, &CN->Info->Outputs})
      for (const ValueInfo &VI : *Side)
        TouchesContainers |= VI.Present && isContainerKind(VI.Kind);
    for (const auto &B : Candidates) {
      if (TouchesContainers && B->Device.getPlatform() != PlatformKind::Native)
        continue;
      if (!B->Backend.supports_node(B->Backend.state, &Desc))
        continue;
      char Error[1024] = {0};
      CacheState.Prefix = std::to_string(NI) + ":" + N.Name + ":" + (B->Backend.name ? B->Backend.name : "") + ":";
      const int32_t RC = B->Backend.create_kernel(B->Backend.state, &Desc, &CN->Kernel, Error, sizeof(Error));
      if (RC != OPT_RT_OK && !M.Options.Strict && B->Device.getPlatform() != PlatformKind::Native) {
        // Not Strict: a device that claimed the node and then cannot make its kernel leaves it to
        // the next candidate (the native CPU last).
        OPT_LOG(Warning, "cannot create the kernel of ", N.describe(), " on ", B->Device.toString(), ": ", Error,
                "; trying the next device");
        CN->Kernel = nullptr;
        continue;
      }
      if (RC != OPT_RT_OK) {
        const ErrorCode Code = static_cast<ErrorCode>(RC) == ErrorCode::Shape || static_cast<ErrorCode>(RC) == ErrorCode::Type
                                   ? static_cast<ErrorCode>(RC)
                                   : ErrorCode::Model;
        return makeError(Code, "cannot create the kernel of ", N.describe(), " on ", B->Device.toString(), ": ", Error);
      }
      CN->Backend = B;
      N.Device = B->Device;
      break;
    }
    if (CN->Backend && !M.Options.Strict && CN->Backend->Device.getPlatform() != PlatformKind::Native) {
      // The fallback when the extension fails this node at run time (ModelState.h).
      for (const auto &B : registeredBackends())
        if (B->Device.getPlatform() == PlatformKind::Native && B->Backend.supports_node(B->Backend.state, &Desc)) {
          char Error[1024] = {0};
          CacheState.Prefix = std::to_string(NI) + ":" + N.Name + ":" + (B->Backend.name ? B->Backend.name : "") + ":";
          if (B->Backend.create_kernel(B->Backend.state, &Desc, &CN->FallbackKernel, Error, sizeof(Error)) == OPT_RT_OK)
            CN->Fallback = B;
          else
            CN->FallbackKernel = nullptr;
          break;
        }
    }
    if (!CN->Backend) {
      std::string Tried;
      for (const auto &B : Candidates)
        Tried += (Tried.empty() ? "" : ", ") + B->Device.toString();
      return makeError(ErrorCode::Model, "unsupported op '", N.OpType, "' at ", N.describe(), ": no device supports it (tried ",
                       Tried, ")");
    }
    doneReading(N, *CN->Info);
    M.Nodes.push_back(std::move(CN));
    releaseConstPages(G, N, Maps);
  }
  return Status::ok();
}

void buildMetadata(ModelImpl &M) {
  const Graph &G = *M.G;
  std::vector<int> Order;
  for (int V : G.Inputs)
    Order.push_back(V);
  for (const Node &N : G.Nodes)
    for (int O : N.Outputs)
      if (O >= 0)
        Order.push_back(O);
  for (size_t V = 0; V < G.Values.size(); ++V)
    if (G.Values[V].Const)
      Order.push_back(static_cast<int>(V));
  for (int V : Order) {
    const Value &Val = G.Values[V];
    if (M.TensorIndex.count(Val.Name))
      continue;
    TensorInfo TI;
    TI.Name = Val.Name;
    TI.Shape = Val.Shape;
    TI.Type = Val.Type;
    TI.Alignment = 64;
    TI.Padding = 0;
    TI.Constant = static_cast<bool>(Val.Const);
    TI.OptOut = Val.IsGraphInput || Val.IsGraphOutput || !M.Options.EnableMemoryOptimization;
    M.TensorIndex[Val.Name] = M.Tensors.size();
    M.TensorValue.push_back(V);
    M.Tensors.push_back(std::move(TI));
  }
  for (int V : G.Inputs)
    M.InputNames.emplace_back(M.Tensors[M.TensorIndex[G.Values[V].Name]].Name);
  for (int V : G.Outputs)
    M.OutputNames.emplace_back(M.Tensors[M.TensorIndex[G.Values[V].Name]].Name);
  for (const Node &N : G.Nodes) {
    OpInfo Op;
    Op.Name = N.Name;
    Op.Type = N.Domain.empty() ? N.OpType : N.Domain + "." + N.OpType;
    Op.Device = N.Device;
    for (int In : N.Inputs)
      Op.Inputs.push_back(In >= 0 ? G.Values[In].Name : std::string());
    for (int O : N.Outputs)
      Op.Outputs.push_back(O >= 0 ? G.Values[O].Name : std::string());
    for (const auto &KV : N.Attrs)
      Op.Attributes[KV.first] = toAttribute(KV.second);
    M.Ops.push_back(std::move(Op));
  }
  for (const auto &KV : G.Metadata)
    M.AttributeKeys.push_back(KV.first);
  for (const std::string &K : M.AttributeKeys)
    M.AttributeKeyRefs.emplace_back(K);
  for (int V : G.Inputs)
    M.Dynamic |= !isContainerKind(G.Values[V].Kind) && G.Values[V].Shape.isDynamic();
}

/// Node dependencies: distinct users/producers, and (for Pipeline) ancestor bitsets.
/// Where each value is read (ModelImpl::ReadOnHost): bit 1, by a node that reads host memory or
/// sits on another device-memory backend than its producer (or by a subgraph, a Preserved input's
/// update, anything this cannot see through); bit 2, by the caller as a graph output.
void computeResidency(ModelImpl &M) {
  const Graph &G = *M.G;
  M.ReadOnHost.assign(G.Values.size(), 0);
  bool HasSubgraphs = false;
  for (const Node &N : G.Nodes)
    for (const auto &KV : N.Attrs)
      HasSubgraphs |= KV.second.K == AttrValue::Kind::Graph;
  for (const auto &CN : M.Nodes)
    M.UsesDeviceMemory |= CN->Backend && CN->Backend->hasDeviceMemory();
  for (size_t V = 0; V < G.Values.size(); ++V) {
    const Value &Val = G.Values[V];
    const RegisteredBackend *Producer = Val.Producer >= 0 ? M.Nodes[Val.Producer]->Backend.get() : nullptr;
    char Bits = Val.IsGraphOutput ? 2 : 0;
    if (HasSubgraphs)
      Bits |= 1;
    for (int C : Val.Consumers) {
      const RegisteredBackend *B = M.Nodes[C]->Backend.get();
      if (!B || !B->hasDeviceMemory() || B != Producer)
        Bits |= 1;
    }
    M.ReadOnHost[V] = Bits;
  }
  for (const StatefulInput &S : M.Stateful)
    if (S.UpdateFrom >= 0)
      M.ReadOnHost[S.UpdateFrom] |= 1;
}

void buildDependencies(ModelImpl &M) {
  const Graph &G = *M.G;
  const size_t NN = G.Nodes.size();
  M.NodeUsers.assign(NN, {});
  M.NodeProducerCount.assign(NN, 0);
  std::vector<std::set<int>> Producers(NN);
  for (size_t I = 0; I < NN; ++I)
    for (int In : G.Nodes[I].Inputs)
      if (In >= 0 && G.Values[In].Producer >= 0)
        Producers[I].insert(G.Values[In].Producer);
  for (size_t I = 0; I < NN; ++I) {
    M.NodeProducerCount[I] = static_cast<int>(Producers[I].size());
    for (int P : Producers[I])
      M.NodeUsers[P].push_back(static_cast<int>(I));
  }
  if (M.EffectiveScheduler != SchedulerType::Pipeline)
    return;
  const size_t Words = (NN + 63) / 64;
  M.Ancestors.assign(NN, std::vector<uint64_t>(Words, 0));
  for (size_t I = 0; I < NN; ++I)
    for (int P : Producers[I]) {
      M.Ancestors[I][P / 64] |= 1ull << (P % 64);
      for (size_t W = 0; W < Words; ++W)
        M.Ancestors[I][W] |= M.Ancestors[P][W];
    }
}

/// Auto: Pipeline when the pool has 2+ threads and some level of the graph holds 2+ independent
/// ops (there is something to overlap); Sequential otherwise.
/// Ops whose kernels do enough work to be worth running beside another one (OpSchema::Heavy, set
/// where each op registers its schema, fused ops included).
bool heavyOp(const Node &N) {
  const OpSchema *S = findOpSchema(N.Domain, N.OpType);
  return S && S->Heavy;
}

/// Auto overlaps two heavy ops only when the larger does at most this many times the smaller's work.
constexpr int64_t kOverlapMaxRatio = 4;

/// Multiply-adds of a heavy op, from its static shapes: output elements times the reduction length
/// (a convolution's weight elements per output channel; a matrix product's inner dimension). 0 when
/// the shapes are not known at load or the op is not a convolution or matrix product.
int64_t heavyOpWork(const Graph &G, const Node &N) {
  auto Dims = [&](int V, std::vector<int64_t> &Out) {
    if (V < 0 || !G.Values[V].ShapeKnown || G.Values[V].Shape.isDynamic())
      return false;
    Out = G.Values[V].Shape.getDims();
    return true;
  };
  std::vector<int64_t> Y, A;
  if (N.Outputs.empty() || N.Inputs.size() < 2 || !Dims(N.Outputs[0], Y))
    return 0;
  int64_t Reduction = 0;
  if (N.OpType.compare(0, 4, "Conv") == 0 || N.OpType.compare(0, 9, "FusedConv") == 0) {
    if (Dims(N.Inputs[1], A) && A.size() >= 3 && A[0] > 0) {
      Reduction = 1;
      for (size_t I = 1; I < A.size(); ++I)
        Reduction *= A[I];
    }
  } else if (N.OpType == "MatMul" || N.OpType == "Gemm") {
    if (Dims(N.Inputs[0], A) && !A.empty())
      Reduction = A.back();
  }
  int64_t Out = 1;
  for (int64_t D : Y)
    Out *= D;
  return Out * Reduction;
}

SchedulerType chooseScheduler(const ModelImpl &M) {
  if (M.Options.Scheduler != SchedulerType::Auto)
    return M.Options.Scheduler;
  if (M.Threads < 2)
    return SchedulerType::Sequential;
  // Pipeline when two heavy ops of comparable size sit at one depth (independent GEMM-class work
  // to overlap). Independent light ops (a mask's Unsqueeze / Cast beside an embedding Gather) are
  // not worth its per-op hand-offs: under Sequential the caller runs the ops and every kernel still
  // fans out over the whole pool. Nor is a small op beside one several times its size (SqueezeNet's
  // expand1x1 beside expand3x3, ResNet-18's downsample beside conv1): overlapped, the small op runs
  // on one thread while the big one's fan-out waits for that thread, so the small op's whole time
  // is added; in sequence both split over the pool and only its share is.
  const Graph &G = *M.G;
  struct LevelWork {
    int Heavy = 0;
    bool Unknown = false;
    int64_t Max = 0, Second = 0;
  };
  std::vector<int> Level(G.Nodes.size(), 0);
  std::map<int, LevelWork> Levels;
  for (size_t I = 0; I < G.Nodes.size(); ++I) {
    for (int In : G.Nodes[I].Inputs)
      if (In >= 0 && G.Values[In].Producer >= 0)
        Level[I] = std::max(Level[I], Level[G.Values[In].Producer] + 1);
    if (!heavyOp(G.Nodes[I]))
      continue;
    LevelWork &L = Levels[Level[I]];
    const int64_t Work = heavyOpWork(G, G.Nodes[I]);
    L.Unknown = L.Unknown || Work == 0;
    L.Second = std::max(L.Second, std::min(L.Max, Work));
    L.Max = std::max(L.Max, Work);
    if (++L.Heavy >= 2 && (L.Unknown || L.Second * kOverlapMaxRatio >= L.Max))
      return SchedulerType::Pipeline;
  }
  return SchedulerType::Sequential;
}

/// Checks the manifest against the graph and marks the graph inputs it names: a Resizable input's
/// dims become symbols (kernels are created shape-generic; each run plans its concrete shape), a
/// Preserved-only input gets its concrete shape. Runs before shape inference. A compiled model's
/// graph has those shapes already (ShapesApplied): only the marks are taken.
Status applyManifest(ModelImpl &M, const Manifest &Man, bool ShapesApplied = false) {
  Graph &G = *M.G;
  auto Bad = [&](const std::string &Name, const std::string &Why) {
    return makeError(ErrorCode::Model, "manifest '", Man.Path, "': 'tensors.", Name, "': ", Why);
  };
  std::set<int> UpdateSources;
  for (const ManifestEntry &E : Man.Tensors) {
    const int V = G.findValue(E.Name);
    if (V < 0)
      return Bad(E.Name, "the model has no tensor of that name");
    Value &Val = G.Values[V];
    if (!Val.IsGraphInput) {
      if (E.Preserved && E.UpdateFrom.empty())
        return Bad(E.Name, "is not a graph input; a preserved tensor must be a graph input (its next value comes "
                           "from the output named by update_from)");
      return Bad(E.Name, "is not a graph input; only graph inputs can be preserved or resizable");
    }
    if (!E.Preserved && !E.Resizable)
      return Bad(E.Name, "marks nothing (set \"preserved\" and/or \"resizable\")");
    StatefulInput S;
    S.Value = V;
    S.InputIndex = static_cast<size_t>(std::find(G.Inputs.begin(), G.Inputs.end(), V) - G.Inputs.begin());
    S.Preserved = E.Preserved;
    S.Resizable = E.Resizable;
    if (Val.Type == ElementType::String && E.Preserved)
      return Bad(E.Name, "string tensors cannot be preserved");
    if (!E.UpdateFrom.empty()) {
      const int O = G.findValue(E.UpdateFrom);
      if (O < 0 || !G.Values[O].IsGraphOutput)
        return Bad(E.Name + ".update_from", "'" + E.UpdateFrom + "' is not a graph output");
      if (G.Values[O].Type != Val.Type)
        return Bad(E.Name + ".update_from", "output '" + E.UpdateFrom + "' has element type " +
                                                toString(G.Values[O].Type) + ", the input has " + toString(Val.Type));
      if (G.Values[O].ShapeKnown && G.Values[O].Shape.getRank() != Val.Shape.getRank())
        return Bad(E.Name + ".update_from", "output '" + E.UpdateFrom + "' has rank " +
                                                std::to_string(G.Values[O].Shape.getRank()) + ", the input has rank " +
                                                std::to_string(Val.Shape.getRank()));
      if (!UpdateSources.insert(O).second)
        return Bad(E.Name + ".update_from", "output '" + E.UpdateFrom + "' already updates another tensor");
      S.UpdateFrom = O;
    }
    if (E.HasBaseShape) {
      if (E.BaseShape.size() != Val.Shape.getRank())
        return Bad(E.Name + ".base_shape", "has rank " + std::to_string(E.BaseShape.size()) + ", the model declares " +
                                               Val.Shape.toString() + " (rank " + std::to_string(Val.Shape.getRank()) + ")");
      S.BaseDims = E.BaseShape;
    } else if (!ShapesApplied && !Val.Shape.isDynamic()) {
      S.BaseDims = Val.Shape.getDims();
    } else {
      return Bad(E.Name, "the model declares the symbolic shape " + Val.Shape.toString() +
                             "; give a concrete \"base_shape\"");
    }
    if (ShapesApplied) {
      // nothing: the compiler applied them
    } else if (S.Resizable) {
      std::vector<Expr> Dims;
      for (size_t D = 0; D < Val.Shape.getRank(); ++D)
        Dims.push_back(Val.Shape[D].isSymbol() ? Val.Shape[D] : Expr(E.Name + ":" + std::to_string(D)));
      Val.Shape = TensorShape(Dims);
    } else {
      Val.Shape = TensorShape::fromDims(S.BaseDims);
    }
    M.Stateful.push_back(std::move(S));
  }
  return Status::ok();
}

/// Metadata of the manifest's tensors: Resizable flags and base shapes, and the inputs infer()
/// takes (every graph input but the Preserved ones).
void applyStatefulMetadata(ModelImpl &M) {
  const Graph &G = *M.G;
  M.StatefulOf.assign(G.Values.size(), -1);
  for (size_t I = 0; I < M.Stateful.size(); ++I) {
    const StatefulInput &S = M.Stateful[I];
    M.StatefulOf[S.Value] = static_cast<int>(I);
    TensorInfo &TI = M.Tensors[M.TensorIndex[G.Values[S.Value].Name]];
    TI.Resizable = S.Resizable;
    TI.Shape = TensorShape::fromDims(S.BaseDims);
  }
  M.InputNames.clear();
  M.UserInputs.clear();
  M.Dynamic = false;
  for (size_t I = 0; I < G.Inputs.size(); ++I) {
    const int V = G.Inputs[I];
    const StatefulInput *S = M.StatefulOf[V] >= 0 ? &M.Stateful[M.StatefulOf[V]] : nullptr;
    if (!S && !isContainerKind(G.Values[V].Kind))
      M.Dynamic |= G.Values[V].Shape.isDynamic();
    if (S && S->Preserved)
      continue;
    M.UserInputs.push_back(I);
    M.InputNames.emplace_back(M.Tensors[M.TensorIndex[G.Values[V].Name]].Name);
  }
}

Status validateCapacities(ModelImpl &M) {
  for (const auto &KV : M.Options.ResizableCapacities) {
    const TensorInfo *TI = M.findTensor(KV.first);
    if (!TI)
      return makeError(ErrorCode::Model, "ResizableCapacities names '", KV.first, "', which is not a tensor of model '",
                       M.Name, "'");
    if (M.Dynamic)
      return makeError(ErrorCode::Model, "ResizableCapacities is not allowed on model '", M.Name,
                       "', which has symbolic (dynamic) input shapes");
    const StatefulInput *S = M.findStateful(KV.first);
    if (!TI->Resizable || !S || !S->Resizable)
      return makeError(ErrorCode::Model, "ResizableCapacities names '", KV.first, "', which is not a resizable tensor");
    if (KV.second.isDynamic())
      return makeError(ErrorCode::Model, "ResizableCapacities['", KV.first, "'] must be a concrete shape, got ",
                       KV.second.toString());
    const std::vector<int64_t> Cap = KV.second.getDims();
    if (Cap.size() != S->BaseDims.size())
      return makeError(ErrorCode::Model, "ResizableCapacities['", KV.first, "'] is ", dimsText(Cap), " (rank ", Cap.size(),
                       "), but the base shape of '", KV.first, "' is ", dimsText(S->BaseDims), " (rank ",
                       S->BaseDims.size(), ")");
    if (elementCountOf(Cap) < elementCountOf(S->BaseDims))
      return makeError(ErrorCode::Model, "ResizableCapacities['", KV.first, "'] is ", dimsText(Cap), " (",
                       elementCountOf(Cap), " elements), smaller than the base shape ", dimsText(S->BaseDims), " (",
                       elementCountOf(S->BaseDims), " elements)");
    M.Stateful[M.StatefulOf[M.G->findValue(KV.first)]].DeclaredCap = Cap;
  }
  return Status::ok();
}

/// The pass pipeline's options for these load options.
PipelineOptions pipelineOptionsFor(const ModelLoadOptions &Options) {
  // Fusion hides the intermediates between the fused ops: none runs when every intermediate is wanted.
  PipelineOptions PO;
  PO.KeepIntermediates = !Options.EnableMemoryOptimization || !Options.IntermediateSavePath.empty();
  PO.Bf16Compute = Options.Precision == ComputePrecision::BFloat16;
  PO.Cpu = cpuFeatures();
  return PO;
}

/// The graph as kernels see it: manifest marks applied, shapes inferred, the pass table
/// (passes/Pipeline.cpp) run.
Status prepareGraph(ModelImpl &M, const std::optional<Manifest> &Man, const PipelineOptions &PO) {
  if (Man) {
    M.ManifestPath = Man->Path;
    RETURN_IF_ERROR(applyManifest(M, *Man));
  }
  RETURN_IF_ERROR(inferGraphShapes(*M.G));
  runPassPipeline(*M.G, PO);
  return Status::ok();
}

/// A compiled model's graph is prepared already: its marks are taken as stored, and its compile
/// options are checked against this load's (the folder's win; a difference is logged).
Status adoptCompiledGraph(ModelImpl &M, const CompileInfo &Info, const std::string &Label) {
  Manifest Man;
  Man.Path = Label;
  Man.Tensors = Info.Marks;
  RETURN_IF_ERROR(applyManifest(M, Man, /*ShapesApplied=*/true));
  const PipelineOptions Want = pipelineOptionsFor(M.Options);
  const std::string Missing = missingCpuFeatures(Info.CpuMask, cpuFeatures());
  if (!Missing.empty())
    OPT_LOG(Warning, "compiled model '", Label, "' was compiled for a CPU with ", Missing,
            ", which this CPU lacks (or OPTIMIUM_RT_CPU_DISABLE hides): kernels are chosen for this CPU, and fused ops "
            "whose fast kernel needs those features run their reference kernel");
  if (Want.Bf16Compute != Info.Bf16Compute)
    OPT_LOG(Warning, "compiled model '", Label, "' was compiled with ", Info.Bf16Compute ? "bfloat16" : "float32",
            " compute; the load asks for ", Want.Bf16Compute ? "bfloat16" : "float32",
            ": the compiled choice stays (recompile to change it)");
  if (Want.KeepIntermediates && !Info.KeepIntermediates)
    OPT_LOG(Warning, "compiled model '", Label, "' was compiled with fusions, which hide some intermediates; "
            "recompile with --keep-intermediates to read every one");
  return Status::ok();
}

/// The manifest beside a model path (manifestPathFor), if there is one.
Result<std::optional<Manifest>> manifestFor(const std::string &Path) {
  const std::string ManifestPath = manifestPathFor(Path);
  if (ManifestPath.empty())
    return std::optional<Manifest>();
  ASSIGN_OR_RETURN(Manifest Man, readManifest(ManifestPath));
  return std::optional<Manifest>(std::move(Man));
}

/// Kernels, metadata, pool and scheduler for a prepared graph. Encrypted: the model came decrypted
/// from a sealed folder (the passphrase was used).
Result<std::shared_ptr<ModelImpl>> finishLoad(std::shared_ptr<ModelImpl> M, ImportedModel &Imported,
                                              PoolOwnership Ownership, bool Encrypted = false,
                                              std::shared_ptr<PackedWeights> Packed = nullptr) {
  const ModelLoadOptions &Options = M->Options;
  ASSIGN_OR_RETURN(auto Candidates, resolveDevices(Options));
  {
    ScopedSourceFiles Files(&Imported.Mappings); // factories packing from the file release as they go
    RETURN_IF_ERROR(placeAndCreateKernels(*M, Candidates, Imported.Mappings, Packed.get()));
  }
  if (Packed) { // the kernels borrow its entries: it lives as long as the model
    M->KeepAlive.push_back(Packed->Owner);
    M->KeepAlive.push_back(Packed);
    OPT_LOG(Info, "model '", M->Name, "': packed weights from '", Packed->Path, "': ", M->PackedHits, " borrowed, ",
            M->PackedMisses, " packed at load");
  }
  // Kernels have packed what they pack: the file pages read for that (and for parsing) leave the
  // resident set; whatever a kernel still reads in place at run time faults back in on first use.
  for (const auto &F : Imported.Mappings)
    F->releaseResidentPages();
  buildMetadata(*M);
  applyStatefulMetadata(*M);
  RETURN_IF_ERROR(validateCapacities(*M));
  if (!Options.Passphrase.empty() && !Encrypted)
    OPT_LOG(Warning, "model '", M->Name, "' is not encrypted; the passphrase is ignored");
  M->Options.Passphrase.clear(); // used at load only; the model does not carry it around

  M->Threads = Options.ThreadCount > 0 ? Options.ThreadCount
                                       : (Options.Cores.empty() ? availableCores() : static_cast<int>(Options.Cores.size()));
  // A group member always runs on the group's shared Exclusive scheduler.
  M->EffectiveScheduler = Ownership == PoolOwnership::Shared ? SchedulerType::Exclusive : chooseScheduler(*M);
  M->GroupMember = Ownership == PoolOwnership::Shared;
  buildDependencies(*M);
  computeResidency(*M);
  if (Ownership == PoolOwnership::Own) {
    PoolConfig PC;
    PC.Threads = M->Threads;
    PC.Cores = Options.Cores;
    PC.SpinIterations = Options.SpinIterations;
    PC.SpinYieldIterations = Options.SpinYieldIterations;
    PC.EnableWorkStealing = Options.EnableWorkStealing;
    PC.DisableDenormals = Options.DisableDenormals;
    auto Pool = std::make_shared<ThreadPool>(PC);
    attachSharedPool(*M, Pool, Scheduler::create(M->EffectiveScheduler, *Pool));
  }
  OPT_LOG(Info, "loaded model '", M->Name, "': ", M->G->Nodes.size(), " ops, ", M->Threads, " thread(s), scheduler ",
          toString(M->EffectiveScheduler));
  return M;
}

} // namespace

Status validatePoolTuning(const PoolTuning &O) {
  const int Cores = static_cast<int>(std::thread::hardware_concurrency());
  for (int C : O.Cores)
    if (C < 0 || (Cores > 0 && C >= Cores))
      return makeError(ErrorCode::InvalidArgument, "Cores lists core ", C, ", but this machine has cores 0..", Cores - 1);
  if (std::set<int>(O.Cores.begin(), O.Cores.end()).size() != O.Cores.size())
    return makeError(ErrorCode::InvalidArgument, "Cores lists a core twice");
  if (O.SpinYieldIterations < 0)
    return makeError(ErrorCode::InvalidArgument, "SpinYieldIterations must be >= 0, got ", O.SpinYieldIterations);
  return Status::ok();
}

void attachSharedPool(ModelImpl &M, std::shared_ptr<ThreadPool> Pool, std::shared_ptr<Scheduler> Sched) {
  M.Pool = std::move(Pool);
  M.Sched = std::move(Sched);
  M.Slice.Pool = M.Pool.get();
  M.Slice.Parts = M.Threads;
}

namespace {

std::shared_ptr<ModelImpl> newModel(ImportedModel &Imported, const ModelLoadOptions &Options) {
  auto M = std::make_shared<ModelImpl>();
  M->Name = Imported.Name;
  M->G = std::move(Imported.G);
  M->KeepAlive = Imported.KeepAlive;
  M->Options = Options;
  return M;
}

Result<std::shared_ptr<ModelImpl>> loadOnnx(ImportedModel Imported, const ModelLoadOptions &Options,
                                            const std::optional<Manifest> &Man, PoolOwnership Ownership,
                                            bool Encrypted = false) {
  auto M = newModel(Imported, Options);
  RETURN_IF_ERROR(prepareGraph(*M, Man, pipelineOptionsFor(Options)));
  return finishLoad(std::move(M), Imported, Ownership, Encrypted);
}

std::string folderStem(std::string Path) {
  while (Path.size() > 1 && Path.back() == '/')
    Path.pop_back();
  const size_t Slash = Path.find_last_of('/');
  std::string Base = Slash == std::string::npos ? Path : Path.substr(Slash + 1);
  const size_t Dot = Base.rfind('.');
  return Dot != std::string::npos && Dot > 0 ? Base.substr(0, Dot) : Base;
}

/// An encrypted folder: the key is derived once, model.onnx, its external data files and the
/// manifest are decrypted into memory (each handed out only once its tag verified), and the key is
/// wiped when the folder object goes at the end of the import.
Result<std::shared_ptr<ModelImpl>> loadCompiled(const CompiledSource &Src, const ModelLoadOptions &Options,
                                                PoolOwnership Ownership, bool Encrypted = false);

Result<std::shared_ptr<ModelImpl>> loadSealedFolder(const std::string &Folder, const ModelLoadOptions &Options,
                                                    PoolOwnership Ownership) {
  const auto T0 = std::chrono::steady_clock::now();
  ImportedModel Imported;
  std::optional<Manifest> Man;
  double KdfSeconds = 0;
  {
    ASSIGN_OR_RETURN(auto Sealed, SealedFolder::open(Folder, Options.Passphrase));
    KdfSeconds = Sealed->kdfSeconds();
    if (Sealed->contains(kCompiledHeaderFile)) {
      // An encrypted compiled folder: its files are decrypted into memory as the reader asks.
      CompiledSource Src;
      Src.Folder = Sealed->folder();
      Src.Label = Sealed->folder();
      Src.Sealed = Sealed;
      auto R = loadCompiled(Src, Options, Ownership, /*Encrypted=*/true);
      const double Seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - T0).count();
      if (R.isOk())
        OPT_LOG(Info, "encrypted compiled model '", R.value()->Name, "': key derivation ", KdfSeconds * 1e3,
                " ms, decryption and load ", (Seconds - KdfSeconds) * 1e3, " ms");
      return R;
    }
    if (!Sealed->contains("model.onnx"))
      return makeError(ErrorCode::Container, "encrypted model folder '", Sealed->folder(), "' holds no model.onnx or ",
                       kCompiledHeaderFile, " (", kSealedParamsFile, " lists neither)");
    ASSIGN_OR_RETURN(auto Bytes, Sealed->readFile("model.onnx"));
    ExternalDataReader Reader = [Sealed](const std::string &Location) -> Result<ModelFileBytes> {
      ASSIGN_OR_RETURN(auto B, Sealed->readFile(Location));
      return ModelFileBytes{B->data(), B->size(), B};
    };
    ASSIGN_OR_RETURN(Imported, importOnnxBuffer(Bytes->data(), Bytes->size(), Sealed->folder(),
                                                "'" + Sealed->folder() + "/model.onnx' (decrypted)", Bytes,
                                                std::move(Reader)));
    if (Sealed->contains("optimium.json")) {
      ASSIGN_OR_RETURN(auto Text, Sealed->readFile("optimium.json"));
      ASSIGN_OR_RETURN(Manifest Parsed,
                       parseManifest(std::string(reinterpret_cast<const char *>(Text->data()), Text->size()),
                                     Sealed->folder() + "/optimium.json"));
      Man = std::move(Parsed);
    }
  }
  Imported.Name = folderStem(Folder);
  const double Seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - T0).count();
  OPT_LOG(Info, "encrypted model '", Imported.Name, "': key derivation ", KdfSeconds * 1e3, " ms, decryption and import ",
          (Seconds - KdfSeconds) * 1e3, " ms");
  return loadOnnx(std::move(Imported), Options, Man, Ownership, /*Encrypted=*/true);
}

/// A compiled folder or bundle: no ONNX parsing, no shape inference, no passes.
Result<std::shared_ptr<ModelImpl>> loadCompiled(const CompiledSource &Src, const ModelLoadOptions &Options,
                                                PoolOwnership Ownership, bool Encrypted) {
  ASSIGN_OR_RETURN(CompiledModel C, readCompiledModel(Src));
  auto M = newModel(C.Imported, Options);
  RETURN_IF_ERROR(adoptCompiledGraph(*M, C.Info, Src.Label));
  return finishLoad(std::move(M), C.Imported, Ownership, Encrypted, C.Packed);
}

/// Path is one file holding a compiled bundle (its first bytes are the bundle magic).
bool isCompiledBundleFile(const std::string &Path) {
  struct stat St;
  if (::stat(Path.c_str(), &St) != 0 || !S_ISREG(St.st_mode))
    return false;
  char Magic[8] = {0};
  FILE *F = std::fopen(Path.c_str(), "rb");
  if (!F)
    return false;
  const bool Read = std::fread(Magic, 1, 8, F) == 8;
  std::fclose(F);
  return Read && isCompiledBundle(reinterpret_cast<const uint8_t *>(Magic), 8);
}

} // namespace

Result<std::shared_ptr<ModelImpl>> loadModelFromPath(const std::string &Path, const ModelLoadOptions &Options,
                                                     PoolOwnership Ownership) {
  ASSIGN_OR_RETURN(uint64_t Session, beginModelLoad());
  RETURN_IF_ERROR(validateOptions(Options));
  ASSIGN_OR_RETURN(bool Sealed, isSealedModelPath(Path));
  Result<std::shared_ptr<ModelImpl>> R = std::shared_ptr<ModelImpl>();
  if (Sealed) {
    R = loadSealedFolder(Path, Options, Ownership);
  } else if (isCompiledFolder(Path)) {
    CompiledSource Src;
    Src.Folder = Path;
    Src.Label = Path;
    R = loadCompiled(Src, Options, Ownership);
  } else if (isCompiledBundleFile(Path)) {
    ASSIGN_OR_RETURN(std::shared_ptr<MappedFile> F, MappedFile::open(Path));
    CompiledSource Src;
    Src.Bundle = F->Data;
    Src.BundleSize = F->Size;
    Src.BundleOwner = F;
    Src.Label = Path;
    R = loadCompiled(Src, Options, Ownership);
  } else {
    ASSIGN_OR_RETURN(ImportedModel Imported, importOnnxPath(Path));
    auto Man = manifestFor(Path);
    R = Man.isOk() ? loadOnnx(std::move(Imported), Options, Man.value(), Ownership) : Man.status();
  }
  if (!R.isOk())
    return R.status().withContext("model '" + Path + "'");
  RETURN_IF_ERROR(trackLiveModel(R.value(), Session));
  return R;
}

Result<std::shared_ptr<ModelImpl>> loadModelFromBuffer(const uint8_t *Data, size_t Size, const ModelLoadOptions &Options,
                                                       std::shared_ptr<const void> Owner, PoolOwnership Ownership) {
  ASSIGN_OR_RETURN(uint64_t Session, beginModelLoad());
  RETURN_IF_ERROR(validateOptions(Options));
  Result<std::shared_ptr<ModelImpl>> R = std::shared_ptr<ModelImpl>();
  if (isCompiledBundle(Data, Size)) {
    CompiledSource Src;
    Src.Bundle = Data;
    Src.BundleSize = Size;
    Src.BundleOwner = std::move(Owner);
    Src.Label = "in-memory model";
    R = loadCompiled(Src, Options, Ownership);
  } else {
    ASSIGN_OR_RETURN(ImportedModel Imported, importOnnxBuffer(Data, Size, "", "in-memory model", std::move(Owner)));
    R = loadOnnx(std::move(Imported), Options, std::nullopt, Ownership);
  }
  if (!R.isOk())
    return R.status().withContext("in-memory model");
  RETURN_IF_ERROR(trackLiveModel(R.value(), Session));
  return R;
}

Result<CompiledFiles> compileModelFiles(const std::string &Path, const ModelLoadOptions &Options) {
  RETURN_IF_ERROR(validateOptions(Options));
  if (isCompiledFolder(Path) || isCompiledBundleFile(Path))
    return makeError(ErrorCode::InvalidArgument, "'", Path, "' is a compiled model already; compile its ONNX model");
  ASSIGN_OR_RETURN(ImportedModel Imported, importOnnxPath(Path));
  auto M = newModel(Imported, Options);
  const PipelineOptions PO = pipelineOptionsFor(Options);
  auto Man = manifestFor(Path);
  Status S = Man.isOk() ? prepareGraph(*M, Man.value(), PO) : Man.status();
  if (!S.isOk())
    return S.withContext("model '" + Path + "'");
  CompileInfo Info;
  Info.CpuMask = cpuFeatureMask(PO.Cpu);
  Info.CpuText = PO.Cpu.toString();
  Info.Bf16Compute = PO.Bf16Compute;
  Info.KeepIntermediates = PO.KeepIntermediates;
  Info.ModelName = M->Name;
  // The marks as applied: base shapes always concrete (the graph's marked inputs may be symbolic now).
  for (const StatefulInput &SI : M->Stateful) {
    ManifestEntry E;
    E.Name = M->G->Values[SI.Value].Name;
    E.Preserved = SI.Preserved;
    E.Resizable = SI.Resizable;
    if (SI.UpdateFrom >= 0)
      E.UpdateFrom = M->G->Values[SI.UpdateFrom].Name;
    E.HasBaseShape = true;
    E.BaseShape = SI.BaseDims;
    Info.Marks.push_back(std::move(E));
  }
  // The kernels, created once as a load creates them, record their packed weights for packed.bin.
  PackedRecord Record;
  {
    ASSIGN_OR_RETURN(auto Candidates, resolveDevices(Options));
    ScopedSourceFiles Files(&Imported.Mappings);
    S = placeAndCreateKernels(*M, Candidates, Imported.Mappings, nullptr, &Record);
    if (!S.isOk())
      return S.withContext("model '" + Path + "'");
  }
  auto R = encodeCompiledModel(*M->G, Info);
  if (!R.isOk())
    return R.status().withContext("model '" + Path + "'");
  if (!Record.empty()) {
    uint32_t GraphCrc = 0;
    std::memcpy(&GraphCrc, R.value().Graph.data() + 24, 4);
    R.value().Packed = encodePackedWeights(Record, GraphCrc);
  }
  return R;
}

} // namespace detail
} // namespace runtime
} // namespace optimium
