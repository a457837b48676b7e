// Shared machinery of the elementwise math ops (unary, binary, variadic, Where, Cast) and the
// reductions: float16/bfloat16 compute types, multi-input broadcasting plans with dimension
// coalescing, load-time constant folding through a reference kernel, and test-case shorthands.
#pragma once

#include <array>
#include <cmath>
#include <limits>
#include <type_traits>

#include "Optimium/Runtime/Types/BFloat16.h"
#include "Optimium/Runtime/Types/Float16.h"
#include "backends/native/ops/common/OpUtil.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

/// The type arithmetic runs in: float for the 16-bit floats, the type itself otherwise.
template <typename T> struct ComputeOf { using type = T; };
template <> struct ComputeOf<float16> { using type = float; };
template <> struct ComputeOf<bfloat16> { using type = float; };
template <typename T> using ComputeT = typename ComputeOf<T>::type;

template <typename T> struct IsFloatLike : std::is_floating_point<T> {};
template <> struct IsFloatLike<float16> : std::true_type {};
template <> struct IsFloatLike<bfloat16> : std::true_type {};

template <typename T> const char *typeName() { return toString(ElementTypeOf<T>::value); }

inline bool isFloatType(ElementType T) {
  return T == ElementType::F16 || T == ElementType::BF16 || T == ElementType::F32 || T == ElementType::F64;
}

/// Type lists for the ops' registrations.
template <typename... Ts> struct TypeList {};
using FloatTypes = TypeList<float, double, float16, bfloat16>;

template <typename... Ts> std::vector<ElementType> elementTypes(TypeList<Ts...>) {
  return {ElementTypeOf<Ts>::value...};
}

inline std::string joinTypeVector(const std::vector<ElementType> &Types) {
  std::string S;
  for (ElementType T : Types)
    S += (S.empty() ? "" : ", ") + std::string(toString(T));
  return S;
}

/// TypeError unless input I has one of Types (a vector variant of requireInputType).
inline Status requireInputTypeIn(const ShapeContext &Ctx, size_t I, const std::vector<ElementType> &Types,
                                 const char *Role = nullptr) {
  const ElementType T = Ctx.Inputs[I].Type;
  for (ElementType Ok : Types)
    if (T == Ok)
      return Status::ok();
  if (Role)
    return Ctx.error(ErrorCode::Type, "input ", I, " ('", Role, "') has element type ", toString(T),
                     ", supported: ", joinTypeVector(Types));
  return Ctx.error(ErrorCode::Type, "input ", I, " has element type ", toString(T),
                   ", supported: ", joinTypeVector(Types));
}

/// Conversion between element types with defined results for every value: float -> int truncates
/// toward zero and saturates out-of-range values (NaN -> 0), float -> bool is "!= 0".
template <typename To, typename CF, typename CT>
inline typename std::enable_if<std::is_same<To, bool>::value, To>::type convertCompute(CF X) {
  return X != CF(0);
}
template <typename To, typename CF, typename CT>
inline typename std::enable_if<!std::is_same<To, bool>::value && std::is_integral<CT>::value &&
                                   std::is_floating_point<CF>::value,
                               To>::type
convertCompute(CF X) {
  if (!(X == X))
    return To(0);
  const long double L = static_cast<long double>(X);
  if (L <= static_cast<long double>(std::numeric_limits<To>::lowest()))
    return std::numeric_limits<To>::lowest();
  if (L >= static_cast<long double>(std::numeric_limits<To>::max()))
    return std::numeric_limits<To>::max();
  return static_cast<To>(X);
}
template <typename To, typename CF, typename CT>
inline typename std::enable_if<!std::is_same<To, bool>::value &&
                                   !(std::is_integral<CT>::value && std::is_floating_point<CF>::value),
                               To>::type
convertCompute(CF X) {
  return static_cast<To>(static_cast<CT>(X));
}

template <typename To, typename From> inline To convertValue(From V) {
  using CF = ComputeT<From>;
  using CT = ComputeT<To>;
  const CF X = static_cast<CF>(V);
  return convertCompute<To, CF, CT>(X);
}

// --- broadcasting ------------------------------------------------------------------------------

