// AVX-512 flat-plane depthwise convolution (see DepthwiseFlat.h). Four vectors are accumulated
// together (four independent FMA chains: one chain of 9 dependent FMAs per vector would wait on
// the FMA latency).
#include "backends/native/ops/common/DepthwiseFlat.h"
#include "core/CpuFeatures.h"

#include <algorithm>

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#define OPT_DWFLAT_X86 1
#endif

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

namespace {
constexpr int64_t kLanes = 16, kMaxTaps = 25;

#ifdef OPT_DWFLAT_X86
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

/// Vectors [B0, B0 + V) of the plane, V accumulators at once.
template <int V, int Taps>
__attribute__((target("avx512f,fma"), always_inline)) inline void
flatVectors(const FlatDepthwisePlan &P, int64_t NTaps, const __m512 *Kv, __m512 Bias, const Act512 &Act,
            const float *In, float *Out, int64_t OutFirst, int64_t B0) {
  const int64_t T = Taps > 0 ? Taps : NTaps;
  const int64_t Plane = P.G.OH * P.G.OW;
  const uint16_t *M = P.Masks.data() + B0 * T;
  const int64_t *Off = P.TapOffsets.data();
  __m512 Acc[V];
  for (int J = 0; J < V; ++J)
    Acc[J] = Bias;
  for (int64_t Ti = 0; Ti < T; ++Ti) {
    const float *Src = In + B0 * kLanes + Off[Ti];
    for (int J = 0; J < V; ++J)
      Acc[J] = _mm512_fmadd_ps(Kv[Ti], _mm512_maskz_loadu_ps(static_cast<__mmask16>(M[J * T + Ti]), Src + J * kLanes),
                               Acc[J]);
  }
  for (int J = 0; J < V; ++J) {
    __m512 R = Acc[J];
    if (Act.on())
      R = Act(R);
    const int64_t P0 = (B0 + J) * kLanes, Left = Plane - P0;
    const __mmask16 Store = Left >= kLanes ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << Left) - 1u);
    _mm512_mask_storeu_ps(Out + (P0 - OutFirst), Store, R);
  }
}

/// Vectors [Begin, End) of the plane; pixel Begin * 16 goes to Out[0].
template <int Taps>
__attribute__((target("avx512f,fma"))) void flatPlane(const FlatDepthwisePlan &P, const float *In, const float *K,
                                                      float Bias, float *Out, int64_t Begin, int64_t End) {
  const int64_t NTaps = P.G.KH * P.G.KW;
  __m512 Kv[Taps > 0 ? Taps : kMaxTaps];
  for (int64_t T = 0; T < NTaps; ++T)
    Kv[T] = _mm512_set1_ps(K[T]);
  const __m512 Bv = _mm512_set1_ps(Bias);
  const Act512 Act(P.G.Act);
  const int64_t First = Begin * kLanes;
  int64_t B = Begin;
  for (; B + 4 <= End; B += 4)
    flatVectors<4, Taps>(P, NTaps, Kv, Bv, Act, In, Out, First, B);
  for (; B < End; ++B)
    flatVectors<1, Taps>(P, NTaps, Kv, Bv, Act, In, Out, First, B);
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif
} // namespace

bool depthwiseFlatSupported(const DepthwiseGeometry &G) {
#ifdef OPT_DWFLAT_X86
  static const bool Cpu = cpuFeatures().avx512Fma();
  return Cpu && G.SH == 1 && G.SW == 1 && G.DH == 1 && G.DW == 1 && G.OH == G.H && G.OW == G.W && G.KH >= 1 &&
         G.KW >= 1 && G.KH * G.KW <= kMaxTaps;
#else
  (void)G;
  return false;
#endif
}

