// SequenceConstruct: a sequence of the input tensors (all of one element type), in order.
#include "backends/native/ops/common/Sequence.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

OpSchema sequenceConstructSchema() {
  OpSchema S;
  S.OpType = "SequenceConstruct";
  S.MinInputs = 1;
  S.MaxInputs = -1;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    TensorShape Elem = Ctx.Inputs[0].Shape;
    for (size_t I = 0; I < Ctx.Inputs.size(); ++I) {
      if (!Ctx.hasInput(I))
        return Ctx.error(ErrorCode::Model, "input ", I, " is missing");
      RETURN_IF_ERROR(requireCopyableType(Ctx, I));
      if (Ctx.Inputs[I].Type != Ctx.Inputs[0].Type)
        return Ctx.error(ErrorCode::Type, "input ", I, " is ", toString(Ctx.Inputs[I].Type), " but input 0 is ",
                         toString(Ctx.Inputs[0].Type), "; a sequence holds one element type");
      Elem = mergeElementShapes(Ctx, Elem, Ctx.Inputs[I].Shape);
    }
    setSequenceOutput(Ctx, 0, Ctx.Inputs[0].Type, Elem);
    return Status::ok();
  };
  return S;
}

Result<std::unique_ptr<Kernel>> createSequenceConstruct(const KernelCreateInfo &Info) {
  const Node N = Info.N;
  return makeKernel<FunctionKernel>([N](const KernelContext &Ctx) -> Status {
    ASSIGN_OR_RETURN(ContainerValue * Out, containerOut(N, Ctx, 0));
    Out->reset(ValueKind::Sequence, Ctx.Inputs[0].Type);
    for (const TensorView &In : Ctx.Inputs) {
      ASSIGN_OR_RETURN(OwnedTensor T, copyToOwned(In));
      Out->Tensors.push_back(std::move(T));
    }
    return Status::ok();
  });
}

OpKernels sequenceConstructKernels() {
  OpKernels K;
  K.OpType = "SequenceConstruct";
  K.Variants.push_back({"any_sequenceconstruct__ref", 0, nullptr, createSequenceConstruct});
  K.TestCases = [] {
    return std::vector<OpTestCase>{testCase("same_shape", {tensorInput({2, 3}), tensorInput({2, 3})}),
                                   testCase("ragged_i64", {tensorInput({1}, ElementType::I64),
                                                           tensorInput({4}, ElementType::I64),
                                                           tensorInput({0}, ElementType::I64)})};
  };
  return K;
}

OPT_REGISTER_SCHEMA(SequenceConstruct, sequenceConstructSchema());
OPT_REGISTER_KERNELS(SequenceConstruct, sequenceConstructKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
