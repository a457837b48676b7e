// Shared implementation of the broadcasting binary ops with one element type T for both inputs
// (Add, Sub, Mul, Div, Mod, comparisons, logical and bitwise ops, BitShift, PRelu) and of the
// variadic ones (Max, Min, Sum, Mean): schema (types, attributes, broadcast, folding of small
// constants), a reference kernel (per-element index decoding) and a fast kernel (coalesced rows
// split over the pool) per type, and generic harness cases. An op supplies
//   template <typename C> static R apply(C A, C B, const BinaryParams &P)
// with C the compute type (float for f16/bf16) and R either C or bool (comparisons).
#pragma once

#include <functional>
#include <tuple>

#include "backends/native/ops/common/ElementwiseCommon.h"
#include "backends/native/ops/common/SimdDispatch.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

struct BinaryParams {
  int64_t Mode = 0;
};

/// Integer arithmetic wraps (through an unsigned type at least as wide as `unsigned`, so small
/// types do not promote to signed int and overflow) instead of being undefined on overflow.
template <typename T, bool = std::is_integral<T>::value> struct WrapTypeOf { using type = T; };
template <typename T> struct WrapTypeOf<T, true> {
  using type = typename std::conditional<(sizeof(T) < sizeof(unsigned)), unsigned,
                                         typename std::make_unsigned<T>::type>::type;
};
template <typename T> using WrapType = typename WrapTypeOf<T>::type;
using BinaryParamsFn = std::function<Result<BinaryParams>(const Node &)>;

template <typename Op, typename T> struct BinaryTraits {
  using C = ComputeT<T>;
  using R = decltype(Op::apply(C(), C(), BinaryParams()));
  using Out = typename std::conditional<std::is_same<R, bool>::value, bool, T>::type;
};

struct BinaryDesc {
  std::string OpType;
  std::string Name;
  BinaryParamsFn Params;
  bool ZeroDivisorCheck = false; ///< integer B == 0 is an error (Mod)
  bool Unidirectional = false;   ///< B broadcasts to A's shape, which is the output's (PRelu)
  double Low = -3, High = 3, IntLow = -100, IntHigh = 100;
  double Tolerance = 1e-4;
  std::function<std::vector<OpTestCase>()> ExtraCases;
  std::map<std::string, AttrValue> DefaultAttrs; ///< attributes of the generic harness cases
  int DefaultOpset = 0;                           ///< opset of the generic harness cases (0: default)
  std::function<Status(const ShapeContext &)> Validate; ///< extra schema checks (type/attribute pairs)
};

inline Result<BinaryParams> binaryParams(const BinaryDesc &D, const Node &N) {
  if (!D.Params)
    return BinaryParams();
  return D.Params(N);
}

template <typename T> Status checkNoZero(const TensorView &B) {
  if (std::is_integral<T>::value) {
    const T *P = B.data<T>();
    for (size_t I = 0, N = B.elementCount(); I < N; ++I)
      if (P[I] == T(0))
        return makeError(ErrorCode::Infer, "integer division by zero");
  }
  return Status::ok();
}

