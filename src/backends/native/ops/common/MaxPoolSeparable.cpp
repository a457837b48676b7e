// AVX2 separable max pooling (see MaxPoolSeparable.h). NaN: _mm256_max_ps returns its second
// operand when either is NaN, so a NaN would not survive a chain of maxima; each stage also ORs
// the unordered compares of its operands (pairwise, one compare per two operands) into the result,
// which turns a lane with a NaN in its window into a NaN (all bits set). The 3-wide stride-2
// kernel's plain rows instead take plain maxima and fold the loaded vectors into a sum that a NaN
// turns NaN; a plane where it does is redone by the checked rows.
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
#define OPT_SEP_AVX2 __attribute__((target("avx2,fma")))
#define OPT_SEP_INLINE __attribute__((target("avx2,fma"), always_inline)) inline

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

/// The input rows of output row Oh's window that lie inside the plane, into Rows; their count.
inline int64_t windowRows(const DepthwiseGeometry &G, int64_t KH, const float *In, int64_t Oh, const float **Rows) {
  const int64_t Ih0 = Oh * G.SH - G.PH;
  int64_t NR = 0;
  for (int64_t Kh = 0; Kh < KH; ++Kh) {
    const int64_t Ih = Ih0 + Kh * G.DH;
    if (Ih >= 0 && Ih < G.H)
      Rows[NR++] = In + Ih * G.W;
  }
  return NR;
}

/// Room for the input rows of one output row's window that lie inside the plane (windowRows): on
/// the stack up to 64 rows, else on the heap.
struct WindowRowPointers {
  explicit WindowRowPointers(int64_t KH)
      : Heap(static_cast<size_t>(KH > 64 ? KH : 0)), Rows(KH > 64 ? Heap.data() : Stack) {}
  WindowRowPointers(const WindowRowPointers &) = delete;
  WindowRowPointers &operator=(const WindowRowPointers &) = delete;
  const float *Stack[64];
  std::vector<const float *> Heap;
  const float **Rows;
};

