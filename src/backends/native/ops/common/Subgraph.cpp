// Subgraph inference and the subgraph interpreter of the control-flow ops (see Subgraph.h).
#include "backends/native/ops/common/Subgraph.h"

#include <algorithm>
#include <cstring>

#include "backends/native/NativeKernels.h"
#include "backends/native/ops/common/PackedWeights.h"
#include "core/TensorImpl.h"
#include "ir/Scopes.h"
#include "ir/InferShapes.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

namespace {

/// Binds the graph inputs and outer-scope values of G in Infos.
Status bindSubgraphInputs(const std::string &Context, const Graph &G, const std::vector<ValueInfo> &Formal,
                          const std::map<std::string, ValueInfo> &Outer, std::vector<ValueInfo> &Infos) {
  if (Formal.size() != G.Inputs.size())
    return makeError(ErrorCode::Model, Context, ": the subgraph has ", G.Inputs.size(), " inputs, expected ",
                     Formal.size());
  for (size_t I = 0; I < Formal.size(); ++I) {
    ValueInfo VI = Formal[I];
    VI.Const = nullptr; // loop-carried and scanned values change between iterations
    Infos[G.Inputs[I]] = VI;
  }
  for (const std::string &Name : outerScopeNames(G)) {
    auto It = Outer.find(Name);
    if (It == Outer.end())
      return makeError(ErrorCode::Model, Context, ": the subgraph reads '", Name,
                       "', which is not defined in it or in any enclosing graph");
    Infos[G.findValue(Name)] = It->second;
  }
  return Status::ok();
}

bool isIntegralType(ElementType T) {
  switch (T) {
  case ElementType::Bool:
  case ElementType::I8:
  case ElementType::U8:
  case ElementType::I16:
  case ElementType::U16:
  case ElementType::I32:
  case ElementType::U32:
  case ElementType::I64:
  case ElementType::U64: return true;
  default: return false;
  }
}

} // namespace

namespace {

/// Bytes of a Type tensor of Dims, or the error allocateRunValue reports.
Result<size_t> runValueBytes(ElementType Type, const std::vector<int64_t> &Dims) {
  if (Type == ElementType::String || Type == ElementType::Undefined)
    return makeError(ErrorCode::Type, "element type ", toString(Type), " is not supported inside subgraphs");
  size_t Count = 1;
  for (int64_t D : Dims) {
    if (D < 0)
      return makeError(ErrorCode::Shape, "negative dimension ", D, " in ", joinInts(Dims));
    Count *= static_cast<size_t>(D);
  }
  return Count * getElementSize(Type);
}

RunValue viewOf(std::shared_ptr<Buffer> B, ElementType Type, const std::vector<int64_t> &Dims) {
  RunValue R;
  R.View.Type = Type;
  R.View.Dims = Dims;
  R.View.Data = B->Data;
  R.Keep = std::move(B);
  return R;
}

} // namespace

Result<RunValue> allocateRunValue(ElementType Type, const std::vector<int64_t> &Dims) {
  ASSIGN_OR_RETURN(size_t Bytes, runValueBytes(Type, Dims));
  std::shared_ptr<Buffer> B = Buffer::allocate(Bytes);
  if (!B)
    return makeError(ErrorCode::OutOfResource, "cannot allocate a ", joinInts(Dims), " ", toString(Type), " tensor");
  return viewOf(std::move(B), Type, Dims);
}

Result<RunValue> RunValueCache::allocate(size_t V, ElementType Type, const std::vector<int64_t> &Dims) {
  if (V >= Slots.size())
    return allocateRunValue(Type, Dims);
  ASSIGN_OR_RETURN(size_t Bytes, runValueBytes(Type, Dims));
  std::shared_ptr<Buffer> *Free = nullptr; // a slot nobody else holds (an empty one first)
  for (std::shared_ptr<Buffer> &S : Slots[V]) {
    if (S && S.use_count() != 1)
      continue; // the caller still holds it (a carried or scan output)
    // Same size only: a fresh buffer's zeroed padding then still follows the tensor.
    if (S && S->Bytes == Bytes)
      return viewOf(S, Type, Dims);
    if (!Free || !S)
      Free = &S;
  }
  std::shared_ptr<Buffer> B = Buffer::allocate(Bytes);
  if (!B)
    return makeError(ErrorCode::OutOfResource, "cannot allocate a ", joinInts(Dims), " ", toString(Type), " tensor");
  if (Free)
    *Free = B;
  return viewOf(std::move(B), Type, Dims);
}

