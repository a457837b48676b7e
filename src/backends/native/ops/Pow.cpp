// Pow: base ^ exponent with numpy broadcasting. The base is f16/bf16/f32/f64/i32/i64 (opset 12+
// allows integer bases); the exponent may be any numeric type (opset 12+; before, the same type as
// the base). Integer bases with non-negative integer exponents are computed exactly (wrapping).
#include "backends/native/ops/common/ElementwiseBinary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

using PowBaseTypes = TypeList<float, double, float16, bfloat16, int32_t, int64_t>;
const std::vector<ElementType> &powExponentTypes() {
  static const std::vector<ElementType> Types = {
      ElementType::F32, ElementType::F64, ElementType::F16, ElementType::BF16, ElementType::I8, ElementType::I16,
      ElementType::I32, ElementType::I64, ElementType::U8,  ElementType::U16,  ElementType::U32, ElementType::U64};
  return Types;
}

/// Reads element I of a tensor of type T as double (the exponent of any numeric type).
template <typename T> double loadAs(const void *P, int64_t I) {
  return static_cast<double>(static_cast<ComputeT<T>>(static_cast<const T *>(P)[I]));
}
using LoadFn = double (*)(const void *, int64_t);
LoadFn loaderFor(ElementType T) {
  switch (T) {
  case ElementType::F32: return loadAs<float>;
  case ElementType::F64: return loadAs<double>;
  case ElementType::F16: return loadAs<float16>;
  case ElementType::BF16: return loadAs<bfloat16>;
  case ElementType::I8: return loadAs<int8_t>;
  case ElementType::I16: return loadAs<int16_t>;
  case ElementType::I32: return loadAs<int32_t>;
  case ElementType::I64: return loadAs<int64_t>;
  case ElementType::U8: return loadAs<uint8_t>;
  case ElementType::U16: return loadAs<uint16_t>;
  case ElementType::U32: return loadAs<uint32_t>;
  case ElementType::U64: return loadAs<uint64_t>;
  default: return nullptr;
  }
}

template <typename T> typename std::enable_if<std::is_integral<T>::value, T>::type powValue(T A, double E) {
  if (E >= 0 && E == std::floor(E) && E < 1e19) { // exact, wrapping square-and-multiply
    using U = typename std::make_unsigned<T>::type;
    U R = 1, B = static_cast<U>(A);
    for (uint64_t N = static_cast<uint64_t>(E); N; N >>= 1) {
      if (N & 1)
        R = static_cast<U>(R * B);
      B = static_cast<U>(B * B);
    }
    return static_cast<T>(R);
  }
  return convertValue<T>(std::pow(static_cast<double>(A), E));
}
template <typename T> typename std::enable_if<!std::is_integral<T>::value, T>::type powValue(T A, double E) {
  return static_cast<T>(std::pow(static_cast<double>(A), E));
}

template <typename T> class PowKernel : public Kernel {
  using C = ComputeT<T>;

public:
  PowKernel(std::string Name, bool Fast) : Name(std::move(Name)), Fast(Fast) {}
  Status run(const KernelContext &Ctx) const override {
    const TensorView &A = Ctx.Inputs[0], &B = Ctx.Inputs[1], &Y = Ctx.Outputs[0];
    BroadcastPlan<2> Plan;
    RETURN_IF_ERROR(makeBroadcastPlan<2>(Name.c_str(), {&A, &B}, Y, Plan));
    const LoadFn Load = loaderFor(B.Type);
    if (!Load)
      return runError(Name.c_str(), "unsupported exponent type ", toString(B.Type));
    const T *PA = A.data<T>();
    T *PY = Y.data<T>();
    if (!Fast) {
      forEachBroadcastElement<2>(Plan, [&](size_t I, const std::array<int64_t, 2> &Off) {
        PY[I] = static_cast<T>(powValue<C>(static_cast<C>(PA[Off[0]]), Load(B.Data, Off[1])));
      });
      return Status::ok();
    }
    const bool SameF32 = std::is_same<T, float>::value && B.Type == ElementType::F32;
    const float *PBf = B.data<float>();
    forEachBroadcastRow<2>(Plan, Ctx.Par, 4096,
                           [&](size_t Base, const std::array<int64_t, 2> &Off, const std::array<int64_t, 2> &Inc,
                               int64_t Inner) {
                             T *RY = PY + Base;
                             const T *RA = PA + Off[0];
                             if (SameF32) {
                               const float *RB = PBf + Off[1];
                               if (Inc[1] == 0 && RB[0] == 2.0f) { // the common x^2
                                 for (int64_t J = 0; J < Inner; ++J) {
                                   const C V = static_cast<C>(RA[J * Inc[0]]);
                                   RY[J] = static_cast<T>(static_cast<double>(V) * V);
                                 }
                                 return;
                               }
                               for (int64_t J = 0; J < Inner; ++J)
                                 RY[J] = static_cast<T>(std::pow(static_cast<double>(static_cast<C>(RA[J * Inc[0]])),
                                                                 static_cast<double>(RB[J * Inc[1]])));
                               return;
                             }
                             for (int64_t J = 0; J < Inner; ++J)
                               RY[J] = static_cast<T>(
                                   powValue<C>(static_cast<C>(RA[J * Inc[0]]), Load(B.Data, Off[1] + J * Inc[1])));
                           });
    return Status::ok();
  }

private:
  std::string Name;
  bool Fast;
};

