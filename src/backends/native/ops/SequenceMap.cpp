// SequenceMap: runs 'body' once per element of the input sequence; body input j is element i of
// input j when that is a sequence (all of the same length), else input j itself. Body output k
// of every run is appended to output sequence k. Outer-scope values the body reads are trailing
// inputs of the node (ir/Scopes.h); the body runs on the subgraph interpreter.
#include "backends/native/ops/common/Sequence.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

Status checkBody(const Node &N, size_t Explicit) {
  const Graph *Body = graphAttr(N, "body");
  if (!Body)
    return makeError(ErrorCode::Model, N.describe(), ": the 'body' graph attribute is missing");
  if (Body->Inputs.size() != Explicit)
    return makeError(ErrorCode::Model, N.describe(), ": body has ", Body->Inputs.size(), " inputs, the node has ",
                     Explicit);
  if (Body->Outputs.size() != N.Outputs.size())
    return makeError(ErrorCode::Model, N.describe(), ": body has ", Body->Outputs.size(), " outputs, the node has ",
                     N.Outputs.size());
  return Status::ok();
}

/// Body formals: the element info of sequence inputs, the tensor info of the others.
std::vector<ValueInfo> bodyFormals(const std::vector<ValueInfo> &Inputs, size_t Explicit) {
  std::vector<ValueInfo> F(Inputs.begin(), Inputs.begin() + static_cast<std::ptrdiff_t>(Explicit));
  for (ValueInfo &VI : F)
    if (VI.Kind == ValueKind::Sequence)
      VI.Kind = ValueKind::Tensor;
  return F;
}

OpSchema sequenceMapSchema() {
  OpSchema S;
  S.OpType = "SequenceMap";
  S.MinInputs = 1;
  S.MaxInputs = -1; // + outer-scope values
  S.MinOutputs = 1;
  S.MaxOutputs = -1;
  S.TakesContainers = true;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    const Node &N = Ctx.N;
    const size_t Explicit = explicitInputCount(N);
    if (Explicit < 1)
      return Ctx.error(ErrorCode::Model, "expected at least 1 input (input_sequence)");
    RETURN_IF_ERROR(requireSequenceInput(Ctx, 0));
    for (size_t I = 1; I < Explicit; ++I)
      if (isOptionalKind(Ctx.Inputs[I].Kind))
        return Ctx.error(ErrorCode::Type, "input ", I, " must be a tensor or a sequence, got a ",
                         toString(Ctx.Inputs[I].Kind));
    RETURN_IF_ERROR(checkBody(N, Explicit));
    ASSIGN_OR_RETURN(std::vector<ValueInfo> Out,
                     inferSubgraph(N, "body", *graphAttr(N, "body"), bodyFormals(Ctx.Inputs, Explicit),
                                   outerInfos(N, Ctx.Inputs, /*KeepConst=*/false)));
    for (size_t K = 0; K < Out.size(); ++K) {
      if (isContainerKind(Out[K].Kind))
        return Ctx.error(ErrorCode::Type, "body output ", K, " is a ", toString(Out[K].Kind), "; it must be a tensor");
      setSequenceOutput(Ctx, K, Out[K].Type, Out[K].Shape);
    }
    return Status::ok();
  };
  return S;
}

class SequenceMapKernel : public Kernel {
public:
  SequenceMapKernel(const Node &N, size_t Explicit, std::unique_ptr<SubgraphRunner> Body)
      : N(N), Explicit(Explicit), Body(std::move(Body)) {}

