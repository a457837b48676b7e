// Shared implementation of the Reduce* ops: axes from the attribute (before opset 18; 13 for
// ReduceSum) or the optional input 1 (after), keepdims, noop_with_empty_axes; schema with symbolic
// shapes and folding; a reference kernel (one pass over the input, per-output accumulators) and a
// fast kernel (coalesced [outer, reduced] / [outer, reduced, inner] layouts split over the pool).
// Floats accumulate in double, signed integers in int64, unsigned in uint64 (wrapping).
#pragma once

#include <set>
#include <tuple>

#include "backends/native/ops/common/ElementwiseCommon.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

enum class ReduceKind { Sum, Mean, Max, Min, Prod, L1, L2, SumSquare, LogSum, LogSumExp };

template <typename T> struct ReduceAccOf {
  using type = typename std::conditional<IsFloatLike<T>::value, double,
                                         typename std::conditional<std::is_signed<T>::value, int64_t, uint64_t>::type>::type;
};

template <ReduceKind K, typename T> struct Reducer {
  using A = typename ReduceAccOf<T>::type;
  static A init() {
    switch (K) {
    case ReduceKind::Prod: return A(1);
    case ReduceKind::Max:
      return std::numeric_limits<A>::has_infinity ? -std::numeric_limits<A>::infinity()
                                                   : static_cast<A>(std::numeric_limits<ComputeT<T>>::lowest());
    case ReduceKind::Min:
      return std::numeric_limits<A>::has_infinity ? std::numeric_limits<A>::infinity()
                                                   : static_cast<A>(std::numeric_limits<ComputeT<T>>::max());
    default: return A(0);
    }
  }
  static A load(T V) { return static_cast<A>(static_cast<ComputeT<T>>(V)); }
  static A step(A Acc, A X) {
    switch (K) {
    case ReduceKind::Prod: return Acc * X;
    case ReduceKind::Max: return (X != X || X > Acc) ? X : Acc; // NaN propagates
    case ReduceKind::Min: return (X != X || X < Acc) ? X : Acc;
    case ReduceKind::L1: return Acc + (X < A(0) ? A(0) - X : X);
    case ReduceKind::L2:
    case ReduceKind::SumSquare: return Acc + X * X;
    default: return Acc + X;
    }
  }
  static T finish(A Acc, size_t Count) {
    switch (K) {
    case ReduceKind::Mean: return convertValue<T>(static_cast<double>(Acc) / static_cast<double>(Count));
    case ReduceKind::L2: return convertValue<T>(std::sqrt(static_cast<double>(Acc)));
    case ReduceKind::LogSum: return convertValue<T>(std::log(static_cast<double>(Acc)));
    default: return convertValue<T>(Acc);
    }
  }
};

inline bool reduceAxesFromInput(const Node &N) {
  const int Since = N.OpType == "ReduceSum" ? 13 : 18;
  return N.OpsetVersion == 0 || N.OpsetVersion >= Since;
}

/// The reduction's configuration as the node states it; the axes may come at run time.
struct ReduceConfig {
  bool KeepDims = true;
  bool NoopWithEmptyAxes = false;
  bool AxesFromInput = false;
  std::vector<int64_t> AttrAxes;
};

inline Result<ReduceConfig> reduceConfig(const Node &N) {
  ReduceConfig C;
  ASSIGN_OR_RETURN(const int64_t Keep, N.getInt("keepdims", 1));
  C.KeepDims = Keep != 0;
  C.AxesFromInput = reduceAxesFromInput(N);
  if (C.AxesFromInput) {
    if (N.hasAttr("axes"))
      return makeError(ErrorCode::Model, N.describe(), ": attribute 'axes' was replaced by input 1 in this opset (",
                       N.OpsetVersion, ")");
    ASSIGN_OR_RETURN(const int64_t Noop, N.getInt("noop_with_empty_axes", 0));
    C.NoopWithEmptyAxes = Noop != 0;
  } else {
    ASSIGN_OR_RETURN(C.AttrAxes, N.getInts("axes", {}));
  }
  return C;
}

