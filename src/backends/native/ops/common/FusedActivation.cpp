// Fused activations: parsing from a node's attributes and the in-place loop (see FusedActivation.h).
#include "backends/native/ops/common/FusedActivation.h"
#include "backends/native/ops/common/SimdDispatch.h"

#include <algorithm>
#include <string>

#include "ir/FusedOps.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

Result<FusedAct> fusedActOf(const Node &N, const FusedActKeys &Keys) {
  const char *MinKey = Keys.Min, *MaxKey = Keys.Max, *KindKey = Keys.Kind;
  FusedAct A;
  const bool Clamp = N.hasAttr(MinKey) || N.hasAttr(MaxKey);
  if (Clamp) {
    A.Kind = ActKind::Clamp;
    ASSIGN_OR_RETURN(A.Min, N.getFloat(MinKey, -INFINITY));
    ASSIGN_OR_RETURN(A.Max, N.getFloat(MaxKey, INFINITY));
  }
  if (!KindKey || !N.hasAttr(KindKey))
    return A;
  if (Clamp)
    return makeError(ErrorCode::Model, N.describe(), ": attribute '", KindKey, "' and a fused clamp ('", MinKey,
                     "', '", MaxKey, "') cannot both be set");
  ASSIGN_OR_RETURN(const std::string Kind, N.getString(KindKey, ""));
  float Alpha = 1.0f, Beta = 0.0f;
  if (Kind == kFusedActSigmoid) {
    A.Kind = ActKind::Sigmoid;
  } else if (Kind == kFusedActSilu) {
    A.Kind = ActKind::Silu;
  } else if (Kind == kFusedActHardSigmoid) {
    A.Kind = ActKind::HardSigmoid, Alpha = 0.2f, Beta = 0.5f;
  } else if (Kind == kFusedActHardSwish) {
    A.Kind = ActKind::HardSwish, Alpha = 1.0f / 6.0f, Beta = 0.5f;
  } else {
    return makeError(ErrorCode::Model, N.describe(), ": attribute '", KindKey, "' has the unknown activation '", Kind,
                     "' (expected ", kFusedActSigmoid, ", ", kFusedActSilu, ", ", kFusedActHardSigmoid, " or ",
                     kFusedActHardSwish, ")");
  }
  ASSIGN_OR_RETURN(A.Alpha, N.getFloat(Keys.Alpha, Alpha));
  ASSIGN_OR_RETURN(A.Beta, N.getFloat(Keys.Beta, Beta));
  if (!std::isfinite(A.Alpha) || !std::isfinite(A.Beta))
    return makeError(ErrorCode::Model, N.describe(), ": the fused activation's alpha and beta must be finite");
  return A;
}

Result<FusedAct> convFusedActOf(const Node &N) { return fusedActOf(N, kConvActKeys); }

namespace {

#ifdef OPT_HAVE_VECMATH512
OPT_TARGET_AVX512 void applyFusedActAvx512(const FusedAct &A, const float *X, float *Y, size_t Count) {
  const Act512 Av(A);
  size_t I = 0;
  for (; I + 16 <= Count; I += 16)
    _mm512_storeu_ps(Y + I, Av(_mm512_loadu_ps(X + I)));
  if (I < Count) {
    const __mmask16 M = static_cast<__mmask16>((1u << (Count - I)) - 1u);
    _mm512_mask_storeu_ps(Y + I, M, Av(_mm512_maskz_loadu_ps(M, X + I)));
  }
}
#endif

} // namespace

#ifdef OPT_HAVE_VECMATH256
OPT_TARGET_AVX2 void applyFusedActAvx2(const FusedAct &A, const float *X, float *Y, size_t Count) {
  const Act256 Av(A);
  size_t I = 0;
  for (; I + 16 <= Count; I += 16) { // two vectors per step: two exp chains in flight
    const __m256 V0 = Av(_mm256_loadu_ps(X + I)), V1 = Av(_mm256_loadu_ps(X + I + 8));
    _mm256_storeu_ps(Y + I, V0), _mm256_storeu_ps(Y + I + 8, V1);
  }
  if (I + 8 <= Count) {
    _mm256_storeu_ps(Y + I, Av(_mm256_loadu_ps(X + I)));
    I += 8;
  }
  if (I < Count) { // lane j < Count - I: masked load (zeros elsewhere) and store
    const __m256i M = vec256::lanesBelow256(static_cast<int64_t>(Count - I));
    _mm256_maskstore_ps(Y + I, M, Av(_mm256_maskload_ps(X + I, M)));
  }
}
#else
void applyFusedActAvx2(const FusedAct &A, const float *X, float *Y, size_t Count) {
  for (size_t I = 0; I < Count; ++I)
    Y[I] = A(X[I]);
}
#endif

void applyFusedAct(const FusedAct &A, const float *X, float *Y, size_t Count) {
  if (!A.on()) {
    if (X != Y)
      std::copy(X, X + Count, Y);
    return;
  }
#ifdef OPT_HAVE_VECMATH512
  if (simdAvx512()) {
    applyFusedActAvx512(A, X, Y, Count);
    return;
  }
#endif
#ifdef OPT_HAVE_VECMATH256
  if (simdAvx2()) {
    applyFusedActAvx2(A, X, Y, Count);
    return;
  }
#endif
  for (size_t I = 0; I < Count; ++I)
    Y[I] = A(X[I]);
}

void applyFusedAct(const FusedAct &A, float *Y, size_t Count) { applyFusedAct(A, Y, Y, Count); }

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
