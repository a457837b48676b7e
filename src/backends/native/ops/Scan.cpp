// Scan: runs body once per element along the scan axis of the scan inputs, threading state
// variables through; per-iteration scan outputs are stacked along scan_output_axes (opset 9+:
// scan_input_axes, scan_input_directions, scan_output_axes, scan_output_directions). Opset 8
// (batch axis 0, optional sequence_lens, `directions`) runs the same per batch element; only full
// sequence lengths are supported there. Outer-scope values are trailing inputs (ir/Scopes.h).
#include "backends/native/ops/common/ControlFlow.h"
#include "backends/native/ops/common/Indexing.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct ScanShape {
  bool Batched = false; ///< opset 8: input 0 is sequence_lens, every tensor has a batch axis 0
  size_t First = 0;     ///< index of the first state input (1 with sequence_lens)
  size_t State = 0, ScanIn = 0, ScanOut = 0, Explicit = 0;
  std::vector<int64_t> InAxes, InDirs, OutAxes, OutDirs; ///< axes not yet normalized
};

Result<ScanShape> scanShape(const Node &N) {
  ScanShape S;
  S.Batched = N.OpsetVersion > 0 && N.OpsetVersion < 9;
  S.First = S.Batched ? 1 : 0;
  S.Explicit = explicitInputCount(N);
  ASSIGN_OR_RETURN(int64_t NumScan, N.getInt("num_scan_inputs", -1));
  if (NumScan <= 0)
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'num_scan_inputs' must be positive, got ", NumScan);
  if (S.Explicit < S.First + static_cast<size_t>(NumScan))
    return makeError(ErrorCode::Model, N.describe(), ": ", S.Explicit, " inputs but num_scan_inputs is ", NumScan);
  S.ScanIn = static_cast<size_t>(NumScan);
  S.State = S.Explicit - S.First - S.ScanIn;
  if (N.Outputs.size() < S.State)
    return makeError(ErrorCode::Model, N.describe(), ": ", N.Outputs.size(), " outputs, expected at least the ",
                     S.State, " state variables");
  S.ScanOut = N.Outputs.size() - S.State;
  const Graph *Body = graphAttr(N, "body");
  if (!Body)
    return makeError(ErrorCode::Model, N.describe(), ": the 'body' graph attribute is missing");
  if (Body->Inputs.size() != S.State + S.ScanIn)
    return makeError(ErrorCode::Model, N.describe(), ": body has ", Body->Inputs.size(), " inputs, expected ",
                     S.State, " state + ", S.ScanIn, " scan = ", S.State + S.ScanIn);
  if (Body->Outputs.size() != N.Outputs.size())
    return makeError(ErrorCode::Model, N.describe(), ": body has ", Body->Outputs.size(), " outputs, the node has ",
                     N.Outputs.size());
  auto List = [&](const char *Attr, size_t Count, std::vector<int64_t> &Out) -> Status {
    ASSIGN_OR_RETURN(Out, N.getInts(Attr, std::vector<int64_t>(Count, 0)));
    if (Out.size() != Count)
      return makeError(ErrorCode::Model, N.describe(), ": attribute '", Attr, "' has ", Out.size(),
                       " entries, expected ", Count);
    return Status::ok();
  };
  if (S.Batched) {
    RETURN_IF_ERROR(List("directions", S.ScanIn, S.InDirs));
    S.InAxes.assign(S.ScanIn, 0);
    S.OutAxes.assign(S.ScanOut, 0);
    S.OutDirs.assign(S.ScanOut, 0);
  } else {
    RETURN_IF_ERROR(List("scan_input_axes", S.ScanIn, S.InAxes));
    RETURN_IF_ERROR(List("scan_input_directions", S.ScanIn, S.InDirs));
    RETURN_IF_ERROR(List("scan_output_axes", S.ScanOut, S.OutAxes));
    RETURN_IF_ERROR(List("scan_output_directions", S.ScanOut, S.OutDirs));
  }
  return S;
}

/// Normalized axis Axis of a tensor of rank Rank ([-Rank, Rank - 1]).
Result<size_t> axisFor(const Node &N, const char *Attr, int64_t Axis, size_t Rank) {
  ASSIGN_OR_RETURN(int64_t A, normalizeAxis(N, Attr, Axis, static_cast<int64_t>(Rank)));
  return static_cast<size_t>(A);
}