template <typename Op, typename T> class BinaryKernel : public Kernel {
  using Tr = BinaryTraits<Op, T>;
  using C = typename Tr::C;
  using Out = typename Tr::Out;
  using RowFn = void (*)(const T *, const T *, Out *, int64_t, int64_t, int64_t, const BinaryParams &);

  /// One output row of Inner elements; IncA / IncB are the inputs' steps along it (0: broadcast).
  static void binaryRow(const T *RA, const T *RB, Out *RY, int64_t IncA, int64_t IncB, int64_t Inner,
                        const BinaryParams &Prm) {
    if (IncA == 1 && IncB == 1) {
      for (int64_t J = 0; J < Inner; ++J)
        RY[J] = static_cast<Out>(Op::apply(static_cast<C>(RA[J]), static_cast<C>(RB[J]), Prm));
    } else if (IncA == 1 && IncB == 0) {
      const C S = static_cast<C>(RB[0]);
      for (int64_t J = 0; J < Inner; ++J)
        RY[J] = static_cast<Out>(Op::apply(static_cast<C>(RA[J]), S, Prm));
    } else if (IncA == 0 && IncB == 1) {
      const C S = static_cast<C>(RA[0]);
      for (int64_t J = 0; J < Inner; ++J)
        RY[J] = static_cast<Out>(Op::apply(S, static_cast<C>(RB[J]), Prm));
    } else {
      for (int64_t J = 0; J < Inner; ++J)
        RY[J] = static_cast<Out>(Op::apply(static_cast<C>(RA[J * IncA]), static_cast<C>(RB[J * IncB]), Prm));
    }
  }
  OPT_TARGET_AVX512 static void binaryRowAvx512(const T *RA, const T *RB, Out *RY, int64_t IncA, int64_t IncB,
                                                int64_t Inner, const BinaryParams &Prm) {
    binaryRow(RA, RB, RY, IncA, IncB, Inner, Prm);
  }
  OPT_TARGET_AVX2 static void binaryRowAvx2(const T *RA, const T *RB, Out *RY, int64_t IncA, int64_t IncB,
                                            int64_t Inner, const BinaryParams &Prm) {
    binaryRow(RA, RB, RY, IncA, IncB, Inner, Prm);
  }

public:
  BinaryKernel(std::string Name, BinaryParams P, bool Fast, bool ZeroCheck)
      : Name(std::move(Name)), P(P), Fast(Fast), ZeroCheck(ZeroCheck) {}

  Status run(const KernelContext &Ctx) const override {
    const TensorView &A = Ctx.Inputs[0], &B = Ctx.Inputs[1], &Y = Ctx.Outputs[0];
    BroadcastPlan<2> Plan;
    RETURN_IF_ERROR(makeBroadcastPlan<2>(Name.c_str(), {&A, &B}, Y, Plan));
    if (ZeroCheck)
      RETURN_IF_ERROR(checkNoZero<T>(B));
    const T *PA = A.data<T>(), *PB = B.data<T>();
    Out *PY = Y.data<Out>();
    const BinaryParams Prm = P;
    if (!Fast) {
      forEachBroadcastElement<2>(Plan, [&](size_t I, const std::array<int64_t, 2> &Off) {
        PY[I] = static_cast<Out>(Op::apply(static_cast<C>(PA[Off[0]]), static_cast<C>(PB[Off[1]]), Prm));
      });
      return Status::ok();
    }
    // float rows take the AVX-512 or AVX2 + FMA copy of the row loop where the CPU has it
    // (SimdDispatch.h).
    const bool F32 = std::is_same<T, float>::value;
    const RowFn Row = F32 && simdAvx512() ? binaryRowAvx512 : F32 && simdAvx2() ? binaryRowAvx2 : binaryRow;
    // Chunks of at least 128K elements: a memory-bound op under that finishes in about the time
    // of a fan-out (MobileNetV2's residual Adds, 8K-75K elements, measured slower on 2 threads
    // than on 1 with 16K chunks: 26.5 vs 22.5 us for 75K).
    forEachBroadcastRow<2>(Plan, Ctx.Par, size_t{1} << 17,
                           [&](size_t Base, const std::array<int64_t, 2> &Off, const std::array<int64_t, 2> &Inc,
                               int64_t Inner) { Row(PA + Off[0], PB + Off[1], PY + Base, Inc[0], Inc[1], Inner, Prm); });
    return Status::ok();
  }

private:
  std::string Name;
  BinaryParams P;
  bool Fast, ZeroCheck;
};

template <typename Op> void pushBinaryVariants(std::vector<KernelVariant> &, const BinaryDesc &, TypeList<>) {}
template <typename Op, typename T, typename... Rest>
void pushBinaryVariants(std::vector<KernelVariant> &Out, const BinaryDesc &D, TypeList<T, Rest...>) {
  const ElementType ET = ElementTypeOf<T>::value;
  const auto Supports = [ET](const KernelCreateInfo &I) { return inputIs(I, 0, ET) && inputIs(I, 1, ET); };
  const std::string Base = std::string(typeName<T>()) + "_" + D.Name;
  for (int Fast = 0; Fast < 2; ++Fast) {
    const std::string Name = Base + (Fast ? "__fast" : "__ref");
    const BinaryDesc Desc = D;
    Out.push_back({Name, Fast ? 10 : 0, Supports,
                   [Name, Desc, Fast](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
                     ASSIGN_OR_RETURN(const BinaryParams P, binaryParams(Desc, I.N));
                     return makeKernel<BinaryKernel<Op, T>>(Name, P, Fast != 0, Desc.ZeroDivisorCheck);
                   }});
  }
  pushBinaryVariants<Op>(Out, D, TypeList<Rest...>());
}