template <int SW, int KHc, int KWc>
OPT_SEP_AVX2 void planeRows(const DepthwiseGeometry &G, const float *In, float *Out, float *T) {
  const int64_t KH = KHc > 0 ? KHc : G.KH;
  WindowRowPointers Window(KH);
  const float **Rows = Window.Rows;
  float *Body = T + G.PW;
  for (int64_t Oh = 0; Oh < G.OH; ++Oh) {
    const int64_t NR = windowRows(G, KH, In, Oh, Rows);
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

template <bool Plain> OPT_SEP_INLINE __m256 load(const float *P, __m256i Inside) {
  return Plain ? _mm256_loadu_ps(P) : _mm256_maskload_ps(P, Inside);
}

/// The column maxima over Rows[0..NR) of the 8 input columns from C on, by plain loads (Plain)
/// or by loads masked to Inside.
template <int KHc, bool Plain>
OPT_SEP_INLINE __m256 columnVec(const float *const *Rows, int64_t NR, int64_t C, __m256i Inside) {
  const int64_t Nr = KHc > 0 ? KHc : NR;
  MaxNan A;
  int64_t R = 0;
  if (Nr >= 2)
    A.firstPair(load<Plain>(Rows[0] + C, Inside), load<Plain>(Rows[1] + C, Inside)), R = 2;
  else
    A.first(load<Plain>(Rows[0] + C, Inside)), R = 1;
  for (; R + 2 <= Nr; R += 2)
    A.addPair(load<Plain>(Rows[R] + C, Inside), load<Plain>(Rows[R + 1] + C, Inside));
  if (R < Nr)
    A.add(load<Plain>(Rows[R] + C, Inside));
  return A.result();
}

/// The 8 outputs of 3-wide stride-2 windows from column maxima V0, V1, V2 of 24 consecutive
/// columns (output j: columns 2j, 2j + 1, 2j + 2; only V2's first lane is read), in order.
OPT_SEP_INLINE __m256 windows3s2(__m256 V0, __m256 V1, __m256 V2) {
  // Columns 2..9 and 10..17: each half shifted by two across the 128-bit lanes.
  const __m256 X = _mm256_castsi256_ps(_mm256_alignr_epi8(_mm256_castps_si256(_mm256_permute2f128_ps(V0, V1, 0x21)),
                                                          _mm256_castps_si256(V0), 8));
  const __m256 Y = _mm256_castsi256_ps(_mm256_alignr_epi8(_mm256_castps_si256(_mm256_permute2f128_ps(V1, V2, 0x21)),
                                                          _mm256_castps_si256(V1), 8));
  MaxNan A; // in the in-lane order [0 1 4 5 | 2 3 6 7] of the outputs
  A.firstPair(_mm256_shuffle_ps(V0, V1, _MM_SHUFFLE(2, 0, 2, 0)), _mm256_shuffle_ps(V0, V1, _MM_SHUFFLE(3, 1, 3, 1)));
  A.add(_mm256_shuffle_ps(X, Y, _MM_SHUFFLE(2, 0, 2, 0)));
  return unscramble<2>(A.result());
}

/// Output block B of a row (OW outputs): whole when it fits, or when Spill allows its extra lanes
/// onto the next row (written after this one); else its lanes one by one (a masked store costs
/// ~8% of a 13x13 plane on Zen 3).
OPT_SEP_INLINE void storeBlock(float *O, int64_t B, int64_t OW, bool Spill, __m256 V) {
  if ((B + 1) * kLanes <= OW || Spill) {
    _mm256_storeu_ps(O + B * kLanes, V);
    return;
  }
  alignas(32) float Lanes[kLanes];
  _mm256_store_ps(Lanes, V);
  std::copy(Lanes, Lanes + (OW - B * kLanes), O + B * kLanes);
}

/// columnVec for a window of NR rows, KH of them whole (the template's row count when KHc > 0).
template <int KHc, bool Plain>
OPT_SEP_INLINE __m256 columnVecOf(const float *const *Rows, int64_t NR, int64_t KH, int64_t C, __m256i Inside) {
  return NR == KH ? columnVec<KHc, Plain>(Rows, NR, C, Inside) : columnVec<0, Plain>(Rows, NR, C, Inside);
}

/// The column maxima of the 8 input columns from C on with the lanes outside the row at -inf:
/// plain loads for a vector inside the row, or partly outside but inside [ReadBegin, ReadEnd)
/// (AMD's masked loads are slower), else masked ones.
template <int KHc>
OPT_SEP_INLINE __m256 columnVecEdge(const DepthwiseGeometry &G, const float *const *Rows, int64_t NR, int64_t KH,
                                    const float *ReadBegin, const float *ReadEnd, int64_t C) {
  if (C >= 0 && C + kLanes <= G.W)
    return columnVecOf<KHc, true>(Rows, NR, KH, C, _mm256_setzero_si256());
  if (C + kLanes <= 0 || C >= G.W)
    return _mm256_set1_ps(-INFINITY);
  const __m256i Inside = vec256::laneRange256(-C, G.W - C);
  const __m256 V = Rows[0] + C >= ReadBegin && Rows[NR - 1] + C + kLanes <= ReadEnd
                       ? columnVecOf<KHc, true>(Rows, NR, KH, C, Inside)
                       : columnVecOf<KHc, false>(Rows, NR, KH, C, Inside);
  return _mm256_blendv_ps(_mm256_set1_ps(-INFINITY), V, _mm256_castsi256_ps(Inside));
}

/// One output row O of the 3-wide, stride-2, undilated horizontal window (SqueezeNet's and
/// ResNet's 3x3 / 2 pools) over the input rows Rows[0..NR) (NR >= 1) without a row buffer: per
/// block of 8 outputs the column maxima of its 17 input columns in three registers (the third is
/// the next block's first), then the windows by in-register shuffles; columns outside the row are
/// -inf. Loads may read [ReadBegin, ReadEnd) beyond the plane (the unused lanes of plain loads),
/// and with Spill the row's last block may store whole past the row's end.
template <int KHc>
OPT_SEP_INLINE void rowK3S2(const DepthwiseGeometry &G, const float *const *Rows, int64_t NR, int64_t KH,
                            const float *ReadBegin, const float *ReadEnd, float *O, bool Spill) {
  const int64_t Blocks = (G.OW + kLanes - 1) / kLanes;
  if (G.PW % 2 == 1) {
    // Odd left pad (ResNet's pad 1): the column vectors start at each window's middle column,
    // which keeps them aligned with rows that are (misaligned loads on the rows went from
    // 118 to 131 us on ResNet's pool); a window's left column is the previous one's right.
    int64_t C = 1 - G.PW;
    __m256 Prev = unscramble<2>(_mm256_shuffle_ps(columnVecEdge<KHc>(G, Rows, NR, KH, ReadBegin, ReadEnd, C - 2 * kLanes),
                                                  columnVecEdge<KHc>(G, Rows, NR, KH, ReadBegin, ReadEnd, C - kLanes),
                                                  _MM_SHUFFLE(3, 1, 3, 1)));
    for (int64_t B = 0; B < Blocks; ++B, C += 2 * kLanes) {
      const __m256 A0 = columnVecEdge<KHc>(G, Rows, NR, KH, ReadBegin, ReadEnd, C);
      const __m256 A1 = columnVecEdge<KHc>(G, Rows, NR, KH, ReadBegin, ReadEnd, C + kLanes);
      const __m256 Right = unscramble<2>(_mm256_shuffle_ps(A0, A1, _MM_SHUFFLE(3, 1, 3, 1)));
      // [Prev[7], Right[0..6]]: the left columns.
      const __m256 Left = _mm256_castsi256_ps(_mm256_alignr_epi8(
          _mm256_castps_si256(Right), _mm256_castps_si256(_mm256_permute2f128_ps(Prev, Right, 0x21)), 12));
      MaxNan Mid;
      Mid.firstPair(_mm256_shuffle_ps(A0, A1, _MM_SHUFFLE(2, 0, 2, 0)), _mm256_shuffle_ps(A0, A1, _MM_SHUFFLE(3, 1, 3, 1)));
      MaxNan All;
      All.firstPair(unscramble<2>(Mid.result()), Left);
      storeBlock(O, B, G.OW, Spill, All.result());
      Prev = Right;
    }
    return;
  }
  int64_t C = -G.PW;
  __m256 V0 = columnVecEdge<KHc>(G, Rows, NR, KH, ReadBegin, ReadEnd, C);
  for (int64_t B = 0; B < Blocks; ++B, C += 2 * kLanes) {
    const __m256 V1 = columnVecEdge<KHc>(G, Rows, NR, KH, ReadBegin, ReadEnd, C + kLanes);
    const __m256 V2 = columnVecEdge<KHc>(G, Rows, NR, KH, ReadBegin, ReadEnd, C + 2 * kLanes);
    storeBlock(O, B, G.OW, Spill, windows3s2(V0, V1, V2));
    V0 = V2;
  }
}

/// The last output row whose last block may store whole (-1 for none): its extra lanes land on the
/// plane's next rows, or with SpillNext on the next plane (written after this one), never past it.
inline int64_t lastSpillRow(const DepthwiseGeometry &G, bool SpillNext) {
  const int64_t Room = G.OH * G.OW * (SpillNext ? 2 : 1) - (G.OW + kLanes - 1) / kLanes * kLanes;
  return Room < 0 ? -1 : Room / G.OW;
}

/// rowK3S2 for each output row. Any window height, vertical stride, dilation and pads.
template <int KHc>
OPT_SEP_AVX2 void planeK3S2(const DepthwiseGeometry &G, const float *In, float *Out, const float *ReadBegin,
                            const float *ReadEnd, bool SpillNext) {
  const int64_t KH = KHc > 0 ? KHc : G.KH;
  WindowRowPointers Window(KH);
  const float **Rows = Window.Rows;
  const int64_t LastSpill = lastSpillRow(G, SpillNext);
  for (int64_t Oh = 0; Oh < G.OH; ++Oh) {
    const int64_t NR = windowRows(G, KH, In, Oh, Rows);
    float *O = Out + Oh * G.OW;
    if (NR == 0) // the window lies in the vertical padding
      std::fill(O, O + G.OW, -INFINITY);
    else
      rowK3S2<KHc>(G, Rows, NR, KH, ReadBegin, ReadEnd, O, Oh <= LastSpill);
  }
}

/// The plain maxima over rows R0, R1, R2 of the 8 columns from C on; the first Checked of the
/// loaded vectors folded into S so that a NaN in one of them makes S NaN: added, or the first
/// two multiplied and added in one FMA (a false alarm where a product overflows to +inf and
/// another to -inf, or where 0 meets inf).
template <int Checked>
OPT_SEP_INLINE __m256 column3(const float *R0, const float *R1, const float *R2, int64_t C, __m256 &S) {
  __m256 A = _mm256_loadu_ps(R0 + C), B = _mm256_loadu_ps(R1 + C), D = _mm256_loadu_ps(R2 + C);
  // In registers: GCC folds each load into both the add and the max, which doubled the loads.
  __asm__("" : "+x"(A), "+x"(B), "+x"(D));
  if (Checked == 1)
    S = _mm256_add_ps(S, A);
  else if (Checked == 2)
    S = _mm256_fmadd_ps(A, B, S);
  else
    S = _mm256_fmadd_ps(A, B, _mm256_add_ps(S, D));
  return _mm256_max_ps(_mm256_max_ps(A, B), D);
}

/// The 8 outputs of 3-wide stride-2 windows from column maxima V0, V1, V2 of 24 consecutive
/// columns (only V2's first lane is read), by plain maxima: the pairs of columns (2j, 2j + 1)
/// and the even columns 2j + 2, the evens shifted by one across the lanes with V2's first.
OPT_SEP_INLINE __m256 windows3s2Plain(__m256 V0, __m256 V1, __m256 V2) {
  const __m256 Even = _mm256_shuffle_ps(V0, V1, _MM_SHUFFLE(2, 0, 2, 0));
  const __m256 Pairs = unscramble<2>(_mm256_max_ps(Even, _mm256_shuffle_ps(V0, V1, _MM_SHUFFLE(3, 1, 3, 1))));
  const __m256 E = unscramble<2>(Even);
  const __m256 Next = _mm256_castsi256_ps(_mm256_alignr_epi8(
      _mm256_castps_si256(_mm256_permute2f128_ps(E, V2, 0x21)), _mm256_castps_si256(E), 4));
  return _mm256_max_ps(Pairs, Next);
}

/// The 8 outputs of 3-wide stride-2 windows with left pad 1 (window j: columns 2j - 1, 2j, 2j + 1)
/// from column maxima A0, A1 of the 16 columns from 2j on, by plain maxima; Prev holds the odd
/// columns before them (its last lane, column 2j - 1, is read) and takes A0, A1's.
OPT_SEP_INLINE __m256 windows3s2PlainPad1(__m256 A0, __m256 A1, __m256 &Prev) {
  const __m256 OddS = _mm256_shuffle_ps(A0, A1, _MM_SHUFFLE(3, 1, 3, 1));
  const __m256 Pairs = unscramble<2>(_mm256_max_ps(_mm256_shuffle_ps(A0, A1, _MM_SHUFFLE(2, 0, 2, 0)), OddS));
  const __m256 Odd = unscramble<2>(OddS);
  // [Prev[7], Odd[0..6]]: the windows' left columns.
  const __m256 Left = _mm256_castsi256_ps(
      _mm256_alignr_epi8(_mm256_castps_si256(Odd), _mm256_castps_si256(_mm256_permute2f128_ps(Prev, Odd, 0x21)), 12));
  Prev = Odd;
  return _mm256_max_ps(Pairs, Left);
}

/// Output rows [Oh0, Oh1) of planeK3S2Plain, each from the input rows R0 + k * Step (k the row's
/// index from Oh0), R0 + k * Step + Dil and R0 + k * Step + 2 * Dil, all inside the plane, whose
/// loads up to the last block's last vector (Span floats from the row's start) stay readable.
struct PlainRows {
  const float *R0;
  int64_t Step, Dil, Blocks, OW;
  int64_t More; ///< the column vectors the last block reads after its first (the rest are unused)
  int64_t Span;
  bool Tail;                  ///< the last window's right column (2 OW - pad) lies outside the row: -inf
  __m256 Tail0, Tail1, Tail2; ///< the last block's columns inside the row, by vector
  int64_t LastSpill;          ///< the last row whose last block may store whole
};

/// Left pad Pad (0 or 1). Returns the vectors loaded from the rows of the windows folded by
/// column3 (NaN where one holds a NaN): the first Checked rows of each window (the windows' next
/// Checked rows start the next window: a vertical stride of Checked, undilated), and all three of
/// the last one.
template <int Pad, int Checked>
OPT_SEP_AVX2 __attribute__((noinline)) __m256 plainRowsK3S2(const PlainRows &P, int64_t Oh0, int64_t Oh1, float *Out) {
  // Two sums, one for each column vector of a block: one add or FMA per block on each chain.
  __m256 S1 = _mm256_setzero_ps(), S2 = _mm256_setzero_ps();
  const __m256 Ninf = _mm256_set1_ps(-INFINITY);
  const int64_t Last = 2 * kLanes * (P.Blocks - 1);
  const float *R0 = P.R0;
  for (int64_t Oh = Oh0; Oh < Oh1; ++Oh, R0 += P.Step) {
    const float *R1 = R0 + P.Dil, *R2 = R1 + P.Dil;
    float *O = Out + Oh * P.OW;
    __m256 V = Pad ? Ninf : column3<Checked>(R0, R1, R2, 0, S2);
    for (int64_t C = 0; C < Last; C += 2 * kLanes) {
      if (Pad) {
        const __m256 A0 = column3<Checked>(R0, R1, R2, C, S1), A1 = column3<Checked>(R0, R1, R2, C + kLanes, S2);
        _mm256_storeu_ps(O + C / 2, windows3s2PlainPad1(A0, A1, V));
      } else {
        const __m256 V1 = column3<Checked>(R0, R1, R2, C + kLanes, S1);
        const __m256 V2 = column3<Checked>(R0, R1, R2, C + 2 * kLanes, S2);
        _mm256_storeu_ps(O + C / 2, windows3s2Plain(V, V1, V2));
        V = V2;
      }
    }
    __m256 Result;
    if (Pad) {
      __m256 A0 = column3<Checked>(R0, R1, R2, Last, S1);
      __m256 A1 = P.More > 0 ? column3<Checked>(R0, R1, R2, Last + kLanes, S2) : Ninf;
      if (P.Tail)
        A0 = _mm256_blendv_ps(Ninf, A0, P.Tail0), A1 = _mm256_blendv_ps(Ninf, A1, P.Tail1);
      Result = windows3s2PlainPad1(A0, A1, V);
    } else {
      __m256 V1 = P.More > 0 ? column3<Checked>(R0, R1, R2, Last + kLanes, S1) : Ninf;
      __m256 V2 = P.More > 1 ? column3<Checked>(R0, R1, R2, Last + 2 * kLanes, S2) : Ninf;
      if (P.Tail)
        V = _mm256_blendv_ps(Ninf, V, P.Tail0), V1 = _mm256_blendv_ps(Ninf, V1, P.Tail1),
        V2 = _mm256_blendv_ps(Ninf, V2, P.Tail2);
      Result = windows3s2Plain(V, V1, V2);
    }
    storeBlock(O, P.Blocks - 1, P.OW, Oh <= P.LastSpill, Result);
  }
  // The last window's rows after its first Checked.
  const float *LastRow = P.R0 + (Oh1 - Oh0 - 1) * P.Step;
  for (int K = Checked; K < 3; ++K)
    for (int64_t C = 0; C < P.Span; C += kLanes)
      S1 = _mm256_add_ps(S1, _mm256_loadu_ps(LastRow + K * P.Dil + C));
  return _mm256_add_ps(S1, S2);
}

template <int Pad> using PlainRowsFn = __m256 (*)(const PlainRows &, int64_t, int64_t, float *);

/// The rows whose sums cover every window row: the first SH of each (undilated, SH < 3).
template <int Pad> PlainRowsFn<Pad> plainRowsFor(const DepthwiseGeometry &G) {
  return G.DH == 1 && G.SH == 1   ? &plainRowsK3S2<Pad, 1>
         : G.DH == 1 && G.SH == 2 ? &plainRowsK3S2<Pad, 2>
                                  : &plainRowsK3S2<Pad, 3>;
}

/// Output row Oh by rowK3S2 (its window rows that lie inside the plane, -inf when none).
OPT_SEP_AVX2 __attribute__((noinline)) void edgeRowK3S2(const DepthwiseGeometry &G, const float *In, float *Out,
                                                         const float *ReadBegin, const float *ReadEnd, int64_t Oh,
                                                         bool Spill) {
  const float *Rows[3];
  const int64_t NR = windowRows(G, 3, In, Oh, Rows);
  float *O = Out + Oh * G.OW;
  if (NR == 0)
    std::fill(O, O + G.OW, -INFINITY);
  else
    rowK3S2<3>(G, Rows, NR, 3, ReadBegin, ReadEnd, O, Spill);
}

/// planeK3S2 for 3-tall windows with left pad 0 or 1 (SqueezeNet's and ResNet's pools) by plain
/// maxima: the rows whose three input rows lie inside the plane, and whose loads up to the last
/// block's last vector stay below ReadEnd, by plainRowsK3S2 (plain loads, no per-vector checks);
/// the others by rowK3S2. False when a NaN may have been dropped (the sum of the loaded vectors,
/// or of products of pairs of them, is NaN; a false alarm where +inf and -inf meet, 0 meets inf
/// or the sum overflows both ways): planeK3S2 redoes the plane.
OPT_SEP_AVX2 bool planeK3S2Plain(const DepthwiseGeometry &G, const float *In, float *Out, const float *ReadBegin,
                                 const float *ReadEnd, bool SpillNext) {
  PlainRows P;
  P.Blocks = (G.OW + kLanes - 1) / kLanes, P.OW = G.OW;
  const int64_t W = G.W, Last = 2 * kLanes * (P.Blocks - 1);
  P.Step = G.SH * W, P.Dil = G.DH * W;
  // The last window's right column (2 OW - pad) decides how many vectors the last block reads
  // (the column vectors start at 0 with either pad; pad 1 needs no third).
  P.More = std::min<int64_t>((2 * G.OW - G.PW - Last) / kLanes, 2 - G.PW);
  P.Span = Last + (1 + P.More) * kLanes;
  P.Tail = 2 * G.OW - G.PW >= W;
  P.Tail0 = _mm256_castsi256_ps(vec256::lanesBelow256(W - Last));
  P.Tail1 = _mm256_castsi256_ps(vec256::lanesBelow256(W - Last - kLanes));
  P.Tail2 = _mm256_castsi256_ps(vec256::lanesBelow256(W - Last - 2 * kLanes));
  P.LastSpill = lastSpillRow(G, SpillNext);
  // Output rows [Oh0, Oh1) have their three input rows inside and their reads below ReadEnd.
  const auto Plain = [&](int64_t Oh) {
    const int64_t Ih = Oh * G.SH - G.PH;
    return Ih >= 0 && Ih + 2 * G.DH < G.H && In + (Ih + 2 * G.DH) * W + P.Span <= ReadEnd;
  };
  int64_t Oh0 = 0, Oh1 = G.OH;
  while (Oh0 < Oh1 && !Plain(Oh0))
    ++Oh0;
  while (Oh1 > Oh0 && !Plain(Oh1 - 1))
    --Oh1;
  for (int64_t Oh = 0; Oh < Oh0; ++Oh)
    edgeRowK3S2(G, In, Out, ReadBegin, ReadEnd, Oh, Oh <= P.LastSpill);
  __m256 S = _mm256_setzero_ps();
  if (Oh0 < Oh1) {
    P.R0 = In + (Oh0 * G.SH - G.PH) * W;
    S = G.PW == 1 ? plainRowsFor<1>(G)(P, Oh0, Oh1, Out) : plainRowsFor<0>(G)(P, Oh0, Oh1, Out);
  }
  for (int64_t Oh = Oh1; Oh < G.OH; ++Oh)
    edgeRowK3S2(G, In, Out, ReadBegin, ReadEnd, Oh, Oh <= P.LastSpill);
  return _mm256_testz_ps(_mm256_cmp_ps(S, S, _CMP_UNORD_Q), _mm256_cmp_ps(S, S, _CMP_UNORD_Q));
}

/// The planes in order, so each but the last may read into the next one's input and spill its
/// last rows onto the next one's output (written after it, by this thread).
void planesK3S2(const DepthwiseGeometry &G, const float *In, int64_t InPlane, float *Out, int64_t OutPlane,
                int64_t Count) {
  auto Plane = G.KH == 3 ? &planeK3S2<3> : &planeK3S2<0>;
  const bool PlainRowsFit = G.KH == 3 && G.PW <= 1;
  const float *ReadEnd = In + (Count - 1) * InPlane + G.H * G.W;
  for (int64_t P = 0; P < Count; ++P) {
    const float *PlaneIn = In + P * InPlane;
    float *PlaneOut = Out + P * OutPlane;
    const bool SpillNext = P + 1 < Count && OutPlane == G.OH * G.OW;
    if (!PlainRowsFit || !planeK3S2Plain(G, PlaneIn, PlaneOut, In, ReadEnd, SpillNext))
      Plane(G, PlaneIn, PlaneOut, In, ReadEnd, SpillNext);
  }
}

template <int SW>
void planesSw(const DepthwiseGeometry &G, const float *In, int64_t InPlane, float *Out, int64_t OutPlane, int64_t Count,
              float *T) {
  auto Plane = G.KH == 3 && G.KW == 3   ? &planeRows<SW, 3, 3>
               : G.KH == 2 && G.KW == 2 ? &planeRows<SW, 2, 2>
                                        : &planeRows<SW, 0, 0>;
  for (int64_t P = 0; P < Count; ++P)
    Plane(G, In + P * InPlane, Out + P * OutPlane, T);
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

/// The 3-wide stride-2 undilated window, which needs no row buffer (planeK3S2).
inline bool isK3S2(const DepthwiseGeometry &G) { return G.KW == 3 && G.SW == 2 && G.DW == 1; }

int64_t maxPoolSeparableScratch(const DepthwiseGeometry &G) { return isK3S2(G) ? 0 : scratchFloats(G); }

void maxPoolPlanesSeparableAvx2(const DepthwiseGeometry &G, const float *In, int64_t InPlane, float *Out,
                                int64_t OutPlane, int64_t Count, float *Scratch) {
#ifdef OPT_MAXPOOL_SEP_X86
  if (isK3S2(G))
    return planesK3S2(G, In, InPlane, Out, OutPlane, Count);
  // The column stage writes only the buffer's body, so its -inf padding outlives the planes.
  std::fill(Scratch, Scratch + maxPoolSeparableScratch(G), -INFINITY);
  if (G.SW == 1)
    planesSw<1>(G, In, InPlane, Out, OutPlane, Count, Scratch);
  else
    planesSw<2>(G, In, InPlane, Out, OutPlane, Count, Scratch);
#else
  (void)G, (void)In, (void)InPlane, (void)Out, (void)OutPlane, (void)Count, (void)Scratch;
#endif
}

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
