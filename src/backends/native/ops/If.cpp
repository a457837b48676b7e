// If: runs then_branch or else_branch by a one-element condition; outputs may differ in shape
// between branches (then they are sized by the kernel while it runs). Outer-scope values the
// branches read are trailing inputs of the node (see ir/Scopes.h). A branch that is missing or
// empty fails only when the condition selects it.
#include "backends/native/ops/common/ControlFlow.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

const char *const kThen = "then_branch";
const char *const kElse = "else_branch";

/// The branch graph, or null when missing or empty (no nodes and no outputs while N has some).
const Graph *branch(const Node &N, const char *Attr) {
  const Graph *G = graphAttr(N, Attr);
  if (G && G->Nodes.empty() && G->Outputs.empty() && !N.Outputs.empty())
    return nullptr;
  return G;
}

Status checkBranch(const Node &N, const char *Attr, const Graph *G) {
  if (!G)
    return Status::ok();
  if (G->Outputs.size() != N.Outputs.size())
    return makeError(ErrorCode::Model, N.describe(), ": ", Attr, " has ", G->Outputs.size(), " outputs, the node has ",
                     N.Outputs.size());
  if (!G->Inputs.empty())
    return makeError(ErrorCode::Model, N.describe(), ": ", Attr, " must have no inputs, it has ", G->Inputs.size());
  return Status::ok();
}

/// Shape and type errors of a branch that may not run are left to run time.
bool branchMayFailToInfer(const Status &S) { return S.code() == ErrorCode::Shape || S.code() == ErrorCode::Type; }

OpSchema ifSchema() {
  OpSchema S;
  S.OpType = "If";
  S.MinInputs = 1;
  S.MaxInputs = -1; // + outer-scope values
  S.MinOutputs = 1;
  S.MaxOutputs = -1;
  S.TakesContainers = true; // outer-scope values may be sequences/optionals
  S.Infer = [](ShapeContext &Ctx) -> Status {
    const Node &N = Ctx.N;
    if (explicitInputCount(N) != 1)
      return Ctx.error(ErrorCode::Model, "expected 1 input (cond), got ", explicitInputCount(N));
    const Graph *Then = branch(N, kThen), *Else = branch(N, kElse);
    if (!Then && !Else)
      return Ctx.error(ErrorCode::Model, "has neither a then_branch nor an else_branch graph");
    RETURN_IF_ERROR(checkBranch(N, kThen, Then));
    RETURN_IF_ERROR(checkBranch(N, kElse, Else));
    const std::map<std::string, ValueInfo> Outer = outerInfos(N, Ctx.Inputs, /*KeepConst=*/false);
    // A known condition picks the branch (the executor re-infers with the actual value).
    int Taken = -1;
    if (Ctx.Inputs[0].Const && Ctx.Inputs[0].Const->elementCount() == 1) {
      TensorView C = constView(*Ctx.Inputs[0].Const);
      Result<bool> B = readCondition(N, C, "cond");
      if (B.isOk())
        Taken = *B ? 1 : 0;
    }
    Result<std::vector<ValueInfo>> ThenR = std::vector<ValueInfo>(), ElseR = std::vector<ValueInfo>();
    if (Then)
      ThenR = inferSubgraph(N, kThen, *Then, {}, Outer);
    if (Else)
      ElseR = inferSubgraph(N, kElse, *Else, {}, Outer);
    // Exporters guard shape-specific code with If (AffineGrid's 2D/3D): a branch whose shapes do
    // not work out for these inputs is fine as long as it is not taken.
    if (!ThenR.isOk() && !(Else && ElseR.isOk() && Taken != 1 && branchMayFailToInfer(ThenR.status())))
      return ThenR.status();
    if (!ElseR.isOk() && !(Then && ThenR.isOk() && Taken != 0 && branchMayFailToInfer(ElseR.status())))
      return ElseR.status();
    // With a branch dropped and the condition unknown, the shapes are known only while running.
    const bool Dropped = !ThenR.isOk() || !ElseR.isOk();
    if (!ThenR.isOk())
      Then = nullptr;
    if (!ElseR.isOk())
      Else = nullptr;
    const std::vector<ValueInfo> ThenOut = Then ? *ThenR : std::vector<ValueInfo>();
    const std::vector<ValueInfo> ElseOut = Else ? *ElseR : std::vector<ValueInfo>();
    for (size_t I = 0; I < N.Outputs.size(); ++I) {
      const ValueInfo *T = Then ? &ThenOut[I] : nullptr, *E = Else ? &ElseOut[I] : nullptr;
      if (T && E && T->Type != E->Type)
        return Ctx.error(ErrorCode::Type, "output ", I, " is ", toString(T->Type), " in then_branch but ",
                         toString(E->Type), " in else_branch");
      const ValueInfo &Any = T ? *T : *E;
      if (T && E && unwrapOptional(T->Kind) != unwrapOptional(E->Kind))
        return Ctx.error(ErrorCode::Type, "output ", I, " is a ", toString(T->Kind), " in then_branch but a ",
                         toString(E->Kind), " in else_branch");
      // optional(x) in one branch and x in the other: the output is the optional.
      Ctx.Outputs[I].Kind = T && E && isOptionalKind(E->Kind) ? E->Kind : Any.Kind;
      Ctx.Outputs[I].Type = Any.Type;
      const ValueInfo *Chosen = Taken == 1 ? T : Taken == 0 ? E : nullptr;
      // Branches of different ranks (Squeeze in one, Identity in the other): the rank is known
      // only while running; readers are inferred with a guess and sized at run time.
      Ctx.Outputs[I].RankUnknown = Chosen ? Chosen->RankUnknown
                                          : Dropped || (T && E && T->Shape.getRank() != E->Shape.getRank()) ||
                                                (T && T->RankUnknown) || (E && E->RankUnknown);
      if (Chosen)
        Ctx.Outputs[I].Shape = Chosen->Shape;
      else if (Taken >= 0 || Dropped) // chosen branch missing (the kernel reports it) or unknown
        Ctx.Outputs[I].Shape = Any.Shape.getRank() == 0 ? TensorShape({Ctx.newSymbol()})
                                                        : mergeOrSymbols(Ctx, Any.Shape, TensorShape({}));
      else if (T && E)
        Ctx.Outputs[I].Shape = mergeOrSymbols(Ctx, T->Shape, E->Shape);
      else
        Ctx.Outputs[I].Shape = Any.Shape;
    }
    return Status::ok();
  };
  return S;
}