/// Which dims to reduce (a mask over the input rank); ModelError for out-of-range or repeated axes.
inline Result<std::vector<bool>> reduceMask(const Node &N, const ReduceConfig &C, const std::vector<int64_t> &Axes,
                                            size_t Rank) {
  std::vector<bool> Mask(Rank, false);
  if (Axes.empty()) {
    if (!C.NoopWithEmptyAxes)
      Mask.assign(Rank, true);
    return Mask;
  }
  for (int64_t A : Axes) {
    ASSIGN_OR_RETURN(const int64_t Ax, normalizeAxis(N, "axes", A, static_cast<int64_t>(Rank)));
    if (Mask[static_cast<size_t>(Ax)])
      return makeError(ErrorCode::Model, N.describe(), ": axes ", joinInts(Axes), " repeat axis ", A);
    Mask[static_cast<size_t>(Ax)] = true;
  }
  return Mask;
}

inline Result<std::vector<int64_t>> axesOfInput(const Node &N, const TensorView *AxesIn) {
  std::vector<int64_t> Axes;
  if (!AxesIn || !AxesIn->Data)
    return Axes;
  if (AxesIn->Type != ElementType::I64)
    return makeError(ErrorCode::Type, N.describe(), ": input 1 ('axes') must be i64, got ", toString(AxesIn->Type));
  const int64_t *P = AxesIn->data<int64_t>();
  Axes.assign(P, P + AxesIn->elementCount());
  return Axes;
}

inline Status inferReduce(ShapeContext &Ctx, const std::vector<ElementType> &Types, const KernelFactory &Fold) {
  RETURN_IF_ERROR(requireInputTypeIn(Ctx, 0, Types));
  ASSIGN_OR_RETURN(const ReduceConfig C, reduceConfig(Ctx.N));
  const TensorShape &In = Ctx.Inputs[0].Shape;
  const size_t Rank = In.getRank();
  Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
  std::vector<int64_t> Axes = C.AttrAxes;
  if (C.AxesFromInput && Ctx.hasInput(1)) {
    const ValueInfo &AI = Ctx.Inputs[1];
    RETURN_IF_ERROR(requireInputTypeIn(Ctx, 1, {ElementType::I64}, "axes"));
    if (AI.Shape.getRank() != 1)
      return Ctx.error(ErrorCode::Shape, "input 1 ('axes') must be 1-D, got shape ", AI.Shape.toString());
    if (!AI.Const) {
      // Axes known only at run time: the rank is known when keepdims=1 or the axes count is.
      std::vector<Expr> Dims;
      if (C.KeepDims) {
        for (size_t I = 0; I < Rank; ++I)
          Dims.push_back(In[I].isConst() && In[I].value() == 1 ? Expr(1) : Ctx.newSymbol());
      } else {
        if (!AI.Shape[0].isConst())
          return Ctx.error(ErrorCode::Shape, "cannot infer the output rank: input 1 ('axes') is neither constant nor "
                                             "of known length, and keepdims=0");
        const int64_t K = AI.Shape[0].value();
        const int64_t OutRank = K == 0 ? (C.NoopWithEmptyAxes ? static_cast<int64_t>(Rank) : 0)
                                       : static_cast<int64_t>(Rank) - K;
        if (OutRank < 0)
          return Ctx.error(ErrorCode::Shape, "input 1 ('axes') has ", K, " entries for an input of rank ", Rank);
        for (int64_t I = 0; I < OutRank; ++I)
          Dims.push_back(Ctx.newSymbol());
      }
      Ctx.Outputs[0].Shape = TensorShape(std::move(Dims));
      return Status::ok();
    }
    ASSIGN_OR_RETURN(Axes, AI.Const->toInt64Vector());
  }
  ASSIGN_OR_RETURN(const std::vector<bool> Mask, reduceMask(Ctx.N, C, Axes, Rank));
  std::vector<Expr> Dims;
  for (size_t I = 0; I < Rank; ++I) {
    if (!Mask[I])
      Dims.push_back(In[I]);
    else if (C.KeepDims)
      Dims.push_back(Expr(1));
  }
  Ctx.Outputs[0].Shape = TensorShape(std::move(Dims));
  return foldWithKernel(Ctx, Fold);
}

