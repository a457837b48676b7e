// EyeLike: a 2-D tensor of the input's shape with ones on the k-th diagonal, of type 'dtype'
// (default: the input's). Only the input's shape is read: folded at load when constant and small.
#include "backends/native/ops/common/Indexing.h"
#include "core/OnnxDataType.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

Status computeEyeLike(const Node &N, const std::vector<TensorView> &, const std::vector<TensorView> &Out,
                      const Parallel &) {
  ASSIGN_OR_RETURN(const int64_t K, N.getInt("k", 0));
  const TensorView &Y = Out[0];
  const int64_t Rows = Y.Dims[0], Cols = Y.Dims[1];
  const size_t Elem = getElementSize(Y.Type);
  std::memset(Y.Data, 0, Y.elementCount() * Elem);
  visitNumeric(Y.Type, [&](auto Tag) {
    using T = typename decltype(Tag)::type;
    for (int64_t R = 0; R < Rows; ++R) {
      const int64_t C = R + K;
      if (C >= 0 && C < Cols)
        Y.data<T>()[R * Cols + C] = T(1);
    }
  });
  return Status::ok();
}

OpSchema eyeLikeSchema() {
  OpSchema S;
  S.OpType = "EyeLike";
  S.MinInputs = S.MaxInputs = 1;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireNumericType(Ctx, 0));
    if (Ctx.Inputs[0].Shape.getRank() != 2)
      return Ctx.error(ErrorCode::Shape, "input 0 must be 2-D, got ", Ctx.Inputs[0].Shape.toString());
    ASSIGN_OR_RETURN(const int64_t DType, Ctx.N.getInt("dtype", -1));
    ASSIGN_OR_RETURN(const int64_t K, Ctx.N.getInt("k", 0));
    (void)K;
    ElementType T = Ctx.Inputs[0].Type;
    if (DType >= 0) {
      T = numericTypeOfOnnxCode(DType);
      if (T == ElementType::Undefined)
        return Ctx.error(ErrorCode::Model, "attribute 'dtype' value ", DType, " is not a supported data type");
    }
    Ctx.Outputs[0].Type = T;
    Ctx.Outputs[0].Shape = Ctx.Inputs[0].Shape;
    return foldIfConstant(Ctx, computeEyeLike, /*ShapeOnlyMask=*/1u);
  };
  return S;
}

OpKernels eyeLikeKernels() {
  OpKernels K;
  K.OpType = "EyeLike";
  K.Variants.push_back(computeVariant("any_eyelike__ref", 0, computeEyeLike));
  K.TestCases = [] {
    return std::vector<OpTestCase>{
        testCase("square", {tensorInput({4, 4})}),
        testCase("k_pos", {tensorInput({3, 5})}, {{"k", attrInt(2)}}),
        testCase("k_neg", {tensorInput({5, 3})}, {{"k", attrInt(-1)}}),
        testCase("dtype_i64", {tensorInput({3, 3})}, {{"dtype", attrInt(7)}}),
        testCase("i32_input", typedInputs({2, 3}, ElementType::I32)),
        testCase("k_out_of_range", {tensorInput({2, 2})}, {{"k", attrInt(5)}}),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(EyeLike, eyeLikeSchema());
OPT_REGISTER_KERNELS(EyeLike, eyeLikeKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