const Graph *graphAttr(const Node &N, const std::string &Attr) {
  auto It = N.Attrs.find(Attr);
  if (It == N.Attrs.end() || It->second.K != AttrValue::Kind::Graph || !It->second.G)
    return nullptr;
  return It->second.G.get();
}

size_t explicitInputCount(const Node &N) {
  const size_t Captured = capturedNames(N).size();
  return N.Inputs.size() >= Captured ? N.Inputs.size() - Captured : 0;
}

std::map<std::string, ValueInfo> outerInfos(const Node &N, const std::vector<ValueInfo> &Inputs, bool KeepConst) {
  const std::vector<std::string> Names = capturedNames(N);
  const size_t First = N.Inputs.size() - Names.size();
  std::map<std::string, ValueInfo> Out;
  for (size_t I = 0; I < Names.size() && First + I < Inputs.size(); ++I) {
    ValueInfo VI = Inputs[First + I];
    if (!KeepConst)
      VI.Const = nullptr;
    Out[Names[I]] = VI;
  }
  return Out;
}

std::string subgraphContext(const Node &Owner, const std::string &Attr) {
  return Owner.describe() + ", subgraph '" + Attr + "'";
}

Result<std::vector<ValueInfo>> inferSubgraph(const Node &Owner, const std::string &Attr, const Graph &G,
                                             const std::vector<ValueInfo> &Formal,
                                             const std::map<std::string, ValueInfo> &Outer) {
  const std::string Context = subgraphContext(Owner, Attr);
  std::vector<ValueInfo> Infos = initialValueInfos(G);
  RETURN_IF_ERROR(bindSubgraphInputs(Context, G, Formal, Outer, Infos));
  Status S = propagateShapes(G, Infos, /*CheckDeclared=*/false);
  if (!S.isOk())
    return S.withContext(Context);
  std::vector<ValueInfo> Out;
  for (int O : G.Outputs) {
    if (!Infos[O].Present)
      return makeError(ErrorCode::Model, Context, ": output '", G.Values[O].Name, "' is never produced");
    Out.push_back(Infos[O]);
  }
  return Out;
}

// --- the interpreter ---------------------------------------------------------------------------

struct SubgraphRunner::Step {
  const Node *N = nullptr;
  std::unique_ptr<KernelCreateInfo> Info;
  std::unique_ptr<Kernel> K;
  std::vector<int> Release; ///< Values whose last reader this node is.
  /// Concrete inference of the last run, reused while the input types and dims repeat; kept only
  /// when the outputs depend on nothing else (no input went in as a borrowed value, no sequence).
  bool HasMemo = false;
  std::vector<std::pair<ElementType, std::vector<int64_t>>> MemoInputs;
  std::vector<ValueInfo> MemoOutputs;
};

SubgraphRunner::~SubgraphRunner() = default;

Result<std::unique_ptr<SubgraphRunner>> SubgraphRunner::create(const Node &Owner, const std::string &Attr,
                                                               std::shared_ptr<const Graph> G,
                                                               const std::vector<ValueInfo> &Formal,
                                                               const std::map<std::string, ValueInfo> &Outer) {
  std::unique_ptr<SubgraphRunner> R(new SubgraphRunner());
  R->Context = subgraphContext(Owner, Attr);
  R->G = G;
  R->Infos = initialValueInfos(*G);
  RETURN_IF_ERROR(bindSubgraphInputs(R->Context, *G, Formal, Outer, R->Infos));
  Status S = propagateShapes(*G, R->Infos, /*CheckDeclared=*/false);
  if (!S.isOk())
    return S.withContext(R->Context);

  const std::vector<std::string> OwnerCaptures = capturedNames(Owner);
  for (const std::string &Name : outerScopeNames(*G)) {
    auto It = std::lower_bound(OwnerCaptures.begin(), OwnerCaptures.end(), Name);
    if (It == OwnerCaptures.end() || *It != Name)
      return makeError(ErrorCode::Model, R->Context, ": outer-scope value '", Name, "' is not an input of the node");
    R->Captures.emplace_back(G->findValue(Name), static_cast<size_t>(It - OwnerCaptures.begin()));
  }

  // Last reader of every value, for freeing intermediates early.
  std::vector<int> LastUse(G->Values.size(), -1);
  for (size_t NI = 0; NI < G->Nodes.size(); ++NI)
    for (int In : G->Nodes[NI].Inputs)
      if (In >= 0)
        LastUse[In] = static_cast<int>(NI);
  for (int O : G->Outputs)
    LastUse[O] = static_cast<int>(G->Nodes.size());

  for (size_t NI = 0; NI < G->Nodes.size(); ++NI) {
    const Node &N = G->Nodes[NI];
    bool Folded = true;
    for (int O : N.Outputs)
      Folded &= O < 0 || static_cast<bool>(R->Infos[O].Const);
    if (Folded)
      continue; // its outputs are constants already (Infos[..].Const)
    auto St = std::unique_ptr<Step>(new Step());
    St->N = &N;
    St->Info.reset(new KernelCreateInfo{N, {}, {}});
    for (int In : N.Inputs)
      St->Info->Inputs.push_back(In >= 0 ? R->Infos[In] : ValueInfo());
    for (int O : N.Outputs)
      St->Info->Outputs.push_back(O >= 0 ? R->Infos[O] : ValueInfo());
    ops::ScopedWeightsKeyScope KeyScope(Attr + "#" + std::to_string(NI) + ":" + N.Name); // PackedWeights.h
    Result<std::unique_ptr<Kernel>> KR = createNativeKernel(*St->Info);
    if (!KR.isOk())
      return makeError(KR.status().code() == ErrorCode::Shape || KR.status().code() == ErrorCode::Type
                           ? KR.status().code()
                           : ErrorCode::Model,
                       R->Context, ": cannot create the kernel of ", N.describe(), ": ", KR.status().message());
    St->K = std::move(KR).value();
    St->MemoInputs.resize(N.Inputs.size());
    for (int In : N.Inputs)
      if (In >= 0 && LastUse[In] == static_cast<int>(NI) && !R->Infos[In].Const)
        St->Release.push_back(In);
    R->Steps.push_back(std::move(St));
  }
  R->Cache.resize(G->Values.size());
  return R;
}

