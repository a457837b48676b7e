// SequenceEmpty: an empty sequence of 'dtype' elements (default float).
#include "backends/native/ops/common/Sequence.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

/// ONNX TensorProto data type codes of the element types a sequence may hold.
Result<ElementType> dtypeOf(const Node &N) {
  ASSIGN_OR_RETURN(int64_t D, N.getInt("dtype", 1));
  switch (D) {
  case 1: return ElementType::F32;
  case 2: return ElementType::U8;
  case 3: return ElementType::I8;
  case 4: return ElementType::U16;
  case 5: return ElementType::I16;
  case 6: return ElementType::I32;
  case 7: return ElementType::I64;
  case 9: return ElementType::Bool;
  case 10: return ElementType::F16;
  case 11: return ElementType::F64;
  case 12: return ElementType::U32;
  case 13: return ElementType::U64;
  case 16: return ElementType::BF16;
  default: break;
  }
  return makeError(ErrorCode::Model, N.describe(), ": attribute 'dtype' ", D, " is not a supported element type");
}

OpSchema sequenceEmptySchema() {
  OpSchema S;
  S.OpType = "SequenceEmpty";
  S.MinInputs = S.MaxInputs = 0;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    ASSIGN_OR_RETURN(ElementType T, dtypeOf(Ctx.N));
    setSequenceOutput(Ctx, 0, T, unknownShape(Ctx));
    return Status::ok();
  };
  return S;
}

Result<std::unique_ptr<Kernel>> createSequenceEmpty(const KernelCreateInfo &Info) {
  const Node N = Info.N;
  ASSIGN_OR_RETURN(ElementType T, dtypeOf(N));
  return makeKernel<FunctionKernel>([N, T](const KernelContext &Ctx) -> Status {
    ASSIGN_OR_RETURN(ContainerValue * Out, containerOut(N, Ctx, 0));
    Out->reset(ValueKind::Sequence, T);
    return Status::ok();
  });
}

OpKernels sequenceEmptyKernels() {
  OpKernels K;
  K.OpType = "SequenceEmpty";
  K.Variants.push_back({"any_sequenceempty__ref", 0, nullptr, createSequenceEmpty});
  K.TestCases = [] {
    return std::vector<OpTestCase>{testCase("float", {}), testCase("int64", {}, {{"dtype", attrInt(7)}})};
  };
  return K;
}

OPT_REGISTER_SCHEMA(SequenceEmpty, sequenceEmptySchema());
OPT_REGISTER_KERNELS(SequenceEmpty, sequenceEmptyKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