template <typename Op>
Result<std::unique_ptr<Kernel>> binaryRefFor(const BinaryDesc &, const KernelCreateInfo &I, TypeList<>) {
  return makeError(ErrorCode::Type, I.N.describe(), ": no kernel for element type ", toString(I.Inputs[0].Type));
}
template <typename Op, typename T, typename... Rest>
Result<std::unique_ptr<Kernel>> binaryRefFor(const BinaryDesc &D, const KernelCreateInfo &I, TypeList<T, Rest...>) {
  if (I.Inputs[0].Type != ElementTypeOf<T>::value)
    return binaryRefFor<Op>(D, I, TypeList<Rest...>());
  ASSIGN_OR_RETURN(const BinaryParams P, binaryParams(D, I.N));
  return makeKernel<BinaryKernel<Op, T>>(D.Name + "__fold", P, false, D.ZeroDivisorCheck);
}

template <typename Op, typename... Ts> OpSchema binarySchema(const BinaryDesc &D, TypeList<Ts...> Types) {
  OpSchema S;
  S.OpType = D.OpType;
  S.MinInputs = S.MaxInputs = 2;
  const std::vector<ElementType> Allowed = elementTypes(Types);
  S.Infer = [D, Allowed](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireInputTypeIn(Ctx, 0, Allowed));
    RETURN_IF_ERROR(requireSameType(Ctx, 0, 1));
    ASSIGN_OR_RETURN(const BinaryParams P, binaryParams(D, Ctx.N));
    (void)P;
    if (D.Validate)
      RETURN_IF_ERROR(D.Validate(Ctx));
    if (D.Unidirectional) {
      auto Shape = broadcastShapes(Ctx.Inputs[0].Shape, Ctx.Inputs[1].Shape);
      if (!Shape.isOk() || !Shape->isCompatible(Ctx.Inputs[0].Shape))
        return Ctx.error(ErrorCode::Shape, "input 1 shape ", Ctx.Inputs[1].Shape.toString(),
                         " is not unidirectionally broadcastable to input 0 shape ", Ctx.Inputs[0].Shape.toString());
      Ctx.Outputs[0].Shape = Ctx.Inputs[0].Shape;
    } else {
      ASSIGN_OR_RETURN(Ctx.Outputs[0].Shape, broadcastAll(Ctx, {0, 1}));
    }
    using First = typename std::tuple_element<0, std::tuple<Ts...>>::type;
    const bool BoolOut = std::is_same<typename BinaryTraits<Op, First>::Out, bool>::value;
    Ctx.Outputs[0].Type = BoolOut ? ElementType::Bool : Ctx.Inputs[0].Type;
    return foldWithKernel(Ctx, [D](const KernelCreateInfo &I) { return binaryRefFor<Op>(D, I, TypeList<Ts...>()); });
  };
  return S;
}

template <typename T> TestInput binaryInput(const BinaryDesc &D, std::vector<int64_t> Dims) {
  const ElementType ET = ElementTypeOf<T>::value;
  if (std::is_same<T, bool>::value)
    return valuesInput(std::move(Dims), {0, 1, 1, 0, 1, 0, 0}, ET, false);
  if (IsFloatLike<T>::value)
    return rangeInput(std::move(Dims), ET, D.Low, D.High);
  const double Lo = std::max(D.IntLow, static_cast<double>(std::numeric_limits<ComputeT<T>>::lowest()));
  const double Hi = std::min(D.IntHigh, static_cast<double>(std::numeric_limits<ComputeT<T>>::max()));
  return rangeInput(std::move(Dims), ET, Lo, Hi);
}

/// Types whose random values the kernel harness can generate (others stay zero-filled).
inline bool harnessFillable(ElementType T) {
  return T == ElementType::F32 || T == ElementType::F64 || T == ElementType::I8 || T == ElementType::U8 ||
         T == ElementType::I32 || T == ElementType::I64 || T == ElementType::Bool;
}