/// Without the batch axis (opset 8) the per-batch view of an input's shape.
TensorShape dropDims(const TensorShape &S, size_t Axis, size_t Count) {
  std::vector<Expr> D;
  for (size_t I = 0; I < S.getRank(); ++I)
    if (I < Axis || I >= Axis + Count)
      D.push_back(S[I]);
  return TensorShape(std::move(D));
}

OpSchema scanSchema() {
  OpSchema S;
  S.OpType = "Scan";
  S.MinInputs = 0;
  S.MaxInputs = -1;
  S.MinOutputs = 1;
  S.MaxOutputs = -1;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    const Node &N = Ctx.N;
    ASSIGN_OR_RETURN(ScanShape SS, scanShape(N));
    for (size_t I = SS.First; I < SS.Explicit; ++I)
      if (!Ctx.hasInput(I))
        return Ctx.error(ErrorCode::Model, "input ", I, " is missing");
    const size_t B = SS.Batched ? 1 : 0; // leading batch axis
    std::vector<ValueInfo> Formal;
    for (size_t K = 0; K < SS.State; ++K) {
      ValueInfo VI = Ctx.Inputs[SS.First + K];
      if (VI.Shape.getRank() < B)
        return Ctx.error(ErrorCode::Shape, "state input ", K, " has no batch axis");
      VI.Shape = dropDims(VI.Shape, 0, B);
      VI.Const = nullptr; // the initial state only: it changes between iterations
      Formal.push_back(VI);
    }
    Expr Len;
    bool HaveLen = false;
    for (size_t J = 0; J < SS.ScanIn; ++J) {
      ValueInfo VI = Ctx.Inputs[SS.First + SS.State + J];
      if (VI.Shape.getRank() < B + 1)
        return Ctx.error(ErrorCode::Shape, "scan input ", J, " has rank ", VI.Shape.getRank(), ", too small to scan");
      ASSIGN_OR_RETURN(size_t Axis, axisFor(N, "scan_input_axes", SS.InAxes[J], VI.Shape.getRank() - B));
      Axis += B;
      const Expr L = VI.Shape[Axis];
      if (HaveLen && L.isConst() && Len.isConst() && L.value() != Len.value())
        return Ctx.error(ErrorCode::Shape, "scan inputs disagree on the sequence length (", Len.value(), " vs ",
                         L.value(), ")");
      if (!HaveLen || (L.isConst() && !Len.isConst()))
        Len = L;
      HaveLen = true;
      VI.Shape = dropDims(dropDims(VI.Shape, Axis, 1), 0, B);
      VI.Const = nullptr; // one slice per iteration, not the whole constant
      Formal.push_back(VI);
    }
    ASSIGN_OR_RETURN(std::vector<ValueInfo> Out,
                     inferSubgraph(N, "body", *graphAttr(N, "body"), Formal, outerInfos(N, Ctx.Inputs, false)));
    for (size_t K = 0; K < SS.State; ++K) {
      const ValueInfo &In = Ctx.Inputs[SS.First + K];
      if (Out[K].Type != In.Type)
        return Ctx.error(ErrorCode::Type, "state variable ", K, " is ", toString(In.Type), " but the body produces ",
                         toString(Out[K].Type));
      Ctx.Outputs[K].Type = In.Type;
      const TensorShape PerBatch = dropDims(In.Shape, 0, B);
      TensorShape Shape = Out[K].Shape == PerBatch ? PerBatch : mergeOrSymbols(Ctx, Out[K].Shape, PerBatch);
      std::vector<Expr> Dims;
      if (B)
        Dims.push_back(In.Shape[0]);
      for (const Expr &E : Shape)
        Dims.push_back(E);
      Ctx.Outputs[K].Shape = TensorShape(std::move(Dims));
    }
    for (size_t J = 0; J < SS.ScanOut; ++J) {
      const ValueInfo &BO = Out[SS.State + J];
      std::vector<Expr> Dims(BO.Shape.begin(), BO.Shape.end());
      ASSIGN_OR_RETURN(size_t Axis, axisFor(N, "scan_output_axes", SS.OutAxes[J], Dims.size() + 1));
      Dims.insert(Dims.begin() + static_cast<std::ptrdiff_t>(Axis), Len);
      if (B)
        Dims.insert(Dims.begin(), Ctx.Inputs[SS.First + SS.State].Shape[0]);
      Ctx.Outputs[SS.State + J].Type = BO.Type;
      Ctx.Outputs[SS.State + J].Shape = TensorShape(std::move(Dims));
    }
    return Status::ok();
  };
  return S;
}

