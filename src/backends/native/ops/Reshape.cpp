// Reshape: any element type; the target comes from the constant shape input (0 copies the input
// dim unless allowzero, -1 is inferred). With an unknown shape input the output gets fresh symbols.
#include "backends/native/ops/common/OpUtil.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

Status inferReshape(ShapeContext &Ctx) {
  RETURN_IF_ERROR(requireCopyableType(Ctx, 0));
  RETURN_IF_ERROR(requireInputType(Ctx, 1, {ElementType::I64}));
  const TensorShape &In = Ctx.Inputs[0].Shape;
  const ValueInfo &ShapeIn = Ctx.Inputs[1];
  Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
  if (ShapeIn.Shape.getRank() != 1)
    return Ctx.error(ErrorCode::Shape, "the shape input must be 1-D, got ", ShapeIn.Shape.toString());
  ASSIGN_OR_RETURN(const int64_t AllowZero, Ctx.N.getInt("allowzero", 0));

  if (!ShapeIn.Const) {
    // Data-dependent target: the rank is known from the shape input's length, the dims are not.
    if (!ShapeIn.Shape[0].isConst())
      return Ctx.error(ErrorCode::Shape, "cannot infer the output rank: the shape input is neither constant nor of "
                                         "known length (",
                       ShapeIn.Shape.toString(), ")");
    std::vector<Expr> Dims;
    for (int64_t I = 0; I < ShapeIn.Shape[0].value(); ++I)
      Dims.push_back(Ctx.newSymbol());
    Ctx.Outputs[0].Shape = TensorShape(std::move(Dims));
    return Status::ok();
  }

  ASSIGN_OR_RETURN(const std::vector<int64_t> Target, ShapeIn.Const->toInt64Vector());
  std::vector<Expr> Dims;
  int Inferred = -1;
  bool HasZero = false;
  for (size_t I = 0; I < Target.size(); ++I) {
    const int64_t T = Target[I];
    if (T == -1) {
      if (Inferred >= 0)
        return Ctx.error(ErrorCode::Shape, "shape ", joinInts(Target), " has more than one -1");
      Inferred = static_cast<int>(I);
      Dims.push_back(Expr(1)); // placeholder
    } else if (T < -1) {
      return Ctx.error(ErrorCode::Shape, "shape ", joinInts(Target), " has invalid dimension ", T);
    } else if (T == 0 && !AllowZero) {
      if (I >= In.getRank())
        return Ctx.error(ErrorCode::Shape, "shape ", joinInts(Target), " copies dimension ", I, " (0) but the input ",
                         In.toString(), " has rank ", In.getRank());
      Dims.push_back(In[I]);
    } else {
      HasZero |= T == 0;
      Dims.push_back(Expr(static_cast<long long>(T)));
    }
  }
  if (HasZero && Inferred >= 0)
    return Ctx.error(ErrorCode::Shape, "shape ", joinInts(Target), " with allowzero=1 cannot contain both 0 and -1");
  const Expr Total = In.getElementCount();
  if (Inferred >= 0) {
    const Expr Known = TensorShape(Dims).getElementCount();
    if (Known.isConst() && Known.value() == 0)
      return Ctx.error(ErrorCode::Shape, "cannot infer -1 in shape ", joinInts(Target), " for input ", In.toString(),
                       ": the other dimensions multiply to 0");
    if (Total.isConst() && Known.isConst() && Total.value() % Known.value() != 0)
      return Ctx.error(ErrorCode::Shape, "cannot reshape ", In.toString(), " to ", joinInts(Target));
    Dims[Inferred] = Total / Known;
  } else {
    const Expr Count = TensorShape(Dims).getElementCount();
    if (Total.isConst() && Count.isConst() && Total.value() != Count.value())
      return Ctx.error(ErrorCode::Shape, "cannot reshape ", In.toString(), " (", Total.value(), " elements) to ",
                       joinInts(Target), " (", Count.value(), " elements)");
  }
  Ctx.Outputs[0].Shape = TensorShape(std::move(Dims));
  return Status::ok();
}

OpSchema reshapeSchema() {
  OpSchema S;
  S.OpType = "Reshape";
  S.MinInputs = S.MaxInputs = 2;
  S.Infer = inferReshape;
  return S;
}

OpKernels reshapeKernels() {
  OpKernels K;
  K.OpType = "Reshape";
  K.Variants.push_back(byteCopyVariant("any_reshape__ref"));
  K.TestCases = [] {
    const auto shape = [](std::vector<double> V) {
      const int64_t N = static_cast<int64_t>(V.size());
      return valuesInput({N}, std::move(V), ElementType::I64, /*Constant=*/true);
    };
    return std::vector<OpTestCase>{
        testCase("explicit", {tensorInput({2, 3, 4}), shape({4, 6})}),
        testCase("infer", {tensorInput({2, 3, 4}), shape({-1, 4})}),
        testCase("copy_dim", {tensorInput({2, 3, 4}), shape({0, -1})}),
        testCase("to_scalar", {tensorInput({1, 1}), shape({})}),
        testCase("allowzero_empty", {tensorInput({0, 3}), shape({3, 0})}, {{"allowzero", attrInt(1)}}),
        testCase("i32", {typedInputs({6}, ElementType::I32)[0], shape({2, 3})}),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(Reshape, reshapeSchema());
OPT_REGISTER_KERNELS(Reshape, reshapeKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
