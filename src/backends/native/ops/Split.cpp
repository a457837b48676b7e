// Split: cuts the input along 'axis' into the outputs, any element type. Sizes come from the
// 'split' attribute (before opset 13) or input (since), from 'num_outputs' (opset 18: chunks of
// ceil(dim / n), the last one smaller), or else equal parts, one per output.
#include "backends/native/ops/common/Indexing.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

Status computeSplit(const Node &N, const std::vector<TensorView> &In, const std::vector<TensorView> &Out,
                    const Parallel &) {
  const TensorView &X = In[0];
  ASSIGN_OR_RETURN(int64_t Axis, N.getInt("axis", 0));
  ASSIGN_OR_RETURN(Axis, normalizeAxis(N, "axis", Axis, static_cast<int64_t>(X.rank())));
  const size_t A = static_cast<size_t>(Axis), Elem = getElementSize(X.Type);
  const int64_t Outer = product(X.Dims, 0, A), Inner = product(X.Dims, A + 1, X.rank()), Dim = X.Dims[A];
  int64_t Offset = 0;
  for (const TensorView &Y : Out) {
    if (!Y.Data && Y.Dims.empty())
      continue; // an omitted output
    const int64_t Part = Y.Dims[A];
    if (Offset + Part > Dim)
      return runError("any_split__ref", "outputs cover more than the ", Dim, " entries of axis ", Axis);
    for (int64_t O = 0; O < Outer && Part * Inner > 0; ++O)
      std::memcpy(static_cast<char *>(Y.Data) + O * Part * Inner * Elem,
                  static_cast<const char *>(X.Data) + (O * Dim + Offset) * Inner * Elem,
                  static_cast<size_t>(Part * Inner) * Elem);
    Offset += Part;
  }
  return Status::ok();
}

