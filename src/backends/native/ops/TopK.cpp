// TopK: the k largest (or smallest) elements along 'axis' and their i64 indices; equal values
// keep the lower index first. k is an attribute before opset 10 and a 1-element input since;
// largest/sorted exist since opset 11 (the output is always sorted). Numeric types.
#include <algorithm>
#include <numeric>

#include "backends/native/ops/common/Indexing.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

Result<int64_t> readK(const Node &N, const std::vector<TensorView> &In) {
  if (N.OpsetVersion > 0 && N.OpsetVersion < 10)
    return N.getInt("k", 0);
  ASSIGN_OR_RETURN(const std::vector<int64_t> K, readInts(In[1], "K"));
  if (K.size() != 1)
    return runError("any_topk__ref", "K must have exactly one element");
  return K[0];
}

Status computeTopK(const Node &N, const std::vector<TensorView> &In, const std::vector<TensorView> &Out,
                   const Parallel &Par) {
  const TensorView &X = In[0];
  ASSIGN_OR_RETURN(int64_t Axis, N.getInt("axis", -1));
  ASSIGN_OR_RETURN(Axis, normalizeAxis(N, "axis", Axis, static_cast<int64_t>(X.rank())));
  ASSIGN_OR_RETURN(const int64_t Largest, N.getInt("largest", 1));
  ASSIGN_OR_RETURN(const int64_t K, readK(N, In));
  const size_t A = static_cast<size_t>(Axis);
  const int64_t Outer = product(X.Dims, 0, A), Dim = X.Dims[A], Inner = product(X.Dims, A + 1, X.rank());
  if (K < 0 || K > Dim)
    return runError("any_topk__ref", "K ", K, " is out of range [0, ", Dim, "]");
  const bool HasValues = Out[0].Data != nullptr, HasIndices = Out.size() > 1 && Out[1].Data != nullptr;
  visitNumeric(X.Type, [&](auto Tag) {
    using T = typename decltype(Tag)::type;
    using C = typename ComputeType<T>::type;
    const T *Src = X.data<const T>();
    Par.forRange(static_cast<size_t>(Outer * Inner), 16, [&](size_t Lo, size_t Hi) {
      std::vector<int64_t> Order(static_cast<size_t>(Dim));
      for (size_t L = Lo; L < Hi; ++L) {
        const int64_t O = static_cast<int64_t>(L) / Inner, I = static_cast<int64_t>(L) % Inner;
        const T *Line = Src + O * Dim * Inner + I;
        std::iota(Order.begin(), Order.end(), int64_t(0));
        const auto Less = [&](int64_t P, int64_t Q) {
          const C VP = static_cast<C>(Line[P * Inner]), VQ = static_cast<C>(Line[Q * Inner]);
          if (VP != VQ)
            return Largest ? VQ < VP : VP < VQ;
          return P < Q;
        };
        std::partial_sort(Order.begin(), Order.begin() + K, Order.end(), Less);
        for (int64_t J = 0; J < K; ++J) {
          const int64_t OutOff = (O * K + J) * Inner + I;
          if (HasValues)
            Out[0].data<T>()[OutOff] = Line[Order[static_cast<size_t>(J)] * Inner];
          if (HasIndices)
            Out[1].data<int64_t>()[OutOff] = Order[static_cast<size_t>(J)];
        }
      }
    });
  });
  return Status::ok();
}