/// The input viewed as alternating kept/reduced groups of adjacent dims (size-1 dims dropped).
struct ReduceLayout {
  std::vector<int64_t> Dims;
  std::vector<bool> Reduced;
  size_t OutCount = 1, ReduceCount = 1;
};

inline ReduceLayout reduceLayout(const std::vector<int64_t> &Dims, const std::vector<bool> &Mask) {
  ReduceLayout L;
  for (size_t I = 0; I < Dims.size(); ++I) {
    if (Mask[I])
      L.ReduceCount *= static_cast<size_t>(Dims[I]);
    else
      L.OutCount *= static_cast<size_t>(Dims[I]);
    if (Dims[I] == 1)
      continue;
    if (!L.Dims.empty() && L.Reduced.back() == Mask[I]) {
      L.Dims.back() *= Dims[I];
    } else {
      L.Dims.push_back(Dims[I]);
      L.Reduced.push_back(Mask[I]);
    }
  }
  return L;
}

template <ReduceKind K, typename T> class ReduceKernel : public Kernel {
  using R = Reducer<K, T>;
  using A = typename R::A;

public:
  ReduceKernel(std::string Name, Node N, ReduceConfig C, bool Fast)
      : Name(std::move(Name)), N(std::move(N)), C(std::move(C)), Fast(Fast) {}

  Status run(const KernelContext &Ctx) const override {
    const TensorView &X = Ctx.Inputs[0], &Y = Ctx.Outputs[0];
    std::vector<int64_t> Axes = C.AttrAxes;
    if (C.AxesFromInput && Ctx.Inputs.size() > 1) {
      ASSIGN_OR_RETURN(Axes, axesOfInput(N, &Ctx.Inputs[1]));
    }
    ASSIGN_OR_RETURN(const std::vector<bool> Mask, reduceMask(N, C, Axes, X.rank()));
    const ReduceLayout L = reduceLayout(X.Dims, Mask);
    if (Y.elementCount() != L.OutCount)
      return runError(Name.c_str(), "output ", joinInts(Y.Dims), " does not match reducing ", joinInts(X.Dims));
    const T *In = X.data<T>();
    T *Out = Y.data<T>();
    if (!Fast)
      return reference(X, Mask, L, In, Out);
    if (L.OutCount == 0) // an empty output (a zero-sized kept dim): nothing to compute
      return Status::ok();
    const size_t G = L.Dims.size();
    if (K != ReduceKind::LogSumExp && G >= 1 && L.Reduced[G - 1] && (G == 1 || (G == 2 && !L.Reduced[0]))) {
      reduceRows(Ctx.Par, L.OutCount, L.ReduceCount, In, Out); // [outer, reduced]
      return Status::ok();
    }
    if (K != ReduceKind::LogSumExp && G >= 2 && !L.Reduced[G - 1] && L.Reduced[G - 2] &&
        (G == 2 || (G == 3 && !L.Reduced[0]))) {
      const size_t Inner = static_cast<size_t>(L.Dims[G - 1]);
      reduceColumns(Ctx.Par, L.OutCount / Inner, L.ReduceCount, Inner, In, Out); // [outer, reduced, inner]
      return Status::ok();
    }
    return reference(X, Mask, L, In, Out);
  }

private:
  /// One pass over the input in order, accumulating into per-output slots.
  Status reference(const TensorView &X, const std::vector<bool> &Mask, const ReduceLayout &L, const T *In,
                   T *Out) const {
    const size_t Rank = X.rank(), NIn = X.elementCount();
    // Output strides for each input dim (0 for reduced dims).
    std::vector<size_t> OS(Rank, 0);
    size_t S = 1;
    for (size_t D = Rank; D-- > 0;)
      if (!Mask[D]) {
        OS[D] = S;
        S *= static_cast<size_t>(X.Dims[D]);
      }
    const auto outIndex = [&](size_t I) {
      size_t Rem = I, O = 0;
      for (size_t D = Rank; D-- > 0;) {
        const size_t Idx = Rem % static_cast<size_t>(X.Dims[D]);
        Rem /= static_cast<size_t>(X.Dims[D]);
        O += Idx * OS[D];
      }
      return O;
    };
    if (K == ReduceKind::LogSumExp) {
      std::vector<double> Max(L.OutCount, -std::numeric_limits<double>::infinity()), Sum(L.OutCount, 0.0);
      for (size_t I = 0; I < NIn; ++I) {
        const double V = static_cast<double>(R::load(In[I]));
        double &M = Max[outIndex(I)];
        M = V > M ? V : M;
      }
      for (size_t I = 0; I < NIn; ++I) {
        const size_t O = outIndex(I);
        if (!std::isinf(Max[O]))
          Sum[O] += std::exp(static_cast<double>(R::load(In[I])) - Max[O]);
      }
      for (size_t O = 0; O < L.OutCount; ++O)
        Out[O] = convertValue<T>(std::isinf(Max[O]) ? Max[O] : Max[O] + std::log(Sum[O]));
      return Status::ok();
    }
    std::vector<A> Acc(L.OutCount, R::init());
    for (size_t I = 0; I < NIn; ++I) {
      A &Slot = Acc[outIndex(I)];
      Slot = R::step(Slot, R::load(In[I]));
    }
    for (size_t O = 0; O < L.OutCount; ++O)
      Out[O] = R::finish(Acc[O], L.ReduceCount);
    return Status::ok();
  }

  static void reduceRows(const Parallel &Par, size_t Outer, size_t Len, const T *In, T *Out) {
    Par.forRange(Outer, std::max<size_t>(1, 16384 / std::max<size_t>(Len, 1)), [&](size_t Lo, size_t Hi) {
      for (size_t O = Lo; O < Hi; ++O) {
        const T *Row = In + O * Len;
        // Four independent accumulators: breaks the dependency chain so the loop vectorizes.
        A Acc[4] = {R::init(), R::init(), R::init(), R::init()};
        size_t J = 0;
        for (; J + 4 <= Len; J += 4)
          for (int U = 0; U < 4; ++U)
            Acc[U] = R::step(Acc[U], R::load(Row[J + U]));
        for (; J < Len; ++J)
          Acc[0] = R::step(Acc[0], R::load(Row[J]));
        Out[O] = R::finish(combine(combine(Acc[0], Acc[1]), combine(Acc[2], Acc[3])), Len);
      }
    });
  }

  static void reduceColumns(const Parallel &Par, size_t Outer, size_t Len, size_t Inner, const T *In, T *Out) {
    Par.forRange(Outer * Inner, 1024, [&](size_t Lo, size_t Hi) {
      std::vector<A> Acc;
      for (size_t B = Lo; B < Hi;) {
        const size_t O = B / Inner, J0 = B % Inner, J1 = std::min(Inner, J0 + (Hi - B));
        Acc.assign(J1 - J0, R::init());
        const T *Base = In + O * Len * Inner;
        for (size_t Rr = 0; Rr < Len; ++Rr) {
          const T *Row = Base + Rr * Inner;
          for (size_t J = J0; J < J1; ++J)
            Acc[J - J0] = R::step(Acc[J - J0], R::load(Row[J]));
        }
        for (size_t J = J0; J < J1; ++J)
          Out[O * Inner + J] = R::finish(Acc[J - J0], Len);
        B += J1 - J0;
      }
    });
  }

  /// Merges two partial accumulators (the step of every kind is associative over partials).
  static A combine(A X, A Y) {
    switch (K) {
    case ReduceKind::Prod: return X * Y;
    case ReduceKind::Max: return (Y != Y || Y > X) ? Y : X;
    case ReduceKind::Min: return (Y != Y || Y < X) ? Y : X;
    default: return X + Y;
    }
  }

  std::string Name;
  Node N;
  ReduceConfig C;
  bool Fast;
};

