// Squeeze: removes dims of size 1 (the listed axes, or every constant 1 when none are given),
// any element type. Axes are an attribute before opset 13 and an optional input since.
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
    return runError("any_squeeze__ref", "input ", joinInts(In[0].Dims), " and output ", joinInts(Out[0].Dims),
                    " differ in element count");
  if (Bytes)
    std::memcpy(Out[0].Data, In[0].Data, Bytes);
  return Status::ok();
}

Status inferSqueeze(ShapeContext &Ctx) {
  RETURN_IF_ERROR(requireCopyableType(Ctx, 0));
  const TensorShape &X = Ctx.Inputs[0].Shape;
  const int64_t Rank = static_cast<int64_t>(X.getRank());
  std::vector<int64_t> Axes;
  bool HasAxes = false;
  if (Ctx.N.OpsetVersion > 0 && Ctx.N.OpsetVersion < 13) {
    if (Ctx.Inputs.size() > 1)
      return Ctx.error(ErrorCode::Model, "before opset 13 Squeeze takes 1 input (axes is an attribute), got ",
                       Ctx.Inputs.size());
    HasAxes = Ctx.N.hasAttr("axes");
    ASSIGN_OR_RETURN(Axes, Ctx.N.getInts("axes", {}));
  } else if (Ctx.hasInput(1)) {
    RETURN_IF_ERROR(requireInputType(Ctx, 1, {ElementType::I64}));
    if (!isConstInput(Ctx, 1)) {
      // Data-dependent axes: the rank follows from their count, the dims are resolved at run time.
      const TensorShape &AS = Ctx.Inputs[1].Shape;
      if (AS.getRank() != 1 || !AS[0].isConst() || AS[0].value() > Rank)
        return Ctx.error(ErrorCode::Shape, "input 1 (axes) is not constant and its length is unknown (", AS.toString(),
                         ")");
      std::vector<Expr> Dims;
      for (int64_t I = 0; I < Rank - AS[0].value(); ++I)
        Dims.push_back(Ctx.newSymbol());
      Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
      Ctx.Outputs[0].Shape = TensorShape(std::move(Dims));
      return Status::ok();
    }
    HasAxes = true;
    ASSIGN_OR_RETURN(Axes, constInts(Ctx, 1));
  }
  std::vector<bool> Drop(static_cast<size_t>(Rank), false);
  if (HasAxes) {
    for (int64_t A : Axes) {
      ASSIGN_OR_RETURN(const int64_t Ax, normalizeAxis(Ctx.N, "axes", A, Rank));
      if (Drop[static_cast<size_t>(Ax)])
        return Ctx.error(ErrorCode::Model, "axes ", joinInts(Axes), " repeat axis ", Ax);
      const Expr &D = X[static_cast<size_t>(Ax)];
      if (D.isConst() && D.value() != 1)
        return Ctx.error(ErrorCode::Shape, "cannot squeeze axis ", Ax, " of shape ", X.toString(), ": its size is ",
                         D.value(), ", not 1");
      Drop[static_cast<size_t>(Ax)] = true;
    }
  } else {
    for (int64_t I = 0; I < Rank; ++I)
      Drop[static_cast<size_t>(I)] = X[static_cast<size_t>(I)].isConst() && X[static_cast<size_t>(I)].value() == 1;
  }
  std::vector<Expr> Dims;
  for (int64_t I = 0; I < Rank; ++I)
    if (!Drop[static_cast<size_t>(I)])
      Dims.push_back(X[static_cast<size_t>(I)]);
  Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
  Ctx.Outputs[0].Shape = TensorShape(std::move(Dims));
  // Without axes, a dim unknown at load may be 1 while running and go too: the rank is a guess.
  if (!HasAxes && X.isDynamic())
    Ctx.Outputs[0].RankUnknown = true;
  return foldIfConstant(Ctx, computeCopy);
}

OpSchema squeezeSchema() {
  OpSchema S;
  S.OpType = "Squeeze";
  S.MinInputs = 1;
  S.MaxInputs = 2;
  S.Infer = inferSqueeze;
  return S;
}

OpKernels squeezeKernels() {
  OpKernels K;
  K.OpType = "Squeeze";
  K.Variants.push_back(computeVariant("any_squeeze__ref", 0, computeCopy));
  K.TestCases = [] {
    return std::vector<OpTestCase>{
        testCase("axes_input", {tensorInput({1, 3, 1, 5}), intsInput({0, 2})}),
        testCase("negative_axis", {tensorInput({3, 1, 5}), intsInput({-2})}),
        testCase("all_ones", {tensorInput({1, 3, 1, 5})}),
        testCase("to_scalar", {typedInputs({1, 1}, ElementType::I64)[0]}),
        withOpset(testCase("opset11_attr", {tensorInput({1, 3, 1})}, {{"axes", attrInts({2})}}), 11),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(Squeeze, squeezeSchema());
OPT_REGISTER_KERNELS(Squeeze, squeezeKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
