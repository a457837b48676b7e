// Shared by ArgMax and ArgMin: the index (int64) of the first extreme element along 'axis' (the
// last one with select_last_index=1, opset 12+), keepdims. NaN counts as the extreme, as numpy's
// argmax/argmin treat it.
#pragma once

#include "backends/native/ops/common/ElementwiseCommon.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

struct ArgConfig {
  int64_t Axis = 0;
  bool KeepDims = true, SelectLast = false;
};

inline Result<ArgConfig> argConfig(const Node &N, size_t Rank) {
  ArgConfig C;
  ASSIGN_OR_RETURN(const int64_t Axis, N.getInt("axis", 0));
  ASSIGN_OR_RETURN(C.Axis, normalizeAxis(N, "axis", Axis, static_cast<int64_t>(Rank)));
  ASSIGN_OR_RETURN(const int64_t Keep, N.getInt("keepdims", 1));
  ASSIGN_OR_RETURN(const int64_t Last, N.getInt("select_last_index", 0));
  C.KeepDims = Keep != 0, C.SelectLast = Last != 0;
  return C;
}

using ArgTypes = TypeList<float, double, float16, bfloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
                          uint32_t, uint64_t>;

template <bool IsMax, typename T> class ArgKernel : public Kernel {
  using C = ComputeT<T>;

public:
  ArgKernel(std::string Name, Node N, bool Parallel) : Name(std::move(Name)), N(std::move(N)), Par(Parallel) {}
  Status run(const KernelContext &Ctx) const override {
    const TensorView &X = Ctx.Inputs[0], &Y = Ctx.Outputs[0];
    ASSIGN_OR_RETURN(const ArgConfig Cfg, argConfig(N, X.rank()));
    const size_t A = static_cast<size_t>(Cfg.Axis);
    const size_t Outer = static_cast<size_t>(product(X.Dims, 0, A)), Len = static_cast<size_t>(X.Dims[A]),
                 Inner = static_cast<size_t>(product(X.Dims, A + 1, X.rank()));
    if (Y.elementCount() != Outer * Inner)
      return runError(Name.c_str(), "output ", joinInts(Y.Dims), " does not match input ", joinInts(X.Dims));
    if (Len == 0 && Outer * Inner != 0)
      return runError(Name.c_str(), "cannot take the arg", IsMax ? "max" : "min", " of an empty axis");
    const T *In = X.data<T>();
    int64_t *Out = Y.data<int64_t>();
    const bool Last = Cfg.SelectLast;
    const auto Body = [&](size_t Lo, size_t Hi) {
      for (size_t T0 = Lo; T0 < Hi; ++T0) {
        const size_t O = T0 / Inner, I = T0 % Inner;
        const T *P = In + O * Len * Inner + I;
        C Best = static_cast<C>(P[0]);
        size_t BestK = 0;
        for (size_t K = 1; K < Len && Best == Best; ++K) {
          const C V = static_cast<C>(P[K * Inner]);
          const bool Better = V != V || (IsMax ? (Last ? V >= Best : V > Best) : (Last ? V <= Best : V < Best));
          if (Better)
            Best = V, BestK = K;
        }
        Out[T0] = static_cast<int64_t>(BestK);
      }
    };
    if (Par)
      Ctx.Par.forRange(Outer * Inner, std::max<size_t>(1, 16384 / std::max<size_t>(Len, 1)), Body);
    else
      Body(0, Outer * Inner);
    return Status::ok();
  }

private:
  std::string Name;
  Node N;
  bool Par;
};

template <bool IsMax> Result<std::unique_ptr<Kernel>> argRefFor(const KernelCreateInfo &I, TypeList<>) {
  return makeError(ErrorCode::Type, I.N.describe(), ": no kernel for element type ", toString(I.Inputs[0].Type));
}
template <bool IsMax, typename T, typename... Rest>
Result<std::unique_ptr<Kernel>> argRefFor(const KernelCreateInfo &I, TypeList<T, Rest...>) {
  if (I.Inputs[0].Type != ElementTypeOf<T>::value)
    return argRefFor<IsMax>(I, TypeList<Rest...>());
  return makeKernel<ArgKernel<IsMax, T>>("arg__fold", I.N, false);
}

