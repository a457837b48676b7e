// Unsqueeze: inserts dims of size 1 at the given axes of the output (negative counts from the
// output's end), any element type. Axes are an attribute before opset 13 and an input since.
// A byte copy at run time; folded at load for small constant inputs.
#include "backends/native/ops/common/Indexing.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

Status computeCopy(const Node &, const std::vector<TensorView> &In, const std::vector<TensorView> &Out,
                   const Parallel &) {
  const size_t Bytes = In[0].elementCount() * getElementSize(In[0].Type);
  if (Out[0].elementCount() != In[0].elementCount())
    return runError("any_unsqueeze__ref", "input ", joinInts(In[0].Dims), " and output ", joinInts(Out[0].Dims),
                    " differ in element count");
  if (Bytes)
    std::memcpy(Out[0].Data, In[0].Data, Bytes);
  return Status::ok();
}

Status inferUnsqueeze(ShapeContext &Ctx) {
  RETURN_IF_ERROR(requireCopyableType(Ctx, 0));
  const TensorShape &X = Ctx.Inputs[0].Shape;
  std::vector<int64_t> Axes;
  if (Ctx.N.OpsetVersion > 0 && Ctx.N.OpsetVersion < 13) {
    if (Ctx.Inputs.size() > 1)
      return Ctx.error(ErrorCode::Model, "before opset 13 Unsqueeze takes 1 input (axes is an attribute), got ",
                       Ctx.Inputs.size());
    if (!Ctx.N.hasAttr("axes"))
      return Ctx.error(ErrorCode::Model, "attribute 'axes' is required before opset 13");
    ASSIGN_OR_RETURN(Axes, Ctx.N.getInts("axes", {}));
  } else {
    if (!Ctx.hasInput(1))
      return Ctx.error(ErrorCode::Model, "input 1 (axes) is required since opset 13");
    RETURN_IF_ERROR(requireInputType(Ctx, 1, {ElementType::I64}));
    if (!isConstInput(Ctx, 1)) {
      // Data-dependent axes: the rank follows from their count, the dims are resolved at run time.
      const TensorShape &AS = Ctx.Inputs[1].Shape;
      if (AS.getRank() != 1 || !AS[0].isConst())
        return Ctx.error(ErrorCode::Shape, "input 1 (axes) is not constant and its length is unknown (", AS.toString(),
                         ")");
      std::vector<Expr> Dims;
      for (int64_t I = 0; I < static_cast<int64_t>(X.getRank()) + AS[0].value(); ++I)
        Dims.push_back(Ctx.newSymbol());
      Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
      Ctx.Outputs[0].Shape = TensorShape(std::move(Dims));
      return Status::ok();
    }
    ASSIGN_OR_RETURN(Axes, constInts(Ctx, 1));
  }
  const int64_t OutRank = static_cast<int64_t>(X.getRank() + Axes.size());
  std::vector<bool> Insert(static_cast<size_t>(OutRank), false);
  for (int64_t A : Axes) {
    ASSIGN_OR_RETURN(const int64_t Ax, normalizeAxis(Ctx.N, "axes", A, OutRank));
    if (Insert[static_cast<size_t>(Ax)])
      return Ctx.error(ErrorCode::Model, "axes ", joinInts(Axes), " repeat axis ", Ax);
    Insert[static_cast<size_t>(Ax)] = true;
  }
  std::vector<Expr> Dims;
  size_t Next = 0;
  for (int64_t I = 0; I < OutRank; ++I)
    Dims.push_back(Insert[static_cast<size_t>(I)] ? Expr(1) : X[Next++]);
  Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
  Ctx.Outputs[0].Shape = TensorShape(std::move(Dims));
  return foldIfConstant(Ctx, computeCopy);
}

OpSchema unsqueezeSchema() {
  OpSchema S;
  S.OpType = "Unsqueeze";
  S.MinInputs = 1;
  S.MaxInputs = 2;
  S.Infer = inferUnsqueeze;
  return S;
}

OpKernels unsqueezeKernels() {
  OpKernels K;
  K.OpType = "Unsqueeze";
  K.Variants.push_back(computeVariant("any_unsqueeze__ref", 0, computeCopy));
  K.TestCases = [] {
    return std::vector<OpTestCase>{
        testCase("axis0", {tensorInput({3, 4}), intsInput({0})}),
        testCase("two_axes", {tensorInput({3, 4, 5}), intsInput({2, 4})}),
        testCase("unsorted_negative", {tensorInput({3, 4}), intsInput({-1, 0})}),
        testCase("scalar", {valuesInput({}, {7}, ElementType::I64, true), intsInput({0})}),
        withOpset(testCase("opset11_attr", {tensorInput({2, 3})}, {{"axes", attrInts({1})}}), 11),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(Unsqueeze, unsqueezeSchema());
OPT_REGISTER_KERNELS(Unsqueeze, unsqueezeKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
