// Helpers shared by the normalization ops (BatchNormalization, LayerNormalization, ...) and the
// other float ops that also accept float16 (computed in float32): type checks, float16 <-> float
// loads, and one-line registration of an f32 + f16 kernel pair (serial __ref, parallel fast).
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "Optimium/Runtime/Types/Float16.h"
#include "backends/native/ops/common/OpUtil.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

/// TypeError unless input I is float32 or float16.
inline Status requireFloatInput(const ShapeContext &Ctx, size_t I) {
  return requireInputType(Ctx, I, {ElementType::F32, ElementType::F16});
}

/// TypeError unless optional input I (when present) has the type of input 0.
inline Status requireSameTypeIfPresent(const ShapeContext &Ctx, size_t I) {
  if (!Ctx.hasInput(I))
    return Status::ok();
  return requireSameType(Ctx, 0, I);
}

/// Reads element I of a float32 / float16 view as float.
inline float loadFloat(const TensorView &V, size_t I) {
  return V.Type == ElementType::F16 ? static_cast<float>(V.data<const float16>()[I]) : V.data<const float>()[I];
}

/// Copies a float32 / float16 view into a float vector (used for small parameter tensors).
inline std::vector<float> loadFloats(const TensorView &V) {
  std::vector<float> Out(V.elementCount());
  for (size_t I = 0; I < Out.size(); ++I)
    Out[I] = loadFloat(V, I);
  return Out;
}

inline void storeFloat(const TensorView &V, size_t I, float X) {
  if (V.Type == ElementType::F16)
    V.data<float16>()[I] = float16(X);
  else
    V.data<float>()[I] = X;
}

/// Whether input I is present (non-null) in a run.
inline bool hasRunInput(const KernelContext &Ctx, size_t I) {
  return I < Ctx.Inputs.size() && Ctx.Inputs[I].Data != nullptr;
}
inline bool hasRunOutput(const KernelContext &Ctx, size_t I) {
  return I < Ctx.Outputs.size() && Ctx.Outputs[I].Data != nullptr;
}

/// A kernel run function that receives whether it may split work over the pool.
using FloatRunFn = std::function<Status(const KernelContext &, bool Parallel)>;

/// Registers "<t>_<op>__ref" (serial) and "<t>_<op>__parallel" for t in f32, f16. Make builds the
/// run function from the node (validated attributes); the element type is read from the views.
inline void addFloatVariants(OpKernels &K, const std::string &Op,
                             std::function<Result<FloatRunFn>(const KernelCreateInfo &)> Make) {
  for (ElementType T : {ElementType::F32, ElementType::F16}) {
    const std::string Prefix = T == ElementType::F32 ? "f32_" : "f16_";
    const auto Supports = [T](const KernelCreateInfo &I) { return inputIs(I, 0, T); };
    for (bool Par : {false, true}) {
      const std::string Name = Prefix + Op + (Par ? "__parallel" : "__ref");
      K.Variants.push_back({Name, Par ? 10 : 0, Supports,
                            [Make, Par](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
                              ASSIGN_OR_RETURN(FloatRunFn Fn, Make(I));
                              return makeKernel<FunctionKernel>(
                                  [Fn, Par](const KernelContext &C) { return Fn(C, Par); });
                            }});
    }
  }
}

/// Runs Fn over [0, N) on the pool when Parallel, else serially.
inline void forRangeMaybe(const KernelContext &Ctx, bool Parallel, size_t N, size_t Grain,
                          const Parallel::RangeFn &Fn) {
  if (Parallel)
    Ctx.Par.forRange(N, Grain, Fn);
  else if (N)
    Fn(0, N);
}

/// The attributes LayerNormalization and RMSNormalization share: the first normalized dim, epsilon
/// and stash_type (only 1 = float32 is supported).
struct NormAxisAttrs {
  int64_t Axis = -1;
  float Epsilon = 1e-5f;
};

inline Result<NormAxisAttrs> parseNormAxisAttrs(const Node &N, size_t Rank) {
  NormAxisAttrs A;
  ASSIGN_OR_RETURN(const int64_t Axis, N.getInt("axis", -1));
  ASSIGN_OR_RETURN(A.Axis, normalizeAxis(N, "axis", Axis, static_cast<int64_t>(Rank)));
  ASSIGN_OR_RETURN(A.Epsilon, N.getFloat("epsilon", 1e-5f));
  ASSIGN_OR_RETURN(const int64_t Stash, N.getInt("stash_type", 1));
  if (Stash != 1)
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'stash_type' value ", Stash,
                     " is not supported (only 1 = float32)");
  return A;
}

// Scale/bias parameters of LayerNormalization and RMSNormalization: broadcast to the normalized dims.
/// Whether P broadcasts unidirectionally to the trailing dims Norm (numpy rules, P may be shorter).
inline bool broadcastsTo(const TensorShape &P, const std::vector<Expr> &Norm) {
  if (P.getRank() > Norm.size())
    return false;
  for (size_t I = 0; I < P.getRank(); ++I) {
    const Expr &D = P[P.getRank() - 1 - I], &T = Norm[Norm.size() - 1 - I];
    if (D.isConst() && T.isConst() && D.value() != 1 && D.value() != T.value())
      return false;
  }
  return true;
}

/// Index into a parameter of dims P for each element of the normalized block Norm (broadcast).
inline std::vector<int64_t> broadcastIndex(const std::vector<int64_t> &P, const std::vector<int64_t> &Norm) {
  const int64_t Inner = product(Norm, 0, Norm.size());
  std::vector<int64_t> Idx(static_cast<size_t>(Inner));
  for (int64_t E = 0; E < Inner; ++E) {
    int64_t Rem = E, Off = 0, Stride = 1;
    for (size_t D = Norm.size(), K = P.size(); D-- > 0;) {
      const int64_t Pos = Rem % Norm[D];
      Rem /= Norm[D];
      if (K > 0) {
        --K;
        if (P[K] != 1)
          Off += Pos * Stride;
        Stride *= P[K];
      }
    }
    Idx[static_cast<size_t>(E)] = Off;
  }
  return Idx;
}

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