class IfKernel : public Kernel {
public:
  IfKernel(const Node &N, std::unique_ptr<SubgraphRunner> Then, std::unique_ptr<SubgraphRunner> Else,
           Status ThenError, Status ElseError)
      : N(N), Then(std::move(Then)), Else(std::move(Else)), ThenError(std::move(ThenError)),
        ElseError(std::move(ElseError)) {}

  Status run(const KernelContext &Ctx) const override {
    const OutputAllocator *Alloc = currentOutputAllocator();
    ASSIGN_OR_RETURN(bool Cond, readCondition(N, Ctx.Inputs[0], "cond"));
    const SubgraphRunner *B = Cond ? Then.get() : Else.get();
    const Status &Error = Cond ? ThenError : ElseError;
    if (!Error.isOk())
      return makeError(ErrorCode::Infer, N.describe(), ": the condition selects ", Cond ? kThen : kElse,
                       ", which cannot run on these inputs: ", Error.message());
    if (!B)
      return makeError(ErrorCode::Infer, N.describe(), ": the condition is ", Cond ? "true" : "false", " and selects ",
                       Cond ? kThen : kElse, ", which is missing or empty");
    const std::vector<TensorView> Captured(Ctx.Inputs.begin() + 1, Ctx.Inputs.end());
    std::vector<RunValue> Outs;
    RETURN_IF_ERROR(B->run({}, Captured, Outs, Ctx.Par));
    for (size_t I = 0; I < Outs.size() && I < Ctx.Outputs.size(); ++I)
      RETURN_IF_ERROR(writeControlFlowOutput(N, Ctx, Alloc, I, Outs[I].View));
    return Status::ok();
  }

private:
  Node N;
  std::unique_ptr<SubgraphRunner> Then, Else;
  Status ThenError, ElseError; ///< A branch whose shapes fail for these inputs (fine unless taken).
};

Result<std::unique_ptr<Kernel>> createIf(const KernelCreateInfo &Info) {
  const Node &N = Info.N;
  const std::map<std::string, ValueInfo> Outer = outerInfos(N, Info.Inputs, /*KeepConst=*/true);
  std::unique_ptr<SubgraphRunner> Runners[2];
  Status Errors[2];
  const char *Attrs[2] = {kThen, kElse};
  for (int B = 0; B < 2; ++B) {
    if (!branch(N, Attrs[B]))
      continue;
    Result<std::unique_ptr<SubgraphRunner>> R = SubgraphRunner::create(N, Attrs[B], N.Attrs.at(Attrs[B]).G, {}, Outer);
    if (R.isOk())
      Runners[B] = std::move(R).value();
    else
      Errors[B] = R.status();
  }
  // As in inference: one branch may fail on shapes as long as the other can run.
  for (int B = 0; B < 2; ++B)
    if (!Errors[B].isOk() && !(branchMayFailToInfer(Errors[B]) && Runners[1 - B]))
      return Errors[B];
  return makeKernel<IfKernel>(N, std::move(Runners[0]), std::move(Runners[1]), Errors[0], Errors[1]);
}

OpKernels ifKernels() {
  OpKernels K;
  K.OpType = "If";
  K.Variants.push_back({"any_if__ref", 0, nullptr, createIf});
  K.TestCases = [] {
    // then: x + x (reads the outer x); else: x * 3 via a constant inside the branch.
    auto Then = [] { return TinyGraph().node("Add", {"x", "x"}, {"y"}).output("y").attr(); };
    auto Else = [] {
      AttrValue Three;
      Three.K = AttrValue::Kind::Tensor;
      Three.T = ConstData::allocate(ElementType::F32, {});
      *static_cast<float *>(Three.T->mutableData()) = 3.0f;
      return TinyGraph()
          .node("Constant", {}, {"three"}, {{"value", Three}})
          .node("Mul", {"x", "three"}, {"y"})
          .output("y")
          .attr();
    };
    std::vector<OpTestCase> Cases;
    for (int C = 0; C < 2; ++C)
      Cases.push_back(testCase(C ? "then" : "else",
                               {valuesInput({}, {static_cast<double>(C)}, ElementType::Bool, true), tensorInput({2, 3})},
                               {{kThen, Then()}, {kElse, Else()}}));
    return Cases;
  };
  return K;
}

OPT_REGISTER_HEAVY_SCHEMA(If, ifSchema());
OPT_REGISTER_KERNELS(If, ifKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