FlatDepthwisePlan planDepthwiseFlat(const DepthwiseGeometry &G) {
  FlatDepthwisePlan P;
  P.G = G;
  const int64_t Plane = G.OH * G.OW, Taps = G.KH * G.KW;
  P.Blocks = (Plane + kLanes - 1) / kLanes;
  P.TapOffsets.resize(static_cast<size_t>(Taps));
  for (int64_t Kh = 0; Kh < G.KH; ++Kh)
    for (int64_t Kw = 0; Kw < G.KW; ++Kw)
      P.TapOffsets[static_cast<size_t>(Kh * G.KW + Kw)] = (Kh - G.PH) * G.W + (Kw - G.PW);
  P.Masks.assign(static_cast<size_t>(P.Blocks * Taps), 0);
  // Per 16-pixel block: which lanes have their input row (per kh) and column (per kw) inside the
  // plane; a tap's mask is the AND of the two. Pixels are walked in order, no divisions (a 112 x
  // 112 plane is planned per run when its shape was not known at creation).
  std::vector<uint16_t> RowBits(static_cast<size_t>(G.KH)), ColBits(static_cast<size_t>(G.KW));
  int64_t Oh = 0, Ow = 0;
  for (int64_t B = 0; B < P.Blocks; ++B) {
    std::fill(RowBits.begin(), RowBits.end(), 0);
    std::fill(ColBits.begin(), ColBits.end(), 0);
    for (int64_t L = 0; L < kLanes && B * kLanes + L < Plane; ++L) {
      for (int64_t Kh = 0; Kh < G.KH; ++Kh) {
        const int64_t Ih = Oh - G.PH + Kh;
        RowBits[static_cast<size_t>(Kh)] |= static_cast<uint16_t>((Ih >= 0 && Ih < G.H) ? 1u << L : 0u);
      }
      for (int64_t Kw = 0; Kw < G.KW; ++Kw) {
        const int64_t Iw = Ow - G.PW + Kw;
        ColBits[static_cast<size_t>(Kw)] |= static_cast<uint16_t>((Iw >= 0 && Iw < G.W) ? 1u << L : 0u);
      }
      if (++Ow == G.OW)
        Ow = 0, ++Oh;
    }
    for (int64_t Kh = 0; Kh < G.KH; ++Kh)
      for (int64_t Kw = 0; Kw < G.KW; ++Kw)
        P.Masks[static_cast<size_t>(B * Taps + Kh * G.KW + Kw)] =
            static_cast<uint16_t>(RowBits[static_cast<size_t>(Kh)] & ColBits[static_cast<size_t>(Kw)]);
  }
  return P;
}

bool sameGeometry(const DepthwiseGeometry &A, const DepthwiseGeometry &B) {
  return A.H == B.H && A.W == B.W && A.OH == B.OH && A.OW == B.OW && A.KH == B.KH && A.KW == B.KW && A.SH == B.SH &&
         A.SW == B.SW && A.DH == B.DH && A.DW == B.DW && A.PH == B.PH && A.PW == B.PW && A.Act == B.Act;
}

std::shared_ptr<const FlatDepthwisePlan> cachedFlatPlan(const DepthwiseGeometry &G) {
  if (!depthwiseFlatSupported(G))
    return nullptr;
  return std::make_shared<const FlatDepthwisePlan>(planDepthwiseFlat(G));
}

void depthwiseFlatAvx512(const FlatDepthwisePlan &P, const float *In, const float *K, float Bias, float *Out) {
  depthwiseFlatRangeAvx512(P, In, K, Bias, Out, 0, P.Blocks);
}

void depthwiseFlatRangeAvx512(const FlatDepthwisePlan &P, const float *In, const float *K, float Bias, float *Out,
                              int64_t Begin, int64_t End) {
#ifdef OPT_DWFLAT_X86
  if (P.G.KH * P.G.KW == 9)
    flatPlane<9>(P, In, K, Bias, Out, Begin, End);
  else
    flatPlane<0>(P, In, K, Bias, Out, Begin, End);
#else
  (void)P, (void)In, (void)K, (void)Bias, (void)Out, (void)Begin, (void)End;
#endif
}

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
