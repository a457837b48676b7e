// Clip: min(max(x, lo), hi) (so lo > hi gives hi everywhere, as the spec says). Opset < 11: lo/hi
// are the float attributes 'min'/'max' (float types only); opset >= 11: optional scalar inputs
// 1 and 2 of the input's type (every numeric type from opset 12). Absent bounds do not clip.
#include "backends/native/ops/common/ElementwiseCommon.h"
#include <limits>
#include <type_traits>

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

bool legacyClip(const Node &N) { return N.OpsetVersion > 0 && N.OpsetVersion < 11; }

template <typename T> class ClipKernel : public Kernel {
  using C = ComputeT<T>;

public:
  ClipKernel(std::string Name, bool Legacy, float AttrMin, float AttrMax, bool Parallel)
      : Name(std::move(Name)), Legacy(Legacy), AttrMin(AttrMin), AttrMax(AttrMax), Par(Parallel) {}

  Status run(const KernelContext &Ctx) const override {
    const TensorView &X = Ctx.Inputs[0], &Y = Ctx.Outputs[0];
    if (X.elementCount() != Y.elementCount())
      return runError(Name.c_str(), "input and output element counts differ");
    C Lo = std::numeric_limits<C>::lowest(), Hi = std::numeric_limits<C>::max();
    bool HasLo = false, HasHi = false;
    if (Legacy) {
      Lo = static_cast<C>(AttrMin), Hi = static_cast<C>(AttrMax), HasLo = HasHi = true;
    } else {
      for (size_t I = 1; I <= 2 && I < Ctx.Inputs.size(); ++I) {
        const TensorView &B = Ctx.Inputs[I];
        if (!B.Data)
          continue;
        if (B.elementCount() != 1)
          return runError(Name.c_str(), I == 1 ? "'min'" : "'max'", " must be a scalar, got shape ", joinInts(B.Dims));
        (I == 1 ? Lo : Hi) = static_cast<C>(B.data<T>()[0]);
        (I == 1 ? HasLo : HasHi) = true;
      }
    }
    const T *In = X.data<T>();
    T *Out = Y.data<T>();
    if (std::is_same<T, C>::value) {
      // No conversion: both bounds always apply (the absent one is the type's extreme), so the
      // loop is branch-free and vectorizes; NaN passes through (comparisons with it are false).
      const C L = HasLo ? Lo : std::numeric_limits<C>::lowest(), H = HasHi ? Hi : std::numeric_limits<C>::max();
      const auto Fast = [In, Out, L, H](size_t B, size_t E) {
        const C *__restrict Src = reinterpret_cast<const C *>(In);
        C *__restrict Dst = reinterpret_cast<C *>(Out);
        for (size_t I = B; I < E; ++I) {
          C V = Src[I];
          V = V < L ? L : V;
          V = V > H ? H : V;
          Dst[I] = V;
        }
      };
      if (Par)
        Ctx.Par.forRange(X.elementCount(), 16384, Fast);
      else
        Fast(0, X.elementCount());
      return Status::ok();
    }
    const auto Body = [&](size_t B, size_t E) {
      for (size_t I = B; I < E; ++I) {
        C V = static_cast<C>(In[I]);
        if (HasLo && V < Lo)
          V = Lo;
        if (HasHi && V > Hi)
          V = Hi;
        Out[I] = static_cast<T>(V);
      }
    };
    if (Par)
      Ctx.Par.forRange(X.elementCount(), 16384, Body);
    else
      Body(0, X.elementCount());
    return Status::ok();
  }

private:
  std::string Name;
  bool Legacy;
  float AttrMin, AttrMax;
  bool Par;
};

using ClipTypes = TypeList<float, double, float16, bfloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
                           uint32_t, uint64_t>;

template <typename T> Result<std::unique_ptr<Kernel>> createClip(const std::string &Name, const KernelCreateInfo &I,
                                                                 bool Parallel) {
  ASSIGN_OR_RETURN(const float Min, I.N.getFloat("min", -std::numeric_limits<float>::max()));
  ASSIGN_OR_RETURN(const float Max, I.N.getFloat("max", std::numeric_limits<float>::max()));
  return makeKernel<ClipKernel<T>>(Name, legacyClip(I.N), Min, Max, Parallel);
}

Result<std::unique_ptr<Kernel>> clipRefFor(const KernelCreateInfo &, TypeList<>) {
  return makeError(ErrorCode::Type, "Clip: unsupported element type");
}
template <typename T, typename... Rest>
Result<std::unique_ptr<Kernel>> clipRefFor(const KernelCreateInfo &I, TypeList<T, Rest...>) {
  if (I.Inputs[0].Type != ElementTypeOf<T>::value)
    return clipRefFor(I, TypeList<Rest...>());
  return createClip<T>("clip__fold", I, false);
}

