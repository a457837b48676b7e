// ScatterElements: output = data with output[idx[i][j]][j] = updates[i][j] (axis 0; any axis,
// negative counts from the end), combined per 'reduction'. Any numeric or bool type. Also the
// deprecated Scatter (opsets 9-10: the same without reduction).
#include "backends/native/ops/common/Scatter.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

Status computeScatterElements(const Node &N, const std::vector<TensorView> &In, const std::vector<TensorView> &Out,
                              const Parallel &) {
  const TensorView &X = In[0], &Idx = In[1], &U = In[2], &Y = Out[0];
  ASSIGN_OR_RETURN(const ScatterReduction Red, scatterReduction(N));
  ASSIGN_OR_RETURN(int64_t Axis, N.getInt("axis", 0));
  ASSIGN_OR_RETURN(Axis, normalizeAxis(N, "axis", Axis, static_cast<int64_t>(X.rank())));
  const size_t Elem = getElementSize(X.Type), R = X.rank();
  std::memcpy(Y.Data, X.Data, X.elementCount() * Elem);
  const std::vector<int64_t> XS = stridesOf(X.Dims);
  const int64_t Dim = X.Dims[static_cast<size_t>(Axis)];
  const size_t Count = Idx.elementCount();
  std::vector<int64_t> Pos(R, 0);
  for (size_t T = 0; T < Count; ++T) {
    int64_t I = readIndex(Idx, T);
    if (I < -Dim || I >= Dim)
      return runError("any_scatterelements__ref", "index ", I, " is out of range [", -Dim, ", ", Dim - 1, "]");
    if (I < 0)
      I += Dim;
    int64_t Off = 0;
    for (size_t D = 0; D < R; ++D)
      Off += (static_cast<int64_t>(D) == Axis ? I : Pos[D]) * XS[D];
    visitNumeric(X.Type, [&](auto Tag) {
      using E = typename decltype(Tag)::type;
      scatterApply(Y.data<E>()[Off], U.data<const E>()[T], Red);
    });
    for (size_t D = R; D-- > 0;)
      if (++Pos[D] < Idx.Dims[D])
        break;
      else
        Pos[D] = 0;
  }
  return Status::ok();
}

Status inferScatterElements(ShapeContext &Ctx) {
  RETURN_IF_ERROR(requireNumericType(Ctx, 0));
  RETURN_IF_ERROR(requireIndexType(Ctx, 1));
  RETURN_IF_ERROR(requireSameType(Ctx, 0, 2));
  ASSIGN_OR_RETURN(const ScatterReduction Red, scatterReduction(Ctx.N));
  (void)Red;
  const TensorShape &X = Ctx.Inputs[0].Shape, &I = Ctx.Inputs[1].Shape, &U = Ctx.Inputs[2].Shape;
  if (X.getRank() < 1 || I.getRank() != X.getRank() || !I.isCompatible(U))
    return Ctx.error(ErrorCode::Shape, "data ", X.toString(), ", indices ", I.toString(), " and updates ", U.toString(),
                     " must have the same rank >= 1, indices and updates the same shape");
  ASSIGN_OR_RETURN(int64_t Axis, Ctx.N.getInt("axis", 0));
  ASSIGN_OR_RETURN(Axis, normalizeAxis(Ctx.N, "axis", Axis, static_cast<int64_t>(X.getRank())));
  Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
  Ctx.Outputs[0].Shape = X;
  return foldIfConstant(Ctx, computeScatterElements);
}

OpSchema scatterSchema(const char *Op) {
  OpSchema S;
  S.OpType = Op;
  S.MinInputs = S.MaxInputs = 3;
  S.Infer = inferScatterElements;
  return S;
}

std::vector<OpTestCase> scatterElementsCases();

OpKernels scatterKernels(const char *Op, const char *Name) {
  OpKernels K;
  K.OpType = Op;
  K.Variants.push_back(computeVariant(Name, 0, computeScatterElements));
  if (std::string(Op) == "Scatter") {
    K.TestCases = [] {
      std::vector<OpTestCase> C = scatterElementsCases();
      C.resize(2); // the cases without reduction, at Scatter's last opset
      for (OpTestCase &T : C)
        T.OpsetVersion = 10;
      return C;
    };
  } else {
    K.TestCases = scatterElementsCases;
  }
  return K;
}

std::vector<OpTestCase> scatterElementsCases() {
  {
    const auto idx = [](std::vector<int64_t> Dims, std::vector<double> V, ElementType T = ElementType::I64) {
      return valuesInput(std::move(Dims), std::move(V), T, false);
    };
    const auto red = [](const char *R) { return std::map<std::string, AttrValue>{{"reduction", attrString(R)}}; };
    return std::vector<OpTestCase>{
        testCase("axis0", {tensorInput({3, 3}), idx({2, 3}, {1, 0, 2, 0, 2, 1}), tensorInput({2, 3})}),
        testCase("axis1_neg_idx", {tensorInput({1, 5}), idx({1, 2}, {1, -3}), tensorInput({1, 2})}, {{"axis", attrInt(1)}}),
        testCase("add_dup", {tensorInput({1, 5}), idx({1, 2}, {1, 1}), tensorInput({1, 2})},
                 {{"axis", attrInt(1)}, {"reduction", attrString("add")}}),
        testCase("mul", {tensorInput({3, 2}), idx({2, 2}, {0, 0, 2, 0}, ElementType::I32), tensorInput({2, 2})}, red("mul")),
        withOpset(testCase("max", {tensorInput({3, 2}), idx({2, 2}, {1, 1, 1, 1}), tensorInput({2, 2})}, red("max")), 18),
        withOpset(testCase("min_i64", {typedInputs({4}, ElementType::I64)[0], idx({3}, {3, 3, 0}),
                           typedInputs({3}, ElementType::I64)[0]}, red("min")), 18),
    };
  }
}

OPT_REGISTER_SCHEMA(ScatterElements, scatterSchema("ScatterElements"));
OPT_REGISTER_KERNELS(ScatterElements, scatterKernels("ScatterElements", "any_scatterelements__ref"));
OPT_REGISTER_SCHEMA(Scatter, scatterSchema("Scatter"));
OPT_REGISTER_KERNELS(Scatter, scatterKernels("Scatter", "any_scatter__ref"));

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
