// QLinearConv (u8/i8): integer Conv in int32 (zero points subtracted, optional int32 bias), then
// y = saturate(rint(acc * x_scale * w_scale[m] / y_scale) + y_zero_point). w_scale and
// w_zero_point are scalars or per output channel. A clamp from FuseConvActivation (kFusedActMin /
// kFusedActMax, bounds of the real-valued conv output) is applied at its quantized bounds.
//
// Variants: the direct reference (serial and parallel) and, on AVX-512 VNNI, u8s8 GEMM on
// VPDPBUSD: weights packed at creation 4 input channels per int32 lane, the input repacked once per
// run into zero-point-padded phase planes with 4 channels interleaved per pixel (s8 inputs flipped
// to u8 with the zero point + 128), so the im2col row of each (4 channels, tap) step is a
// contiguous slice (the "extended rows" scheme of Conv.cpp); the x zero point is folded into a
// per-channel offset bias - x_zp * sum_k(w). Tiles of 8 channels x 48 extended pixels (pixels in
// lanes), or for small planes 6 pixels x 64 channels (channels in lanes); the requantization is the
// reference's double arithmetic, stored straight into the output.
//
// On AVX2 without VNNI, an exact kernel on the same planes: weights as int16 (w - w_zero_point, any
// constant zero point), 4 input channels of a pixel zero-extended to int16 and multiplied-added by
// VPMADDWD against one output channel's 4 weights (pairs of products in int32 lanes: exact, where
// VPMADDUBSW's int16 pair sums saturate); tiles of 4 channels x 8 extended pixels.
#include "backends/native/ops/common/PackedWeights.h"
#include "backends/native/ops/common/QuantCommon.h"
#include "ir/FusedOps.h"

#include <cstring>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

/// The fused clamp's bounds in the output's integer domain: [type min, type max] narrowed to
/// [Q(act_min), Q(act_max)] with Q the QuantizeLinear the fusion removed (exact: Q is monotone).
Status quantizedClamp(const Node &N, ElementType YT, float YS, int32_t YZ, int32_t &Lo, int32_t &Hi) {
  int64_t L, H;
  quantRange(YT, L, H);
  const auto Q = [&](float V) { return std::min(H, std::max(L, roundHalfEven(V / YS) + YZ)); };
  if (N.hasAttr(kFusedActMin)) {
    ASSIGN_OR_RETURN(const float Min, N.getFloat(kFusedActMin, -INFINITY));
    if (!std::isinf(Min) || Min > 0)
      L = std::max(L, Q(Min));
  }
  if (N.hasAttr(kFusedActMax)) {
    ASSIGN_OR_RETURN(const float Max, N.getFloat(kFusedActMax, INFINITY));
    if (!std::isinf(Max) || Max < 0)
      H = std::min(H, Q(Max));
  }
  Lo = static_cast<int32_t>(L), Hi = static_cast<int32_t>(std::max(L, H));
  return Status::ok();
}

OpSchema qlinearConvSchema() {
  OpSchema S;
  S.OpType = "QLinearConv";
  S.MinInputs = 8;
  S.MaxInputs = 9;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireInputType(Ctx, 0, {ElementType::U8, ElementType::I8}));
    RETURN_IF_ERROR(requireInputType(Ctx, 3, {ElementType::U8, ElementType::I8}));
    for (size_t I : {size_t(1), size_t(4), size_t(6)})
      RETURN_IF_ERROR(requireInputType(Ctx, I, {ElementType::F32}));
    RETURN_IF_ERROR(requireSameType(Ctx, 0, 2));
    RETURN_IF_ERROR(requireSameType(Ctx, 3, 5));
    RETURN_IF_ERROR(requireInputType(Ctx, 7, {ElementType::U8, ElementType::I8}));
    if (Ctx.hasInput(8))
      RETURN_IF_ERROR(requireInputType(Ctx, 8, {ElementType::I32}));
    int64_t Group = 1;
    ASSIGN_OR_RETURN(const WindowAttrs W, parseIntConvAttrs(Ctx.N, Ctx.Inputs[0].Shape, Ctx.Inputs[3].Shape, Group));
    Ctx.Outputs[0].Type = Ctx.Inputs[7].Type;
    return inferWindowShape(Ctx, W, Ctx.Inputs[0].Shape, Ctx.Inputs[3].Shape[0], Ctx.Outputs[0].Shape);
  };
  return S;
}

Status runQLinearConv(const Node &N, const WindowAttrs &W, int64_t Group, const KernelContext &C, bool Par) {
  const float XS = loadFloat(C.Inputs[1], 0), YS = loadFloat(C.Inputs[6], 0);
  const std::vector<float> WS = loadFloats(C.Inputs[4]);
  const int32_t XZ = loadZeroPoints(C, 2)[0], YZ = loadZeroPoints(C, 7)[0];
  std::vector<int32_t> Bias;
  if (hasRunInput(C, 8))
    Bias.assign(C.Inputs[8].data<const int32_t>(), C.Inputs[8].data<const int32_t>() + C.Inputs[8].elementCount());
  const TensorView &Y = C.Outputs[0];
  if (WS.empty())
    return runError("qlinearconv", "empty w_scale");
  int32_t Lo, Hi;
  RETURN_IF_ERROR(quantizedClamp(N, Y.Type, YS, YZ, Lo, Hi));
  return intConv("qlinearconv", C, W, Group, C.Inputs[0], C.Inputs[3], XZ, loadZeroPoints(C, 5), Y, Par,
                 [&](size_t I, int32_t Acc, int64_t M) {
                   if (!Bias.empty())
                     Acc += Bias[static_cast<size_t>(M)];
                   const float Mul = XS * WS[WS.size() == 1 ? 0 : static_cast<size_t>(M)] / YS;
                   const int64_t V = roundHalfEven(static_cast<double>(Acc) * Mul + YZ);
                   storeSaturated(Y, I, std::min<int64_t>(Hi, std::max<int64_t>(Lo, V)));
                 });
}

#if defined(__x86_64__)

constexpr int64_t kTileRows = 8; // output channels per microkernel tile (broadcast weights)
constexpr int64_t kTileVecs = 3; // 16-pixel vectors per tile: 8 x 3 accumulators

