// Optional: an optional holding the input (a tensor or a sequence), or an empty optional of the
// 'type' attribute when there is no input.
#include "backends/native/ops/common/Sequence.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

OpSchema optionalSchema() {
  OpSchema S;
  S.OpType = "Optional";
  S.MinInputs = 0;
  S.MaxInputs = 1;
  S.TakesContainers = true;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    const Node &N = Ctx.N;
    ValueInfo &Out = Ctx.Outputs[0];
    if (Ctx.hasInput(0)) {
      const ValueInfo &In = Ctx.Inputs[0];
      if (isOptionalKind(In.Kind))
        return Ctx.error(ErrorCode::Type, "input 0 is already a ", toString(In.Kind), "; optionals do not nest");
      Out.Kind = In.Kind == ValueKind::Sequence ? ValueKind::OptionalSequence : ValueKind::OptionalTensor;
      Out.Type = In.Type;
      Out.Shape = In.Shape;
      return Status::ok();
    }
    auto It = N.Attrs.find("type");
    if (It == N.Attrs.end() || It->second.K != AttrValue::Kind::Type)
      return Ctx.error(ErrorCode::Model, "without an input, the 'type' attribute (a TypeProto) is required");
    const TypeDesc &T = It->second.Ty;
    if (isOptionalKind(T.Kind))
      return Ctx.error(ErrorCode::Type, "attribute 'type' is a ", toString(T.Kind), "; optionals do not nest");
    Out.Kind = T.Kind == ValueKind::Sequence ? ValueKind::OptionalSequence : ValueKind::OptionalTensor;
    Out.Type = T.Elem;
    Out.Shape = T.ShapeKnown ? T.Shape : unknownShape(Ctx);
    return Status::ok();
  };
  return S;
}

Result<std::unique_ptr<Kernel>> createOptional(const KernelCreateInfo &Info) {
  const Node N = Info.N;
  const ValueKind Kind = Info.Outputs[0].Kind;
  const ElementType Type = Info.Outputs[0].Type;
  return makeKernel<FunctionKernel>([N, Kind, Type](const KernelContext &Ctx) -> Status {
    ASSIGN_OR_RETURN(ContainerValue * Out, containerOut(N, Ctx, 0));
    Out->reset(Kind, Type);
    if (Ctx.Inputs.empty() || !holdsValue(Ctx.Inputs[0]))
      return Status::ok();
    return assignContainer(*Out, Ctx.Inputs[0], N.describe() + ": input 0");
  });
}

OpKernels optionalKernels() {
  OpKernels K;
  K.OpType = "Optional";
  K.Variants.push_back({"any_optional__ref", 0, nullptr, createOptional});
  K.TestCases = [] {
    AttrValue SeqType;
    SeqType.K = AttrValue::Kind::Type;
    SeqType.Ty.Kind = ValueKind::Sequence;
    SeqType.Ty.Elem = ElementType::F32;
    return std::vector<OpTestCase>{withOpset(testCase("of_tensor", {tensorInput({2, 3})}), 18),
                                   withOpset(testCase("of_sequence", {sequenceInput({{2}, {1}}, ElementType::I64)}), 18),
                                   withOpset(testCase("empty", {}, {{"type", SeqType}}), 18)};
  };
  return K;
}

OPT_REGISTER_SCHEMA(Optional, optionalSchema());
OPT_REGISTER_KERNELS(Optional, optionalKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
