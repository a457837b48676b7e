// Loop: runs body while (i < M, when M is given) and (cond, when cond is given). Body inputs are
// (iter_num, cond, carried...), outputs (cond, carried..., scan...); the node outputs the final
// carried values and each scan output stacked along a new axis 0 (its length is known only after
// the run, so the kernel sizes it). Outer-scope values are trailing inputs (ir/Scopes.h).
#include "backends/native/ops/common/ControlFlow.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct LoopShape {
  size_t Explicit = 0, Carried = 0, Scans = 0;
};

Result<LoopShape> loopShape(const Node &N) {
  LoopShape L;
  L.Explicit = explicitInputCount(N);
  if (L.Explicit < 2)
    return makeError(ErrorCode::Model, N.describe(), ": expected at least 2 inputs (M, cond), got ", L.Explicit);
  L.Carried = L.Explicit - 2;
  const Graph *Body = graphAttr(N, "body");
  if (!Body)
    return makeError(ErrorCode::Model, N.describe(), ": the 'body' graph attribute is missing");
  if (Body->Inputs.size() != 2 + L.Carried)
    return makeError(ErrorCode::Model, N.describe(), ": body has ", Body->Inputs.size(),
                     " inputs, expected 2 + ", L.Carried, " loop-carried = ", 2 + L.Carried, " (iter_num, cond, carried...)");
  if (N.Outputs.size() < L.Carried)
    return makeError(ErrorCode::Model, N.describe(), ": ", N.Outputs.size(), " outputs, expected at least the ",
                     L.Carried, " loop-carried values");
  if (Body->Outputs.size() != 1 + N.Outputs.size())
    return makeError(ErrorCode::Model, N.describe(), ": body has ", Body->Outputs.size(), " outputs, expected 1 + ",
                     N.Outputs.size(), " = ", 1 + N.Outputs.size(), " (cond, carried..., scan...)");
  L.Scans = N.Outputs.size() - L.Carried;
  return L;
}

std::vector<ValueInfo> bodyFormals(const std::vector<ValueInfo> &Inputs, size_t Carried) {
  std::vector<ValueInfo> F(2 + Carried);
  F[0].Present = F[1].Present = true;
  F[0].Type = ElementType::I64;
  F[1].Type = ElementType::Bool;
  for (size_t K = 0; K < Carried; ++K) {
    F[2 + K] = Inputs[2 + K];
    F[2 + K].Const = nullptr; // the initial value only: a carried value changes between iterations
  }
  return F;
}

/// Body formals whose carried shapes hold in every iteration, and the body's output infos with
/// them: the initial shapes when the body keeps them; else symbols where they change (one more
/// pass), else fully symbolic. Shape-derived constants inside the body then stay valid.
Status stableBodyInference(const Node &N, const LoopShape &L, const std::vector<ValueInfo> &Inputs,
                           std::vector<ValueInfo> &Formal, std::vector<ValueInfo> &Out) {
  ShapeContext Symbols(N);
  const std::map<std::string, ValueInfo> Outer = outerInfos(N, Inputs, /*KeepConst=*/false);
  Formal = bodyFormals(Inputs, L.Carried);
  for (int Pass = 0; Pass < 3; ++Pass) {
    ASSIGN_OR_RETURN(Out, inferSubgraph(N, "body", *graphAttr(N, "body"), Formal, Outer));
    bool Stable = true;
    for (size_t K = 0; K < L.Carried; ++K) {
      const TensorShape &In = Formal[2 + K].Shape, &B = Out[1 + K].Shape;
      if (B == In)
        continue;
      Stable = false;
      if (Pass == 0) {
        Formal[2 + K].Shape = mergeOrSymbols(Symbols, In, B);
      } else {
        std::vector<Expr> Dims;
        for (size_t D = 0; D < In.getRank(); ++D)
          Dims.push_back(Symbols.newSymbol());
        Formal[2 + K].Shape = TensorShape(std::move(Dims));
      }
    }
    if (Stable)
      return Status::ok();
  }
  return Status::ok(); // the rank changes between iterations: the last pass is as good as it gets
}