  Status run(const KernelContext &Ctx) const override {
    ASSIGN_OR_RETURN(const ContainerValue *First, sequenceIn(N, Ctx, 0));
    const size_t Length = First->Tensors.size();
    std::vector<const ContainerValue *> Seqs(Explicit, nullptr);
    for (size_t J = 0; J < Explicit; ++J) {
      if (!isContainerKind(Ctx.Inputs[J].Kind))
        continue;
      ASSIGN_OR_RETURN(Seqs[J], sequenceIn(N, Ctx, J));
      if (Seqs[J]->Tensors.size() != Length)
        return makeError(ErrorCode::Infer, N.describe(), ": input ", J, " has ", Seqs[J]->Tensors.size(),
                         " elements but input 0 has ", Length, "; every sequence input needs one per iteration");
    }
    std::vector<ContainerValue *> Outs;
    for (size_t K = 0; K < Ctx.Outputs.size(); ++K) {
      ASSIGN_OR_RETURN(ContainerValue * C, containerOut(N, Ctx, K));
      C->reset(ValueKind::Sequence, Ctx.Outputs[K].Type);
      Outs.push_back(C);
    }
    const std::vector<TensorView> Captured(Ctx.Inputs.begin() + static_cast<std::ptrdiff_t>(Explicit), Ctx.Inputs.end());
    std::vector<RunValue> Formal(Explicit), Results;
    for (size_t I = 0; I < Length; ++I) {
      for (size_t J = 0; J < Explicit; ++J) {
        if (Seqs[J])
          Formal[J] = Seqs[J]->Tensors[I];
        else
          Formal[J] = RunValue{Ctx.Inputs[J], nullptr};
      }
      RETURN_IF_ERROR(Body->run(Formal, Captured, Results, Ctx.Par));
      for (size_t K = 0; K < Outs.size() && K < Results.size(); ++K) {
        RunValue R = Results[K];
        if (isContainerKind(R.View.Kind))
          return makeError(ErrorCode::Type, N.describe(), ": body output ", K, " is not a tensor");
        if (!R.Keep) { // borrowed (an outer-scope or node input passed through): copy it
          ASSIGN_OR_RETURN(R, copyToOwned(R.View));
        }
        Outs[K]->Tensors.push_back(std::move(R));
      }
    }
    return Status::ok();
  }

private:
  Node N;
  size_t Explicit;
  std::unique_ptr<SubgraphRunner> Body;
};

Result<std::unique_ptr<Kernel>> createSequenceMap(const KernelCreateInfo &Info) {
  const Node &N = Info.N;
  const size_t Explicit = explicitInputCount(N);
  RETURN_IF_ERROR(checkBody(N, Explicit));
  ASSIGN_OR_RETURN(std::unique_ptr<SubgraphRunner> Body,
                   SubgraphRunner::create(N, "body", N.Attrs.at("body").G, bodyFormals(Info.Inputs, Explicit),
                                          outerInfos(N, Info.Inputs, /*KeepConst=*/true)));
  return makeKernel<SequenceMapKernel>(N, Explicit, std::move(Body));
}

OpKernels sequenceMapKernels() {
  OpKernels K;
  K.OpType = "SequenceMap";
  K.Variants.push_back({"any_sequencemap__ref", 0, nullptr, createSequenceMap});
  K.TestCases = [] {
    // out = x + y per element (y a sequence or a tensor), and Shape(x).
    auto Body = [] {
      return TinyGraph()
          .input("x", ElementType::F32, {3})
          .input("y", ElementType::F32, {3})
          .node("Add", {"x", "y"}, {"sum"})
          .node("Shape", {"x"}, {"shape"})
          .output("sum")
          .output("shape")
          .attr();
    };
    OpTestCase Two = testCase("two_sequences", {sequenceInput({{3}, {3}}), sequenceInput({{3}, {3}})}, {{"body", Body()}});
    Two.NumOutputs = 2;
    OpTestCase Broadcast = testCase("sequence_and_tensor", {sequenceInput({{3}, {3}, {3}}), tensorInput({3})},
                                    {{"body", Body()}});
    Broadcast.NumOutputs = 2;
    return std::vector<OpTestCase>{Two, Broadcast};
  };
  return K;
}

OPT_REGISTER_SCHEMA(SequenceMap, sequenceMapSchema());
OPT_REGISTER_KERNELS(SequenceMap, sequenceMapKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
