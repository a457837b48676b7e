// CumSum and CumProd: running sum / product along the axis given by input 1 (an i32/i64 scalar,
// read at run time); exclusive=1 starts from the identity, reverse=1 runs from the end. f32, f64,
// f16, bf16, i32, i64, u32, u64 (integers wrap, as ONNX Runtime's do).
#pragma once

#include "backends/native/ops/common/ElementwiseCommon.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

using CumulativeTypes = TypeList<float, double, float16, bfloat16, int32_t, int64_t, uint32_t, uint64_t>;

inline Result<int64_t> cumulativeAxis(const Node &N, const TensorView &A, size_t Rank) {
  if (A.elementCount() != 1)
    return makeError(ErrorCode::Shape, N.describe(), ": input 1 ('axis') must be a scalar, got shape ",
                     joinInts(A.Dims));
  int64_t Axis = 0;
  if (A.Type == ElementType::I32)
    Axis = A.data<int32_t>()[0];
  else if (A.Type == ElementType::I64)
    Axis = A.data<int64_t>()[0];
  else
    return makeError(ErrorCode::Type, N.describe(), ": input 1 ('axis') must be i32 or i64, got ", toString(A.Type));
  return normalizeAxis(N, "axis", Axis, static_cast<int64_t>(Rank));
}

/// Prod: running product (identity 1) instead of running sum (identity 0).
template <typename T, bool Prod> class CumulativeKernel : public Kernel {
  using Acc = typename std::conditional<IsFloatLike<T>::value, ComputeT<T>,
                                        typename std::make_unsigned<typename std::conditional<
                                            IsFloatLike<T>::value, int, T>::type>::type>::type;

public:
  CumulativeKernel(std::string Name, Node N, bool Exclusive, bool Reverse, bool Parallel)
      : Name(std::move(Name)), N(std::move(N)), Exclusive(Exclusive), Reverse(Reverse), Par(Parallel) {}
  Status run(const KernelContext &Ctx) const override {
    const TensorView &X = Ctx.Inputs[0], &Y = Ctx.Outputs[0];
    if (X.rank() == 0)
      return runError(Name.c_str(), "input must have rank >= 1");
    ASSIGN_OR_RETURN(const int64_t Axis, cumulativeAxis(N, Ctx.Inputs[1], X.rank()));
    const size_t A = static_cast<size_t>(Axis);
    const size_t Outer = static_cast<size_t>(product(X.Dims, 0, A)), Len = static_cast<size_t>(X.Dims[A]),
                 Inner = static_cast<size_t>(product(X.Dims, A + 1, X.rank()));
    if (Y.elementCount() != X.elementCount())
      return runError(Name.c_str(), "input and output element counts differ");
    const T *In = X.data<T>();
    T *Out = Y.data<T>();
    // Lines along the axis; each is independent. Inner lines of one outer block run together so
    // memory is walked contiguously.
    const auto Body = [&](size_t Lo, size_t Hi) {
      std::vector<Acc> Sum;
      for (size_t O = Lo; O < Hi; ++O) {
        Sum.assign(Inner, Acc(Prod ? 1 : 0));
        const T *PI = In + O * Len * Inner;
        T *PO = Out + O * Len * Inner;
        for (size_t S = 0; S < Len; ++S) {
          const size_t K = Reverse ? Len - 1 - S : S;
          for (size_t I = 0; I < Inner; ++I) {
            const Acc V = static_cast<Acc>(static_cast<ComputeT<T>>(PI[K * Inner + I]));
            if (Exclusive) {
              PO[K * Inner + I] = static_cast<T>(static_cast<ComputeT<T>>(Sum[I]));
              Sum[I] = static_cast<Acc>(Prod ? Sum[I] * V : Sum[I] + V);
            } else {
              Sum[I] = static_cast<Acc>(Prod ? Sum[I] * V : Sum[I] + V);
              PO[K * Inner + I] = static_cast<T>(static_cast<ComputeT<T>>(Sum[I]));
            }
          }
        }
      }
    };
    if (Par)
      Ctx.Par.forRange(Outer, std::max<size_t>(1, 16384 / std::max<size_t>(1, Len * Inner)), Body);
    else
      Body(0, Outer);
    return Status::ok();
  }

private:
  std::string Name;
  Node N;
  bool Exclusive, Reverse, Par;
};

template <typename T, bool Prod>
Result<std::unique_ptr<Kernel>> createCumulative(const std::string &Name, const KernelCreateInfo &I, bool Par) {
  ASSIGN_OR_RETURN(const int64_t Ex, I.N.getInt("exclusive", 0));
  ASSIGN_OR_RETURN(const int64_t Rev, I.N.getInt("reverse", 0));
  return makeKernel<CumulativeKernel<T, Prod>>(Name, I.N, Ex != 0, Rev != 0, Par);
}

template <bool Prod> Result<std::unique_ptr<Kernel>> cumulativeRefFor(const KernelCreateInfo &I, TypeList<>) {
  return makeError(ErrorCode::Type, I.N.describe(), ": no kernel for element type ", toString(I.Inputs[0].Type));
}
template <bool Prod, typename T, typename... Rest>
Result<std::unique_ptr<Kernel>> cumulativeRefFor(const KernelCreateInfo &I, TypeList<T, Rest...>) {
  if (I.Inputs[0].Type != ElementTypeOf<T>::value)
    return cumulativeRefFor<Prod>(I, TypeList<Rest...>());
  return createCumulative<T, Prod>(Prod ? "cumprod__fold" : "cumsum__fold", I, false);
}