/// Multidirectional broadcast of any number of shapes (ShapeError naming the node otherwise).
inline Result<TensorShape> broadcastAll(const ShapeContext &Ctx, const std::vector<size_t> &Inputs) {
  TensorShape S = Ctx.Inputs[Inputs[0]].Shape;
  for (size_t I = 1; I < Inputs.size(); ++I) {
    auto R = broadcastShapes(S, Ctx.Inputs[Inputs[I]].Shape);
    if (!R.isOk())
      return R.status().withContext(Ctx.N.describe());
    S = *R;
  }
  return S;
}

/// The element strides of K inputs broadcast to an output, with adjacent dimensions merged
/// wherever every operand is contiguous (or broadcast) across both, so inner loops run long.
template <size_t K> struct BroadcastPlan {
  std::vector<int64_t> Dims;                    ///< coalesced output dims (at least one)
  std::array<std::vector<int64_t>, K> Strides;  ///< per input, per coalesced dim
  size_t Count = 0;
};

inline std::vector<int64_t> stridesFor(const std::vector<int64_t> &In, const std::vector<int64_t> &OutDims) {
  const size_t R = OutDims.size();
  std::vector<int64_t> S(R, 0);
  int64_t Stride = 1;
  for (size_t I = In.size(); I-- > 0;) {
    const size_t O = I + R - In.size();
    S[O] = In[I] == 1 ? 0 : Stride;
    Stride *= In[I];
  }
  return S;
}

template <size_t K>
Status makeBroadcastPlan(const char *Name, const std::array<const TensorView *, K> &In, const TensorView &Y,
                         BroadcastPlan<K> &P) {
  const size_t R = Y.rank();
  for (size_t J = 0; J < K; ++J) {
    const TensorView &A = *In[J];
    if (A.rank() > R)
      return runError(Name, "input ", J, " rank exceeds the output rank");
    for (size_t I = 0; I < A.rank(); ++I) {
      const int64_t D = A.Dims[I], O = Y.Dims[I + R - A.rank()];
      if (D != O && D != 1)
        return runError(Name, "input ", J, " shape ", joinInts(A.Dims), " does not broadcast to the output ",
                        joinInts(Y.Dims));
    }
  }
  P.Count = Y.elementCount();
  std::array<std::vector<int64_t>, K> S;
  for (size_t J = 0; J < K; ++J)
    S[J] = stridesFor(In[J]->Dims, Y.Dims);
  // Drop size-1 dims, then merge dim D into the previous one when every stride is consistent.
  P.Dims.clear();
  for (size_t J = 0; J < K; ++J)
    P.Strides[J].clear();
  for (size_t D = 0; D < R; ++D) {
    if (Y.Dims[D] == 1)
      continue;
    bool Merge = !P.Dims.empty();
    for (size_t J = 0; J < K && Merge; ++J)
      Merge = P.Strides[J].back() == S[J][D] * Y.Dims[D];
    if (Merge) {
      P.Dims.back() *= Y.Dims[D];
      for (size_t J = 0; J < K; ++J)
        P.Strides[J].back() = S[J][D];
    } else {
      P.Dims.push_back(Y.Dims[D]);
      for (size_t J = 0; J < K; ++J)
        P.Strides[J].push_back(S[J][D]);
    }
  }
  if (P.Dims.empty()) {
    P.Dims.push_back(1);
    for (size_t J = 0; J < K; ++J)
      P.Strides[J].push_back(0);
  }
  return Status::ok();
}

/// Reference traversal: Fn(OutIndex, Offsets) for every output element, offsets decoded from the
/// index one element at a time.
template <size_t K, typename Fn> void forEachBroadcastElement(const BroadcastPlan<K> &P, Fn F) {
  const size_t R = P.Dims.size();
  std::array<int64_t, K> Off;
  for (size_t I = 0; I < P.Count; ++I) {
    size_t Rem = I;
    Off.fill(0);
    for (size_t D = R; D-- > 0;) {
      const int64_t Idx = static_cast<int64_t>(Rem % static_cast<size_t>(P.Dims[D]));
      Rem /= static_cast<size_t>(P.Dims[D]);
      for (size_t J = 0; J < K; ++J)
        Off[J] += Idx * P.Strides[J][D];
    }
    F(I, Off);
  }
}