/// Tile[r][16 v + lane] = sum over the K4 steps s of dot4(u8 A[Off[s] + 64 v + 4 lane ..],
/// s8 Wt[s][r][0..3]): output channel r of the tile at pixel 16 v + lane. The 24 accumulators are
/// named variables: GCC keeps an array of them in memory, storing every one on every step.
template <int NV>
__attribute__((target("avx512f,avx512bw,avx512vnni"))) void vnniTile(const uint8_t *A, const int64_t *Off, int64_t K4,
                                                                      const int8_t *Wt, int32_t *Tile) {
  const __m512i Z = _mm512_setzero_si512();
  __m512i a00 = Z, a01 = Z, a02 = Z, a10 = Z, a11 = Z, a12 = Z, a20 = Z, a21 = Z, a22 = Z, a30 = Z, a31 = Z, a32 = Z;
  __m512i a40 = Z, a41 = Z, a42 = Z, a50 = Z, a51 = Z, a52 = Z, a60 = Z, a61 = Z, a62 = Z, a70 = Z, a71 = Z, a72 = Z;
  for (int64_t S = 0; S < K4; ++S) {
    const uint8_t *P = A + Off[S];
    const __m512i X0 = _mm512_loadu_si512(P);
    const __m512i X1 = NV > 1 ? _mm512_loadu_si512(P + 64) : Z;
    const __m512i X2 = NV > 2 ? _mm512_loadu_si512(P + 128) : Z;
    const int32_t *Wr = reinterpret_cast<const int32_t *>(Wt + S * kTileRows * 4);
#define OPT_VNNI_ROW(R)                                                                            \
  {                                                                                                \
    const __m512i B = _mm512_set1_epi32(Wr[R]);                                                    \
    a##R##0 = _mm512_dpbusd_epi32(a##R##0, X0, B);                                                 \
    if (NV > 1)                                                                                    \
      a##R##1 = _mm512_dpbusd_epi32(a##R##1, X1, B);                                               \
    if (NV > 2)                                                                                    \
      a##R##2 = _mm512_dpbusd_epi32(a##R##2, X2, B);                                               \
  }
    OPT_VNNI_ROW(0) OPT_VNNI_ROW(1) OPT_VNNI_ROW(2) OPT_VNNI_ROW(3)
    OPT_VNNI_ROW(4) OPT_VNNI_ROW(5) OPT_VNNI_ROW(6) OPT_VNNI_ROW(7)
#undef OPT_VNNI_ROW
  }
#define OPT_VNNI_STORE(R)                                                                          \
  _mm512_storeu_si512(Tile + (R * NV) * 16, a##R##0);                                              \
  if (NV > 1)                                                                                      \
    _mm512_storeu_si512(Tile + (R * NV + 1) * 16, a##R##1);                                        \
  if (NV > 2)                                                                                      \
    _mm512_storeu_si512(Tile + (R * NV + 2) * 16, a##R##2);
  OPT_VNNI_STORE(0) OPT_VNNI_STORE(1) OPT_VNNI_STORE(2) OPT_VNNI_STORE(3)
  OPT_VNNI_STORE(4) OPT_VNNI_STORE(5) OPT_VNNI_STORE(6) OPT_VNNI_STORE(7)
#undef OPT_VNNI_STORE
}

/// Where the 16 lanes of one vector of extended positions q (= oh * Wq + ow) land in an output plane
/// of OH x OW: runs of lanes, one per output row the vector touches; lane L of run s goes to
/// Offset[s] + L, for the lanes in Mask[s] (columns ow >= OW and rows past OH are dropped).
struct VectorScatter {
  static constexpr int kMaxRuns = 18; // 16 lanes touch at most 17 rows (Wq = 1)
  int Count = 0;
  int64_t Offset[kMaxRuns];
  __mmask16 Mask[kMaxRuns];

  VectorScatter() {}
  VectorScatter(int64_t Q0, int64_t Wq, int64_t OW, int64_t OH) {
    int64_t Oh = Q0 / Wq, Ow = Q0 % Wq, L0 = 0;
    while (L0 < 16 && Oh < OH) {
      const int64_t N = std::min<int64_t>(16 - L0, std::max<int64_t>(0, OW - Ow));
      if (N > 0) {
        Offset[Count] = Oh * OW + Ow - L0;
        Mask[Count] = static_cast<__mmask16>(((1u << N) - 1u) << L0);
        ++Count;
      }
      L0 += Wq - Ow;
      Ow = 0;
      ++Oh;
    }
  }
};

/// Requantizes Rows x (16 NV) accumulators exactly as the reference: rint(double(acc + RowOff) *
/// RowMul + YZ) clamped to [Lo, Hi] (clamping first is the same: the bounds are integers), and
/// stores the bytes of row r, vector v straight into output plane r at Out + r * OutPlane by Sc[v]
/// (masked stores: no extended-row buffer to crop afterwards).
__attribute__((target("avx512f,avx512bw,avx512vl"))) void requantizeTile(const int32_t *Tile, int NV, int64_t Rows,
                                                                         const int32_t *RowOff, const double *RowMul,
                                                                         double YZ, int32_t Lo, int32_t Hi, uint8_t *Out,
                                                                         int64_t OutPlane, const VectorScatter *Sc) {
  constexpr int RN = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  const __m512d Z = _mm512_set1_pd(YZ), L = _mm512_set1_pd(Lo), H = _mm512_set1_pd(Hi);
  for (int64_t R = 0; R < Rows; ++R) {
    const __m512i O = _mm512_set1_epi32(RowOff[R]);
    const __m512d Mul = _mm512_set1_pd(RowMul[R]);
    for (int V = 0; V < NV; ++V) {
      const __m512i A = _mm512_add_epi32(_mm512_loadu_si512(Tile + (R * NV + V) * 16), O);
      __m512d D0 = _mm512_cvtepi32_pd(_mm512_castsi512_si256(A));
      __m512d D1 = _mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(A, 1));
      D0 = _mm512_add_round_pd(_mm512_mul_round_pd(D0, Mul, RN), Z, RN);
      D1 = _mm512_add_round_pd(_mm512_mul_round_pd(D1, Mul, RN), Z, RN);
      D0 = _mm512_min_pd(_mm512_max_pd(D0, L), H);
      D1 = _mm512_min_pd(_mm512_max_pd(D1, L), H);
      const __m512i Q = _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvt_roundpd_epi32(D0, RN)),
                                           _mm512_cvt_roundpd_epi32(D1, RN), 1);
      const __m128i Bytes = _mm512_cvtepi32_epi8(Q);
      const VectorScatter &S = Sc[V];
      // Masked-off lanes are neither read nor written, so a run's base may lie before the plane.
      const uintptr_t Row = reinterpret_cast<uintptr_t>(Out) + static_cast<uintptr_t>(R * OutPlane);
      for (int K = 0; K < S.Count; ++K)
        _mm_mask_storeu_epi8(reinterpret_cast<void *>(Row + static_cast<uintptr_t>(S.Offset[K])), S.Mask[K], Bytes);
    }
  }
}

constexpr int64_t kPixTile = 6;     // output pixels per transposed tile (broadcast activations)
constexpr int64_t kChanTile = 64;    // output channels per transposed tile: 4 vectors of 16
// Output planes up to this many pixels take the transposed tile. Measured on ResNet-18 shapes (1
// thread, a noisy 2-vCPU machine): 7x7 x 512 channels alone 0.84 vs 1.00 ms (median), inside the
// whole model about even; 14x14 x 256 even, so it stays on extended rows.
constexpr int64_t kSmallPlane = 64;