template <typename T> void addBinaryTypeCase(std::vector<OpTestCase> &Cases, const BinaryDesc &D) {
  if (D.ZeroDivisorCheck && std::is_integral<T>::value && !harnessFillable(ElementTypeOf<T>::value))
    return; // zero-filled divisors would only test the division-by-zero error
  Cases.push_back(withOpset(testCase(typeName<T>(), {binaryInput<T>(D, {2, 3, 4}), binaryInput<T>(D, {2, 3, 4})},
                                     D.DefaultAttrs, D.Tolerance),
                            D.DefaultOpset));
}

template <typename... Ts> std::vector<OpTestCase> binaryCases(const BinaryDesc &D, TypeList<Ts...>) {
  std::vector<OpTestCase> Cases;
  using Expand = int[];
  (void)Expand{0, (addBinaryTypeCase<Ts>(Cases, D), 0)...};
  using F = typename std::tuple_element<0, std::tuple<Ts...>>::type;
  const auto add = [&](const char *Label, std::vector<int64_t> DA, std::vector<int64_t> DB) {
    Cases.push_back(withOpset(testCase(Label, {binaryInput<F>(D, std::move(DA)), binaryInput<F>(D, std::move(DB))},
                                       D.DefaultAttrs, D.Tolerance),
                              D.DefaultOpset));
  };
  add("large_same_shape", {4, 64, 129}, {4, 64, 129});
  add("scalar_rhs", {3, 5}, {});
  add("row_broadcast", {2, 3, 4}, {4});
  add("column_broadcast", {2, 3, 4}, {3, 1});
  add("large_row_broadcast", {300, 257}, {257});
  add("empty", {0, 3}, {3});
  if (!D.Unidirectional) {
    add("scalar_lhs", {}, {3, 5});
    add("lhs_broadcast", {4}, {2, 3, 4});
    add("bidirectional", {2, 1, 4}, {3, 1});
    add("middle_broadcast", {2, 1, 5}, {2, 3, 5});
  }
  if (D.ExtraCases)
    for (OpTestCase &C : D.ExtraCases())
      Cases.push_back(std::move(C));
  return Cases;
}

template <typename Op, typename... Ts> OpKernels binaryKernels(const BinaryDesc &D, TypeList<Ts...> Types) {
  OpKernels K;
  K.OpType = D.OpType;
  pushBinaryVariants<Op>(K.Variants, D, Types);
  K.TestCases = [D, Types] { return binaryCases(D, Types); };
  return K;
}

// --- arithmetic ops (Add, Sub, Mul, Div) -------------------------------------------------------

/// f32, f64 and every integer width (the ONNX node tests use all of them); f32 first, so the
/// broadcast cases run in f32.
using ArithmeticTypes =
    TypeList<float, double, int32_t, int64_t, int8_t, int16_t, uint8_t, uint16_t, uint32_t, uint64_t>;

/// Description of an arithmetic op. Division keeps integer divisors away from zero in its cases
/// and reports an integer zero divisor as an error instead of trapping (SIGFPE).
inline BinaryDesc arithmeticDesc(const char *OpType, const char *Name, bool IsDivision) {
  BinaryDesc D;
  D.OpType = OpType;
  D.Name = Name;
  D.ZeroDivisorCheck = IsDivision;
  if (IsDivision)
    D.Low = 1, D.High = 9, D.IntLow = 1, D.IntHigh = 100; // generic cases: nonzero divisors
  D.ExtraCases = [IsDivision] {
    const auto in = [&](std::vector<int64_t> Dims, ElementType T, double Lo, double Hi, bool Divisor) {
      return Divisor && IsDivision ? rangeInput(std::move(Dims), T, 1, 9) : rangeInput(std::move(Dims), T, Lo, Hi);
    };
    const auto pair = [&](const char *Label, std::vector<int64_t> DA, std::vector<int64_t> DB, ElementType T,
                          double Lo, double Hi) {
      return testCase(Label, {in(std::move(DA), T, Lo, Hi, false), in(std::move(DB), T, Lo, Hi, true)});
    };
    std::vector<OpTestCase> Cases{
        pair("one_element_rhs", {2, 3}, {1, 1}, ElementType::F32, -1, 1),
        pair("f64_broadcast", {3, 4}, {4}, ElementType::F64, -1, 1),
        pair("i32_broadcast", {3, 4}, {1, 4}, ElementType::I32, -100, 100),
        pair("i64_broadcast", {3, 4}, {4}, ElementType::I64, -100, 100),
        pair("i64_beyond_i32", {2, 8}, {2, 8}, ElementType::I64, -4e12, 4e12),
        pair("empty_both", {0, 3}, {0, 1}, ElementType::F32, -1, 1),
    };
    if (IsDivision) // negative integer divisors: truncating division
      Cases.push_back(testCase("i32_negative_divisor", {rangeInput({4, 4}, ElementType::I32, -100, 100),
                                                        rangeInput({4, 4}, ElementType::I32, -9, -1)}));
    return Cases;
  };
  return D;
}