Status SubgraphRunner::run(const std::vector<RunValue> &Formal, const std::vector<TensorView> &Captured,
                           std::vector<RunValue> &Outputs, const Parallel &Par) const {
  const Graph &Body = *G;
  // Buffers and memoized inference are used by one run at a time (try_lock: a concurrent run of
  // the same kernel falls back to the heap; a nested body is another runner).
  std::unique_lock<std::mutex> Lock(CacheMutex, std::try_to_lock);
  const bool Cached = Lock.owns_lock();
  auto Allocate = [&](int V, ElementType Type, const std::vector<int64_t> &Dims) {
    return Cached ? Cache.allocate(static_cast<size_t>(V), Type, Dims) : allocateRunValue(Type, Dims);
  };
  std::vector<RunValue> Vals(Body.Values.size());
  std::vector<char> Ready(Body.Values.size(), 0); // produced in this run (data may be null when empty)
  for (size_t V = 0; V < Body.Values.size(); ++V)
    if (Infos[V].Const) {
      Vals[V].View = constView(*Infos[V].Const);
      Vals[V].Keep = Infos[V].Const;
      Ready[V] = 1;
    }
  if (Formal.size() != Body.Inputs.size())
    return makeError(ErrorCode::Infer, Context, ": given ", Formal.size(), " inputs, the subgraph has ",
                     Body.Inputs.size());
  for (size_t I = 0; I < Formal.size(); ++I) {
    Vals[Body.Inputs[I]] = Formal[I];
    Ready[Body.Inputs[I]] = 1;
  }
  for (const auto &C : Captures) {
    if (C.second >= Captured.size())
      return makeError(ErrorCode::Infer, Context, ": outer-scope value '", Body.Values[C.first].Name, "' is not bound");
    Vals[C.first].View = Captured[C.second];
    Vals[C.first].Keep = nullptr;
    Ready[C.first] = 1;
  }

  std::vector<TensorView> In, Out;
  for (const auto &St : Steps) {
    const Node &N = *St->N;
    // Concrete inference. Integer and bool values go in as known values (shape tensors: Reshape,
    // Slice, Range fold or size their outputs from them); other values only when some output
    // shape still depends on them (NonZero), so a float op is not folded by its reference kernel.
    In.assign(N.Inputs.size(), TensorView());
    for (size_t I = 0; I < N.Inputs.size(); ++I)
      if (N.Inputs[I] >= 0)
        In[I] = Vals[N.Inputs[I]].View;
    auto Infer = [&](ShapeContext &Ctx, bool AllValues) {
      Ctx.Inputs.clear();
      for (size_t I = 0; I < N.Inputs.size(); ++I) {
        const int V = N.Inputs[I];
        Ctx.Inputs.push_back(V < 0 ? ValueInfo()
                                   : runtimeValueInfo(In[I].Kind, In[I].Type, In[I].Dims, In[I].Data, Infos[V].Const,
                                                      Infos[V].Shape, AllValues || isIntegralType(In[I].Type)));
      }
      Ctx.Outputs.clear();
      return inferNode(Ctx);
    };
    // The memo holds when no input is a sequence or a borrowed value and the types and dims
    // repeat; then inference would give the same outputs again.
    bool Memoizable = Cached;
    for (size_t I = 0; Memoizable && I < N.Inputs.size(); ++I) {
      const int V = N.Inputs[I];
      Memoizable = V < 0 || (!isContainerKind(In[I].Kind) && (Infos[V].Const || !isIntegralType(In[I].Type)));
    }
    bool Hit = Memoizable && St->HasMemo;
    for (size_t I = 0; Hit && I < N.Inputs.size(); ++I)
      Hit = N.Inputs[I] < 0 || (St->MemoInputs[I].first == In[I].Type && St->MemoInputs[I].second == In[I].Dims);
    ShapeContext Ctx(N);
    Status S = Status::ok();
    if (!Hit) {
      S = Infer(Ctx, /*AllValues=*/false);
      bool Dynamic = false;
      for (size_t I = 0; S.isOk() && I < N.Outputs.size(); ++I)
        Dynamic |= N.Outputs[I] >= 0 && !isContainerKind(Ctx.Outputs[I].Kind) && Ctx.Outputs[I].Shape.isDynamic();
      if (S.isOk() && Dynamic && N.OpType != "If" && N.OpType != "Loop" && N.OpType != "Scan") {
        S = Infer(Ctx, /*AllValues=*/true);
        Memoizable = false;
      }
      if (!S.isOk())
        return makeError(S.code() == ErrorCode::Model ? ErrorCode::Infer : S.code(), Context, ": ", S.message());
      for (size_t I = 0; Memoizable && I < N.Outputs.size(); ++I)
        Memoizable = N.Outputs[I] < 0 || !isContainerKind(Ctx.Outputs[I].Kind);
      St->HasMemo = false;
      if (Memoizable) {
        for (size_t I = 0; I < N.Inputs.size(); ++I)
          if (N.Inputs[I] >= 0) {
            St->MemoInputs[I].first = In[I].Type;
            St->MemoInputs[I].second = In[I].Dims;
          }
        St->MemoOutputs = Ctx.Outputs;
        St->HasMemo = true;
      }
    }

    const std::vector<ValueInfo> &OutInfos = Hit ? St->MemoOutputs : Ctx.Outputs;
    // Outputs that inference folded (small, all inputs known) need no kernel run.
    bool AllFolded = true;
    for (size_t I = 0; I < N.Outputs.size(); ++I)
      AllFolded &= N.Outputs[I] < 0 || static_cast<bool>(OutInfos[I].Const);
    Out.assign(N.Outputs.size(), TensorView());
    for (size_t I = 0; I < N.Outputs.size(); ++I) {
      const int O = N.Outputs[I];
      if (O < 0)
        continue;
      const ValueInfo &OI = OutInfos[I];
      if (isContainerKind(OI.Kind)) { // a fresh, empty sequence/optional for the kernel to fill
        std::shared_ptr<ContainerValue> C = makeContainer(OI.Kind, OI.Type);
        Vals[O].View = containerView(C);
        Vals[O].Keep = std::move(C);
        Out[I] = Vals[O].View;
        Ready[O] = 1;
        continue;
      }
      if (AllFolded) {
        Vals[O].View = constView(*OI.Const);
        Vals[O].Keep = OI.Const;
        Ready[O] = 1;
        continue;
      }
      if (OI.Shape.isDynamic()) { // nested control flow sizes it while running
        Vals[O] = RunValue();
        Vals[O].View.Type = OI.Type;
        Out[I] = Vals[O].View;
        Ready[O] = 0;
        continue;
      }
      Result<RunValue> RV = Allocate(O, OI.Type, OI.Shape.getDims());
      if (!RV.isOk())
        return makeError(RV.status().code(), Context, ": ", N.describe(), ": output '", Body.Values[O].Name, "': ",
                         RV.status().message());
      Vals[O] = std::move(RV).value();
      Out[I] = Vals[O].View;
      Ready[O] = 1;
    }
    if (!AllFolded) {
      const OutputAllocator Alloc = [&](size_t Index, const std::vector<int64_t> &Dims) -> Result<TensorView> {
        if (Index >= N.Outputs.size() || N.Outputs[Index] < 0)
          return makeError(ErrorCode::Infer, "output ", Index, " does not exist");
        const int O = N.Outputs[Index];
        ASSIGN_OR_RETURN(RunValue RV, Allocate(O, Out[Index].Type, Dims));
        if (Ready[O])
          return makeError(ErrorCode::Infer, "output ", Index, " was allocated twice");
        Vals[O] = std::move(RV);
        Ready[O] = 1;
        return Vals[O].View;
      };
      ScopedOutputAllocator Scope(&Alloc);
      S = St->K->run(KernelContext{In, Out, Par});
      if (!S.isOk())
        return makeError(S.code() == ErrorCode::Model ? ErrorCode::Infer : S.code(), Context, ": while running ",
                         N.describe(), ": ", S.message());
      for (size_t I = 0; I < N.Outputs.size(); ++I)
        if (N.Outputs[I] >= 0 && !Ready[N.Outputs[I]])
          return makeError(ErrorCode::Infer, Context, ": while running ", N.describe(), ": output '",
                           Body.Values[N.Outputs[I]].Name, "' was not produced");
    }
    for (int V : St->Release)
      if (!Body.Values[V].IsGraphOutput)
        Vals[V] = RunValue(); // Ready stays set: no later node reads it
  }
  Outputs.clear();
  for (int O : Body.Outputs) {
    if (!Ready[O])
      return makeError(ErrorCode::Infer, Context, ": output '", Body.Values[O].Name, "' was not produced");
    Outputs.push_back(Vals[O]);
  }
  return Status::ok();
}