/// The transposed tile for small output planes (late layers: 7x7 = 49 pixels would fill 49 of 64
/// extended lanes): Tile[r][c] (+)= sum over the K steps s of dot4(u8 A[Off[s] + PixOff[r] ..],
/// s8 Wt[s][c][0..3]) for RP pixels r and 64 channels c (lanes), every lane a real output. With
/// Accumulate the sums add to what Tile holds (a K block after the first).
template <int RP>
__attribute__((target("avx512f,avx512bw,avx512vnni"))) void vnniTileT(const uint8_t *A, const int64_t *Off, int64_t K,
                                                                       const int64_t *PixOff, const int8_t *Wt,
                                                                       int32_t *Tile, bool Accumulate) {
  const __m512i Z = _mm512_setzero_si512();
#define OPT_VNNI_INIT(R, V)                                                                        \
  __m512i a##R##V = Accumulate && RP > R ? _mm512_loadu_si512(Tile + R * 64 + V * 16) : Z;
#define OPT_VNNI_INIT_ROW(R) OPT_VNNI_INIT(R, 0) OPT_VNNI_INIT(R, 1) OPT_VNNI_INIT(R, 2) OPT_VNNI_INIT(R, 3)
  OPT_VNNI_INIT_ROW(0) OPT_VNNI_INIT_ROW(1) OPT_VNNI_INIT_ROW(2)
  OPT_VNNI_INIT_ROW(3) OPT_VNNI_INIT_ROW(4) OPT_VNNI_INIT_ROW(5)
#undef OPT_VNNI_INIT_ROW
#undef OPT_VNNI_INIT
  const uint8_t *P0 = A + PixOff[0], *P1 = A + PixOff[RP > 1 ? 1 : 0], *P2 = A + PixOff[RP > 2 ? 2 : 0];
  const uint8_t *P3 = A + PixOff[RP > 3 ? 3 : 0], *P4 = A + PixOff[RP > 4 ? 4 : 0], *P5 = A + PixOff[RP > 5 ? 5 : 0];
  for (int64_t S = 0; S < K; ++S) {
    const int64_t O = Off[S];
    const int8_t *Ws = Wt + S * kChanTile * 4;
    const __m512i W0 = _mm512_loadu_si512(Ws), W1 = _mm512_loadu_si512(Ws + 64);
    const __m512i W2 = _mm512_loadu_si512(Ws + 128), W3 = _mm512_loadu_si512(Ws + 192);
#define OPT_VNNI_PIX(R)                                                                            \
  if (RP > R) {                                                                                    \
    int32_t Quad;                                                                                  \
    std::memcpy(&Quad, P##R + O, 4);                                                               \
    const __m512i B = _mm512_set1_epi32(Quad);                                                     \
    a##R##0 = _mm512_dpbusd_epi32(a##R##0, B, W0);                                                 \
    a##R##1 = _mm512_dpbusd_epi32(a##R##1, B, W1);                                                 \
    a##R##2 = _mm512_dpbusd_epi32(a##R##2, B, W2);                                                 \
    a##R##3 = _mm512_dpbusd_epi32(a##R##3, B, W3);                                                 \
  }
    OPT_VNNI_PIX(0) OPT_VNNI_PIX(1) OPT_VNNI_PIX(2) OPT_VNNI_PIX(3) OPT_VNNI_PIX(4) OPT_VNNI_PIX(5)
#undef OPT_VNNI_PIX
  }
#define OPT_VNNI_STORE(R)                                                                          \
  if (RP > R) {                                                                                    \
    _mm512_storeu_si512(Tile + R * 64, a##R##0);                                                   \
    _mm512_storeu_si512(Tile + R * 64 + 16, a##R##1);                                              \
    _mm512_storeu_si512(Tile + R * 64 + 32, a##R##2);                                              \
    _mm512_storeu_si512(Tile + R * 64 + 48, a##R##3);                                              \
  }
  OPT_VNNI_STORE(0) OPT_VNNI_STORE(1) OPT_VNNI_STORE(2) OPT_VNNI_STORE(3) OPT_VNNI_STORE(4) OPT_VNNI_STORE(5)
#undef OPT_VNNI_STORE
}

/// requantizeTile for a transposed tile: Rows pixels of 64 channels (lanes), per-channel RowOff /
/// RowMul from C0; pixel r's bytes go to Dst[c * DstStride + PixOut[r]].
__attribute__((target("avx512f,avx512bw"))) void requantizeTileT(const int32_t *Tile, int64_t Rows,
                                                                 const int32_t *RowOff, const double *RowMul, double YZ,
                                                                 int32_t Lo, int32_t Hi, const int64_t *PixOut,
                                                                 uint8_t *Dst, int64_t DstStride) {
  constexpr int RN = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  const __m512d Z = _mm512_set1_pd(YZ), L = _mm512_set1_pd(Lo), H = _mm512_set1_pd(Hi);
  alignas(64) uint8_t Bytes[kPixTile][kChanTile];
  for (int64_t V = 0; V < 4; ++V) {
    const __m512i O = _mm512_loadu_si512(RowOff + 16 * V);
    const __m512d M0 = _mm512_loadu_pd(RowMul + 16 * V), M1 = _mm512_loadu_pd(RowMul + 16 * V + 8);
    for (int64_t R = 0; R < Rows; ++R) {
      const __m512i A = _mm512_add_epi32(_mm512_loadu_si512(Tile + R * 64 + 16 * V), O);
      __m512d D0 = _mm512_cvtepi32_pd(_mm512_castsi512_si256(A));
      __m512d D1 = _mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(A, 1));
      D0 = _mm512_add_round_pd(_mm512_mul_round_pd(D0, M0, RN), Z, RN);
      D1 = _mm512_add_round_pd(_mm512_mul_round_pd(D1, M1, RN), Z, RN);
      D0 = _mm512_min_pd(_mm512_max_pd(D0, L), H);
      D1 = _mm512_min_pd(_mm512_max_pd(D1, L), H);
      const __m512i Q = _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvt_roundpd_epi32(D0, RN)),
                                           _mm512_cvt_roundpd_epi32(D1, RN), 1);
      _mm_storeu_si128(reinterpret_cast<__m128i *>(&Bytes[R][16 * V]), _mm512_cvtepi32_epi8(Q));
    }
  }
  for (int64_t C = 0; C < kChanTile; ++C)
    for (int64_t R = 0; R < Rows; ++R)
      Dst[C * DstStride + PixOut[R]] = Bytes[R][C];
}

/// Where the u8 activations of one group live during a run: SH x SW phase planes of Rq x Wq pixels
/// per 4 input channels, each pixel the 4 channels' bytes (zero point outside the input). Output
/// pixel (oh, ow) is computed at "extended" position q = oh * Wq + ow (columns ow >= OW are
/// discarded), and tap (kh, kw) of 4 channels reads plane position q + tapShift: one contiguous
/// slice per K step for 16 consecutive q.
struct QuantPlanes {
  int64_t H, Wd, OH, OW, KH, KW, SH, SW, DH, DW, PT, PL;
  int64_t Rq, Wq, Phases, PlaneQ, C4, Qvec;

  QuantPlanes(const WindowAttrs &W, const WindowGeometry &G, int64_t Cg) {
    H = G.In[0], Wd = G.In[1], OH = G.Out[0], OW = G.Out[1];
    KH = W.Kernel[0], KW = W.Kernel[1], SH = W.Strides[0], SW = W.Strides[1];
    DH = W.Dilations[0], DW = W.Dilations[1], PT = G.PadBegin[0], PL = G.PadBegin[1];
    Rq = OH + (KH - 1) * DH / SH;
    Wq = OW + (KW - 1) * DW / SW;
    Phases = SH * SW;
    PlaneQ = Rq * Wq;
    C4 = (Cg + 3) / 4;
    Qvec = (OH * Wq + 15) / 16;
  }
  int64_t rowScratch() const { return 4 * ((Wq + 15) / 16 * 16); }
  int64_t c4Bytes() const { return Phases * PlaneQ * 4; }
  /// Reads of the last vectors run past the last plane by under Wq + 16 pixels.
  int64_t totalBytes() const { return C4 * c4Bytes() + (Wq + 32) * 4 + 64; }
  int64_t tapBytes(int64_t Kh, int64_t Kw) const {
    const int64_t Phase = (Kh * DH % SH) * SW + Kw * DW % SW;
    return Phase * PlaneQ * 4 + (Kh * DH / SH * Wq + Kw * DW / SW) * 4;
  }

  /// Fills the planes of 4-channel block C4i from the Cg channels at Xg (plane H x Wd each);
  /// channels past Cg and pixels outside the input hold Pad. Signed inputs are flipped to u8.
  /// Rows: scratch of rowScratch() bytes.
  __attribute__((target("avx512f,avx512bw,avx512vl"))) void fill(const uint8_t *Xg, int64_t Cg, int64_t C4i, uint8_t Pad,
                                                        bool Flip, uint8_t *Dst, uint8_t *Rows) const {
    const int64_t Wq16 = (Wq + 15) / 16 * 16;
    const __m128i FlipMask = _mm_set1_epi8(Flip ? static_cast<char>(0x80) : 0);
    for (int64_t Ph = 0; Ph < SH; ++Ph)
      for (int64_t Pw = 0; Pw < SW; ++Pw) {
        uint8_t *Plane = Dst + C4i * c4Bytes() + (Ph * SW + Pw) * PlaneQ * 4;
        // Columns w with 0 <= w * SW + Pw - PL < Wd.
        const int64_t WLo = std::min(Wq, std::max<int64_t>(0, (PL - Pw + SW - 1) / SW));
        const int64_t WHi = std::max(WLo, std::min(Wq, (Wd + PL - Pw + SW - 1) / SW));
        for (int64_t R = 0; R < Rq; ++R) {
          const int64_t Ih = R * SH + Ph - PT;
          for (int64_t J = 0; J < 4; ++J) {
            uint8_t *T = Rows + J * Wq16;
            const int64_t C = C4i * 4 + J;
            if (C >= Cg || Ih < 0 || Ih >= H) {
              std::memset(T, Pad, static_cast<size_t>(Wq16));
              continue;
            }
            const uint8_t *Src = Xg + (C * H + Ih) * Wd + Pw - PL;
            std::memset(T, Pad, static_cast<size_t>(WLo));
            if (SW == 1) {
              std::memcpy(T + WLo, Src + WLo, static_cast<size_t>(WHi - WLo));
            } else if (SW == 2) { // the even bytes of 64: the low bytes of 32 16-bit lanes
              for (int64_t Wi = WLo; Wi < WHi; Wi += 32) {
                const int64_t N = std::min<int64_t>(32, WHi - Wi);
                const __mmask64 M = N == 32 ? ~0ull >> 1 : (1ull << (2 * N - 1)) - 1ull;
                const __m256i E = _mm512_cvtepi16_epi8(_mm512_maskz_loadu_epi8(M, Src + 2 * Wi));
                _mm256_mask_storeu_epi8(T + Wi, N == 32 ? ~0u : (1u << N) - 1u, E);
              }
            } else {
              for (int64_t Wi = WLo; Wi < WHi; ++Wi)
                T[Wi] = Src[Wi * SW];
            }
            std::memset(T + WHi, Pad, static_cast<size_t>(Wq16 - WHi));
          }
          uint8_t *Out = Plane + R * Wq * 4;
          for (int64_t W0 = 0; W0 < Wq; W0 += 16) {
            const auto Ld = [&](int64_t J) {
              return _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i *>(Rows + J * Wq16 + W0)),
                                   FlipMask);
            };
            const __m128i R0 = Ld(0), R1 = Ld(1), R2 = Ld(2), R3 = Ld(3);
            const __m128i A = _mm_unpacklo_epi8(R0, R1), B = _mm_unpackhi_epi8(R0, R1);
            const __m128i C = _mm_unpacklo_epi8(R2, R3), D = _mm_unpackhi_epi8(R2, R3);
            alignas(16) uint8_t Buf[64];
            const bool Full = W0 + 16 <= Wq;
            uint8_t *O = Full ? Out + W0 * 4 : Buf;
            _mm_storeu_si128(reinterpret_cast<__m128i *>(O), _mm_unpacklo_epi16(A, C));
            _mm_storeu_si128(reinterpret_cast<__m128i *>(O + 16), _mm_unpackhi_epi16(A, C));
            _mm_storeu_si128(reinterpret_cast<__m128i *>(O + 32), _mm_unpacklo_epi16(B, D));
            _mm_storeu_si128(reinterpret_cast<__m128i *>(O + 48), _mm_unpackhi_epi16(B, D));
            if (!Full) // a partial row end: the next row (maybe another thread's) starts right after
              std::memcpy(Out + W0 * 4, Buf, static_cast<size_t>((Wq - W0) * 4));
          }
        }
      }
  }
  /// fill() without AVX-512 instructions (for the AVX2 kernel): the same planes, strided columns
  /// gathered by scalar loads, the 4 channels interleaved with SSE2.
  void fillSse2(const uint8_t *Xg, int64_t Cg, int64_t C4i, uint8_t Pad, bool Flip, uint8_t *Dst, uint8_t *Rows) const {
    const int64_t Wq16 = (Wq + 15) / 16 * 16;
    const __m128i FlipMask = _mm_set1_epi8(Flip ? static_cast<char>(0x80) : 0);
    for (int64_t Ph = 0; Ph < SH; ++Ph)
      for (int64_t Pw = 0; Pw < SW; ++Pw) {
        uint8_t *Plane = Dst + C4i * c4Bytes() + (Ph * SW + Pw) * PlaneQ * 4;
        const int64_t WLo = std::min(Wq, std::max<int64_t>(0, (PL - Pw + SW - 1) / SW));
        const int64_t WHi = std::max(WLo, std::min(Wq, (Wd + PL - Pw + SW - 1) / SW));
        for (int64_t R = 0; R < Rq; ++R) {
          const int64_t Ih = R * SH + Ph - PT;
          for (int64_t J = 0; J < 4; ++J) {
            uint8_t *T = Rows + J * Wq16;
            const int64_t C = C4i * 4 + J;
            if (C >= Cg || Ih < 0 || Ih >= H) {
              std::memset(T, Pad, static_cast<size_t>(Wq16));
              continue;
            }
            const uint8_t *Src = Xg + (C * H + Ih) * Wd + Pw - PL;
            std::memset(T, Pad, static_cast<size_t>(WLo));
            if (SW == 1)
              std::memcpy(T + WLo, Src + WLo, static_cast<size_t>(WHi - WLo));
            else
              for (int64_t Wi = WLo; Wi < WHi; ++Wi)
                T[Wi] = Src[Wi * SW];
            std::memset(T + WHi, Pad, static_cast<size_t>(Wq16 - WHi));
          }
          uint8_t *Out = Plane + R * Wq * 4;
          for (int64_t W0 = 0; W0 < Wq; W0 += 16) {
            const auto Ld = [&](int64_t J) {
              return _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i *>(Rows + J * Wq16 + W0)),
                                   FlipMask);
            };
            const __m128i R0 = Ld(0), R1 = Ld(1), R2 = Ld(2), R3 = Ld(3);
            const __m128i A = _mm_unpacklo_epi8(R0, R1), B = _mm_unpackhi_epi8(R0, R1);
            const __m128i C = _mm_unpacklo_epi8(R2, R3), D = _mm_unpackhi_epi8(R2, R3);
            alignas(16) uint8_t Buf[64];
            const bool Full = W0 + 16 <= Wq;
            uint8_t *O = Full ? Out + W0 * 4 : Buf;
            _mm_storeu_si128(reinterpret_cast<__m128i *>(O), _mm_unpacklo_epi16(A, C));
            _mm_storeu_si128(reinterpret_cast<__m128i *>(O + 16), _mm_unpackhi_epi16(A, C));
            _mm_storeu_si128(reinterpret_cast<__m128i *>(O + 32), _mm_unpacklo_epi16(B, D));
            _mm_storeu_si128(reinterpret_cast<__m128i *>(O + 48), _mm_unpackhi_epi16(B, D));
            if (!Full)
              std::memcpy(Out + W0 * 4, Buf, static_cast<size_t>((Wq - W0) * 4));
          }
        }
      }
  }

};

