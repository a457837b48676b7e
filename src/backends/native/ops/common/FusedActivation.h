// The activation a fusion pass folds into a convolution (passes/FuseConvActivation): a clamp
// (Relu, Clip), Sigmoid, SiLU (x * sigmoid(alpha x)), HardSigmoid or HardSwish, read from the
// node's attributes (ir/FusedOps.h). Kernels apply it per element (reference, portable loops) or
// per AVX-512 or AVX2 vector while the output tile is still in registers (Act512, Act256).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "backends/native/ops/common/OpUtil.h"
#include "backends/native/ops/common/VecMath256.h"
#include "backends/native/ops/common/VecMath512.h"
#include "ir/FusedOps.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

enum class ActKind : uint8_t { None, Clamp, Sigmoid, Silu, HardSigmoid, HardSwish };

/// A fused activation. Clamp: [Min, Max] (NaN passes through). Silu: x * sigmoid(Alpha x).
/// HardSigmoid: max(0, min(1, Alpha x + Beta)); HardSwish: x times that.
struct FusedAct {
  ActKind Kind = ActKind::None;
  float Min = -INFINITY, Max = INFINITY;
  float Alpha = 1.0f, Beta = 0.0f;

  bool on() const { return Kind != ActKind::None; }
  /// The plain clamp (or nothing): what kernels that only clamp can take.
  bool clampOnly() const { return Kind == ActKind::None || Kind == ActKind::Clamp; }

  static FusedAct clamp(float Lo, float Hi) {
    FusedAct A;
    A.Kind = ActKind::Clamp, A.Min = Lo, A.Max = Hi;
    return A;
  }

  /// The reference value (std::exp; the vector forms agree to a few 1e-7 relative).
  float operator()(float X) const {
    switch (Kind) {
    case ActKind::None: return X;
    case ActKind::Clamp: {
      X = X < Min ? Min : X;
      return X > Max ? Max : X;
    }
    case ActKind::Sigmoid: return 1.0f / (1.0f + std::exp(-X));
    case ActKind::Silu: return X / (1.0f + std::exp(-Alpha * X));
    // NaN propagates (as ONNX's max(0, min(1, .)) and the vector forms do; std::fmin/fmax would
    // drop it).
    case ActKind::HardSigmoid: return hardSigmoid(Alpha * X + Beta);
    case ActKind::HardSwish: return X * hardSigmoid(Alpha * X + Beta);
    }
    return X;
  }
  /// max(0, min(1, V)), NaN kept.
  static float hardSigmoid(float V) { return V != V ? V : V < 0.0f ? 0.0f : V > 1.0f ? 1.0f : V; }
  bool operator==(const FusedAct &O) const {
    return Kind == O.Kind && Min == O.Min && Max == O.Max && Alpha == O.Alpha && Beta == O.Beta;
  }
  bool operator!=(const FusedAct &O) const { return !(*this == O); }
};

/// The activation a node carries under Keys (ir/FusedOps.h): a clamp (Keys.Min / Max) or a kind
/// (Keys.Kind, with Keys.Alpha / Beta; Kind null: clamps only); an error for an unknown kind or a
/// kind together with a clamp.
Result<FusedAct> fusedActOf(const Node &N, const FusedActKeys &Keys);
/// fusedActOf with Conv's keys (kConvActKeys).
Result<FusedAct> convFusedActOf(const Node &N);

/// Y[i] = Act(Y[i]) for i < Count; AVX-512 (Act512) or AVX2 + FMA (Act256) where the CPU has it.
void applyFusedAct(const FusedAct &Act, float *Y, size_t Count);
/// Y[i] = Act(X[i]) for i < Count (X may be Y), as above.
void applyFusedAct(const FusedAct &Act, const float *X, float *Y, size_t Count);
/// applyFusedAct's AVX2 + FMA loop, whatever wider ISA the CPU has (the *_avx2 kernel variants call
/// it so the harness checks the AVX2 code on AVX-512 hosts too). Only after simdAvx2().
void applyFusedActAvx2(const FusedAct &Act, const float *X, float *Y, size_t Count);

#ifdef OPT_HAVE_VECMATH512
#define OPT_ACT512 __attribute__((target("avx512f"), always_inline))
// GCC 12 flags the undefined pass-through operands inside the intrinsics (false positive).
#if !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