template <ReduceKind K> void pushReduceVariants(std::vector<KernelVariant> &, const std::string &, TypeList<>) {}
template <ReduceKind K, typename T, typename... Rest>
void pushReduceVariants(std::vector<KernelVariant> &Out, const std::string &OpName, TypeList<T, Rest...>) {
  const ElementType ET = ElementTypeOf<T>::value;
  const auto Supports = [ET](const KernelCreateInfo &I) { return inputIs(I, 0, ET); };
  for (int Fast = 0; Fast < 2; ++Fast) {
    const std::string Name = std::string(typeName<T>()) + "_" + OpName + (Fast ? "__parallel" : "__ref");
    Out.push_back({Name, Fast ? 10 : 0, Supports, [Name, Fast](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
                     ASSIGN_OR_RETURN(ReduceConfig C, reduceConfig(I.N));
                     return makeKernel<ReduceKernel<K, T>>(Name, I.N, std::move(C), Fast != 0);
                   }});
  }
  pushReduceVariants<K>(Out, OpName, TypeList<Rest...>());
}

template <ReduceKind K> Result<std::unique_ptr<Kernel>> reduceRefFor(const KernelCreateInfo &I, TypeList<>) {
  return makeError(ErrorCode::Type, I.N.describe(), ": no kernel for element type ", toString(I.Inputs[0].Type));
}
template <ReduceKind K, typename T, typename... Rest>
Result<std::unique_ptr<Kernel>> reduceRefFor(const KernelCreateInfo &I, TypeList<T, Rest...>) {
  if (I.Inputs[0].Type != ElementTypeOf<T>::value)
    return reduceRefFor<K>(I, TypeList<Rest...>());
  ASSIGN_OR_RETURN(ReduceConfig C, reduceConfig(I.N));
  return makeKernel<ReduceKernel<K, T>>("reduce__fold", I.N, std::move(C), false);
}