OpSchema loopSchema() {
  OpSchema S;
  S.OpType = "Loop";
  S.MinInputs = 0; // M and cond are optional ("")
  S.MaxInputs = -1;
  S.MinOutputs = 0;
  S.MaxOutputs = -1;
  S.TakesContainers = true; // loop-carried and outer-scope values may be sequences/optionals
  S.Infer = [](ShapeContext &Ctx) -> Status {
    const Node &N = Ctx.N;
    ASSIGN_OR_RETURN(LoopShape L, loopShape(N));
    for (size_t K = 0; K < L.Carried; ++K)
      if (!Ctx.hasInput(2 + K))
        return Ctx.error(ErrorCode::Model, "loop-carried input ", 2 + K, " is missing");
    if (Ctx.hasInput(0) && Ctx.Inputs[0].Type != ElementType::I64)
      return Ctx.error(ErrorCode::Type, "M must be int64, got ", toString(Ctx.Inputs[0].Type));
    std::vector<ValueInfo> Formal, Out;
    RETURN_IF_ERROR(stableBodyInference(N, L, Ctx.Inputs, Formal, Out));
    for (size_t K = 0; K < L.Carried; ++K) {
      const ValueInfo &In = Ctx.Inputs[2 + K], &B = Out[1 + K];
      if (B.Type != In.Type && !(isContainerKind(In.Kind) && In.Type == ElementType::Undefined))
        return Ctx.error(ErrorCode::Type, "loop-carried value ", K, " is ", toString(In.Type),
                         " but the body produces ", toString(B.Type));
      // A carried optional(x) may become x in the body (ONNX's test_loop16_seq_none).
      if (unwrapOptional(B.Kind) != unwrapOptional(In.Kind))
        return Ctx.error(ErrorCode::Type, "loop-carried value ", K, " is a ", toString(In.Kind),
                         " but the body produces a ", toString(B.Kind));
      Ctx.Outputs[K].Kind = B.Kind;
      Ctx.Outputs[K].Type = B.Type;
      // Zero iterations give the initial value: its shape only when the body keeps it.
      Ctx.Outputs[K].Shape = B.Shape == In.Shape ? In.Shape : mergeOrSymbols(Ctx, B.Shape, In.Shape);
    }
    // The trip count is known when M is and there is no condition to stop earlier.
    Expr Trip = Ctx.newSymbol();
    if (Ctx.hasInput(0) && Ctx.Inputs[0].Const && !Ctx.hasInput(1) && Ctx.Inputs[0].Const->elementCount() == 1)
      Trip = Expr(static_cast<long long>(std::max<int64_t>(0, *Ctx.Inputs[0].Const->as<int64_t>())));
    for (size_t J = 0; J < L.Scans; ++J) {
      const ValueInfo &B = Out[1 + L.Carried + J];
      if (isContainerKind(B.Kind))
        return Ctx.error(ErrorCode::Type, "scan output ", J, " is a ", toString(B.Kind), "; scan outputs are tensors");
      std::vector<Expr> Dims{Trip};
      for (const Expr &E : B.Shape)
        Dims.push_back(E);
      Ctx.Outputs[L.Carried + J].Type = B.Type;
      Ctx.Outputs[L.Carried + J].Shape = TensorShape(std::move(Dims));
    }
    return Status::ok();
  };
  return S;
}

class LoopKernel : public Kernel {
public:
  LoopKernel(const Node &N, LoopShape L, std::unique_ptr<SubgraphRunner> Body)
      : N(N), L(L), Body(std::move(Body)) {
    Scalars.resize(2);
  }

