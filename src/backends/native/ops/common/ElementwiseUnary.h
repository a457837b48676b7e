// Shared implementation of the unary elementwise ops (Abs, Exp, Sigmoid, LeakyRelu, IsNaN, ...):
// schema (type check, attribute validation, folding of small constants), a serial reference
// kernel and a parallel kernel per element type, and generic harness cases. Each op's file
// supplies the math as a struct with
//   template <typename C> static R apply(C X, const UnaryParams &P)
// where C is the compute type (float for f16/bf16) and R is C, or bool for predicates.
#pragma once

#include <functional>
#include <tuple>

#include "backends/native/ops/common/ElementwiseCommon.h"
#include "backends/native/ops/common/SimdDispatch.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

// --- math helpers that behave for every numeric type -------------------------------------------

/// Integer negation wraps (numpy: -INT_MIN == INT_MIN) instead of being undefined.
template <typename C> inline typename std::enable_if<std::is_integral<C>::value, C>::type negateValue(C X) {
  using U = typename std::make_unsigned<C>::type;
  return static_cast<C>(U(0) - static_cast<U>(X));
}
template <typename C> inline typename std::enable_if<!std::is_integral<C>::value, C>::type negateValue(C X) {
  return -X;
}
template <typename C> inline typename std::enable_if<std::is_unsigned<C>::value, C>::type absValue(C X) { return X; }
template <typename C> inline typename std::enable_if<!std::is_unsigned<C>::value, C>::type absValue(C X) {
  return X < C(0) ? negateValue(X) : X;
}
template <typename C> inline C signValue(C X) {
  return X > C(0) ? C(1) : (X < C(0) ? static_cast<C>(-1) : X); // 0 and NaN pass through
}
template <typename C> inline C erfValue(C X) {
  return static_cast<C>(std::erf(static_cast<typename std::conditional<std::is_integral<C>::value, double, C>::type>(X)));
}

/// Attributes of a unary op, read once from the node.
struct UnaryParams {
  float Alpha = 0, Beta = 0, Gamma = 0;
  int64_t Mode = 0, Mode2 = 0;
};
using UnaryParamsFn = std::function<Result<UnaryParams>(const Node &)>;

template <typename Op, typename T> struct UnaryTraits {
  using C = ComputeT<T>;
  using R = decltype(Op::apply(C(), UnaryParams()));
  using Out = typename std::conditional<std::is_same<R, bool>::value && !std::is_same<T, bool>::value, bool, T>::type;
};

template <typename Op, typename T>
void unaryLoop(const T *X, typename UnaryTraits<Op, T>::Out *Y, size_t Lo, size_t Hi, const UnaryParams &P) {
  using Tr = UnaryTraits<Op, T>;
  for (size_t I = Lo; I < Hi; ++I)
    Y[I] = static_cast<typename Tr::Out>(Op::apply(static_cast<typename Tr::C>(X[I]), P));
}

/// unaryLoop compiled for AVX-512 (SimdDispatch.h); UnaryKernel takes it for float inputs.
template <typename Op, typename T>
OPT_TARGET_AVX512 void unaryLoopAvx512(const T *X, typename UnaryTraits<Op, T>::Out *Y, size_t Lo, size_t Hi,
                                       const UnaryParams &P) {
  unaryLoop<Op, T>(X, Y, Lo, Hi, P);
}
/// The same for AVX2 + FMA (8 lanes), for float inputs on CPUs without AVX-512.
template <typename Op, typename T>
OPT_TARGET_AVX2 void unaryLoopAvx2(const T *X, typename UnaryTraits<Op, T>::Out *Y, size_t Lo, size_t Hi,
                                   const UnaryParams &P) {
  unaryLoop<Op, T>(X, Y, Lo, Hi, P);
}

template <typename Op, typename T> class UnaryKernel : public Kernel {
public:
  UnaryKernel(std::string Name, UnaryParams P, bool Parallel) : Name(std::move(Name)), P(P), Par(Parallel) {}
  Status run(const KernelContext &Ctx) const override {
    const TensorView &X = Ctx.Inputs[0], &Y = Ctx.Outputs[0];
    if (X.elementCount() != Y.elementCount())
      return runError(Name.c_str(), "input ", joinInts(X.Dims), " and output ", joinInts(Y.Dims),
                      " differ in element count");
    const T *In = X.data<T>();
    auto *Out = Y.data<typename UnaryTraits<Op, T>::Out>();
    const size_t N = X.elementCount();
    if (!Par) { // the reference: as written, on the baseline ISA
      unaryLoop<Op, T>(In, Out, 0, N, P);
      return Status::ok();
    }
    const bool F32 = std::is_same<T, float>::value;
    const auto Loop = F32 && simdAvx512() ? unaryLoopAvx512<Op, T>
                      : F32 && simdAvx2() ? unaryLoopAvx2<Op, T>
                                          : unaryLoop<Op, T>;
    Ctx.Par.forRange(N, 16384, [&](size_t Lo, size_t Hi) { Loop(In, Out, Lo, Hi, P); });
    return Status::ok();
  }

private:
  std::string Name;
  UnaryParams P;
  bool Par;
};