template <typename T> Result<std::unique_ptr<Kernel>> powRefFor(const KernelCreateInfo &I, TypeList<>) {
  return makeError(ErrorCode::Type, I.N.describe(), ": no kernel for element type ", toString(I.Inputs[0].Type));
}
template <typename X, typename T, typename... Rest>
Result<std::unique_ptr<Kernel>> powRefFor(const KernelCreateInfo &I, TypeList<T, Rest...>) {
  if (I.Inputs[0].Type != ElementTypeOf<T>::value)
    return powRefFor<X>(I, TypeList<Rest...>());
  return makeKernel<PowKernel<T>>("pow__fold", false);
}

OpSchema powSchema() {
  OpSchema S;
  S.OpType = "Pow";
  S.MinInputs = S.MaxInputs = 2;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireInputTypeIn(Ctx, 0, elementTypes(PowBaseTypes()), "X"));
    if (Ctx.N.OpsetVersion > 0 && Ctx.N.OpsetVersion < 12) {
      RETURN_IF_ERROR(requireInputTypeIn(Ctx, 0, {ElementType::F32, ElementType::F64, ElementType::F16}, "X"));
      RETURN_IF_ERROR(requireSameType(Ctx, 0, 1));
    }
    RETURN_IF_ERROR(requireInputTypeIn(Ctx, 1, powExponentTypes(), "Y"));
    ASSIGN_OR_RETURN(Ctx.Outputs[0].Shape, broadcastAll(Ctx, {0, 1}));
    Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
    return foldWithKernel(Ctx, [](const KernelCreateInfo &I) { return powRefFor<void>(I, PowBaseTypes()); });
  };
  return S;
}

template <typename X> void pushPowVariants(std::vector<KernelVariant> &, TypeList<>) {}
template <typename X, typename T, typename... Rest> void pushPowVariants(std::vector<KernelVariant> &Out, TypeList<T, Rest...>) {
  const ElementType ET = ElementTypeOf<T>::value;
  const auto Supports = [ET](const KernelCreateInfo &I) { return inputIs(I, 0, ET); };
  for (int Fast = 0; Fast < 2; ++Fast) {
    const std::string Name = std::string(typeName<T>()) + "_pow" + (Fast ? "__fast" : "__ref");
    Out.push_back({Name, Fast ? 10 : 0, Supports,
                   [Name, Fast](const KernelCreateInfo &) { return makeKernel<PowKernel<T>>(Name, Fast != 0); }});
  }
  pushPowVariants<X>(Out, TypeList<Rest...>());
}

OpKernels powKernels() {
  OpKernels K;
  K.OpType = "Pow";
  pushPowVariants<void>(K.Variants, PowBaseTypes());
  K.TestCases = [] {
    const auto f = [](std::vector<int64_t> D, double Lo, double Hi, ElementType T = ElementType::F32) {
      return rangeInput(std::move(D), T, Lo, Hi);
    };
    return std::vector<OpTestCase>{
        testCase("f32", {f({2, 3, 4}, 0.1, 3), f({2, 3, 4}, -2, 2)}),
        testCase("f32_square", {f({3, 50}, -3, 3), valuesInput({}, {2}, ElementType::F32, true)}),
        testCase("f32_broadcast", {f({2, 3, 4}, 0.1, 3), f({4}, -2, 2)}),
        testCase("f32_large", {f({64, 600}, 0.1, 3), f({600}, -2, 2)}),
        testCase("negative_base_integer_exponent", {f({6}, -3, -0.5), valuesInput({6}, {1, 2, 3, 0, -1, -2}, ElementType::F32, false)}),
        testCase("f64", {f({5}, 0.1, 3, ElementType::F64), f({5}, -2, 2, ElementType::F64)}),
        testCase("f32_i64_exponent", {f({2, 3}, -3, 3), f({3}, 0, 4, ElementType::I64)}),
        testCase("f32_i32_exponent", {f({2, 3}, -3, 3), f({2, 3}, 0, 4, ElementType::I32)}),
        testCase("i64", {f({2, 3}, -9, 9, ElementType::I64), f({2, 3}, 0, 5, ElementType::I64)}),
        testCase("i32_f32_exponent", {f({2, 3}, 0, 9, ElementType::I32), f({2, 3}, 0, 3, ElementType::F32)}),
        testCase("i32_u8_exponent", {f({2, 3}, -9, 9, ElementType::I32), f({2, 3}, 0, 5, ElementType::U8)}),
        testCase("empty", {f({0, 3}, 0.1, 3), f({3}, -2, 2)}),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(Pow, powSchema());
OPT_REGISTER_KERNELS(Pow, powKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