// --- output helpers ----------------------------------------------------------------------------

Result<TensorView> controlFlowOutput(const Node &N, const KernelContext &Ctx, const OutputAllocator *Alloc, size_t I,
                                     const std::vector<int64_t> &Dims) {
  const TensorView &O = Ctx.Outputs[I];
  if (O.Data || (O.Dims == Dims && product(Dims, 0, Dims.size()) == 0)) {
    if (O.Dims != Dims)
      return makeError(ErrorCode::Shape, N.describe(), ": output ", I, " was planned as ", joinInts(O.Dims),
                       " but the subgraph produced ", joinInts(Dims));
    return O;
  }
  if (!Alloc)
    return makeError(ErrorCode::Infer, N.describe(), ": output ", I, " has no buffer and the executor gave no allocator");
  ASSIGN_OR_RETURN(TensorView V, (*Alloc)(I, Dims));
  return V;
}

Status writeControlFlowOutput(const Node &N, const KernelContext &Ctx, const OutputAllocator *Alloc, size_t I,
                              const TensorView &V) {
  if (I >= Ctx.Outputs.size() || (Ctx.Outputs[I].Type == ElementType::Undefined && !Ctx.Outputs[I].Data))
    return Status::ok(); // an omitted optional output
  if (ContainerValue *C = Ctx.Outputs[I].container())
    return assignContainer(*C, V, N.describe() + ": output " + std::to_string(I));
  if (const ContainerValue *S = V.container()) { // an optional tensor where the node outputs a tensor
    if (S->Kind != ValueKind::OptionalTensor || !S->HasValue || S->Tensors.size() != 1)
      return makeError(ErrorCode::Type, N.describe(), ": output ", I, " is a tensor but the subgraph produced a ",
                       toString(S->Kind), S->HasValue ? "" : " without a value");
    return writeControlFlowOutput(N, Ctx, Alloc, I, S->Tensors[0].View);
  }
  if (V.Type != Ctx.Outputs[I].Type)
    return makeError(ErrorCode::Type, N.describe(), ": output ", I, " is ", toString(Ctx.Outputs[I].Type),
                     " but the subgraph produced ", toString(V.Type));
  ASSIGN_OR_RETURN(TensorView Dst, controlFlowOutput(N, Ctx, Alloc, I, V.Dims));
  const size_t Bytes = V.elementCount() * getElementSize(V.Type);
  if (Bytes && Dst.Data != V.Data)
    std::memcpy(Dst.Data, V.Data, Bytes);
  return Status::ok();
}

Result<bool> readCondition(const Node &N, const TensorView &V, const char *What) {
  if (V.elementCount() != 1 || !V.Data)
    return makeError(ErrorCode::Infer, N.describe(), ": ", What, " must hold exactly one element, got shape ",
                     joinInts(V.Dims));
  switch (V.Type) {
  case ElementType::Bool:
  case ElementType::U8:
  case ElementType::I8: return *static_cast<const uint8_t *>(V.Data) != 0;
  case ElementType::I32: return *static_cast<const int32_t *>(V.Data) != 0;
  case ElementType::I64: return *static_cast<const int64_t *>(V.Data) != 0;
  case ElementType::F32: return *static_cast<const float *>(V.Data) != 0.0f;
  default: break;
  }
  return makeError(ErrorCode::Type, N.describe(), ": ", What, " has unsupported element type ", toString(V.Type));
}

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