/// What an op's file declares about itself.
struct UnaryDesc {
  std::string OpType;
  std::string Name;               ///< lower-case kernel name: "sigmoid"
  UnaryParamsFn Params;           ///< null: no attributes
  double Low = -3, High = 3;      ///< float test inputs are drawn from here (the op's domain)
  double IntLow = -100, IntHigh = 100;
  double Tolerance = 1e-4;
  std::function<std::vector<OpTestCase>()> ExtraCases;
};

inline Result<UnaryParams> unaryParams(const UnaryDesc &D, const Node &N) {
  if (!D.Params)
    return UnaryParams();
  return D.Params(N);
}

template <typename Op> bool pushUnaryVariants(std::vector<KernelVariant> &, const UnaryDesc &, TypeList<>) {
  return true;
}
template <typename Op, typename T, typename... Rest>
bool pushUnaryVariants(std::vector<KernelVariant> &Out, const UnaryDesc &D, TypeList<T, Rest...>) {
  const ElementType ET = ElementTypeOf<T>::value;
  const auto Supports = [ET](const KernelCreateInfo &I) { return inputIs(I, 0, ET); };
  const std::string Base = std::string(typeName<T>()) + "_" + D.Name;
  for (int Parallel = 0; Parallel < 2; ++Parallel) {
    const std::string Name = Base + (Parallel ? "__parallel" : "__ref");
    const UnaryDesc Desc = D;
    Out.push_back({Name, Parallel ? 10 : 0, Supports,
                   [Name, Desc, Parallel](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
                     ASSIGN_OR_RETURN(const UnaryParams P, unaryParams(Desc, I.N));
                     return makeKernel<UnaryKernel<Op, T>>(Name, P, Parallel != 0);
                   }});
  }
  return pushUnaryVariants<Op>(Out, D, TypeList<Rest...>());
}

/// Creates the reference kernel matching input 0's type (for folding).
template <typename Op> Result<std::unique_ptr<Kernel>> unaryRefFor(const UnaryDesc &, const KernelCreateInfo &I,
                                                                  TypeList<>) {
  return makeError(ErrorCode::Type, I.N.describe(), ": no kernel for element type ", toString(I.Inputs[0].Type));
}
template <typename Op, typename T, typename... Rest>
Result<std::unique_ptr<Kernel>> unaryRefFor(const UnaryDesc &D, const KernelCreateInfo &I, TypeList<T, Rest...>) {
  if (I.Inputs[0].Type != ElementTypeOf<T>::value)
    return unaryRefFor<Op>(D, I, TypeList<Rest...>());
  ASSIGN_OR_RETURN(const UnaryParams P, unaryParams(D, I.N));
  return makeKernel<UnaryKernel<Op, T>>(D.Name + "__fold", P, false);
}

template <typename Op, typename... Ts> OpSchema unarySchema(const UnaryDesc &D, TypeList<Ts...> Types) {
  OpSchema S;
  S.OpType = D.OpType;
  S.MinInputs = S.MaxInputs = 1;
  const std::vector<ElementType> Allowed = elementTypes(Types);
  S.Infer = [D, Allowed](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireInputTypeIn(Ctx, 0, Allowed));
    ASSIGN_OR_RETURN(const UnaryParams P, unaryParams(D, Ctx.N));
    (void)P;
    using First = typename std::tuple_element<0, std::tuple<Ts...>>::type;
    const bool BoolOut = std::is_same<typename UnaryTraits<Op, First>::Out, bool>::value;
    Ctx.Outputs[0].Type = BoolOut ? ElementType::Bool : Ctx.Inputs[0].Type;
    Ctx.Outputs[0].Shape = Ctx.Inputs[0].Shape;
    return foldWithKernel(Ctx, [D](const KernelCreateInfo &I) { return unaryRefFor<Op>(D, I, TypeList<Ts...>()); });
  };
  return S;
}

