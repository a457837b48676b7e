// ai.onnx.ml ArrayFeatureExtractor: Y = X[..., indices] (the elements of X's last axis picked by
// the int64 indices, any shape, flattened); a 1-D X gives [1, K]. Numeric and bool element types;
// an index outside the last axis is an error, as in ONNX Runtime. skl2onnx uses it to pick columns
// (ColumnTransformer, one-hot encoders, SVC decision values).
#include "backends/native/ops/common/MlCommon.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

OpSchema arrayFeatureExtractorSchema() {
  OpSchema S = mlSchema("ArrayFeatureExtractor", [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireCopyableType(Ctx, 0));
    RETURN_IF_ERROR(requireInputType(Ctx, 1, {ElementType::I64}));
    const TensorShape &X = Ctx.Inputs[0].Shape;
    if (X.getRank() == 0)
      return Ctx.error(ErrorCode::Shape, "input 0 must have at least one dimension");
    const Expr K = productExpr(Ctx.Inputs[1].Shape, 0, Ctx.Inputs[1].Shape.getRank());
    std::vector<Expr> Dims;
    if (X.getRank() == 1) {
      Dims = {Expr(1), K};
    } else {
      for (size_t I = 0; I + 1 < X.getRank(); ++I)
        Dims.push_back(X[I]);
      Dims.push_back(K);
    }
    Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
    Ctx.Outputs[0].Shape = TensorShape(std::move(Dims));
    return Status::ok();
  });
  S.MinInputs = S.MaxInputs = 2;
  return S;
}

Status runExtractor(const KernelContext &Ctx) {
  const TensorView &X = Ctx.Inputs[0], &Idx = Ctx.Inputs[1];
  if (X.rank() == 0)
    return runError("arrayfeatureextractor", "input must have at least one dimension");
  const int64_t Stride = X.Dims.back();
  const size_t K = Idx.elementCount(), Rows = Stride ? X.elementCount() / static_cast<size_t>(Stride) : 0;
  const int64_t *Ind = Idx.data<int64_t>();
  for (size_t J = 0; J < K; ++J)
    if (Ind[J] < 0 || Ind[J] >= Stride)
      return runError("arrayfeatureextractor", "index ", Ind[J], " is out of range [0, ", Stride, ")");
  const size_t Size = getElementSize(X.Type);
  const char *In = static_cast<const char *>(X.Data);
  char *Out = static_cast<char *>(Ctx.Outputs[0].Data);
  for (size_t R = 0; R < Rows; ++R)
    for (size_t J = 0; J < K; ++J)
      std::memcpy(Out + (R * K + J) * Size, In + (R * static_cast<size_t>(Stride) + static_cast<size_t>(Ind[J])) * Size,
                  Size);
  return Status::ok();
}

std::vector<OpTestCase> extractorCases() {
  return {testCase("columns", {tensorInput({4, 5}), valuesInput({3}, {4, 0, 2}, ElementType::I64, true)}),
          testCase("rank3_int64", {tensorInput({2, 3, 4}, ElementType::I64), valuesInput({1, 2}, {3, 3}, ElementType::I64, false)}),
          testCase("vector", {tensorInput({6}, ElementType::F64), valuesInput({2}, {5, 1}, ElementType::I64, true)})};
}

OPT_REGISTER_SCHEMA(ArrayFeatureExtractor, arrayFeatureExtractorSchema());
OPT_REGISTER_KERNELS(ArrayFeatureExtractor,
                     OpKernels{kMlDomain,
                               "ArrayFeatureExtractor",
                               {{"any_arrayfeatureextractor__ref", 0, nullptr,
                                 [](const KernelCreateInfo &) { return makeKernel<FunctionKernel>(runExtractor); }}},
                               extractorCases});

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