class ScanKernel : public Kernel {
public:
  ScanKernel(const Node &N, ScanShape SS, std::unique_ptr<SubgraphRunner> Body)
      : N(N), SS(std::move(SS)), Body(std::move(Body)) {}

  Status run(const KernelContext &Ctx) const override {
    const OutputAllocator *Alloc = currentOutputAllocator();
    const std::vector<TensorView> Captured(Ctx.Inputs.begin() + static_cast<std::ptrdiff_t>(SS.Explicit),
                                           Ctx.Inputs.end());
    std::vector<TensorView> State(Ctx.Inputs.begin() + static_cast<std::ptrdiff_t>(SS.First),
                                  Ctx.Inputs.begin() + static_cast<std::ptrdiff_t>(SS.First + SS.State));
    std::vector<TensorView> ScanIn(Ctx.Inputs.begin() + static_cast<std::ptrdiff_t>(SS.First + SS.State),
                                   Ctx.Inputs.begin() + static_cast<std::ptrdiff_t>(SS.Explicit));
    std::vector<RunValue> Final, Stacked;
    if (!SS.Batched) {
      RETURN_IF_ERROR(scanOnce(Ctx, State, ScanIn, Captured, Final, Stacked));
      for (size_t K = 0; K < SS.State; ++K)
        RETURN_IF_ERROR(writeControlFlowOutput(N, Ctx, Alloc, K, Final[K].View));
      for (size_t J = 0; J < SS.ScanOut; ++J)
        RETURN_IF_ERROR(writeControlFlowOutput(N, Ctx, Alloc, SS.State + J, Stacked[J].View));
      return Status::ok();
    }
    // Opset 8: one scan per batch element, results stacked along the batch axis.
    if (ScanIn.empty() || ScanIn[0].Dims.size() < 2)
      return makeError(ErrorCode::Infer, N.describe(), ": scan inputs need [batch, sequence, ...] shapes");
    const int64_t Batch = ScanIn[0].Dims[0];
    if (Ctx.Inputs[0].Data) {
      ASSIGN_OR_RETURN(std::vector<int64_t> Lens, readInts(Ctx.Inputs[0], "sequence_lens"));
      for (int64_t L : Lens)
        if (L != ScanIn[0].Dims[1])
          return makeError(ErrorCode::NotImplemented, N.describe(), ": sequence_lens shorter than the sequence (", L,
                           " < ", ScanIn[0].Dims[1], ") are not supported");
    }
    std::vector<std::vector<RunValue>> PerBatch(SS.State + SS.ScanOut);
    for (int64_t Bi = 0; Bi < Batch; ++Bi) {
      std::vector<RunValue> Keep;
      std::vector<TensorView> BState, BScan;
      for (const TensorView &V : State) {
        ASSIGN_OR_RETURN(RunValue R, sliceAlong(V, 0, Bi));
        BState.push_back(R.View);
        Keep.push_back(std::move(R));
      }
      for (const TensorView &V : ScanIn) {
        if (V.Dims.empty() || V.Dims[0] != Batch)
          return makeError(ErrorCode::Shape, N.describe(), ": scan inputs disagree on the batch size");
        ASSIGN_OR_RETURN(RunValue R, sliceAlong(V, 0, Bi));
        BScan.push_back(R.View);
        Keep.push_back(std::move(R));
      }
      RETURN_IF_ERROR(scanOnce(Ctx, BState, BScan, Captured, Final, Stacked));
      for (size_t K = 0; K < SS.State; ++K)
        PerBatch[K].push_back(Final[K]);
      for (size_t J = 0; J < SS.ScanOut; ++J)
        PerBatch[SS.State + J].push_back(Stacked[J]);
    }
    for (size_t O = 0; O < PerBatch.size(); ++O) {
      if (PerBatch[O].empty())
        return makeError(ErrorCode::NotImplemented, N.describe(), ": a batch of size 0 is not supported");
      ASSIGN_OR_RETURN(std::vector<int64_t> Dims, stackedDims(N, viewsOf(PerBatch[O]), 0, "an output"));
      ASSIGN_OR_RETURN(TensorView Dst, controlFlowOutput(N, Ctx, Alloc, O, Dims));
      stackInto(viewsOf(PerBatch[O]), 0, false, Dst);
    }
    return Status::ok();
  }

private:
  /// One scan over the sequence axis: final state values and the stacked scan outputs.
  Status scanOnce(const KernelContext &Ctx, const std::vector<TensorView> &State, const std::vector<TensorView> &ScanIn,
                  const std::vector<TensorView> &Captured, std::vector<RunValue> &Final,
                  std::vector<RunValue> &Stacked) const {
    std::vector<size_t> Axes(SS.ScanIn);
    int64_t Len = -1;
    for (size_t J = 0; J < SS.ScanIn; ++J) {
      ASSIGN_OR_RETURN(Axes[J], axisFor(N, "scan_input_axes", SS.InAxes[J], ScanIn[J].Dims.size()));
      const int64_t L = ScanIn[J].Dims[Axes[J]];
      if (Len >= 0 && L != Len)
        return makeError(ErrorCode::Shape, N.describe(), ": scan inputs disagree on the sequence length (", Len,
                         " vs ", L, ")");
      Len = L;
    }
    std::vector<RunValue> Formal(SS.State + SS.ScanIn);
    for (size_t K = 0; K < SS.State; ++K)
      Formal[K].View = State[K];
    std::vector<std::vector<RunValue>> Scans(SS.ScanOut);
    std::vector<RunValue> Outs;
    for (int64_t T = 0; T < Len; ++T) {
      for (size_t J = 0; J < SS.ScanIn; ++J) {
        ASSIGN_OR_RETURN(Formal[SS.State + J], sliceAlong(ScanIn[J], Axes[J], SS.InDirs[J] ? Len - 1 - T : T));
      }
      RETURN_IF_ERROR(Body->run(Formal, Captured, Outs, Ctx.Par));
      for (size_t K = 0; K < SS.State; ++K)
        Formal[K] = Outs[K];
      for (size_t J = 0; J < SS.ScanOut; ++J)
        Scans[J].push_back(Outs[SS.State + J]);
    }
    Final.assign(Formal.begin(), Formal.begin() + static_cast<std::ptrdiff_t>(SS.State));
    Stacked.clear();
    for (size_t J = 0; J < SS.ScanOut; ++J) {
      std::vector<TensorView> Parts = viewsOf(Scans[J]);
      std::vector<int64_t> PerIter;
      ElementType Type = ElementType::Undefined;
      if (Parts.empty()) {
        ASSIGN_OR_RETURN(std::vector<ValueInfo> Out, inferWith(State, ScanIn, Axes, Captured));
        PerIter = dimsOrZero(Out[SS.State + J].Shape);
        Type = Out[SS.State + J].Type;
      } else {
        PerIter = Parts[0].Dims;
        Type = Parts[0].Type;
      }
      ASSIGN_OR_RETURN(size_t Axis, axisFor(N, "scan_output_axes", SS.OutAxes[J], PerIter.size() + 1));
      std::vector<int64_t> Dims;
      if (Parts.empty()) {
        Dims = PerIter;
        Dims.insert(Dims.begin() + static_cast<std::ptrdiff_t>(Axis), 0);
      } else {
        ASSIGN_OR_RETURN(Dims, stackedDims(N, Parts, Axis, "a scan output"));
      }
      ASSIGN_OR_RETURN(RunValue R, allocateRunValue(Type, Dims));
      stackInto(Parts, Axis, SS.OutDirs[J] != 0, R.View);
      Stacked.push_back(std::move(R));
    }
    return Status::ok();
  }