  Status run(const KernelContext &Ctx) const override {
    const OutputAllocator *Alloc = currentOutputAllocator();
    const TensorView &MV = Ctx.Inputs[0], &CondV = Ctx.Inputs[1];
    const bool HasM = MV.Data != nullptr, HasCond = CondV.Data != nullptr;
    if (HasM && (MV.Type != ElementType::I64 || MV.elementCount() != 1))
      return makeError(ErrorCode::Infer, N.describe(), ": M must be a single int64, got ", joinInts(MV.Dims));
    const int64_t M = HasM ? *MV.data<const int64_t>() : 0;
    bool Cond = true;
    if (HasCond) {
      ASSIGN_OR_RETURN(Cond, readCondition(N, CondV, "cond"));
    }
    if (!HasM && !HasCond)
      return makeError(ErrorCode::Infer, N.describe(), ": neither M nor cond is given, the loop would never end");
    const std::vector<TensorView> Captured(Ctx.Inputs.begin() + static_cast<std::ptrdiff_t>(L.Explicit),
                                           Ctx.Inputs.end());
    std::vector<RunValue> Formal(2 + L.Carried);
    for (size_t K = 0; K < L.Carried; ++K)
      Formal[2 + K].View = Ctx.Inputs[2 + K];
    std::vector<std::vector<RunValue>> Scans(L.Scans);
    std::vector<RunValue> Outs;
    // Fresh scalars each iteration (the body may output them as they are): from Scalars, which
    // hands a buffer out again only once nothing else holds it; the heap when another run has it.
    std::unique_lock<std::mutex> Lock(ScalarMutex, std::try_to_lock);
    auto Scalar = [&](size_t Slot, ElementType Type) {
      return Lock.owns_lock() ? Scalars.allocate(Slot, Type, {}) : allocateRunValue(Type, {});
    };
    for (int64_t I = 0; (!HasM || I < M) && Cond; ++I) {
      ASSIGN_OR_RETURN(Formal[0], Scalar(0, ElementType::I64));
      ASSIGN_OR_RETURN(Formal[1], Scalar(1, ElementType::Bool));
      *Formal[0].View.data<int64_t>() = I;
      *Formal[1].View.data<uint8_t>() = 1;
      RETURN_IF_ERROR(Body->run(Formal, Captured, Outs, Ctx.Par));
      if (HasCond) {
        ASSIGN_OR_RETURN(Cond, readCondition(N, Outs[0].View, "the body's condition output"));
      }
      for (size_t K = 0; K < L.Carried; ++K)
        Formal[2 + K] = Outs[1 + K];
      for (size_t J = 0; J < L.Scans; ++J)
        Scans[J].push_back(Outs[1 + L.Carried + J]);
    }
    for (size_t K = 0; K < L.Carried; ++K)
      RETURN_IF_ERROR(writeControlFlowOutput(N, Ctx, Alloc, K, Formal[2 + K].View));
    for (size_t J = 0; J < L.Scans; ++J) {
      const size_t O = L.Carried + J;
      if (Ctx.Outputs[O].Type == ElementType::Undefined && !Ctx.Outputs[O].Data)
        continue; // omitted
      std::vector<int64_t> Dims;
      if (Scans[J].empty()) {
        ASSIGN_OR_RETURN(Dims, emptyScanDims(Ctx, J));
      } else {
        ASSIGN_OR_RETURN(Dims, stackedDims(N, viewsOf(Scans[J]), 0, "a scan output"));
      }
      ASSIGN_OR_RETURN(TensorView Dst, controlFlowOutput(N, Ctx, Alloc, O, Dims));
      stackInto(viewsOf(Scans[J]), 0, false, Dst);
    }
    return Status::ok();
  }

private:
  /// [0, ...] for scan output J of a loop that ran no iteration: the body's inferred shape with
  /// the actual input shapes (unknown dimensions as 0).
  Result<std::vector<int64_t>> emptyScanDims(const KernelContext &Ctx, size_t J) const {
    std::vector<ValueInfo> Inputs;
    for (const TensorView &V : Ctx.Inputs) {
      ValueInfo VI;
      VI.Present = V.Data != nullptr;
      VI.Kind = V.Kind;
      VI.Type = V.Type;
      VI.Shape = isContainerKind(V.Kind) ? TensorShape({Expr("unk__loop_elem")}) : TensorShape::fromDims(V.Dims);
      Inputs.push_back(VI);
    }
    ASSIGN_OR_RETURN(std::vector<ValueInfo> Out, inferSubgraph(N, "body", Body->graph(), bodyFormals(Inputs, L.Carried),
                                                               outerInfos(N, Inputs, false)));
    std::vector<int64_t> Dims = dimsOrZero(Out[1 + L.Carried + J].Shape);
    Dims.insert(Dims.begin(), 0);
    return Dims;
  }

  Node N;
  LoopShape L;
  std::unique_ptr<SubgraphRunner> Body;
  mutable std::mutex ScalarMutex;
  mutable RunValueCache Scalars; ///< iter_num and cond of the body
};

Result<std::unique_ptr<Kernel>> createLoop(const KernelCreateInfo &Info) {
  const Node &N = Info.N;
  ASSIGN_OR_RETURN(LoopShape L, loopShape(N));
  std::vector<ValueInfo> Formal, Out;
  RETURN_IF_ERROR(stableBodyInference(N, L, Info.Inputs, Formal, Out));
  ASSIGN_OR_RETURN(std::unique_ptr<SubgraphRunner> Body,
                   SubgraphRunner::create(N, "body", N.Attrs.at("body").G, Formal, outerInfos(N, Info.Inputs, true)));
  return makeKernel<LoopKernel>(N, L, std::move(Body));
}

OpKernels loopKernels() {
  OpKernels K;
  K.OpType = "Loop";
  K.Variants.push_back({"any_loop__ref", 0, nullptr, createLoop});
  K.TestCases = [] {
    // v <- v + w (w from the outer scope); scan output: v * iter_num (cast to float).
    auto Body = [] {
      return TinyGraph()
          .input("i", ElementType::I64, {})
          .input("c", ElementType::Bool, {})
          .input("v", ElementType::F32, {2, 3})
          .node("Identity", {"c"}, {"c_out"})
          .node("Add", {"v", "w"}, {"v_out"})
          .node("Cast", {"i"}, {"i_f"}, {{"to", attrInt(static_cast<int64_t>(1))}})
          .node("Mul", {"v", "i_f"}, {"scan"})
          .output("c_out")
          .output("v_out")
          .output("scan")
          .attr();
    };
    OpTestCase C = testCase("trip_count",
                            {valuesInput({}, {3}, ElementType::I64, true), omittedInput(), tensorInput({2, 3}),
                             tensorInput({2, 3})},
                            {{"body", Body()}});
    C.NumOutputs = 2;
    OpTestCase Z = C;
    Z.Label = "zero_trips";
    Z.Inputs[0] = valuesInput({}, {0}, ElementType::I64, true);
    return std::vector<OpTestCase>{C, Z};
  };
  return K;
}

OPT_REGISTER_HEAVY_SCHEMA(Loop, loopSchema());
OPT_REGISTER_KERNELS(Loop, loopKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