/// u8/s8 x, s8 weights (or u8 weights with zero point 128, stored as w - 128): packed per group
/// and tile of 8 output channels as [K4 steps][8 channels][4 input channels], K step s = c4 *
/// taps + tap; plus each channel's weight sum for the x zero point.
/// The run-time checks and per-output-channel parameters both packed kernels (VNNI, AVX2) derive:
/// the shapes against the weight and the window, the int32 offset (bias minus the activation zero
/// point, u8 terms, times the weight row sum) and the requantization multiplier of each channel.
struct PackedConvRun {
  WindowGeometry G;
  bool Flip = false; ///< s8 activations (read as u8 + 128)
  int32_t XZ = 0, YZ = 0, Lo = 0, Hi = 0;
  std::vector<int32_t> RowOff;
  std::vector<double> RowMul;
};

Status preparePackedConvRun(const char *Name, const Node &N, const WindowAttrs &W, int64_t Group, int64_t Cg,
                            int64_t M, const PackedArray<int32_t> &RowSum, const KernelContext &Ctx,
                            PackedConvRun &R) {
  const TensorView &X = Ctx.Inputs[0], &Y = Ctx.Outputs[0];
  if (X.rank() != 4 || Y.rank() != 4 || X.Dims[1] != Cg * Group || Y.Dims[1] != M)
    return runError(Name, "input ", joinInts(X.Dims), " does not match the weight");
  R.G = computeWindowGeometry(W, X.Dims);
  if (Y.Dims[0] != X.Dims[0] || Y.Dims[2] != R.G.Out[0] || Y.Dims[3] != R.G.Out[1])
    return runError(Name, "output ", joinInts(Y.Dims), " does not match the window geometry");
  const float XS = loadFloat(Ctx.Inputs[1], 0), YS = loadFloat(Ctx.Inputs[6], 0);
  const std::vector<float> WS = loadFloats(Ctx.Inputs[4]);
  if (WS.size() != 1 && static_cast<int64_t>(WS.size()) != M)
    return runError(Name, "w_scale must be a scalar or per output channel");
  R.Flip = X.Type == ElementType::I8;
  R.XZ = loadZeroPoints(Ctx, 2)[0];
  R.YZ = loadZeroPoints(Ctx, 7)[0];
  const int32_t XZu = R.Flip ? R.XZ + 128 : R.XZ;
  const int32_t *Bias = hasRunInput(Ctx, 8) ? Ctx.Inputs[8].data<const int32_t>() : nullptr;
  if (Bias && static_cast<int64_t>(Ctx.Inputs[8].elementCount()) != M)
    return runError(Name, "bias must have ", M, " values");
  RETURN_IF_ERROR(quantizedClamp(N, Y.Type, YS, R.YZ, R.Lo, R.Hi));
  R.RowOff.resize(static_cast<size_t>(M));
  R.RowMul.resize(static_cast<size_t>(M));
  for (int64_t Mo = 0; Mo < M; ++Mo) {
    // int32 arithmetic wraps like the reference's accumulator.
    R.RowOff[Mo] = static_cast<int32_t>(static_cast<uint32_t>(Bias ? Bias[Mo] : 0) -
                                        static_cast<uint32_t>(XZu) * static_cast<uint32_t>(RowSum[Mo]));
    const float Mul = XS * WS[WS.size() == 1 ? 0 : static_cast<size_t>(Mo)] / YS;
    R.RowMul[Mo] = Mul;
  }
  return Status::ok();
}

/// The weights [M][Cg][Taps] as the tile kernels read them, T per value Value(m, c, tap): per
/// group and tile of Rows output channels [C4 * Taps steps][Rows channels][4 input channels], step
/// c4 * Taps + tap, zero past Cg; and each output channel's weight sum (for the x zero point's
/// offset). Both under Key in the packed-weights cache.
template <class T, class ValueFn>
void packWeightTiles(PackedArray<T> &Packed, PackedArray<int32_t> &RowSum, const std::string &Key, int64_t M,
                     int64_t Group, int64_t Cg, int64_t Taps, int64_t Rows, const ValueFn &Value) {
  const int64_t Mg = M / Group, K4 = (Cg + 3) / 4 * Taps, MTiles = (Mg + Rows - 1) / Rows;
  Packed.borrowOrPack(Key + "/tiles", static_cast<size_t>(Group * MTiles * K4 * Rows * 4), [&](T *P) {
    for (int64_t Mo = 0; Mo < M; ++Mo) {
      const int64_t G = Mo / Mg, Tile = Mo % Mg / Rows, R = Mo % Mg % Rows;
      T *Dst = P + (G * MTiles + Tile) * K4 * Rows * 4;
      for (int64_t C = 0; C < Cg; ++C)
        for (int64_t Tap = 0; Tap < Taps; ++Tap)
          Dst[((C / 4 * Taps + Tap) * Rows + R) * 4 + C % 4] = static_cast<T>(Value(Mo, C, Tap));
    }
  });
  RowSum.borrowOrPack(Key + "/rowsum", static_cast<size_t>(M), [&](int32_t *Sum) {
    for (int64_t Mo = 0; Mo < M; ++Mo)
      for (int64_t C = 0; C < Cg; ++C)
        for (int64_t Tap = 0; Tap < Taps; ++Tap)
          Sum[Mo] += Value(Mo, C, Tap);
  });
}

class QLinearConvVnniKernel : public Kernel {
public:
  /// Transposed: pack for vnniTileT (Mg a multiple of 64) instead of vnniTile.
  /// Key: the packed-weights cache's key of the layout (a compiled folder's packed.bin serves it).
  QLinearConvVnniKernel(Node N, WindowAttrs W, int64_t Group, const ConstData &Wt, int32_t WOffset, bool Transposed,
                        const std::string &Key)
      : N(std::move(N)), W(std::move(W)), Group(Group), Transposed(Transposed) {
    M = Wt.Dims[0], Cg = Wt.Dims[1], KH = Wt.Dims[2], KW = Wt.Dims[3];
    Mg = M / Group;
    Taps = KH * KW;
    C4 = (Cg + 3) / 4;
    K4 = C4 * Taps;
    const int64_t Rows = Transposed ? kChanTile : kTileRows;
    MTiles = (Mg + Rows - 1) / Rows;
    const auto *Src = static_cast<const uint8_t *>(Wt.Data);
    const bool Signed = Wt.Type == ElementType::I8;
    const auto value = [&](int64_t Mo, int64_t C, int64_t T) -> int32_t {
      const uint8_t Byte = Src[(Mo * Cg + C) * Taps + T];
      return Signed ? static_cast<int8_t>(Byte) : static_cast<int32_t>(Byte) - WOffset;
    };
    packWeightTiles(Packed, RowSum, Key, M, Group, Cg, Taps, Rows, value);
  }