template <typename T> void addUnaryTypeCase(std::vector<OpTestCase> &Cases, const UnaryDesc &D) {
  const ElementType ET = ElementTypeOf<T>::value;
  if (std::is_same<T, bool>::value) {
    Cases.push_back(testCase("bool", {valuesInput({3, 4}, {0, 1, 1, 0, 1}, ET, false)}, {}, D.Tolerance));
    return;
  }
  const bool Float = IsFloatLike<T>::value;
  const double Lo = Float ? D.Low : std::max(D.IntLow, static_cast<double>(std::numeric_limits<ComputeT<T>>::lowest()));
  const double Hi = Float ? D.High : std::min(D.IntHigh, static_cast<double>(std::numeric_limits<ComputeT<T>>::max()));
  Cases.push_back(testCase(typeName<T>(), {rangeInput({2, 3, 5}, ET, Lo, Hi)}, {}, D.Tolerance));
}

template <typename... Ts> std::vector<OpTestCase> unaryCases(const UnaryDesc &D, TypeList<Ts...>) {
  std::vector<OpTestCase> Cases;
  using Expand = int[];
  (void)Expand{0, (addUnaryTypeCase<Ts>(Cases, D), 0)...};
  using First = typename std::tuple_element<0, std::tuple<Ts...>>::type;
  const ElementType ET = ElementTypeOf<First>::value;
  const bool Float = IsFloatLike<First>::value;
  const double Lo = Float ? D.Low : (std::is_same<First, bool>::value ? 0 : D.IntLow);
  const double Hi = Float ? D.High : (std::is_same<First, bool>::value ? 1 : D.IntHigh);
  Cases.push_back(testCase("large", {rangeInput({3, 40000}, ET, Lo, Hi)}, {}, D.Tolerance));
  Cases.push_back(testCase("scalar", {rangeInput({}, ET, Lo, Hi)}, {}, D.Tolerance));
  Cases.push_back(testCase("empty", {rangeInput({0, 4}, ET, Lo, Hi)}, {}, D.Tolerance));
  if (D.ExtraCases)
    for (OpTestCase &C : D.ExtraCases())
      Cases.push_back(std::move(C));
  return Cases;
}

template <typename Op, typename... Ts> OpKernels unaryKernels(const UnaryDesc &D, TypeList<Ts...> Types) {
  OpKernels K;
  K.OpType = D.OpType;
  pushUnaryVariants<Op>(K.Variants, D, Types);
  K.TestCases = [D, Types] { return unaryCases(D, Types); };
  return K;
}

// --- attribute readers ------------------------------------------------------------------------

/// Reads float attributes into Alpha/Beta/Gamma with their defaults.
inline UnaryParamsFn floatAttrs(const char *A, float DA, const char *B = nullptr, float DB = 0,
                                const char *G = nullptr, float DG = 0) {
  return [=](const Node &N) -> Result<UnaryParams> {
    UnaryParams P;
    ASSIGN_OR_RETURN(P.Alpha, N.getFloat(A, DA));
    if (B) {
      ASSIGN_OR_RETURN(P.Beta, N.getFloat(B, DB));
    }
    if (G) {
      ASSIGN_OR_RETURN(P.Gamma, N.getFloat(G, DG));
    }
    return P;
  };
}

inline std::map<std::string, AttrValue> floatAttrMap(std::initializer_list<std::pair<const char *, float>> L) {
  std::map<std::string, AttrValue> M;
  for (const auto &KV : L)
    M[KV.first] = attrFloat(KV.second);
  return M;
}

// --- vectorized float32 variants -----------------------------------------------------------------

using F32LoopFn = void (*)(const float *, float *, size_t);

/// A "__vec" f32 variant over one of the MathApprox.h loops, split over the pool. Pick chooses the
/// loop from the node's attributes.
inline KernelVariant unaryF32LoopVariant(const std::string &Name, std::function<F32LoopFn(const Node &)> Pick) {
  class LoopKernel : public Kernel {
  public:
    LoopKernel(std::string Name, F32LoopFn Fn) : Name(std::move(Name)), Fn(Fn) {}
    Status run(const KernelContext &Ctx) const override {
      const TensorView &X = Ctx.Inputs[0], &Y = Ctx.Outputs[0];
      if (X.elementCount() != Y.elementCount())
        return runError(Name.c_str(), "input and output element counts differ");
      const float *In = X.data<float>();
      float *Out = Y.data<float>();
      Ctx.Par.forRange(X.elementCount(), 16384, [&](size_t Lo, size_t Hi) { Fn(In + Lo, Out + Lo, Hi - Lo); });
      return Status::ok();
    }

  private:
    std::string Name;
    F32LoopFn Fn;
  };
  return {Name, 20, [](const KernelCreateInfo &I) { return inputIs(I, 0, ElementType::F32); },
          [Name, Pick](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
            return makeKernel<LoopKernel>(Name, Pick(I.N));
          }};
}

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