template <ReduceKind K, typename... Ts> OpSchema reduceSchema(const char *OpType, TypeList<Ts...> Types) {
  OpSchema S;
  S.OpType = OpType;
  S.MinInputs = 1;
  S.MaxInputs = 2;
  const std::vector<ElementType> Allowed = elementTypes(Types);
  S.Infer = [Allowed](ShapeContext &Ctx) -> Status {
    if (!reduceAxesFromInput(Ctx.N) && Ctx.Inputs.size() > 1)
      return Ctx.error(ErrorCode::Model, "opset ", Ctx.N.OpsetVersion, " ", Ctx.N.OpType,
                       " takes 'axes' as an attribute, not an input");
    return inferReduce(Ctx, Allowed, [](const KernelCreateInfo &I) { return reduceRefFor<K>(I, TypeList<Ts...>()); });
  };
  return S;
}

/// Harness cases: axes as attribute (old opset) and as input (new), keepdims, noop, each type.
/// FiniteEmpty: the reduction of an empty set is finite (0 or 1; the harness cannot compare +-inf).
template <typename... Ts>
std::vector<OpTestCase> reduceCases(bool SumStyle, bool FiniteEmpty, double Lo, double Hi, TypeList<Ts...>) {
  const int NewOpset = SumStyle ? 13 : 18, OldOpset = SumStyle ? 11 : 13;
  const auto x = [=](std::vector<int64_t> D, ElementType T = ElementType::F32) {
    const bool Int = !isFloatType(T);
    return rangeInput(std::move(D), T, Int ? std::max(Lo, -20.0) : Lo, Int ? std::min(Hi, 20.0) : Hi);
  };
  const auto axes = [](std::vector<double> V) {
    const int64_t N = static_cast<int64_t>(V.size());
    return valuesInput({N}, std::move(V), ElementType::I64, true);
  };
  const auto keep = [](int64_t K) { return std::map<std::string, AttrValue>{{"keepdims", attrInt(K)}}; };
  std::vector<OpTestCase> C{
      withOpset(testCase("last_axis", {x({4, 6, 33}), axes({-1})}), NewOpset),
      withOpset(testCase("last_axis_no_keep", {x({4, 6, 33}), axes({2})}, keep(0)), NewOpset),
      withOpset(testCase("middle_axis", {x({4, 6, 5}), axes({1})}), NewOpset),
      withOpset(testCase("first_axis", {x({6, 4, 5}), axes({0})}, keep(0)), NewOpset),
      withOpset(testCase("two_axes", {x({3, 4, 5, 2}), axes({0, 2})}), NewOpset),
      withOpset(testCase("suffix_axes", {x({3, 4, 5, 2}), axes({2, 3})}, keep(0)), NewOpset),
      withOpset(testCase("all_axes_default", {x({3, 4, 5})}), NewOpset),
      withOpset(testCase("all_axes_no_keep", {x({3, 4, 5})}, keep(0)), NewOpset),
      withOpset(testCase("empty_axes_noop", {x({3, 4}), axes({})}, {{"noop_with_empty_axes", attrInt(1)}}), NewOpset),
      withOpset(testCase("empty_axes_reduce_all", {x({3, 4}), axes({})}), NewOpset),
      withOpset(testCase("large_rows", {x({256, 768}), axes({-1})}), NewOpset),
      withOpset(testCase("large_columns", {x({64, 128, 40}), axes({1})}), NewOpset),
      withOpset(testCase("large_first", {x({300, 300}), axes({0})}), NewOpset),
      withOpset(testCase("attr_axes", {x({3, 4, 5})}, {{"axes", attrInts({1})}, {"keepdims", attrInt(0)}}), OldOpset),
      withOpset(testCase("attr_axes_all", {x({3, 4, 5})}), OldOpset),
      withOpset(testCase("attr_axes_negative", {x({3, 4, 5})}, {{"axes", attrInts({-1, 0})}}), OldOpset),
  };
  if (FiniteEmpty)
    C.push_back(withOpset(testCase("empty_set", {x({2, 0, 4}), axes({1})}), NewOpset));
  using Expand = int[];
  (void)Expand{0, (C.push_back(withOpset(testCase(std::string("type_") + typeName<Ts>(),
                                                  {x({3, 4, 5}, ElementTypeOf<Ts>::value), axes({1})}),
                                         NewOpset)),
                   0)...};
  return C;
}

template <ReduceKind K, typename... Ts>
OpKernels reduceKernels(const char *OpType, const std::string &Name, double Lo, double Hi, TypeList<Ts...> Types) {
  OpKernels Ks;
  Ks.OpType = OpType;
  pushReduceVariants<K>(Ks.Variants, Name, Types);
  const bool SumStyle = std::string(OpType) == "ReduceSum";
  const bool FiniteEmpty = K == ReduceKind::Sum || K == ReduceKind::Prod || K == ReduceKind::L1 ||
                           K == ReduceKind::L2 || K == ReduceKind::SumSquare;
  Ks.TestCases = [SumStyle, FiniteEmpty, Lo, Hi, Types] { return reduceCases(SumStyle, FiniteEmpty, Lo, Hi, Types); };
  return Ks;
}

using ReduceNumericTypes = TypeList<float, double, float16, bfloat16, int32_t, int64_t, uint32_t, uint64_t>;
using ReduceMinMaxTypes =
    TypeList<float, double, float16, bfloat16, int32_t, int64_t, uint32_t, uint64_t, int8_t, uint8_t, bool>;

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