/// Fast traversal: rows of the innermost coalesced dim, split over the pool.
/// Fn(OutBase, Offsets, Incs, Inner) handles one row.
template <size_t K, typename Fn>
void forEachBroadcastRow(const BroadcastPlan<K> &P, const Parallel &Par, size_t Grain, Fn F) {
  const size_t R = P.Dims.size();
  const int64_t Inner = P.Dims[R - 1];
  if (Inner == 0 || P.Count == 0)
    return;
  std::array<int64_t, K> Inc;
  for (size_t J = 0; J < K; ++J)
    Inc[J] = P.Strides[J][R - 1];
  const size_t Rows = P.Count / static_cast<size_t>(Inner);
  if (Rows == 1) { // one long row: split it instead
    Par.forRange(static_cast<size_t>(Inner), Grain, [&](size_t Lo, size_t Hi) {
      std::array<int64_t, K> Off;
      for (size_t J = 0; J < K; ++J)
        Off[J] = static_cast<int64_t>(Lo) * Inc[J];
      F(Lo, Off, Inc, static_cast<int64_t>(Hi - Lo));
    });
    return;
  }
  Par.forRange(Rows, std::max<size_t>(1, Grain / static_cast<size_t>(Inner)), [&](size_t Lo, size_t Hi) {
    for (size_t Row = Lo; Row < Hi; ++Row) {
      size_t Rem = Row;
      std::array<int64_t, K> Off;
      Off.fill(0);
      for (size_t D = R - 1; D-- > 0;) {
        const int64_t Idx = static_cast<int64_t>(Rem % static_cast<size_t>(P.Dims[D]));
        Rem /= static_cast<size_t>(P.Dims[D]);
        for (size_t J = 0; J < K; ++J)
          Off[J] += Idx * P.Strides[J][D];
      }
      F(Row * static_cast<size_t>(Inner), Off, Inc, Inner);
    }
  });
}

// --- constant folding -----------------------------------------------------------------------

constexpr size_t kMaxFoldElements = 4096;

/// When every present input is constant and the outputs are small and concrete, runs the
/// reference kernel Factory at load and stores the values in Ctx.Outputs[i].Const, so the node
/// can be removed (shape computations in exported models). Leaves the outputs alone otherwise.
inline Status foldWithKernel(ShapeContext &Ctx, const KernelFactory &Factory) {
  for (const ValueInfo &I : Ctx.Inputs)
    if (I.Present && !I.Const)
      return Status::ok();
  std::vector<std::vector<int64_t>> OutDims;
  for (const ValueInfo &O : Ctx.Outputs) {
    if (!O.Present)
      return Status::ok();
    if (O.Shape.isDynamic())
      return Status::ok();
    OutDims.push_back(O.Shape.getDims());
    if (O.Type == ElementType::String || O.Type == ElementType::Undefined ||
        product(OutDims.back(), 0, OutDims.back().size()) > static_cast<int64_t>(kMaxFoldElements))
      return Status::ok();
  }
  KernelCreateInfo Info{Ctx.N, Ctx.Inputs, Ctx.Outputs};
  auto K = Factory(Info);
  if (!K.isOk())
    return K.status();
  std::vector<TensorView> In, Out;
  for (const ValueInfo &I : Ctx.Inputs) {
    TensorView V;
    if (I.Present) {
      V.Type = I.Type;
      V.Dims = I.Const->Dims;
      V.Data = I.Const->mutableData();
    }
    In.push_back(V);
  }
  std::vector<std::shared_ptr<ConstData>> Results;
  for (size_t I = 0; I < Ctx.Outputs.size(); ++I) {
    Results.push_back(ConstData::allocate(Ctx.Outputs[I].Type, OutDims[I]));
    TensorView V;
    V.Type = Ctx.Outputs[I].Type;
    V.Dims = OutDims[I];
    V.Data = Results.back()->mutableData();
    Out.push_back(V);
  }
  const Parallel Serial;
  KernelContext KC{In, Out, Serial};
  RETURN_IF_ERROR((*K)->run(KC));
  for (size_t I = 0; I < Ctx.Outputs.size(); ++I)
    Ctx.Outputs[I].Const = Results[I];
  return Status::ok();
}

// --- test-case shorthands ----------------------------------------------------------------------

inline TestInput rangeInput(std::vector<int64_t> Dims, ElementType T, double Lo, double Hi) {
  TestInput I = tensorInput(std::move(Dims), T);
  I.Low = Lo, I.High = Hi;
  return I;
}


} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