  /// Body inference with the actual shapes (for scan outputs of an empty sequence).
  Result<std::vector<ValueInfo>> inferWith(const std::vector<TensorView> &State, const std::vector<TensorView> &ScanIn,
                                           const std::vector<size_t> &Axes,
                                           const std::vector<TensorView> &Captured) const {
    auto Info = [](const TensorView &V, std::vector<int64_t> Dims) {
      ValueInfo VI;
      VI.Present = true;
      VI.Type = V.Type;
      VI.Shape = TensorShape::fromDims(Dims);
      return VI;
    };
    std::vector<ValueInfo> Formal, Outer;
    for (const TensorView &V : State)
      Formal.push_back(Info(V, V.Dims));
    for (size_t J = 0; J < ScanIn.size(); ++J) {
      std::vector<int64_t> D = ScanIn[J].Dims;
      D.erase(D.begin() + static_cast<std::ptrdiff_t>(Axes[J]));
      Formal.push_back(Info(ScanIn[J], D));
    }
    std::vector<ValueInfo> All(SS.Explicit);
    for (const TensorView &V : Captured)
      All.push_back(Info(V, V.Dims));
    return inferSubgraph(N, "body", Body->graph(), Formal, outerInfos(N, All, false));
  }

  Node N;
  ScanShape SS;
  std::unique_ptr<SubgraphRunner> Body;
};

