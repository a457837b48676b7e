// Shape/type inference over the whole graph with the per-op schemas.
#include "ir/InferShapes.h"

#include "core/Log.h"

namespace optimium {
namespace runtime {
namespace detail {

ValueInfo runtimeValueInfo(ValueKind Kind, ElementType Type, const std::vector<int64_t> &Dims, const void *Data,
                           const std::shared_ptr<ConstData> &Static, const TensorShape &Declared, bool BorrowData) {
  ValueInfo VI;
  VI.Present = true;
  VI.Kind = Kind;
  VI.Type = Type;
  if (isContainerKind(Kind)) { // opaque to inference
    VI.Shape = Declared;
    return VI;
  }
  VI.Shape = TensorShape::fromDims(Dims);
  if (Static) {
    VI.Const = Static;
  } else if (BorrowData) {
    auto C = std::make_shared<ConstData>();
    C->Type = Type;
    C->Dims = Dims;
    C->Data = Data;
    C->Bytes = C->elementCount() * getElementSize(Type);
    VI.Const = std::move(C);
  }
  return VI;
}

std::vector<ValueInfo> initialValueInfos(const Graph &G) {
  std::vector<ValueInfo> Infos(G.Values.size());
  for (size_t I = 0; I < G.Values.size(); ++I) {
    const Value &V = G.Values[I];
    if (V.Const || V.IsGraphInput) {
      Infos[I].Present = true;
      Infos[I].Kind = V.Kind;
      Infos[I].Type = V.Type;
      Infos[I].Shape = V.Shape;
      Infos[I].Const = V.Const;
    }
  }
  return Infos;
}

namespace {

/// A node reading a value of unknown rank (ValueInfo::RankUnknown): infer with its guessed shape,
/// else with all-symbol guesses of each rank until one is consistent with the node (a 1-D Conv
/// behind an If that returns rank 3 or 4), and keep that guess for the value. The outputs are
/// guesses too: RankUnknown, never folded. The error of the first try when no rank fits.
Status inferWithUnknownRanks(ShapeContext &Ctx, const Node &N, std::vector<ValueInfo> &Infos) {
  Status First = inferNode(Ctx);
  std::vector<size_t> Unknown;
  for (size_t I = 0; I < N.Inputs.size(); ++I)
    if (N.Inputs[I] >= 0 && Ctx.Inputs[I].RankUnknown)
      Unknown.push_back(I);
  for (int Rank = 0; !First.isOk() && Rank <= 8; ++Rank) {
    ShapeContext Try(N);
    Try.Inputs = Ctx.Inputs;
    for (size_t I : Unknown) {
      std::vector<Expr> Dims;
      for (int D = 0; D < Rank; ++D)
        Dims.push_back(Try.newSymbol());
      Try.Inputs[I].Shape = TensorShape(std::move(Dims));
    }
    Try.Outputs = Ctx.Outputs;
    for (ValueInfo &O : Try.Outputs)
      O = ValueInfo{O.Present};
    if (!inferNode(Try).isOk())
      continue;
    for (size_t I : Unknown)
      Infos[N.Inputs[I]].Shape = Try.Inputs[I].Shape;
    Ctx.Outputs = std::move(Try.Outputs);
    First = Status::ok();
  }
  RETURN_IF_ERROR(First);
  for (ValueInfo &O : Ctx.Outputs) {
    O.RankUnknown = true;
    O.Const = nullptr;
  }
  return Status::ok();
}

} // namespace

Status propagateShapes(const Graph &G, std::vector<ValueInfo> &Infos, bool CheckDeclared) {
  for (const Node &N : G.Nodes) {
    ShapeContext Ctx(N);
    for (int In : N.Inputs) {
      if (In < 0) {
        Ctx.Inputs.emplace_back();
        continue;
      }
      if (!Infos[In].Present)
        return makeError(ErrorCode::Model, N.describe(), ": input '", G.Values[In].Name,
                         "' has no known type/shape (it is not produced before this node)");
      Ctx.Inputs.push_back(Infos[In]);
    }
    Ctx.Outputs.resize(N.Outputs.size());
    for (size_t I = 0; I < N.Outputs.size(); ++I)
      Ctx.Outputs[I].Present = N.Outputs[I] >= 0;
    bool ReadsUnknownRank = false;
    for (const ValueInfo &In : Ctx.Inputs)
      ReadsUnknownRank |= In.Present && In.RankUnknown;
    if (ReadsUnknownRank)
      RETURN_IF_ERROR(inferWithUnknownRanks(Ctx, N, Infos));
    else
      RETURN_IF_ERROR(inferNode(Ctx));
    for (size_t I = 0; I < N.Outputs.size(); ++I) {
      const int O = N.Outputs[I];
      if (O < 0)
        continue;
      ValueInfo Out = Ctx.Outputs[I];
      Out.Present = true;
      const Value &V = G.Values[O];
      // Declared types and shapes (value_info, graph outputs) are hints, as ONNX Runtime reads
      // them: when the op computes something else, say so once and go with what it computes.
      if (CheckDeclared && V.Type != ElementType::Undefined && Out.Type != V.Type &&
          Out.Type != ElementType::Undefined)
        OPT_LOG(Warning, N.describe(), ": output '", V.Name, "' is declared ", toString(V.Type),
                " but the op produces ", toString(Out.Type), "; using ", toString(Out.Type));
      // A declared dim never replaces an inferred symbol either: a wrong one would be folded into
      // Shape ops and checked against by readers (found by scripts/difftest.py). Sequence/optional
      // values: declared element shapes are loose hints (see the importer).
      if (CheckDeclared && V.ShapeKnown && !Out.RankUnknown && !isContainerKind(Out.Kind) &&
          !isContainerKind(V.Kind) && !Out.Shape.isCompatible(V.Shape))
        OPT_LOG(Warning, N.describe(), ": output '", V.Name, "' is declared with shape ", V.Shape.toString(),
                " but the op produces ", Out.Shape.toString(), "; using the op's shape");
      Infos[O] = std::move(Out);
    }
  }
  return Status::ok();
}

Status inferGraphShapes(Graph &G) {
  std::vector<ValueInfo> Infos = initialValueInfos(G);
  RETURN_IF_ERROR(propagateShapes(G, Infos, /*CheckDeclared=*/true));
  for (size_t I = 0; I < G.Values.size(); ++I) {
    Value &V = G.Values[I];
    if (!Infos[I].Present || V.Const || V.IsGraphInput)
      continue;
    V.Kind = Infos[I].Kind;
    V.Type = Infos[I].Type;
    V.Shape = Infos[I].Shape;
    V.ShapeKnown = true;
    V.RankUnknown = Infos[I].RankUnknown;
    if (Infos[I].Const && !V.Const)
      V.Const = Infos[I].Const; // the schema folded it (e.g. Shape of a static tensor)
  }
  return Status::ok();
}

} // namespace detail
} // namespace runtime
} // namespace optimium
