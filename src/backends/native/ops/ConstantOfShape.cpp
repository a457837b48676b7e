// ConstantOfShape: a tensor of the shape given by a 1-D i64 input, filled with the one-element
// 'value' attribute (default f32 0). Folded at load when the shape is constant and small; an
// unknown shape input gives fresh symbols (resolved at run time).
#include "backends/native/ops/common/Indexing.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

Result<std::shared_ptr<ConstData>> fillValue(const Node &N) {
  if (!N.hasAttr("value")) {
    auto C = ConstData::allocate(ElementType::F32, {1});
    return C; // zero-initialised
  }
  const AttrValue &A = N.Attrs.at("value");
  if (A.K != AttrValue::Kind::Tensor || !A.T)
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'value' must be a tensor");
  if (A.T->elementCount() != 1)
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'value' must have exactly one element, got ",
                     A.T->elementCount());
  if (A.T->Type == ElementType::String)
    return makeError(ErrorCode::Type, N.describe(), ": attribute 'value' of type string is not supported");
  return A.T;
}

Status computeConstantOfShape(const Node &N, const std::vector<TensorView> &, const std::vector<TensorView> &Out,
                              const Parallel &Par) {
  ASSIGN_OR_RETURN(const std::shared_ptr<ConstData> V, fillValue(N));
  const size_t Elem = getElementSize(V->Type);
  if (Out[0].Type != V->Type)
    return runError("any_constantofshape__ref", "output type differs from the value's");
  char *Dst = static_cast<char *>(Out[0].Data);
  const char *Src = static_cast<const char *>(V->Data);
  Par.forRange(Out[0].elementCount(), 16384, [&](size_t Lo, size_t Hi) {
    for (size_t I = Lo; I < Hi; ++I)
      copyElement(Dst + I * Elem, Src, Elem);
  });
  return Status::ok();
}

OpSchema constantOfShapeSchema() {
  OpSchema S;
  S.OpType = "ConstantOfShape";
  S.MinInputs = S.MaxInputs = 1;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireInputType(Ctx, 0, {ElementType::I64}));
    ASSIGN_OR_RETURN(const std::shared_ptr<ConstData> V, fillValue(Ctx.N));
    const TensorShape &SI = Ctx.Inputs[0].Shape;
    if (SI.getRank() != 1)
      return Ctx.error(ErrorCode::Shape, "input 0 (shape) must be 1-D, got ", SI.toString());
    Ctx.Outputs[0].Type = V->Type;
    if (isConstInput(Ctx, 0)) {
      ASSIGN_OR_RETURN(const std::vector<int64_t> Dims, constInts(Ctx, 0));
      for (int64_t D : Dims)
        if (D < 0)
          return Ctx.error(ErrorCode::Shape, "input 0 (shape) ", joinInts(Dims), " has a negative dimension");
      Ctx.Outputs[0].Shape = TensorShape::fromDims(Dims);
      return foldIfConstant(Ctx, computeConstantOfShape);
    }
    if (!SI[0].isConst())
      return Ctx.error(ErrorCode::Shape, "cannot infer the output rank: the shape input is neither constant nor of known "
                                         "length");
    std::vector<Expr> Dims;
    for (int64_t I = 0; I < SI[0].value(); ++I)
      Dims.push_back(Ctx.newSymbol());
    Ctx.Outputs[0].Shape = TensorShape(std::move(Dims));
    return Status::ok();
  };
  return S;
}

OpKernels constantOfShapeKernels() {
  OpKernels K;
  K.OpType = "ConstantOfShape";
  K.Variants.push_back(computeVariant("any_constantofshape__ref", 0, computeConstantOfShape));
  K.TestCases = [] {
    AttrValue I32;
    I32.K = AttrValue::Kind::Tensor;
    I32.T = ConstData::allocate(ElementType::I32, {1});
    *static_cast<int32_t *>(I32.T->mutableData()) = 42;
    AttrValue F;
    F.K = AttrValue::Kind::Tensor;
    F.T = ConstData::allocate(ElementType::F32, {1});
    *static_cast<float *>(F.T->mutableData()) = 1.5f;
    return std::vector<OpTestCase>{
        testCase("default_zero", {intsInput({2, 3})}),
        testCase("f32_value", {intsInput({4, 1, 2})}, {{"value", F}}),
        testCase("i32_value", {intsInput({5})}, {{"value", I32}}),
        testCase("scalar", {intsInput({})}, {{"value", F}}),
        testCase("empty", {intsInput({3, 0})}),
        testCase("large", {intsInput({70, 100})}, {{"value", F}}),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(ConstantOfShape, constantOfShapeSchema());
OPT_REGISTER_KERNELS(ConstantOfShape, constantOfShapeKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
