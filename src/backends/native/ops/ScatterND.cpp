// ScatterND: output = data with the slices addressed by indices [..., k] replaced by (or, with
// 'reduction', combined with) the matching slices of updates. Any numeric or bool type.
#include "backends/native/ops/common/Scatter.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

Status computeScatterND(const Node &N, const std::vector<TensorView> &In, const std::vector<TensorView> &Out,
                        const Parallel &) {
  const TensorView &X = In[0], &Idx = In[1], &U = In[2], &Y = Out[0];
  ASSIGN_OR_RETURN(const ScatterReduction Red, scatterReduction(N));
  const size_t Elem = getElementSize(X.Type);
  std::memcpy(Y.Data, X.Data, X.elementCount() * Elem);
  const size_t Q = Idx.rank(), K = static_cast<size_t>(Idx.Dims[Q - 1]);
  const int64_t Tuples = product(Idx.Dims, 0, Q - 1), Slice = product(X.Dims, K, X.rank());
  const std::vector<int64_t> XS = stridesOf(X.Dims);
  if (U.elementCount() != static_cast<size_t>(Tuples * Slice))
    return runError("any_scatternd__ref", "updates ", joinInts(U.Dims), " do not match the indices and data");
  Status Err;
  for (int64_t T = 0; T < Tuples && Err.isOk(); ++T) {
    int64_t Off = 0;
    for (size_t J = 0; J < K; ++J) {
      const int64_t Dim = X.Dims[J];
      int64_t I = readIndex(Idx, static_cast<size_t>(T) * K + J);
      if (I < -Dim || I >= Dim)
        return runError("any_scatternd__ref", "index ", I, " is out of range [", -Dim, ", ", Dim - 1, "]");
      Off += (I < 0 ? I + Dim : I) * XS[J];
    }
    visitNumeric(X.Type, [&](auto Tag) {
      using E = typename decltype(Tag)::type;
      E *Dst = Y.data<E>() + Off;
      const E *Src = U.data<const E>() + T * Slice;
      for (int64_t S = 0; S < Slice; ++S)
        scatterApply(Dst[S], Src[S], Red);
    });
  }
  return Status::ok();
}

OpSchema scatterNDSchema() {
  OpSchema S;
  S.OpType = "ScatterND";
  S.MinInputs = S.MaxInputs = 3;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireNumericType(Ctx, 0));
    RETURN_IF_ERROR(requireIndexType(Ctx, 1));
    RETURN_IF_ERROR(requireSameType(Ctx, 0, 2));
    ASSIGN_OR_RETURN(const ScatterReduction Red, scatterReduction(Ctx.N));
    (void)Red;
    const TensorShape &X = Ctx.Inputs[0].Shape, &I = Ctx.Inputs[1].Shape, &U = Ctx.Inputs[2].Shape;
    if (I.getRank() < 1 || !I[I.getRank() - 1].isConst())
      return Ctx.error(ErrorCode::Shape, "indices ", I.toString(), " must have rank >= 1 and a known last dim");
    const int64_t K = I[I.getRank() - 1].value();
    if (K < 1 || K > static_cast<int64_t>(X.getRank()))
      return Ctx.error(ErrorCode::Shape, "the last dim of indices ", I.toString(), " must be in [1, ", X.getRank(), "]");
    std::vector<Expr> Want(I.begin(), I.end() - 1);
    Want.insert(Want.end(), X.begin() + K, X.end());
    if (!TensorShape(Want).isCompatible(U))
      return Ctx.error(ErrorCode::Shape, "updates ", U.toString(), " must have shape ", TensorShape(Want).toString());
    Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
    Ctx.Outputs[0].Shape = X;
    return foldIfConstant(Ctx, computeScatterND);
  };
  return S;
}

OpKernels scatterNDKernels() {
  OpKernels K;
  K.OpType = "ScatterND";
  K.Variants.push_back(computeVariant("any_scatternd__ref", 0, computeScatterND));
  K.TestCases = [] {
    const auto idx = [](std::vector<int64_t> Dims, std::vector<double> V) {
      return valuesInput(std::move(Dims), std::move(V), ElementType::I64, false);
    };
    const auto red = [](const char *R) { return std::map<std::string, AttrValue>{{"reduction", attrString(R)}}; };
    return std::vector<OpTestCase>{
        testCase("elements", {tensorInput({8}), idx({4, 1}, {4, 3, 1, 7}), tensorInput({4})}),
        testCase("slices", {tensorInput({4, 4, 4}), idx({2, 1}, {0, 2}), tensorInput({2, 4, 4})}),
        testCase("add_dup", {tensorInput({4, 3}), idx({3, 1}, {1, 1, -1}), tensorInput({3, 3})}, red("add")),
        testCase("mul", {tensorInput({4, 3}), idx({2, 2}, {0, 1, 2, 2}), tensorInput({2})}, red("mul")),
        withOpset(testCase("max", {tensorInput({4, 3}), idx({2, 1}, {3, 3}), tensorInput({2, 3})}, red("max")), 18),
        withOpset(testCase("min", {tensorInput({4, 3}), idx({2, 1}, {0, 0}), tensorInput({2, 3})}, red("min")), 18),
        testCase("i64", {typedInputs({5}, ElementType::I64)[0], idx({2, 1}, {0, 4}), typedInputs({2}, ElementType::I64)[0]}),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(ScatterND, scatterNDSchema());
OPT_REGISTER_KERNELS(ScatterND, scatterNDKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