Result<std::unique_ptr<Kernel>> createScan(const KernelCreateInfo &Info) {
  const Node &N = Info.N;
  ASSIGN_OR_RETURN(ScanShape SS, scanShape(N));
  // The body's formal inputs as the schema derives them (symbolic where the outer shapes are).
  const size_t B = SS.Batched ? 1 : 0;
  std::vector<ValueInfo> Formal;
  for (size_t K = 0; K < SS.State; ++K) {
    ValueInfo VI = Info.Inputs[SS.First + K];
    VI.Shape = dropDims(VI.Shape, 0, B);
    VI.Const = nullptr;
    Formal.push_back(VI);
  }
  for (size_t J = 0; J < SS.ScanIn; ++J) {
    ValueInfo VI = Info.Inputs[SS.First + SS.State + J];
    ASSIGN_OR_RETURN(size_t Axis, axisFor(N, "scan_input_axes", SS.InAxes[J], VI.Shape.getRank() - B));
    VI.Shape = dropDims(dropDims(VI.Shape, Axis + B, 1), 0, B);
    VI.Const = nullptr;
    Formal.push_back(VI);
  }
  ASSIGN_OR_RETURN(std::unique_ptr<SubgraphRunner> Body,
                   SubgraphRunner::create(N, "body", N.Attrs.at("body").G, Formal, outerInfos(N, Info.Inputs, true)));
  return makeKernel<ScanKernel>(N, std::move(SS), std::move(Body));
}

OpKernels scanKernels() {
  OpKernels K;
  K.OpType = "Scan";
  K.Variants.push_back({"any_scan__ref", 0, nullptr, createScan});
  K.TestCases = [] {
    // Running sum over the sequence: s <- s + x_t; scan output y_t = s * w (w from outside).
    auto Body = [] {
      return TinyGraph()
          .input("s", ElementType::F32, {3})
          .input("x", ElementType::F32, {3})
          .node("Add", {"s", "x"}, {"s_out"})
          .node("Mul", {"s_out", "w"}, {"y"})
          .output("s_out")
          .output("y")
          .attr();
    };
    OpTestCase Fwd = testCase("forward", {tensorInput({3}), tensorInput({4, 3}), tensorInput({3})},
                              {{"body", Body()}, {"num_scan_inputs", attrInt(1)}});
    Fwd.NumOutputs = 2;
    OpTestCase Rev = Fwd;
    Rev.Label = "axes_directions";
    Rev.Inputs[1] = tensorInput({3, 4});
    Rev.Attrs["scan_input_axes"] = attrInts({1});
    Rev.Attrs["scan_input_directions"] = attrInts({1});
    Rev.Attrs["scan_output_axes"] = attrInts({-1});
    Rev.Attrs["scan_output_directions"] = attrInts({1});
    return std::vector<OpTestCase>{Fwd, Rev};
  };
  return K;
}

OPT_REGISTER_HEAVY_SCHEMA(Scan, scanSchema());
OPT_REGISTER_KERNELS(Scan, scanKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
