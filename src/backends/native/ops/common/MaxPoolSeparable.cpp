// AVX2 separable max pooling (see MaxPoolSeparable.h). NaN: _mm256_max_ps returns its second
// operand when either is NaN, so a NaN would not survive a chain of maxima; each stage also ORs
// the unordered compares of its operands (pairwise, one compare per two operands) into the result,
// which turns a lane with a NaN in its window into a NaN (all bits set).
#include "backends/native/ops/common/MaxPoolSeparable.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/CpuFeatures.h"

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>

#include "backends/native/ops/common/VecMath256.h"
#define OPT_MAXPOOL_SEP_X86 1
#endif

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

namespace {
constexpr int64_t kLanes = 8;

inline int64_t roundUp8(int64_t V) { return (V + kLanes - 1) / kLanes * kLanes; }

/// Buffer layout: T[t] is the column max of input column t - PW; T[0, PW) and everything from
/// PW + W on stay -inf. Reads reach index OWr * SW + (KW - 1) * DW + 8 (stride 2 loads 16 floats
/// per tap), writes PW + roundUp8(W).
inline int64_t scratchFloats(const DepthwiseGeometry &G) {
  const int64_t Reads = roundUp8(G.OW) * G.SW + (G.KW - 1) * G.DW + 2 * kLanes;
  return std::max(Reads, G.PW + roundUp8(G.W)) + kLanes;
}

#ifdef OPT_MAXPOOL_SEP_X86
#define OPT_SEP_AVX2 __attribute__((target("avx2")))
#define OPT_SEP_INLINE __attribute__((target("avx2"), always_inline)) inline

/// Running max of a window plus the lanes where one of its operands was NaN.
struct MaxNan {
  __m256 M, N;
  OPT_SEP_INLINE void first(__m256 A) { M = A, N = _mm256_cmp_ps(A, A, _CMP_UNORD_Q); }
  OPT_SEP_INLINE void firstPair(__m256 A, __m256 B) { M = _mm256_max_ps(A, B), N = _mm256_cmp_ps(A, B, _CMP_UNORD_Q); }
  OPT_SEP_INLINE void addPair(__m256 A, __m256 B) {
    M = _mm256_max_ps(M, _mm256_max_ps(A, B));
    N = _mm256_or_ps(N, _mm256_cmp_ps(A, B, _CMP_UNORD_Q));
  }
  OPT_SEP_INLINE void add(__m256 A) {
    M = _mm256_max_ps(M, A);
    N = _mm256_or_ps(N, _mm256_cmp_ps(A, A, _CMP_UNORD_Q));
  }
  OPT_SEP_INLINE __m256 result() const { return _mm256_or_ps(M, N); }
};

/// T[PW + c] = max over rows Rows[0..NR) of the input column c, for every column of the plane
/// (the last partial vector's lanes beyond W written as -inf, which the right padding needs).
/// PlainTail: the 8 floats from each row's last partial vector on lie inside the input (the
/// plane continues below the row), so the tail takes plain loads instead of masked ones.
template <int KHc>
OPT_SEP_AVX2 void columnMax(const float *const *Rows, int64_t NR, int64_t W, float *T, bool PlainTail) {
  const int64_t Nr = KHc > 0 ? KHc : NR;
  const int64_t Full = W / kLanes * kLanes;
  for (int64_t C = 0; C < Full; C += kLanes) {
    MaxNan A;
    int64_t R = 0;
    if (Nr >= 2)
      A.firstPair(_mm256_loadu_ps(Rows[0] + C), _mm256_loadu_ps(Rows[1] + C)), R = 2;
    else
      A.first(_mm256_loadu_ps(Rows[0] + C)), R = 1;
    for (; R + 2 <= Nr; R += 2)
      A.addPair(_mm256_loadu_ps(Rows[R] + C), _mm256_loadu_ps(Rows[R + 1] + C));
    if (R < Nr)
      A.add(_mm256_loadu_ps(Rows[R] + C));
    _mm256_storeu_ps(T + C, A.result());
  }
  if (Full < W) {
    const __m256i Mask = vec256::lanesBelow256(W - Full);
    MaxNan A;
    if (PlainTail) { // lanes from W on read the next row; the blend below drops them
      A.first(_mm256_loadu_ps(Rows[0] + Full));
      for (int64_t R = 1; R < Nr; ++R)
        A.add(_mm256_loadu_ps(Rows[R] + Full));
    } else {
      A.first(_mm256_maskload_ps(Rows[0] + Full, Mask));
      for (int64_t R = 1; R < Nr; ++R)
        A.add(_mm256_maskload_ps(Rows[R] + Full, Mask));
    }
    _mm256_storeu_ps(T + Full, _mm256_blendv_ps(_mm256_set1_ps(-INFINITY), A.result(), _mm256_castsi256_ps(Mask)));
  }
}

/// Tap Src[0], Src[SW], ..., Src[7 * SW]; stride 2 in the in-lane order [0 2 8 10 | 4 6 12 14]
/// (unscrambled once per output vector by unscramble()).
template <int SW> OPT_SEP_INLINE __m256 tap(const float *Src) {
  if (SW == 1)
    return _mm256_loadu_ps(Src);
  return _mm256_shuffle_ps(_mm256_loadu_ps(Src), _mm256_loadu_ps(Src + kLanes), _MM_SHUFFLE(2, 0, 2, 0));
}

template <int SW> OPT_SEP_INLINE __m256 unscramble(__m256 V) {
  if (SW == 1)
    return V;
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(V), _MM_SHUFFLE(3, 1, 2, 0)));
}