template <bool Prod> OpSchema cumulativeSchema() {
  OpSchema S;
  S.OpType = Prod ? "CumProd" : "CumSum";
  S.MinInputs = S.MaxInputs = 2;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireInputTypeIn(Ctx, 0, elementTypes(CumulativeTypes())));
    RETURN_IF_ERROR(requireInputTypeIn(Ctx, 1, {ElementType::I32, ElementType::I64}, "axis"));
    const TensorShape &In = Ctx.Inputs[0].Shape;
    if (In.getRank() == 0)
      return Ctx.error(ErrorCode::Shape, "input 0 must have rank >= 1");
    const Expr AxisCount = Ctx.Inputs[1].Shape.getElementCount();
    if (Ctx.Inputs[1].Shape.getRank() > 1 || (AxisCount.isConst() && AxisCount.value() != 1))
      return Ctx.error(ErrorCode::Shape, "input 1 ('axis') must be a scalar, got shape ",
                       Ctx.Inputs[1].Shape.toString());
    for (const char *Attr : {"exclusive", "reverse"}) {
      ASSIGN_OR_RETURN(const int64_t V, Ctx.N.getInt(Attr, 0));
      if (V != 0 && V != 1)
        return Ctx.error(ErrorCode::Model, "attribute '", Attr, "' must be 0 or 1, got ", V);
    }
    if (Ctx.Inputs[1].Const) {
      TensorView A;
      A.Type = Ctx.Inputs[1].Type;
      A.Dims = Ctx.Inputs[1].Const->Dims;
      A.Data = Ctx.Inputs[1].Const->mutableData();
      RETURN_IF_ERROR(cumulativeAxis(Ctx.N, A, In.getRank()).status());
    }
    Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
    Ctx.Outputs[0].Shape = In;
    return foldWithKernel(Ctx, [](const KernelCreateInfo &I) { return cumulativeRefFor<Prod>(I, CumulativeTypes()); });
  };
  return S;
}

template <bool Prod> void pushCumulativeVariants(std::vector<KernelVariant> &, TypeList<>) {}
template <bool Prod, typename T, typename... Rest>
void pushCumulativeVariants(std::vector<KernelVariant> &Out, TypeList<T, Rest...>) {
  const ElementType ET = ElementTypeOf<T>::value;
  const auto Supports = [ET](const KernelCreateInfo &I) { return inputIs(I, 0, ET); };
  for (int Par = 0; Par < 2; ++Par) {
    const std::string Name = std::string(typeName<T>()) + (Prod ? "_cumprod" : "_cumsum") + (Par ? "__parallel" : "__ref");
    Out.push_back({Name, Par ? 10 : 0, Supports,
                   [Name, Par](const KernelCreateInfo &I) { return createCumulative<T, Prod>(Name, I, Par != 0); }});
  }
  pushCumulativeVariants<Prod>(Out, TypeList<Rest...>());
}

/// Kernels and harness cases of CumSum (Prod = false) or CumProd (Prod = true, first opset Opset).
template <bool Prod> OpKernels cumulativeKernels(int Opset) {
  OpKernels K;
  K.OpType = Prod ? "CumProd" : "CumSum";
  pushCumulativeVariants<Prod>(K.Variants, CumulativeTypes());
  K.TestCases = [Opset] {
    // Products of long lines must stay finite and exact enough: values near +-1 for them.
    const auto x = [](std::vector<int64_t> D, ElementType T = ElementType::F32) {
      return Prod && T != ElementType::I32 && T != ElementType::I64 ? rangeInput(std::move(D), T, -1.05, 1.05)
                                                                    : rangeInput(std::move(D), T, Prod ? -2 : -10, Prod ? 2 : 10);
    };
    const auto axis = [](double A, ElementType T = ElementType::I64) { return valuesInput({}, {A}, T, true); };
    const auto flag = [](const char *F) { return std::map<std::string, AttrValue>{{F, attrInt(1)}}; };
    std::vector<OpTestCase> Cases{
        testCase("1d", {x({7}), axis(0)}),
        testCase("axis1", {x({3, 4, 5}), axis(1)}),
        testCase("last_axis_i32", {x({3, 4, 5}), axis(-1, ElementType::I32)}),
        testCase("exclusive", {x({3, 6}), axis(1)}, flag("exclusive")),
        testCase("reverse", {x({3, 6}), axis(1)}, flag("reverse")),
        testCase("exclusive_reverse", {x({3, 6}), axis(0)},
                 {{"exclusive", attrInt(1)}, {"reverse", attrInt(1)}}),
        testCase("runtime_axis", {x({4, 5}), valuesInput({1}, {0}, ElementType::I64, false)}),
        testCase("large", {x({64, 1024}), axis(1)}),
        testCase("i64", {x({4, 5}, ElementType::I64), axis(1)}),
        testCase("i32", {x({4, 5}, ElementType::I32), axis(0)}),
        testCase("f64", {x({4, 5}, ElementType::F64), axis(1)}),
        testCase("empty", {x({0, 5}), axis(1)}),
    };
    for (OpTestCase &C : Cases)
      C.OpsetVersion = Opset;
    return Cases;
  };
  return K;
}

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