Status inferSplit(ShapeContext &Ctx) {
  RETURN_IF_ERROR(requireCopyableType(Ctx, 0));
  const TensorShape &X = Ctx.Inputs[0].Shape;
  ASSIGN_OR_RETURN(int64_t Axis, Ctx.N.getInt("axis", 0));
  ASSIGN_OR_RETURN(Axis, normalizeAxis(Ctx.N, "axis", Axis, static_cast<int64_t>(X.getRank())));
  const Expr Dim = X[static_cast<size_t>(Axis)];
  const int64_t NumOut = static_cast<int64_t>(Ctx.Outputs.size());
  const bool AttrSplit = Ctx.N.OpsetVersion > 0 && Ctx.N.OpsetVersion < 13;
  std::vector<Expr> Parts;
  bool HaveSplit = false;
  std::vector<int64_t> Split;
  if (AttrSplit) {
    if (Ctx.Inputs.size() > 1)
      return Ctx.error(ErrorCode::Model, "before opset 13 'split' is an attribute; got ", Ctx.Inputs.size(), " inputs");
    HaveSplit = Ctx.N.hasAttr("split");
    ASSIGN_OR_RETURN(Split, Ctx.N.getInts("split", {}));
  } else if (Ctx.hasInput(1)) {
    RETURN_IF_ERROR(requireInputType(Ctx, 1, {ElementType::I64}));
    if (Ctx.N.hasAttr("num_outputs"))
      return Ctx.error(ErrorCode::Model, "input 'split' and attribute 'num_outputs' cannot both be given");
    if (!isConstInput(Ctx, 1)) {
      for (int64_t I = 0; I < NumOut; ++I) {
        std::vector<Expr> Dims = X.dims();
        Dims[static_cast<size_t>(Axis)] = Ctx.newSymbol();
        Ctx.Outputs[static_cast<size_t>(I)].Type = Ctx.Inputs[0].Type;
        Ctx.Outputs[static_cast<size_t>(I)].Shape = TensorShape(std::move(Dims));
      }
      return Status::ok();
    }
    HaveSplit = true;
    ASSIGN_OR_RETURN(Split, constInts(Ctx, 1));
  }
  if (HaveSplit) {
    if (static_cast<int64_t>(Split.size()) != NumOut)
      return Ctx.error(ErrorCode::Model, "split ", joinInts(Split), " has ", Split.size(), " entries for ", NumOut,
                       " outputs");
    int64_t Sum = 0;
    for (int64_t S : Split) {
      if (S < 0)
        return Ctx.error(ErrorCode::Model, "split ", joinInts(Split), " has a negative entry");
      Sum += S;
      Parts.push_back(Expr(static_cast<long long>(S)));
    }
    if (Dim.isConst() && Sum != Dim.value())
      return Ctx.error(ErrorCode::Shape, "split ", joinInts(Split), " adds up to ", Sum, " but axis ", Axis, " of ",
                       X.toString(), " has ", Dim.value());
  } else if (Ctx.N.hasAttr("num_outputs") && !AttrSplit && Ctx.N.OpsetVersion >= 18) {
    ASSIGN_OR_RETURN(const int64_t Num, Ctx.N.getInt("num_outputs", 0));
    if (Num < 1 || Num != NumOut)
      return Ctx.error(ErrorCode::Model, "attribute 'num_outputs' value ", Num, " must equal the number of outputs (",
                       NumOut, ")");
    if (Dim.isConst()) {
      const int64_t D = Dim.value(), Chunk = (D + Num - 1) / Num;
      if (Chunk * (Num - 1) > D)
        return Ctx.error(ErrorCode::Shape, "cannot split ", D, " entries of axis ", Axis, " into ", Num,
                         " chunks of ", Chunk);
      for (int64_t I = 0; I < Num; ++I)
        Parts.push_back(Expr(static_cast<long long>(I + 1 < Num ? Chunk : D - Chunk * (Num - 1))));
    } else {
      const Expr Chunk = (Dim + Expr(static_cast<long long>(Num - 1))) / Expr(static_cast<long long>(Num));
      for (int64_t I = 0; I < Num; ++I)
        Parts.push_back(I + 1 < Num ? Chunk : Dim - Chunk * Expr(static_cast<long long>(Num - 1)));
    }
  } else {
    if (Dim.isConst() && Dim.value() % NumOut != 0)
      return Ctx.error(ErrorCode::Shape, "axis ", Axis, " of ", X.toString(), " (", Dim.value(),
                       ") does not split evenly into ", NumOut, " outputs");
    for (int64_t I = 0; I < NumOut; ++I)
      Parts.push_back(Dim / Expr(static_cast<long long>(NumOut)));
  }
  for (size_t I = 0; I < Ctx.Outputs.size(); ++I) {
    std::vector<Expr> Dims = X.dims();
    Dims[static_cast<size_t>(Axis)] = Parts[I];
    Ctx.Outputs[I].Type = Ctx.Inputs[0].Type;
    Ctx.Outputs[I].Shape = TensorShape(std::move(Dims));
  }
  return foldIfConstant(Ctx, computeSplit);
}

OpSchema splitSchema() {
  OpSchema S;
  S.OpType = "Split";
  S.MinInputs = 1;
  S.MaxInputs = 2;
  S.MaxOutputs = -1;
  S.Infer = inferSplit;
  return S;
}

OpKernels splitKernels() {
  OpKernels K;
  K.OpType = "Split";
  K.Variants.push_back(computeVariant("any_split__ref", 0, computeSplit));
  K.TestCases = [] {
    return std::vector<OpTestCase>{
        withOutputs(testCase("equal", {tensorInput({6})}), 3),
        withOutputs(testCase("split_input", {tensorInput({2, 6}), intsInput({2, 4})}, {{"axis", attrInt(1)}}), 2),
        withOutputs(testCase("neg_axis_3d", {tensorInput({2, 3, 4}), intsInput({1, 1, 2})}, {{"axis", attrInt(-1)}}), 3),
        withOutputs(testCase("zero_part", {tensorInput({4, 2}), intsInput({0, 4})}), 2),
        withOutputs(withOpset(testCase("opset11_attr", {tensorInput({5, 2})}, {{"split", attrInts({2, 3})}}), 11), 2),
        withOutputs(withOpset(testCase("num_outputs_uneven", {tensorInput({7, 3})}, {{"num_outputs", attrInt(3)}}), 18), 3),
        withOutputs(testCase("i64", typedInputs({4, 4}, ElementType::I64), {{"axis", attrInt(1)}}), 2),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(Split, splitSchema());
OPT_REGISTER_KERNELS(Split, splitKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
