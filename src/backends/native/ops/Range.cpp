// Range: [start, start + delta, ...) up to limit, as a 1-D tensor of max(ceil((limit - start) /
// delta), 0) elements; f32, f64, i16, i32, i64 (and f16, bf16 of recent opsets) scalars. Folded at load for constant inputs;
// otherwise the length is a fresh symbol resolved at run time.
#include "backends/native/ops/common/Indexing.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

/// Element count for scalar views Start, Limit, Delta of type T.
template <typename T> Result<int64_t> rangeCount(const void *S, const void *L, const void *D) {
  const T Start = *static_cast<const T *>(S), Limit = *static_cast<const T *>(L), Delta = *static_cast<const T *>(D);
  if (static_cast<double>(Delta) == 0.0)
    return makeError(ErrorCode::Infer, "Range: delta is 0");
  if (std::is_integral<T>::value) {
    const int64_t Diff = static_cast<int64_t>(Limit) - static_cast<int64_t>(Start), Dl = static_cast<int64_t>(Delta);
    // Ceiling division for either sign.
    int64_t Q = Diff / Dl;
    if (Diff % Dl != 0 && ((Diff < 0) == (Dl < 0)))
      ++Q;
    return std::max<int64_t>(Q, 0);
  }
  const double N = std::ceil((static_cast<double>(Limit) - static_cast<double>(Start)) / static_cast<double>(Delta));
  return N > 0 ? static_cast<int64_t>(N) : int64_t(0);
}

Result<int64_t> rangeCountOf(ElementType T, const void *S, const void *L, const void *D) {
  switch (T) {
  case ElementType::F32: return rangeCount<float>(S, L, D);
  case ElementType::F64: return rangeCount<double>(S, L, D);
  case ElementType::I16: return rangeCount<int16_t>(S, L, D);
  case ElementType::I32: return rangeCount<int32_t>(S, L, D);
  case ElementType::I64: return rangeCount<int64_t>(S, L, D);
  case ElementType::F16: return rangeCount<float16>(S, L, D);
  case ElementType::BF16: return rangeCount<bfloat16>(S, L, D);
  default: return makeError(ErrorCode::Type, "Range: unsupported element type ", toString(T));
  }
}

Status computeRange(const Node &, const std::vector<TensorView> &In, const std::vector<TensorView> &Out,
                    const Parallel &) {
  const TensorView &Y = Out[0];
  const size_t N = Y.elementCount();
  visitNumeric(Y.Type, [&](auto Tag) {
    using T = typename decltype(Tag)::type;
    using C = typename ComputeType<T>::type;
    const C Start = static_cast<C>(*In[0].data<const T>()), Delta = static_cast<C>(*In[2].data<const T>());
    // The spec's loop: out[i] = start + i * delta.
    for (size_t I = 0; I < N; ++I)
      Y.data<T>()[I] = static_cast<T>(static_cast<C>(Start + static_cast<C>(I) * Delta));
  });
  return Status::ok();
}

OpSchema rangeSchema() {
  OpSchema S;
  S.OpType = "Range";
  S.MinInputs = S.MaxInputs = 3;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireInputType(Ctx, 0, {ElementType::F32, ElementType::F64, ElementType::I16, ElementType::I32,
                                              ElementType::I64, ElementType::F16, ElementType::BF16}));
    RETURN_IF_ERROR(requireSameType(Ctx, 0, 1));
    RETURN_IF_ERROR(requireSameType(Ctx, 0, 2));
    for (size_t I = 0; I < 3; ++I) {
      const Expr Count = Ctx.Inputs[I].Shape.getElementCount();
      if (Ctx.Inputs[I].Shape.getRank() > 1 || (Count.isConst() && Count.value() != 1))
        return Ctx.error(ErrorCode::Shape, "input ", I, " must be a scalar, got shape ", Ctx.Inputs[I].Shape.toString());
    }
    Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
    if (isConstInput(Ctx, 0) && isConstInput(Ctx, 1) && isConstInput(Ctx, 2)) {
      auto N = rangeCountOf(Ctx.Inputs[0].Type, Ctx.Inputs[0].Const->Data, Ctx.Inputs[1].Const->Data,
                            Ctx.Inputs[2].Const->Data);
      if (!N.isOk())
        return Ctx.error(ErrorCode::Model, N.status().message());
      Ctx.Outputs[0].Shape = TensorShape({Expr(static_cast<long long>(*N))});
      return foldIfConstant(Ctx, computeRange);
    }
    Ctx.Outputs[0].Shape = TensorShape({Ctx.newSymbol()});
    return Status::ok();
  };
  return S;
}

OpKernels rangeKernels() {
  OpKernels K;
  K.OpType = "Range";
  K.Variants.push_back(computeVariant("any_range__ref", 0, computeRange));
  K.TestCases = [] {
    const auto r = [](double S, double L, double D, ElementType T) {
      return std::vector<TestInput>{scalarInput(S, T), scalarInput(L, T), scalarInput(D, T)};
    };
    return std::vector<OpTestCase>{
        testCase("f32", r(1, 5, 0.5, ElementType::F32)),
        testCase("f32_negative_delta", r(10, 6, -3, ElementType::F32)),
        testCase("i32", r(10, 6, -3, ElementType::I32)),
        testCase("i64", r(0, 10, 3, ElementType::I64)),
        testCase("empty", r(5, 1, 1, ElementType::I64)),
        testCase("f64", r(-1, 1, 0.25, ElementType::F64)),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(Range, rangeSchema());
OPT_REGISTER_KERNELS(Range, rangeKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