// --- variadic ops (Max, Min, Sum, Mean) --------------------------------------------------------

/// Y = fold(Op, inputs) with multidirectional broadcasting, computed in the compute type C
/// (f16 inputs accumulate in float); Mean divides by the input count at the end.
template <typename Op, typename T> class VariadicKernel : public Kernel {
  using C = ComputeT<T>;

public:
  VariadicKernel(std::string Name, bool Fast, bool Mean) : Name(std::move(Name)), Fast(Fast), Mean(Mean) {}

  Status run(const KernelContext &Ctx) const override {
    const TensorView &Y = Ctx.Outputs[0];
    const size_t N = Y.elementCount();
    T *PY = Y.data<T>();
    const BinaryParams P;
    const size_t K = Ctx.Inputs.size();
    // Accumulate into Y (converted to T after each input, as a pairwise evaluation would do).
    for (size_t In = 0; In < K; ++In) {
      const TensorView &X = Ctx.Inputs[In];
      BroadcastPlan<2> Plan;
      RETURN_IF_ERROR(makeBroadcastPlan<2>(Name.c_str(), {&Y, &X}, Y, Plan));
      const T *PX = X.data<T>();
      const bool First = In == 0, Last = In + 1 == K;
      const auto combine = [&](size_t I, int64_t OX) {
        C V = First ? static_cast<C>(PX[OX]) : Op::apply(static_cast<C>(PY[I]), static_cast<C>(PX[OX]), P);
        if (Last && Mean)
          V = V / static_cast<C>(K);
        PY[I] = static_cast<T>(V);
      };
      if (!Fast) {
        forEachBroadcastElement<2>(Plan, [&](size_t I, const std::array<int64_t, 2> &Off) { combine(I, Off[1]); });
        continue;
      }
      forEachBroadcastRow<2>(Plan, Ctx.Par, 16384,
                             [&](size_t Base, const std::array<int64_t, 2> &Off, const std::array<int64_t, 2> &Inc,
                                 int64_t Inner) {
                               for (int64_t J = 0; J < Inner; ++J)
                                 combine(Base + static_cast<size_t>(J), Off[1] + J * Inc[1]);
                             });
    }
    (void)N;
    return Status::ok();
  }

private:
  std::string Name;
  bool Fast, Mean;
};

template <typename Op> void pushVariadicVariants(std::vector<KernelVariant> &, const std::string &, bool, TypeList<>) {}
template <typename Op, typename T, typename... Rest>
void pushVariadicVariants(std::vector<KernelVariant> &Out, const std::string &OpName, bool Mean,
                          TypeList<T, Rest...>) {
  const ElementType ET = ElementTypeOf<T>::value;
  const auto Supports = [ET](const KernelCreateInfo &I) {
    for (size_t J = 0; J < I.Inputs.size(); ++J)
      if (!inputIs(I, J, ET))
        return false;
    return true;
  };
  const std::string Base = std::string(typeName<T>()) + "_" + OpName;
  for (int Fast = 0; Fast < 2; ++Fast) {
    const std::string Name = Base + (Fast ? "__fast" : "__ref");
    Out.push_back({Name, Fast ? 10 : 0, Supports, [Name, Fast, Mean](const KernelCreateInfo &) {
                     return makeKernel<VariadicKernel<Op, T>>(Name, Fast != 0, Mean);
                   }});
  }
  pushVariadicVariants<Op>(Out, OpName, Mean, TypeList<Rest...>());
}