template <bool IsMax> OpSchema argSchema(const char *OpType) {
  OpSchema S;
  S.OpType = OpType;
  S.MinInputs = S.MaxInputs = 1;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireInputTypeIn(Ctx, 0, elementTypes(ArgTypes())));
    const TensorShape &In = Ctx.Inputs[0].Shape;
    if (In.getRank() == 0)
      return Ctx.error(ErrorCode::Shape, "input must have rank >= 1");
    ASSIGN_OR_RETURN(const ArgConfig C, argConfig(Ctx.N, In.getRank()));
    std::vector<Expr> Dims;
    for (size_t I = 0; I < In.getRank(); ++I)
      if (static_cast<int64_t>(I) != C.Axis)
        Dims.push_back(In[I]);
      else if (C.KeepDims)
        Dims.push_back(Expr(1));
    Ctx.Outputs[0].Type = ElementType::I64;
    Ctx.Outputs[0].Shape = TensorShape(std::move(Dims));
    return foldWithKernel(Ctx, [](const KernelCreateInfo &I) { return argRefFor<IsMax>(I, ArgTypes()); });
  };
  return S;
}

template <bool IsMax> void pushArgVariants(std::vector<KernelVariant> &, const std::string &, TypeList<>) {}
template <bool IsMax, typename T, typename... Rest>
void pushArgVariants(std::vector<KernelVariant> &Out, const std::string &Op, TypeList<T, Rest...>) {
  const ElementType ET = ElementTypeOf<T>::value;
  const auto Supports = [ET](const KernelCreateInfo &I) { return inputIs(I, 0, ET); };
  for (int Par = 0; Par < 2; ++Par) {
    const std::string Name = std::string(typeName<T>()) + "_" + Op + (Par ? "__parallel" : "__ref");
    Out.push_back({Name, Par ? 10 : 0, Supports,
                   [Name, Par](const KernelCreateInfo &I) { return makeKernel<ArgKernel<IsMax, T>>(Name, I.N, Par != 0); }});
  }
  pushArgVariants<IsMax>(Out, Op, TypeList<Rest...>());
}

template <bool IsMax> OpKernels argKernels(const char *OpType, const std::string &Name) {
  OpKernels K;
  K.OpType = OpType;
  pushArgVariants<IsMax>(K.Variants, Name, ArgTypes());
  K.TestCases = [] {
    const auto x = [](std::vector<int64_t> D, ElementType T = ElementType::F32) {
      return rangeInput(std::move(D), T, -10, 10);
    };
    const auto ties = valuesInput({3, 4}, {1, 3, 3, 0, 2, 2, 1, 2, 5, 5, 5, 5}, ElementType::F32, false);
    const auto a = [](int64_t V) { return attrInt(V); };
    return std::vector<OpTestCase>{
        testCase("default_axis0", {x({4, 5})}),
        testCase("last_axis", {x({3, 4, 5})}, {{"axis", a(-1)}}),
        testCase("middle_no_keep", {x({3, 4, 5})}, {{"axis", a(1)}, {"keepdims", a(0)}}),
        testCase("ties_first", {ties}, {{"axis", a(1)}}),
        testCase("ties_last", {ties}, {{"axis", a(1)}, {"select_last_index", a(1)}}),
        testCase("ties_axis0_last", {ties}, {{"axis", a(0)}, {"select_last_index", a(1)}}),
        testCase("large", {x({512, 300})}, {{"axis", a(1)}}),
        testCase("i64", {x({4, 5}, ElementType::I64)}, {{"axis", a(1)}}),
        testCase("i32", {x({4, 5}, ElementType::I32)}),
        testCase("u8", {rangeInput({4, 5}, ElementType::U8, 0, 255)}),
        testCase("f64", {x({4, 5}, ElementType::F64)}),
        testCase("nan", {valuesInput({2, 3}, {1, NAN, 3, 2, 1, 0}, ElementType::F32, false)}, {{"axis", a(1)}}),
    };
  };
  return K;
}

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