  Status run(const KernelContext &Ctx) const override {
    const TensorView &X = Ctx.Inputs[0], &Y = Ctx.Outputs[0];
    PackedConvRun P;
    RETURN_IF_ERROR(preparePackedConvRun(Name, N, W, Group, Cg, M, RowSum, Ctx, P));
    const WindowGeometry &G = P.G;
    const bool Flip = P.Flip;
    const int32_t XZ = P.XZ, YZ = P.YZ, Lo = P.Lo, Hi = P.Hi;
    const std::vector<int32_t> &RowOff = P.RowOff;
    const std::vector<double> &RowMul = P.RowMul;
    const QuantPlanes L(W, G, Cg);
    std::vector<int64_t> Off(static_cast<size_t>(K4));
    for (int64_t C = 0; C < C4; ++C)
      for (int64_t T = 0; T < Taps; ++T)
        Off[C * Taps + T] = C * L.c4Bytes() + L.tapBytes(T / KW, T % KW);
    // Scratch of the calling thread (run() never nests another kernel's run() on its thread); the
    // lambdas use the pointers taken here.
    thread_local std::vector<uint8_t> PlaneBuf;
    PlaneBuf.resize(static_cast<size_t>(L.totalBytes()));
    uint8_t *const Planes = PlaneBuf.data();
    const Parallel &Par = Ctx.Par.ifWorth(X.Dims[0] * M * K4 * 4 * L.OH * L.OW);
    const int64_t QTiles = (L.Qvec + kTileVecs - 1) / kTileVecs;
    const uint8_t *Xd = X.data<const uint8_t>();
    uint8_t *Yd = Y.data<uint8_t>();
    const int64_t InPlane = L.H * L.Wd, OutPlane = L.OH * L.OW;
    for (int64_t Img = 0; Img < X.Dims[0]; ++Img)
      for (int64_t Gr = 0; Gr < Group; ++Gr) {
        const uint8_t *Xg = Xd + (Img * Group + Gr) * Cg * InPlane;
        Par.forRange(static_cast<size_t>(C4), 1, [&](size_t B, size_t E) {
          std::vector<uint8_t> Rows(static_cast<size_t>(L.rowScratch()));
          for (size_t C = B; C < E; ++C)
            L.fill(Xg, Cg, static_cast<int64_t>(C), static_cast<uint8_t>(XZ), Flip, Planes, Rows.data());
        });
        const int64_t M0 = Gr * Mg;
        if (Transposed) {
          runTransposed(L, Planes, Off.data(), Packed.data() + Gr * MTiles * K4 * kChanTile * 4, RowOff.data() + M0,
                        RowMul.data() + M0, YZ, Lo, Hi, Yd + (Img * M + M0) * OutPlane, Par);
          continue;
        }
        const int8_t *Wg = Packed.data() + Gr * MTiles * K4 * kTileRows * 4;
        uint8_t *Yg = Yd + (Img * M + M0) * OutPlane;
        Par.forRange(static_cast<size_t>(QTiles * MTiles), 1, [&](size_t B, size_t E) {
          alignas(64) int32_t Tile[kTileRows * kTileVecs * 16];
          for (size_t T = B; T < E; ++T) {
            const int64_t Qt = static_cast<int64_t>(T) / MTiles, Mt = static_cast<int64_t>(T) % MTiles;
            // Balanced vector counts (1..3) so a short plane does not end in a 1-vector tile.
            const int64_t V0 = Qt * L.Qvec / QTiles, V1 = (Qt + 1) * L.Qvec / QTiles;
            const int NV = static_cast<int>(V1 - V0);
            const uint8_t *A = Planes + V0 * 64;
            const int8_t *Wt = Wg + Mt * K4 * kTileRows * 4;
            if (NV == 3)
              vnniTile<3>(A, Off.data(), K4, Wt, Tile);
            else if (NV == 2)
              vnniTile<2>(A, Off.data(), K4, Wt, Tile);
            else
              vnniTile<1>(A, Off.data(), K4, Wt, Tile);
            const int64_t R0 = Mt * kTileRows, Rows = std::min(kTileRows, Mg - R0);
            VectorScatter Sc[kTileVecs];
            for (int V = 0; V < NV; ++V)
              Sc[V] = VectorScatter((V0 + V) * 16, L.Wq, L.OW, L.OH);
            requantizeTile(Tile, NV, Rows, RowOff.data() + M0 + R0, RowMul.data() + M0 + R0, YZ, Lo, Hi,
                           Yg + R0 * OutPlane, OutPlane, Sc);
          }
        });
      }
    return Status::ok();
  }

  static constexpr const char *Name = "u8s8_qlinearconv__avx512vnni_8x48";

private:
  /// One group's output on transposed tiles: pixels split into balanced tiles of up to 6, channels
  /// into tiles of 64. K runs in blocks whose weights (kTBlock x 256 bytes) stay in L1 while every
  /// pixel tile of the task uses them (partial sums wait in Acc); without that each 64-byte weight
  /// vector came from L2 for 6 multiply-adds. Each result byte goes straight to its output place.
  void runTransposed(const QuantPlanes &L, const uint8_t *Planes, const int64_t *Off, const int8_t *Wg,
                     const int32_t *RowOff, const double *RowMul, double YZ, int32_t Lo, int32_t Hi, uint8_t *Yg,
                     const Parallel &Par) const {
    constexpr int64_t kTBlock = 64;
    const int64_t Pixels = L.OH * L.OW, PTiles = (Pixels + kPixTile - 1) / kPixTile;
    std::vector<int64_t> PixIn(static_cast<size_t>(Pixels));
    for (int64_t P = 0; P < Pixels; ++P)
      PixIn[static_cast<size_t>(P)] = (P / L.OW * L.Wq + P % L.OW) * 4;
    // Tasks: channel tiles, each cut into pixel-tile groups when there are too few for the threads.
    const int64_t Want = 4 * std::max(1, Par.threads());
    const int64_t PGroups = MTiles >= Want ? 1 : std::min(PTiles, (Want + MTiles - 1) / MTiles);
    Par.forRange(static_cast<size_t>(MTiles * PGroups), 1, [&](size_t B, size_t E) {
      std::vector<int32_t> AccBuf(static_cast<size_t>((PTiles / PGroups + 1) * kPixTile * kChanTile));
      int32_t *Acc = AccBuf.data();
      int64_t PixOut[kPixTile];
      for (size_t T = B; T < E; ++T) {
        const int64_t Mt = static_cast<int64_t>(T) / PGroups, Pg = static_cast<int64_t>(T) % PGroups;
        const int64_t T0 = Pg * PTiles / PGroups, T1 = (Pg + 1) * PTiles / PGroups;
        const int8_t *Wt = Wg + Mt * K4 * kChanTile * 4;
        const auto Span = [&](int64_t Pt, int64_t &P0) {
          P0 = Pt * Pixels / PTiles;
          return (Pt + 1) * Pixels / PTiles - P0;
        };
        for (int64_t K0 = 0; K0 < K4; K0 += kTBlock) {
          const int64_t Kb = std::min(kTBlock, K4 - K0);
          for (int64_t Pt = T0; Pt < T1; ++Pt) {
            int64_t P0;
            const int64_t RP = Span(Pt, P0);
            const int64_t *Pix = PixIn.data() + P0;
            int32_t *Tile = Acc + (Pt - T0) * kPixTile * kChanTile;
            const int8_t *Wk = Wt + K0 * kChanTile * 4;
            const bool More = K0 > 0;
            switch (RP) {
            case 6: vnniTileT<6>(Planes, Off + K0, Kb, Pix, Wk, Tile, More); break;
            case 5: vnniTileT<5>(Planes, Off + K0, Kb, Pix, Wk, Tile, More); break;
            case 4: vnniTileT<4>(Planes, Off + K0, Kb, Pix, Wk, Tile, More); break;
            case 3: vnniTileT<3>(Planes, Off + K0, Kb, Pix, Wk, Tile, More); break;
            case 2: vnniTileT<2>(Planes, Off + K0, Kb, Pix, Wk, Tile, More); break;
            default: vnniTileT<1>(Planes, Off + K0, Kb, Pix, Wk, Tile, More); break;
            }
          }
        }
        const int64_t C0 = Mt * kChanTile;
        for (int64_t Pt = T0; Pt < T1; ++Pt) {
          int64_t P0;
          const int64_t RP = Span(Pt, P0);
          for (int64_t R = 0; R < RP; ++R)
            PixOut[R] = P0 + R;
          requantizeTileT(Acc + (Pt - T0) * kPixTile * kChanTile, RP, RowOff + C0, RowMul + C0, YZ, Lo, Hi, PixOut,
                          Yg + C0 * Pixels, Pixels);
        }
      }
    });
  }

