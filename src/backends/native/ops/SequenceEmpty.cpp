// SequenceEmpty: an empty sequence of 'dtype' elements (default float).
#include "backends/native/ops/common/Sequence.h"
#include "core/OnnxDataType.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

/// ONNX TensorProto data type codes of the element types a sequence may hold.
Result<ElementType> dtypeOf(const Node &N) {
  ASSIGN_OR_RETURN(int64_t D, N.getInt("dtype", 1));
  const ElementType T = numericTypeOfOnnxCode(D);
  if (T != ElementType::Undefined)
    return T;
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