template <typename Op>
Result<std::unique_ptr<Kernel>> variadicRefFor(const std::string &, bool, const KernelCreateInfo &I, TypeList<>) {
  return makeError(ErrorCode::Type, I.N.describe(), ": no kernel for element type ", toString(I.Inputs[0].Type));
}
template <typename Op, typename T, typename... Rest>
Result<std::unique_ptr<Kernel>> variadicRefFor(const std::string &Name, bool Mean, const KernelCreateInfo &I,
                                               TypeList<T, Rest...>) {
  if (I.Inputs[0].Type != ElementTypeOf<T>::value)
    return variadicRefFor<Op>(Name, Mean, I, TypeList<Rest...>());
  return makeKernel<VariadicKernel<Op, T>>(Name + "__fold", false, Mean);
}

template <typename Op, typename... Ts>
OpSchema variadicSchema(const char *OpType, const std::string &Name, bool Mean, TypeList<Ts...> Types) {
  OpSchema S;
  S.OpType = OpType;
  S.MinInputs = 1;
  S.MaxInputs = -1;
  const std::vector<ElementType> Allowed = elementTypes(Types);
  S.Infer = [Allowed, Name, Mean](ShapeContext &Ctx) -> Status {
    std::vector<size_t> All;
    for (size_t I = 0; I < Ctx.Inputs.size(); ++I) {
      if (!Ctx.Inputs[I].Present)
        return Ctx.error(ErrorCode::Model, "input ", I, " is omitted; every input of a variadic op is required");
      RETURN_IF_ERROR(requireInputTypeIn(Ctx, I, Allowed));
      RETURN_IF_ERROR(requireSameType(Ctx, 0, I));
      All.push_back(I);
    }
    ASSIGN_OR_RETURN(Ctx.Outputs[0].Shape, broadcastAll(Ctx, All));
    Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
    return foldWithKernel(Ctx, [Name, Mean](const KernelCreateInfo &I) {
      return variadicRefFor<Op>(Name, Mean, I, TypeList<Ts...>());
    });
  };
  return S;
}

template <typename T> void addVariadicTypeCase(std::vector<OpTestCase> &Cases) {
  const ElementType ET = ElementTypeOf<T>::value;
  const double Lo = IsFloatLike<T>::value ? -3 : std::max(-100.0, double(std::numeric_limits<ComputeT<T>>::lowest()));
  const double Hi = IsFloatLike<T>::value ? 3 : std::min(100.0, double(std::numeric_limits<ComputeT<T>>::max()));
  Cases.push_back(testCase(typeName<T>(), {rangeInput({2, 3}, ET, Lo, Hi), rangeInput({2, 3}, ET, Lo, Hi),
                                          rangeInput({3}, ET, Lo, Hi)}));
}

template <typename... Ts> std::vector<OpTestCase> variadicCases(TypeList<Ts...>) {
  std::vector<OpTestCase> Cases;
  using Expand = int[];
  (void)Expand{0, (addVariadicTypeCase<Ts>(Cases), 0)...};
  const auto in = [](std::vector<int64_t> D) { return rangeInput(std::move(D), ElementType::F32, -3, 3); };
  Cases.push_back(testCase("one_input", {in({3, 4})}));
  Cases.push_back(testCase("two_same", {in({3, 4}), in({3, 4})}));
  Cases.push_back(testCase("broadcast_grows", {in({3}), in({2, 1}), in({4, 1, 1})}));
  Cases.push_back(testCase("scalar", {in({}), in({5, 6})}));
  Cases.push_back(testCase("large", {in({64, 1025}), in({1025}), in({64, 1})}));
  Cases.push_back(testCase("four_inputs", {in({2, 3}), in({2, 3}), in({1, 3}), in({2, 1})}));
  Cases.push_back(testCase("empty", {in({0, 3}), in({3})}));
  return Cases;
}

template <typename Op, typename... Ts>
OpKernels variadicKernels(const char *OpType, const std::string &Name, bool Mean, TypeList<Ts...> Types) {
  OpKernels K;
  K.OpType = OpType;
  pushVariadicVariants<Op>(K.Variants, Name, Mean, Types);
  K.TestCases = [Types] { return variadicCases(Types); };
  return K;
}

/// numpy maximum/minimum: NaN in either operand propagates.
struct MaxOp {
  template <typename C> static C apply(C A, C B, const BinaryParams &) {
    if (A != A)
      return A;
    if (B != B)
      return B;
    return A < B ? B : A;
  }
};
struct MinOp {
  template <typename C> static C apply(C A, C B, const BinaryParams &) {
    if (A != A)
      return A;
    if (B != B)
      return B;
    return B < A ? B : A;
  }
};

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