/// Act prepared for AVX-512 registers: construct it once per tile loop, apply it per vector.
/// Sigmoid is 1 / (1 + 2^(-log2(e) x)) (vec512::exp2Clamped512), the reciprocal by
/// rcp14 and one Newton step instead of a division (a 512-bit divide is ~5x the cost of the rest on
/// Zen 4; relative error of the result a few 1e-7); the clamps keep the value operand second so a
/// NaN passes through.
struct Act512 {
  ActKind Kind;
  __m512 P, Q;
  OPT_ACT512 explicit Act512(const FusedAct &A) : Kind(A.Kind) {
    switch (A.Kind) {
    case ActKind::Clamp: P = _mm512_set1_ps(A.Min), Q = _mm512_set1_ps(A.Max); break;
    // exp(-alpha x) = 2^(-alpha log2(e) x): the constant the exp2 takes.
    case ActKind::Silu: P = _mm512_set1_ps(-A.Alpha * 1.44269504088896341f), Q = _mm512_setzero_ps(); break;
    case ActKind::Sigmoid: P = _mm512_set1_ps(-1.44269504088896341f), Q = _mm512_setzero_ps(); break;
    case ActKind::HardSigmoid:
    case ActKind::HardSwish: P = _mm512_set1_ps(A.Alpha), Q = _mm512_set1_ps(A.Beta); break;
    default: P = Q = _mm512_setzero_ps(); break;
    }
  }
  OPT_ACT512 bool on() const { return Kind != ActKind::None; }
  /// 1 / D for D >= 1 (finite, or +inf: 0): rcp14 then r (2 - D r).
  static OPT_ACT512 __m512 recip(__m512 D) {
    const __m512 R = _mm512_rcp14_ps(D);
    return _mm512_mul_ps(R, _mm512_fnmadd_ps(D, R, _mm512_set1_ps(2.0f)));
  }
  OPT_ACT512 __m512 operator()(__m512 V) const {
    const __m512 One = _mm512_set1_ps(1.0f);
    switch (Kind) {
    case ActKind::None: return V;
    case ActKind::Clamp: return _mm512_min_ps(Q, _mm512_max_ps(P, V));
    case ActKind::Sigmoid: return recip(_mm512_add_ps(One, vec512::exp2Clamped512(_mm512_mul_ps(P, V))));
    case ActKind::Silu: return _mm512_mul_ps(V, recip(_mm512_add_ps(One, vec512::exp2Clamped512(_mm512_mul_ps(P, V)))));
    case ActKind::HardSigmoid:
      return _mm512_max_ps(_mm512_setzero_ps(), _mm512_min_ps(One, _mm512_fmadd_ps(P, V, Q)));
    case ActKind::HardSwish:
      return _mm512_mul_ps(V, _mm512_max_ps(_mm512_setzero_ps(), _mm512_min_ps(One, _mm512_fmadd_ps(P, V, Q))));
    }
    return V;
  }
};
#if !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#undef OPT_ACT512
#endif

#ifdef OPT_HAVE_VECMATH256
#define OPT_ACT256 __attribute__((target("avx2,fma"), always_inline))
/// Act512's AVX2 + FMA twin, 8 lanes: the same formulas, exp2 by vec256::exp2Clamped256, and a
/// plain division where Act512 takes rcp14 + Newton: on Zen 3 the divider is its own pipe, and a
/// SiLU loop measured 0.29 ns per value with vdivps against 0.34 with rcp (12 bits) + one Newton
/// step, with the same accuracy (worst relative error 5.2e-7 against double for |x| <= 10; checked
/// in tests/backends/native/ops/common/FusedActivationTest.cpp).
struct Act256 {
  ActKind Kind;
  __m256 P, Q;
  OPT_ACT256 explicit Act256(const FusedAct &A) : Kind(A.Kind) {
    switch (A.Kind) {
    case ActKind::Clamp: P = _mm256_set1_ps(A.Min), Q = _mm256_set1_ps(A.Max); break;
    case ActKind::Silu: P = _mm256_set1_ps(-A.Alpha * 1.44269504088896341f), Q = _mm256_setzero_ps(); break;
    case ActKind::Sigmoid: P = _mm256_set1_ps(-1.44269504088896341f), Q = _mm256_setzero_ps(); break;
    case ActKind::HardSigmoid:
    case ActKind::HardSwish: P = _mm256_set1_ps(A.Alpha), Q = _mm256_set1_ps(A.Beta); break;
    default: P = Q = _mm256_setzero_ps(); break;
    }
  }
  OPT_ACT256 bool on() const { return Kind != ActKind::None; }
  OPT_ACT256 __m256 operator()(__m256 V) const {
    const __m256 One = _mm256_set1_ps(1.0f);
    switch (Kind) {
    case ActKind::None: return V;
    // max/min return the second operand when either is NaN: the value second, so NaN passes.
    case ActKind::Clamp: return _mm256_min_ps(Q, _mm256_max_ps(P, V));
    case ActKind::Sigmoid: return _mm256_div_ps(One, _mm256_add_ps(One, vec256::exp2Clamped256(_mm256_mul_ps(P, V))));
    case ActKind::Silu: return _mm256_div_ps(V, _mm256_add_ps(One, vec256::exp2Clamped256(_mm256_mul_ps(P, V))));
    case ActKind::HardSigmoid:
      return _mm256_max_ps(_mm256_setzero_ps(), _mm256_min_ps(One, _mm256_fmadd_ps(P, V, Q)));
    case ActKind::HardSwish:
      return _mm256_mul_ps(V, _mm256_max_ps(_mm256_setzero_ps(), _mm256_min_ps(One, _mm256_fmadd_ps(P, V, Q))));
    }
    return V;
  }
};
#undef OPT_ACT256
#endif

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