/// Out[o] = max over kw of T[o * SW + kw * DW] for o in [0, OW). Spill: the last partial vector
/// may store whole (its extra lanes land on the next output row, written after this one).
template <int SW, int KWc>
OPT_SEP_AVX2 void rowMax(const float *T, int64_t KWr, int64_t DW, int64_t OW, float *Out, bool Spill) {
  const int64_t KW = KWc > 0 ? KWc : KWr;
  for (int64_t O = 0; O < OW; O += kLanes) {
    const float *Src = T + O * SW;
    MaxNan A;
    int64_t K = 0;
    if (KW >= 2)
      A.firstPair(tap<SW>(Src), tap<SW>(Src + DW)), K = 2;
    else
      A.first(tap<SW>(Src)), K = 1;
    for (; K + 2 <= KW; K += 2)
      A.addPair(tap<SW>(Src + K * DW), tap<SW>(Src + (K + 1) * DW));
    if (K < KW)
      A.add(tap<SW>(Src + K * DW));
    const __m256 V = unscramble<SW>(A.result());
    if (OW - O >= kLanes || Spill)
      _mm256_storeu_ps(Out + O, V);
    else
      _mm256_maskstore_ps(Out + O, vec256::lanesBelow256(OW - O), V);
  }
}

template <int SW, int KHc, int KWc>
OPT_SEP_AVX2 void planeRows(const DepthwiseGeometry &G, const float *In, float *Out, float *T) {
  const int64_t KH = KHc > 0 ? KHc : G.KH;
  const float *Stack[64]; // the input rows of one output row's window that lie inside the plane
  std::vector<const float *> Heap(static_cast<size_t>(KH > 64 ? KH : 0));
  const float **Rows = KH > 64 ? Heap.data() : Stack;
  float *Body = T + G.PW;
  for (int64_t Oh = 0; Oh < G.OH; ++Oh) {
    const int64_t Ih0 = Oh * G.SH - G.PH;
    int64_t NR = 0;
    for (int64_t Kh = 0; Kh < KH; ++Kh) {
      const int64_t Ih = Ih0 + Kh * G.DH;
      if (Ih >= 0 && Ih < G.H)
        Rows[NR++] = In + Ih * G.W;
    }
    float *O = Out + Oh * G.OW;
    if (NR == 0) { // the window lies in the vertical padding
      std::fill(O, O + G.OW, -INFINITY);
      continue;
    }
    // Plain tail loads while the lowest row read has a full row below it (AMD's masked loads
    // and stores cost several times a plain one; SqueezeNet's 27- and 13-wide pools felt it).
    const bool PlainTail = Rows[NR - 1] + G.W / kLanes * kLanes + kLanes <= In + G.H * G.W;
    if (NR == KH)
      columnMax<KHc>(Rows, NR, G.W, Body, PlainTail);
    else
      columnMax<0>(Rows, NR, G.W, Body, PlainTail);
    rowMax<SW, KWc>(T, G.KW, G.DW, G.OW, O, (Oh * G.OW + roundUp8(G.OW)) <= G.OH * G.OW);
  }
}

template <int SW> void planeSw(const DepthwiseGeometry &G, const float *In, float *Out, float *T) {
  if (G.KH == 3 && G.KW == 3)
    planeRows<SW, 3, 3>(G, In, Out, T);
  else if (G.KH == 2 && G.KW == 2)
    planeRows<SW, 2, 2>(G, In, Out, T);
  else
    planeRows<SW, 0, 0>(G, In, Out, T);
}
#endif
} // namespace

bool maxPoolSeparableAvx2Supported(const DepthwiseGeometry &G) {
#ifdef OPT_MAXPOOL_SEP_X86
  static const bool Cpu = cpuFeatures().avx2Fma();
  return Cpu && (G.SW == 1 || G.SW == 2) && G.SH >= 1 && G.DH >= 1 && G.DW >= 1 && G.KH >= 1 && G.KW >= 1 &&
         G.PW >= 0 && G.PH >= 0;
#else
  (void)G;
  return false;
#endif
}

int64_t maxPoolSeparableScratch(const DepthwiseGeometry &G) { return scratchFloats(G); }

void maxPoolPlaneSeparableAvx2(const DepthwiseGeometry &G, const float *In, float *Out, float *Scratch) {
#ifdef OPT_MAXPOOL_SEP_X86
  std::fill(Scratch, Scratch + scratchFloats(G), -INFINITY);
  if (G.SW == 1)
    planeSw<1>(G, In, Out, Scratch);
  else
    planeSw<2>(G, In, Out, Scratch);
#else
  (void)G, (void)In, (void)Out, (void)Scratch;
#endif
}

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
