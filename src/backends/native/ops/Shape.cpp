// Shape: the input's dims as a 1-D i64 tensor (start/end since opset 15), any element type.
// Folded at load whenever the selected dims are constant, which is what removes PyTorch's
// shape-computation subgraphs from static models.
#include "backends/native/ops/common/Indexing.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

/// The [Start, End) range of dims selected (start/end attributes exist since opset 15).
Result<std::pair<int64_t, int64_t>> shapeRange(const Node &N, int64_t Rank) {
  if (N.OpsetVersion > 0 && N.OpsetVersion < 15)
    return std::pair<int64_t, int64_t>(0, Rank);
  ASSIGN_OR_RETURN(int64_t Start, N.getInt("start", 0));
  ASSIGN_OR_RETURN(int64_t End, N.getInt("end", Rank));
  const auto Clamp = [Rank](int64_t V) { return std::min(std::max(V < 0 ? V + Rank : V, int64_t(0)), Rank); };
  Start = Clamp(Start);
  End = std::max(Clamp(End), Start);
  return std::make_pair(Start, End);
}

Status computeShape(const Node &N, const std::vector<TensorView> &In, const std::vector<TensorView> &Out,
                    const Parallel &) {
  ASSIGN_OR_RETURN(const auto Range, shapeRange(N, static_cast<int64_t>(In[0].rank())));
  if (Out[0].elementCount() != static_cast<size_t>(Range.second - Range.first))
    return runError("any_shape__ref", "output has ", Out[0].elementCount(), " elements, expected ",
                    Range.second - Range.first);
  for (int64_t I = Range.first; I < Range.second; ++I)
    Out[0].data<int64_t>()[I - Range.first] = In[0].Dims[static_cast<size_t>(I)];
  return Status::ok();
}

OpSchema shapeSchema() {
  OpSchema S;
  S.OpType = "Shape";
  S.MinInputs = S.MaxInputs = 1;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    const TensorShape &In = Ctx.Inputs[0].Shape;
    ASSIGN_OR_RETURN(const auto Range, shapeRange(Ctx.N, static_cast<int64_t>(In.getRank())));
    Ctx.Outputs[0].Type = ElementType::I64;
    Ctx.Outputs[0].Shape = TensorShape({Expr(static_cast<long long>(Range.second - Range.first))});
    // Only the selected dims are read: fold whenever they are constant (Shape(x)[1:] of a
    // [batch, 3, 4] input folds even though the batch is symbolic).
    for (int64_t I = Range.first; I < Range.second; ++I)
      if (!In[static_cast<size_t>(I)].isConst())
        return Status::ok();
    auto C = ConstData::allocate(ElementType::I64, {Range.second - Range.first});
    for (int64_t I = Range.first; I < Range.second; ++I)
      static_cast<int64_t *>(C->mutableData())[I - Range.first] = In[static_cast<size_t>(I)].value();
    Ctx.Outputs[0].Const = std::move(C);
    return Status::ok();
  };
  return S;
}

OpKernels shapeKernels() {
  OpKernels K;
  K.OpType = "Shape";
  K.Variants.push_back(computeVariant("any_shape__ref", 0, computeShape));
  K.TestCases = [] {
    return std::vector<OpTestCase>{
        testCase("rank3", {tensorInput({2, 3, 4})}),
        testCase("scalar", {tensorInput({})}),
        testCase("start_end", {tensorInput({2, 3, 4, 5})}, {{"start", attrInt(1)}, {"end", attrInt(-1)}}),
        testCase("clamped", {tensorInput({2, 3})}, {{"start", attrInt(-10)}, {"end", attrInt(10)}}),
        testCase("empty_range", {tensorInput({2, 3})}, {{"start", attrInt(2)}, {"end", attrInt(1)}}),
        withOpset(testCase("opset13_ignores_start", {tensorInput({2, 3})}, {{"start", attrInt(1)}}), 13),
        testCase("u8", typedInputs({0, 4}, ElementType::U8)),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(Shape, shapeSchema());
OPT_REGISTER_KERNELS(Shape, shapeKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
