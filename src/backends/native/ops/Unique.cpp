// Unique (opset 11): the distinct elements of X (or, with 'axis', the distinct slices along it),
// sorted ascending (lexicographically for slices) or in order of first occurrence, with the index
// of each first occurrence, the inverse map and the counts (all i64). Numeric and bool types. The
// count depends on the data: exact when X is constant, a fresh symbol until the executor
// re-infers otherwise.
#include <algorithm>
#include <numeric>

#include "backends/native/ops/common/Indexing.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

/// The groups of equal slices: Order[g] is the first index of group g (in output order), Inverse
/// maps each slice to its group, Counts the group sizes.
struct UniqueGroups {
  std::vector<int64_t> First, Inverse, Counts;
};

/// X viewed as Count slices of Outer x Inner elements, slice i at offsets (o * Count + i) * Inner + k.
UniqueGroups findUniqueGroups(const TensorView &X, int64_t Outer, int64_t Count, int64_t Inner, bool Sorted) {
  std::vector<int64_t> Order(static_cast<size_t>(Count));
  std::iota(Order.begin(), Order.end(), int64_t(0));
  // -1 / 0 / 1 comparison of two slices, element by element in row-major order.
  std::function<int(int64_t, int64_t)> Compare;
  visitNumeric(X.Type, [&](auto Tag) {
    using T = typename decltype(Tag)::type;
    using C = typename ComputeType<T>::type;
    const T *D = X.data<const T>();
    Compare = [=](int64_t P, int64_t Q) {
      for (int64_t O = 0; O < Outer; ++O)
        for (int64_t K = 0; K < Inner; ++K) {
          const C A = static_cast<C>(D[(O * Count + P) * Inner + K]), B = static_cast<C>(D[(O * Count + Q) * Inner + K]);
          if (A < B)
            return -1;
          if (B < A)
            return 1;
        }
      return 0;
    };
  });
  // Stable: within a group of equal slices the first occurrence comes first.
  std::stable_sort(Order.begin(), Order.end(), [&](int64_t P, int64_t Q) { return Compare(P, Q) < 0; });
  UniqueGroups G;
  G.Inverse.assign(static_cast<size_t>(Count), 0);
  for (size_t I = 0; I < Order.size(); ++I) {
    if (I == 0 || Compare(Order[I - 1], Order[I]) != 0) {
      G.First.push_back(Order[I]);
      G.Counts.push_back(0);
    }
    G.Inverse[static_cast<size_t>(Order[I])] = static_cast<int64_t>(G.First.size() - 1);
    ++G.Counts.back();
  }
  if (!Sorted) { // renumber the groups by first occurrence
    std::vector<int64_t> ByFirst(G.First.size()), Rank(G.First.size());
    std::iota(ByFirst.begin(), ByFirst.end(), int64_t(0));
    std::sort(ByFirst.begin(), ByFirst.end(), [&](int64_t A, int64_t B) {
      return G.First[static_cast<size_t>(A)] < G.First[static_cast<size_t>(B)];
    });
    UniqueGroups R;
    for (size_t I = 0; I < ByFirst.size(); ++I) {
      Rank[static_cast<size_t>(ByFirst[I])] = static_cast<int64_t>(I);
      R.First.push_back(G.First[static_cast<size_t>(ByFirst[I])]);
      R.Counts.push_back(G.Counts[static_cast<size_t>(ByFirst[I])]);
    }
    for (int64_t Gr : G.Inverse)
      R.Inverse.push_back(Rank[static_cast<size_t>(Gr)]);
    return R;
  }
  return G;
}

/// The optional 'axis' (normalized) or -1 for the flattened input.
Result<int64_t> uniqueAxis(const Node &N, size_t Rank) {
  if (!N.hasAttr("axis"))
    return int64_t(-1);
  ASSIGN_OR_RETURN(const int64_t Axis, N.getInt("axis", 0));
  return normalizeAxis(N, "axis", Axis, static_cast<int64_t>(Rank));
}

struct UniqueLayout {
  int64_t Outer = 1, Count = 1, Inner = 1;
};

UniqueLayout uniqueLayout(const std::vector<int64_t> &Dims, int64_t Axis) {
  UniqueLayout L;
  if (Axis < 0) {
    L.Count = product(Dims, 0, Dims.size());
    return L;
  }
  const size_t A = static_cast<size_t>(Axis);
  L.Outer = product(Dims, 0, A);
  L.Count = Dims[A];
  L.Inner = product(Dims, A + 1, Dims.size());
  return L;
}