  Node N;
  WindowAttrs W;
  int64_t Group;
  bool Transposed;
  int64_t M = 0, Cg = 0, KH = 0, KW = 0, Mg = 0, Taps = 0, C4 = 0, K4 = 0, MTiles = 0;
  PackedArray<int8_t> Packed;
  PackedArray<int32_t> RowSum;
};

/// The VNNI variant handles 2-D convolutions with constant s8 weights of zero point 0 (or u8 of
/// zero point 128) on u8/s8 inputs.
bool vnniSupports(const KernelCreateInfo &I) {
  if (!int8VnniAvailable() || I.Inputs.size() < 8 || !inputIsConst(I, 3) || !inputIsConst(I, 5))
    return false;
  const ConstData &Wt = *I.Inputs[3].Const, &Zp = *I.Inputs[5].Const;
  if (Wt.Dims.size() != 4 || !Wt.Data || !Zp.Data || I.Inputs[0].Shape.getRank() != 4)
    return false;
  if (!(inputIs(I, 0, ElementType::U8) || inputIs(I, 0, ElementType::I8)))
    return false;
  const int32_t Want = Wt.Type == ElementType::I8 ? 0 : 128;
  const auto *Z = static_cast<const uint8_t *>(Zp.Data);
  for (size_t E = 0; E < Zp.elementCount(); ++E)
    if ((Zp.Type == ElementType::I8 ? static_cast<int8_t>(Z[E]) : static_cast<int32_t>(Z[E])) != Want)
      return false;
  return true;
}

KernelVariant vnniVariant() {
  return {QLinearConvVnniKernel::Name, 50, vnniSupports, [](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
            int64_t Group = 1;
            ASSIGN_OR_RETURN(WindowAttrs W, parseIntConvAttrs(I.N, I.Inputs[0].Shape, I.Inputs[3].Shape, Group));
            const ConstData &Wt = *I.Inputs[3].Const;
            if (Wt.Dims[0] % Group != 0)
              return makeError(ErrorCode::Shape, I.N.describe(), ": ", Wt.Dims[0], " output channels do not split into ",
                               Group, " groups");
            // A small output plane known now (the weights' layout depends on it) takes transposed tiles.
            const TensorShape &YS = I.Outputs[0].Shape;
            const bool Small = YS.getRank() == 4 && YS[2].isConst() && YS[3].isConst() &&
                               YS[2].value() * YS[3].value() <= kSmallPlane && (Wt.Dims[0] / Group) % kChanTile == 0;
            markConstConsumed(I, 3);
            const std::string Key =
                packedWeightsKey(I, 3, std::string(QLinearConvVnniKernel::Name) + (Small ? "/chantiles" : "/rowtiles"));
            return makeKernel<QLinearConvVnniKernel>(I.N, std::move(W), Group, Wt, Wt.Type == ElementType::I8 ? 0 : 128,
                                                     Small, Key);
          }};
}

// ---- AVX2 (no VNNI): exact products on VPMADDWD ----

constexpr int64_t kMaddRows = 4; // output channels per AVX2 tile (64-bit weight broadcasts)
// 4-pixel vectors per AVX2 tile: 4 x 2 accumulators, 8 pixels. (4 x 3 needs 17 registers with the
// VPMADDWD result: GCC kept 8 of the 12 accumulators on the stack.)
constexpr int64_t kMaddVecs = 2;

/// The AVX2 microkernel on the planes of QuantPlanes (4 channels per pixel): 16 bytes = 4 extended
/// pixels x 4 channels, zero-extended to int16 (VPMOVZXBW), times one output channel's 4 int16
/// weights broadcast to every pixel (VPBROADCASTQ), VPMADDWD: each int32 lane holds the sum of two
/// products (|255 * 255 * 2| fits: exact; VPMADDUBSW's int16 sums would saturate). Lanes 2p and
/// 2p + 1 are pixel p's two channel pairs, added at the end. Tile[r * 8 + 4 v + p]: output channel
/// r, pixel 4 v + p of the tile.
template <int NV>
__attribute__((target("avx2"))) void maddTile(const uint8_t *A, const int64_t *Off, int64_t K4, const int16_t *Wt,
                                              int32_t *Tile) {
  const __m256i Z = _mm256_setzero_si256();
  __m256i a00 = Z, a01 = Z, a10 = Z, a11 = Z, a20 = Z, a21 = Z, a30 = Z, a31 = Z;
  for (int64_t S = 0; S < K4; ++S) {
    const uint8_t *P = A + Off[S];
    const __m256i X0 = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i *>(P)));
    const __m256i X1 = NV > 1 ? _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i *>(P + 16))) : Z;
    const int16_t *Ws = Wt + S * kMaddRows * 4;
#define OPT_MADD_ROW(R)                                                                            \
  {                                                                                                \
    long long Quad;                                                                                \
    std::memcpy(&Quad, Ws + R * 4, sizeof(Quad));                                                  \
    const __m256i B = _mm256_set1_epi64x(Quad);                                                    \
    a##R##0 = _mm256_add_epi32(a##R##0, _mm256_madd_epi16(X0, B));                                 \
    if (NV > 1)                                                                                    \
      a##R##1 = _mm256_add_epi32(a##R##1, _mm256_madd_epi16(X1, B));                               \
  }
    OPT_MADD_ROW(0) OPT_MADD_ROW(1) OPT_MADD_ROW(2) OPT_MADD_ROW(3)
#undef OPT_MADD_ROW
  }
  // hadd: [v0p0 v0p1 v1p0 v1p1 | v0p2 v0p3 v1p2 v1p3]; the 64-bit permute puts the pixels in order.