OpSchema topKSchema() {
  OpSchema S;
  S.OpType = "TopK";
  S.MinInputs = 1;
  S.MaxInputs = 2;
  S.MinOutputs = S.MaxOutputs = 2;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireNumericType(Ctx, 0));
    if (Ctx.Inputs[0].Type == ElementType::Bool)
      return Ctx.error(ErrorCode::Type, "input 0 has element type bool, TopK needs a numeric tensor");
    const TensorShape &X = Ctx.Inputs[0].Shape;
    if (X.getRank() == 0)
      return Ctx.error(ErrorCode::Shape, "input 0 must have rank >= 1");
    ASSIGN_OR_RETURN(int64_t Axis, Ctx.N.getInt("axis", -1));
    ASSIGN_OR_RETURN(Axis, normalizeAxis(Ctx.N, "axis", Axis, static_cast<int64_t>(X.getRank())));
    ASSIGN_OR_RETURN(const int64_t Largest, Ctx.N.getInt("largest", 1));
    ASSIGN_OR_RETURN(const int64_t Sorted, Ctx.N.getInt("sorted", 1));
    if ((Largest != 0 && Largest != 1) || (Sorted != 0 && Sorted != 1))
      return Ctx.error(ErrorCode::Model, "attributes 'largest' (", Largest, ") and 'sorted' (", Sorted, ") must be 0 or 1");
    Expr KDim;
    if (Ctx.N.OpsetVersion > 0 && Ctx.N.OpsetVersion < 10) {
      if (!Ctx.N.hasAttr("k"))
        return Ctx.error(ErrorCode::Model, "attribute 'k' is required before opset 10");
      ASSIGN_OR_RETURN(const int64_t K, Ctx.N.getInt("k", 0));
      KDim = Expr(static_cast<long long>(K));
    } else {
      if (!Ctx.hasInput(1))
        return Ctx.error(ErrorCode::Model, "input 1 (K) is required since opset 10");
      RETURN_IF_ERROR(requireInputType(Ctx, 1, {ElementType::I64}));
      if (isConstInput(Ctx, 1)) {
        ASSIGN_OR_RETURN(const std::vector<int64_t> K, constInts(Ctx, 1));
        if (K.size() != 1)
          return Ctx.error(ErrorCode::Shape, "input 1 (K) must have exactly one element, got ", joinInts(K));
        KDim = Expr(static_cast<long long>(K[0]));
      } else {
        KDim = Ctx.newSymbol();
      }
    }
    const Expr &D = X[static_cast<size_t>(Axis)];
    if (KDim.isConst() && (KDim.value() < 0 || (D.isConst() && KDim.value() > D.value())))
      return Ctx.error(ErrorCode::Shape, "k ", KDim.value(), " is out of range [0, ", D.toString(), "] for axis ", Axis,
                       " of ", X.toString());
    std::vector<Expr> Dims = X.dims();
    Dims[static_cast<size_t>(Axis)] = KDim;
    Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
    Ctx.Outputs[0].Shape = TensorShape(Dims);
    Ctx.Outputs[1].Type = ElementType::I64;
    Ctx.Outputs[1].Shape = TensorShape(std::move(Dims));
    return Status::ok();
  };
  return S;
}

OpKernels topKKernels() {
  OpKernels K;
  K.OpType = "TopK";
  K.Variants.push_back(computeVariant("any_topk__ref", 0, computeTopK));
  K.TestCases = [] {
    const auto k = [](int64_t V) { return intsInput({V}); };
    return std::vector<OpTestCase>{
        withOutputs(testCase("last_axis", {tensorInput({3, 4}), k(3)}), 2),
        withOutputs(testCase("smallest_axis0", {tensorInput({5, 3}), k(2)}, {{"axis", attrInt(0)}, {"largest", attrInt(0)}}), 2),
        withOutputs(testCase("ties", {valuesInput({2, 6}, {1, 3, 3, 2, 3, 1}, ElementType::F32, false), k(4)}), 2),
        withOutputs(testCase("ties_smallest", {valuesInput({6}, {2, 1, 2, 1, 0, 1}, ElementType::I32, false), k(5)},
                             {{"largest", attrInt(0)}}), 2),
        withOutputs(testCase("middle_axis", {tensorInput({2, 5, 3}), k(5)}, {{"axis", attrInt(1)}}), 2),
        withOutputs(testCase("k0", {tensorInput({2, 3}), k(0)}), 2),
        withOutputs(withOpset(testCase("opset1_attr", {tensorInput({3, 4})}, {{"k", attrInt(2)}}), 1), 2),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(TopK, topKSchema());
OPT_REGISTER_KERNELS(TopK, topKKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