Status computeUnique(const Node &N, const std::vector<TensorView> &In, const std::vector<TensorView> &Out,
                     const Parallel &) {
  const TensorView &X = In[0];
  ASSIGN_OR_RETURN(const int64_t Axis, uniqueAxis(N, X.rank()));
  ASSIGN_OR_RETURN(const int64_t Sorted, N.getInt("sorted", 1));
  const UniqueLayout L = uniqueLayout(X.Dims, Axis);
  const UniqueGroups G = findUniqueGroups(X, L.Outer, L.Count, L.Inner, Sorted != 0);
  const int64_t U = static_cast<int64_t>(G.First.size());
  if (Out[0].elementCount() != static_cast<size_t>(L.Outer * U * L.Inner))
    return runError("any_unique__ref", "output Y ", joinInts(Out[0].Dims), " does not hold ", U, " unique slices");
  const size_t Elem = getElementSize(X.Type), Row = static_cast<size_t>(L.Inner) * Elem;
  const char *Src = static_cast<const char *>(X.Data);
  char *Dst = static_cast<char *>(Out[0].Data);
  for (int64_t O = 0; O < L.Outer; ++O)
    for (int64_t J = 0; J < U; ++J)
      std::memcpy(Dst + static_cast<size_t>(O * U + J) * Row,
                  Src + static_cast<size_t>(O * L.Count + G.First[static_cast<size_t>(J)]) * Row, Row);
  const std::vector<int64_t> *Parts[] = {&G.First, &G.Inverse, &G.Counts};
  for (size_t I = 1; I < Out.size() && I < 4; ++I)
    if (Out[I].Data) {
      if (Out[I].elementCount() != Parts[I - 1]->size())
        return runError("any_unique__ref", "output ", I, " ", joinInts(Out[I].Dims), " does not hold ",
                        Parts[I - 1]->size(), " values");
      std::copy(Parts[I - 1]->begin(), Parts[I - 1]->end(), Out[I].data<int64_t>());
    }
  return Status::ok();
}

Status inferUnique(ShapeContext &Ctx) {
  RETURN_IF_ERROR(requireNumericType(Ctx, 0));
  const TensorShape &X = Ctx.Inputs[0].Shape;
  ASSIGN_OR_RETURN(const int64_t Axis, uniqueAxis(Ctx.N, X.getRank()));
  ASSIGN_OR_RETURN(const int64_t Sorted, Ctx.N.getInt("sorted", 1));
  if (Sorted != 0 && Sorted != 1)
    return Ctx.error(ErrorCode::Model, "attribute 'sorted' value ", Sorted, " is not 0 or 1");
  Expr U = Ctx.newSymbol();
  if (isConstInput(Ctx, 0)) {
    const TensorView V = constView(*Ctx.Inputs[0].Const);
    const UniqueLayout L = uniqueLayout(V.Dims, Axis);
    U = Expr(static_cast<long long>(findUniqueGroups(V, L.Outer, L.Count, L.Inner, Sorted != 0).First.size()));
  }
  Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
  if (Axis < 0) {
    Ctx.Outputs[0].Shape = TensorShape({U});
  } else {
    std::vector<Expr> Dims(X.begin(), X.end());
    Dims[static_cast<size_t>(Axis)] = U;
    Ctx.Outputs[0].Shape = TensorShape(Dims);
  }
  const Expr Count = Axis < 0 ? productExpr(X, 0, X.getRank()) : X[static_cast<size_t>(Axis)];
  const Expr Sizes[] = {U, Count, U};
  for (size_t I = 1; I < Ctx.Outputs.size() && I < 4; ++I) {
    Ctx.Outputs[I].Type = ElementType::I64;
    Ctx.Outputs[I].Shape = TensorShape({Sizes[I - 1]});
  }
  return isConstInput(Ctx, 0) ? foldIfConstant(Ctx, computeUnique) : Status::ok();
}

OpSchema uniqueSchema() {
  OpSchema S;
  S.OpType = "Unique";
  S.MinInputs = S.MaxInputs = 1;
  S.MinOutputs = 1;
  S.MaxOutputs = 4;
  S.Infer = inferUnique;
  return S;
}

OpKernels uniqueKernels() {
  OpKernels K;
  K.OpType = "Unique";
  K.Variants.push_back(computeVariant("any_unique__ref", 0, computeUnique));
  K.TestCases = [] {
    // The output shape depends on the values: the harness needs them constant to allocate.
    const auto x = [](std::vector<int64_t> Dims, std::vector<double> V, ElementType T = ElementType::F32) {
      return valuesInput(std::move(Dims), std::move(V), T, true);
    };
    return std::vector<OpTestCase>{
        withOutputs(testCase("flat_sorted", {x({8}, {3, 1, 2, 1, 3, -4, 0, 2})}), 4),
        withOutputs(testCase("flat_unsorted", {x({2, 4}, {3, 1, 2, 1, 3, -4, 0, 2})}, {{"sorted", attrInt(0)}}), 4),
        withOutputs(testCase("axis1_i32", {x({2, 4, 2}, {1, 1, 0, 1, 2, 1, 0, 1, 1, 1, 0, 1, 2, 1, 0, 1}, ElementType::I32)},
                             {{"axis", attrInt(1)}}),
                    4),
        withOutputs(testCase("axis_neg_unsorted", {x({3, 3}, {1, 0, 0, 1, 0, 0, 2, 3, 4})},
                             {{"axis", attrInt(-1)}, {"sorted", attrInt(0)}}),
                    4),
        withOutputs(testCase("bool_y_only", {x({5}, {1, 0, 0, 1, 1}, ElementType::Bool)}), 1),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(Unique, uniqueSchema());
OPT_REGISTER_KERNELS(Unique, uniqueKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