#define OPT_MADD_STORE(R)                                                                          \
  _mm256_storeu_si256(reinterpret_cast<__m256i *>(Tile + R * 8),                                   \
                      _mm256_permute4x64_epi64(_mm256_hadd_epi32(a##R##0, a##R##1), 0xD8));
  OPT_MADD_STORE(0) OPT_MADD_STORE(1) OPT_MADD_STORE(2) OPT_MADD_STORE(3)
#undef OPT_MADD_STORE
}

/// Requantizes Rows x 8 tile sums as the reference: rint(double(acc + RowOff) * RowMul + YZ)
/// clamped to [Lo, Hi] (this target has no FMA: the multiply and the add round separately), and
/// stores each output channel's bytes at Out + r * OutPlane + Pos[p] for the Pixels pixels with
/// Pos[p] >= 0 (extended columns past the row are dropped). Run: the pixels are consecutive
/// outputs (Pos[p] = Pos[0] + p, none dropped), stored as one 4- or 8-byte write per channel.
__attribute__((target("avx2"))) void requantizeMaddTile(const int32_t *Tile, int64_t Rows, int64_t Pixels,
                                                        const int32_t *RowOff, const double *RowMul, double YZ,
                                                        int32_t Lo, int32_t Hi, const int64_t *Pos, bool Run,
                                                        bool Signed, uint8_t *Out, int64_t OutPlane) {
  const __m256d Zv = _mm256_set1_pd(YZ), L = _mm256_set1_pd(Lo), H = _mm256_set1_pd(Hi);
  for (int64_t R = 0; R < Rows; ++R) {
    const __m128i O = _mm_set1_epi32(RowOff[R]);
    const __m256d Mul = _mm256_set1_pd(RowMul[R]);
    __m128i Q[kMaddVecs];
    for (int64_t V = 0; V * 4 < Pixels; ++V) {
      const __m128i A = _mm_add_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i *>(Tile + R * 8 + V * 4)), O);
      __m256d D = _mm256_add_pd(_mm256_mul_pd(_mm256_cvtepi32_pd(A), Mul), Zv);
      D = _mm256_round_pd(D, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      D = _mm256_min_pd(_mm256_max_pd(D, L), H);
      Q[V] = _mm256_cvtpd_epi32(D);
    }
    uint8_t *Row = Out + R * OutPlane;
    // In [Lo, Hi], inside the output type: the saturating packs keep every value.
    const __m128i W = _mm_packs_epi32(Q[0], Pixels > 4 ? Q[1] : Q[0]);
    const __m128i Bytes = Signed ? _mm_packs_epi16(W, W) : _mm_packus_epi16(W, W);
    if (Run && Pixels == 8) {
      _mm_storel_epi64(reinterpret_cast<__m128i *>(Row + Pos[0]), Bytes);
    } else if (Run && Pixels == 4) {
      const int32_t Four = _mm_cvtsi128_si32(Bytes);
      std::memcpy(Row + Pos[0], &Four, 4);
    } else {
      alignas(16) uint8_t B[16];
      _mm_store_si128(reinterpret_cast<__m128i *>(B), Bytes);
      for (int64_t P = 0; P < Pixels; ++P)
        if (Pos[P] >= 0)
          Row[Pos[P]] = B[P];
    }
  }
}

/// The AVX2 kernel: u8/s8 x, u8/s8 weights with any constant zero point (per tensor or per output
/// channel; int16 holds w - w_zero_point), packed per group and tile of 4 output channels as [K4
/// steps][4 channels][4 input channels] int16, K step s = c4 * taps + tap (the VNNI kernel's order),
/// plus each channel's weight sum for the x zero point. Tiles of 4 channels x 8 extended pixels.
class QLinearConvAvx2Kernel : public Kernel {
public:
  /// Key: the packed-weights cache's key of the layout (a compiled folder's packed.bin serves it).
  QLinearConvAvx2Kernel(Node N, WindowAttrs W, int64_t Group, const ConstData &Wt, const std::vector<int32_t> &WZp,
                        const std::string &Key)
      : N(std::move(N)), W(std::move(W)), Group(Group) {
    M = Wt.Dims[0], Cg = Wt.Dims[1], KH = Wt.Dims[2], KW = Wt.Dims[3];
    Mg = M / Group;
    Taps = KH * KW;
    C4 = (Cg + 3) / 4;
    K4 = C4 * Taps;
    MTiles = (Mg + kMaddRows - 1) / kMaddRows;
    const auto *Src = static_cast<const uint8_t *>(Wt.Data);
    const bool Signed = Wt.Type == ElementType::I8;
    const auto value = [&](int64_t Mo, int64_t C, int64_t T) -> int32_t {
      const uint8_t Byte = Src[(Mo * Cg + C) * Taps + T];
      const int32_t Zw = WZp[WZp.size() == 1 ? 0 : static_cast<size_t>(Mo)];
      return (Signed ? static_cast<int32_t>(static_cast<int8_t>(Byte)) : static_cast<int32_t>(Byte)) - Zw;
    };
    packWeightTiles(Packed, RowSum, Key, M, Group, Cg, Taps, kMaddRows, value);
  }

  Status run(const KernelContext &Ctx) const override {
    const TensorView &X = Ctx.Inputs[0], &Y = Ctx.Outputs[0];
    PackedConvRun P;
    RETURN_IF_ERROR(preparePackedConvRun(Name, N, W, Group, Cg, M, RowSum, Ctx, P));
    const WindowGeometry &G = P.G;
    const bool Flip = P.Flip;
    const int32_t XZ = P.XZ, YZ = P.YZ, Lo = P.Lo, Hi = P.Hi;
    const std::vector<int32_t> &RowOff = P.RowOff;
    const std::vector<double> &RowMul = P.RowMul;
    const QuantPlanes L(W, G, Cg);
    std::vector<int64_t> Off(static_cast<size_t>(K4));
    for (int64_t C = 0; C < C4; ++C)
      for (int64_t T = 0; T < Taps; ++T)
        Off[C * Taps + T] = C * L.c4Bytes() + L.tapBytes(T / KW, T % KW);
    thread_local std::vector<uint8_t> PlaneBuf;
    PlaneBuf.resize(static_cast<size_t>(L.totalBytes()));
    uint8_t *const Planes = PlaneBuf.data();
    const Parallel &Par = Ctx.Par.ifWorth(X.Dims[0] * M * K4 * 4 * L.OH * L.OW);
    const int64_t Vecs = (L.OH * L.Wq + 3) / 4; // 4-pixel vectors of extended positions
    const int64_t QTiles = (Vecs + kMaddVecs - 1) / kMaddVecs;
    const uint8_t *Xd = X.data<const uint8_t>();
    uint8_t *Yd = Y.data<uint8_t>();
    const int64_t InPlane = L.H * L.Wd, OutPlane = L.OH * L.OW;
    for (int64_t Img = 0; Img < X.Dims[0]; ++Img)
      for (int64_t Gr = 0; Gr < Group; ++Gr) {
        const uint8_t *Xg = Xd + (Img * Group + Gr) * Cg * InPlane;
        Par.forRange(static_cast<size_t>(C4), 1, [&](size_t B, size_t E) {
          std::vector<uint8_t> Rows(static_cast<size_t>(L.rowScratch()));
          for (size_t C = B; C < E; ++C)
            L.fillSse2(Xg, Cg, static_cast<int64_t>(C), static_cast<uint8_t>(XZ), Flip, Planes, Rows.data());
        });
        const int64_t M0 = Gr * Mg;
        const int16_t *Wg = Packed.data() + Gr * MTiles * K4 * kMaddRows * 4;
        uint8_t *Yg = Yd + (Img * M + M0) * OutPlane;
        Par.forRange(static_cast<size_t>(QTiles * MTiles), 1, [&](size_t B, size_t E) {
          alignas(32) int32_t Tile[kMaddRows * 8];
          int64_t Pos[kMaddVecs * 4];
          int64_t PosQt = -1;
          bool Run = false;
          for (size_t T = B; T < E; ++T) {
            // Channel tiles fastest: a task's consecutive tiles share the pixels (and Pos).
            const int64_t Qt = static_cast<int64_t>(T) / MTiles, Mt = static_cast<int64_t>(T) % MTiles;
            const int64_t V0 = Qt * Vecs / QTiles, V1 = (Qt + 1) * Vecs / QTiles; // balanced: 1..2 vectors
            const int NV = static_cast<int>(V1 - V0);
            if (Qt != PosQt) {
              Run = true;
              for (int64_t P = 0; P < NV * 4; ++P) {
                const int64_t Q = V0 * 4 + P, Oh = Q / L.Wq, Ow = Q % L.Wq;
                Pos[P] = Oh < L.OH && Ow < L.OW ? Oh * L.OW + Ow : -1;
                Run &= Pos[P] >= 0 && Pos[P] == Pos[0] + P;
              }
              PosQt = Qt;
            }
            const uint8_t *A = Planes + V0 * 16;
            const int16_t *Wt = Wg + Mt * K4 * kMaddRows * 4;
            if (NV == 2)
              maddTile<2>(A, Off.data(), K4, Wt, Tile);
            else
              maddTile<1>(A, Off.data(), K4, Wt, Tile);
            const int64_t R0 = Mt * kMaddRows, Rows = std::min(kMaddRows, Mg - R0);
            requantizeMaddTile(Tile, Rows, NV * 4, RowOff.data() + M0 + R0, RowMul.data() + M0 + R0, YZ, Lo, Hi, Pos,
                               Run, Y.Type == ElementType::I8, Yg + R0 * OutPlane, OutPlane);
          }
        });
      }
    return Status::ok();
  }

  static constexpr const char *Name = "q_qlinearconv__avx2_madd_4x8";

private:
  Node N;
  WindowAttrs W;
  int64_t Group;
  int64_t M = 0, Cg = 0, KH = 0, KW = 0, Mg = 0, Taps = 0, C4 = 0, K4 = 0, MTiles = 0;
  PackedArray<int16_t> Packed;
  PackedArray<int32_t> RowSum;
};

/// The AVX2 variant: 2-D convolutions with constant u8/s8 weights and constant weight zero points
/// (1 or M values) on u8/s8 inputs.
bool avx2Supports(const KernelCreateInfo &I) {
  if (!int8Avx2Available() || I.Inputs.size() < 8 || !inputIsConst(I, 3) || !inputIsConst(I, 5))
    return false;
  const ConstData &Wt = *I.Inputs[3].Const, &Zp = *I.Inputs[5].Const;
  if (Wt.Dims.size() != 4 || !Wt.Data || !Zp.Data || I.Inputs[0].Shape.getRank() != 4 || Zp.Type != Wt.Type)
    return false;
  if (Zp.elementCount() != 1 && static_cast<int64_t>(Zp.elementCount()) != Wt.Dims[0])
    return false;
  return inputIs(I, 0, ElementType::U8) || inputIs(I, 0, ElementType::I8);
}

KernelVariant avx2Variant() {
  return {QLinearConvAvx2Kernel::Name, 40, avx2Supports, [](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
            int64_t Group = 1;
            ASSIGN_OR_RETURN(WindowAttrs W, parseIntConvAttrs(I.N, I.Inputs[0].Shape, I.Inputs[3].Shape, Group));
            const ConstData &Wt = *I.Inputs[3].Const, &Zp = *I.Inputs[5].Const;
            if (Wt.Dims[0] % Group != 0)
              return makeError(ErrorCode::Shape, I.N.describe(), ": ", Wt.Dims[0], " output channels do not split into ",
                               Group, " groups");
            std::vector<int32_t> WZp;
            for (size_t E = 0; E < Zp.elementCount(); ++E)
              WZp.push_back(Zp.Type == ElementType::I8 ? static_cast<const int8_t *>(Zp.Data)[E]
                                                       : static_cast<const uint8_t *>(Zp.Data)[E]);
            markConstConsumed(I, 3);
            return makeKernel<QLinearConvAvx2Kernel>(I.N, std::move(W), Group, Wt, WZp,
                                                     packedWeightsKey(I, 3, QLinearConvAvx2Kernel::Name));
          }};
}
#endif

OpKernels qlinearConvKernels() {
  OpKernels K;
  K.OpType = "QLinearConv";
  for (bool Par : {false, true}) {
    const std::string Name = Par ? "q_qlinearconv__parallel" : "q_qlinearconv__ref";
    K.Variants.push_back({Name, Par ? 10 : 0, nullptr, [Par](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
                            int64_t Group = 1;
                            ASSIGN_OR_RETURN(WindowAttrs W, parseIntConvAttrs(I.N, I.Inputs[0].Shape, I.Inputs[3].Shape, Group));
                            const Node N = I.N;
                            return makeKernel<FunctionKernel>([N, W, Group, Par](const KernelContext &C) {
                              return runQLinearConv(N, W, Group, C, Par);
                            });
                          }});
  }
#if defined(__x86_64__)
  K.Variants.push_back(vnniVariant());
  K.Variants.push_back(avx2Variant());
#endif
  K.TestCases = [] {
    const auto Q = [](std::vector<int64_t> D, ElementType T, bool Const = false) {
      TestInput I = tensorInput(std::move(D), T);
      I.Low = T == ElementType::U8 ? 0 : -128, I.High = T == ElementType::U8 ? 255 : 127;
      I.Constant = Const;
      return I;
    };
    const auto F = [](std::vector<int64_t> D, std::vector<double> V) { return valuesInput(D, V, ElementType::F32, true); };
    const auto Z = [](std::vector<int64_t> D, std::vector<double> V, ElementType T) { return valuesInput(D, V, T, true); };
    const ElementType U8 = ElementType::U8, I8 = ElementType::I8;
    const auto BiasOf = [](int64_t M) {
      TestInput B = tensorInput({M}, ElementType::I32);
      B.Low = -3000, B.High = 3000;
      return B;
    };
    // Per-channel scales spread over a factor of 4 (so outputs use the whole u8 range).
    const auto Scales = [](int64_t M, double Base) {
      std::vector<double> S(static_cast<size_t>(M));
      for (int64_t I = 0; I < M; ++I)
        S[static_cast<size_t>(I)] = Base * (1.0 + 3.0 * static_cast<double>(I % 7) / 6.0);
      return S;
    };
    const auto Relu = []() {
      AttrValue V;
      V.K = AttrValue::Kind::Float;
      V.F = 0.0f;
      return V;
    };
    const auto Six = []() {
      AttrValue V;
      V.K = AttrValue::Kind::Float;
      V.F = 6.0f;
      return V;
    };
    return std::vector<OpTestCase>{
        testCase("u8", {Q({1, 1, 7, 7}, U8), F({}, {0.0039}), Z({}, {0}, U8), Q({1, 1, 1, 1}, U8, true), F({}, {0.0079}),
                        Z({}, {0}, U8), F({}, {0.0079}), Z({}, {0}, U8)}),
        testCase("pads_bias_per_channel",
                 {Q({2, 3, 6, 6}, U8), F({}, {0.01}), Z({}, {120}, U8), Q({4, 3, 3, 3}, I8, true), F({4}, {0.01, 0.02, 0.005, 0.03}),
                  Z({4}, {0, 0, 0, 0}, I8), F({}, {0.5}), Z({}, {128}, U8), BiasOf(4)},
                 {{"pads", attrInts({1, 1, 1, 1})}, {"strides", attrInts({2, 1})}}),
        testCase("i8_group", {Q({1, 4, 5, 5}, I8), F({}, {0.02}), Z({}, {-2}, I8), Q({4, 2, 3, 3}, I8, true), F({}, {0.01}),
                              Z({}, {0}, I8), F({}, {0.3}), Z({}, {5}, I8)},
                 {{"group", attrInt(2)}}),
        // Shapes of a ResNet block (scaled down): odd channel counts (not multiples of 4 / 8), an
        // output row not a multiple of 16, per-channel scales, bias, fused Relu.
        testCase("u8s8_3x3_pad_bias_relu",
                 {Q({1, 13, 11, 19}, U8), F({}, {0.02}), Z({}, {3}, U8), Q({21, 13, 3, 3}, I8, true),
                  F({21}, Scales(21, 0.002)), Z({21}, std::vector<double>(21, 0.0), I8), F({}, {0.05}), Z({}, {0}, U8),
                  BiasOf(21)},
                 {{"pads", attrInts({1, 1, 1, 1})}, {kFusedActMin, Relu()}}),
        testCase("u8s8_7x7_s2_stem",
                 {Q({1, 3, 23, 29}, U8), F({}, {0.0187}), Z({}, {114}, U8), Q({16, 3, 7, 7}, I8, true),
                  F({16}, Scales(16, 0.003)), Z({16}, std::vector<double>(16, 0.0), I8), F({}, {0.08}), Z({}, {0}, U8),
                  BiasOf(16)},
                 {{"pads", attrInts({3, 3, 3, 3})}, {"strides", attrInts({2, 2})}, {kFusedActMin, Relu()}}),
        testCase("u8s8_1x1_s2_asym_pad",
                 {Q({2, 9, 10, 9}, U8), F({}, {0.03}), Z({}, {200}, U8), Q({10, 9, 1, 1}, I8, true), F({}, {0.004}),
                  Z({}, {0}, I8), F({}, {0.02}), Z({}, {128}, U8), BiasOf(10)},
                 {{"pads", attrInts({0, 1, 1, 0})}, {"strides", attrInts({2, 2})}}),
        testCase("s8x_u8w_dilated_clip_group",
                 {Q({1, 6, 12, 12}, I8), F({}, {0.02}), Z({}, {-7}, I8), Q({9, 2, 3, 3}, U8, true), F({9}, Scales(9, 0.003)),
                  Z({9}, std::vector<double>(9, 128.0), U8), F({}, {0.01}), Z({}, {-10}, I8), BiasOf(9)},
                 {{"pads", attrInts({2, 1, 2, 1})},
                  {"dilations", attrInts({2, 1})},
                  {"group", attrInt(3)},
                  {kFusedActMin, Relu()},
                  {kFusedActMax, Six()}}),
        // Small planes with 64k channels per group: the transposed tiles (pixel tiles of 6 and less).
        testCase("u8s8_small_plane_transposed",
                 {Q({1, 37, 7, 9}, U8), F({}, {0.015}), Z({}, {9}, U8), Q({64, 37, 3, 3}, I8, true), F({64}, Scales(64, 0.0007)),
                  Z({64}, std::vector<double>(64, 0.0), I8), F({}, {0.03}), Z({}, {2}, U8), BiasOf(64)},
                 {{"pads", attrInts({1, 1, 1, 1})}, {kFusedActMin, Relu()}}),
        testCase("s8x_small_plane_transposed_group_s2",
                 {Q({2, 10, 13, 13}, I8), F({}, {0.02}), Z({}, {-5}, I8), Q({128, 5, 3, 3}, I8, true), F({}, {0.004}),
                  Z({}, {0}, I8), F({}, {0.05}), Z({}, {3}, I8), BiasOf(128)},
                 {{"pads", attrInts({1, 1, 1, 1})}, {"strides", attrInts({2, 2})}, {"group", attrInt(2)}}),
        // The AVX2 kernel's general weights: u8 with per-channel zero points anywhere in 0..255, a
        // column stride of 3 (scalar gather), 10 channels (a 2-channel tile at the end).
        testCase("u8w_any_zero_points_stride3",
                 {Q({1, 7, 14, 17}, U8), F({}, {0.02}), Z({}, {10}, U8), Q({10, 7, 3, 3}, U8, true), F({10}, Scales(10, 0.002)),
                  Z({10}, {0, 3, 77, 128, 200, 255, 1, 90, 160, 254}, U8), F({}, {0.2}), Z({}, {100}, U8), BiasOf(10)},
                 {{"pads", attrInts({1, 1, 1, 1})}, {"strides", attrInts({3, 3})}}),
        // Products whose pairs pass int16 (255 x -128 twice): VPMADDUBSW would saturate them.
        testCase("pairs_past_int16",
                 {valuesInput({1, 8, 6, 6}, {255, 255, 254, 255, 0}, U8, false), F({}, {0.01}), Z({}, {0}, U8),
                  valuesInput({8, 8, 3, 3}, {-128, -128, 127, -128, -127}, I8, true), F({}, {0.0005}), Z({}, {0}, I8),
                  F({}, {0.5}), Z({}, {128}, U8)},
                 {{"pads", attrInts({1, 1, 1, 1})}}),
        testCase("u8s8_deep_small_plane",
                 {Q({1, 70, 4, 4}, U8), F({}, {0.01}), Z({}, {0}, U8), Q({40, 70, 3, 3}, I8, true), F({40}, Scales(40, 0.0005)),
                  Z({40}, std::vector<double>(40, 0.0), I8), F({}, {0.04}), Z({}, {0}, U8), BiasOf(40)},
                 {{"pads", attrInts({1, 1, 1, 1})}}),
    };
  };
  return K;
}

OPT_REGISTER_HEAVY_SCHEMA(QLinearConv, qlinearConvSchema());
OPT_REGISTER_KERNELS(QLinearConv, qlinearConvKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