OpSchema clipSchema() {
  OpSchema S;
  S.OpType = "Clip";
  S.MinInputs = 1;
  S.MaxInputs = 3;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    if (legacyClip(Ctx.N)) {
      RETURN_IF_ERROR(requireInputTypeIn(Ctx, 0, {ElementType::F32, ElementType::F64, ElementType::F16}));
      if (Ctx.Inputs.size() > 1)
        return Ctx.error(ErrorCode::Model, "opset ", Ctx.N.OpsetVersion,
                         " Clip takes min/max as attributes, not inputs (got ", Ctx.Inputs.size(), " inputs)");
      ASSIGN_OR_RETURN(const float Min, Ctx.N.getFloat("min", 0));
      ASSIGN_OR_RETURN(const float Max, Ctx.N.getFloat("max", 0));
      (void)Min, (void)Max;
    } else {
      RETURN_IF_ERROR(requireInputTypeIn(Ctx, 0, elementTypes(ClipTypes())));
      if (Ctx.N.hasAttr("min") || Ctx.N.hasAttr("max"))
        return Ctx.error(ErrorCode::Model, "attributes 'min'/'max' were replaced by inputs in opset 11 (node opset ",
                         Ctx.N.OpsetVersion, ")");
      for (size_t I = 1; I < Ctx.Inputs.size(); ++I) {
        if (!Ctx.Inputs[I].Present)
          continue;
        RETURN_IF_ERROR(requireSameType(Ctx, 0, I));
        const Expr Count = Ctx.Inputs[I].Shape.getElementCount();
        if (Count.isConst() && Count.value() != 1)
          return Ctx.error(ErrorCode::Shape, "input ", I, I == 1 ? " ('min')" : " ('max')",
                           " must be a scalar, got shape ", Ctx.Inputs[I].Shape.toString());
      }
    }
    Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
    Ctx.Outputs[0].Shape = Ctx.Inputs[0].Shape;
    return foldWithKernel(Ctx, [](const KernelCreateInfo &I) { return clipRefFor(I, ClipTypes()); });
  };
  return S;
}

template <typename X> void pushClipVariants(std::vector<KernelVariant> &, TypeList<>) {}
template <typename X, typename T, typename... Rest>
void pushClipVariants(std::vector<KernelVariant> &Out, TypeList<T, Rest...>) {
  const ElementType ET = ElementTypeOf<T>::value;
  const auto Supports = [ET](const KernelCreateInfo &I) { return inputIs(I, 0, ET); };
  for (int Par = 0; Par < 2; ++Par) {
    const std::string Name = std::string(typeName<T>()) + "_clip" + (Par ? "__parallel" : "__ref");
    Out.push_back({Name, Par ? 10 : 0, Supports,
                   [Name, Par](const KernelCreateInfo &I) { return createClip<T>(Name, I, Par != 0); }});
  }
  pushClipVariants<X>(Out, TypeList<Rest...>());
}

OpKernels clipKernels() {
  OpKernels K;
  K.OpType = "Clip";
  pushClipVariants<void>(K.Variants, ClipTypes());
  K.TestCases = [] {
    const auto x = [](std::vector<int64_t> D, ElementType T = ElementType::F32) {
      return rangeInput(std::move(D), T, -10, 10);
    };
    const auto s = [](double V, ElementType T = ElementType::F32) { return valuesInput({}, {V}, T, true); };
    const auto dyn = [](double V) { return valuesInput({}, {V}, ElementType::F32, false); };
    return std::vector<OpTestCase>{
        testCase("both", {x({3, 4, 5}), s(-2), s(3)}),
        testCase("min_only", {x({3, 4}), s(-1)}),
        testCase("max_only", {x({3, 4}), omittedInput(), s(1)}),
        testCase("none", {x({3, 4})}),
        testCase("min_above_max", {x({3, 4}), s(2), s(-1)}),
        testCase("runtime_bounds", {x({3, 4}), dyn(-0.5), dyn(0.5)}),
        testCase("large", {x({4, 50000}), s(-6), s(6)}),
        testCase("i64", {x({3, 4}, ElementType::I64), s(-3, ElementType::I64), s(5, ElementType::I64)}),
        testCase("i32", {x({7}, ElementType::I32), s(-3, ElementType::I32), s(5, ElementType::I32)}),
        testCase("u8", {rangeInput({7}, ElementType::U8, 0, 255), s(10, ElementType::U8), s(100, ElementType::U8)}),
        testCase("f64", {x({7}, ElementType::F64), s(-3, ElementType::F64), s(5, ElementType::F64)}),
        withOpset(testCase("opset6_attrs", {x({3, 4})}, {{"min", attrFloat(-1.5f)}, {"max", attrFloat(2.5f)}}), 6),
        withOpset(testCase("opset6_default", {x({3, 4})}), 6),
        testCase("empty", {x({0, 2}), s(-1), s(1)}),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(Clip, clipSchema());
OPT_REGISTER_KERNELS(Clip, clipKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
