// com.microsoft MatMulIntegerToFloat (ONNX Runtime's contrib op; also what passes/FuseQdq makes of a
// dynamically quantized MatMul: MatMulInteger -> Cast(float) -> Mul(a_scale * b_scale) [-> Add(bias)],
// the graph of onnxruntime.quantization.quantize_dynamic):
//   Y = float((A - a_zero_point) x (B - b_zero_point)) * (a_scale * b_scale[n]) (+ bias[n]).
// The integer product is exact (int32), the product of the scales and the scaling are float32 in
// the unfused graph's order, so Y is bit-identical to the unfused ops. a_scale / a_zero_point are
// scalars (DynamicQuantizeLinear's), b_scale / b_zero_point scalars or one per column of B.
//
// Variants: the reference (serial and parallel) and, on AVX-512 VNNI, a VPDPBUSD kernel for a
// constant 2-D B: B packed at creation into 16-column panels of 4-row groups (s8; a u8 B is shifted
// by 128 with its zero point), column sums kept for the zero-point terms; A's rows are read in place
// (u8; an s8 A is shifted by 128 per run). Tiles of 6 rows x 64 columns; one row (a decoder step)
// streams B once, four panels at a time - a quarter of float32 weights' bytes. On AVX2 without VNNI,
// an exact VPMADDWD kernel of the same structure: B packed into 8-column panels of k pairs (s8,
// sign-extended to int16 on load), A minus its zero point widened to int16 once per run, tiles of
// 6 rows x 16 columns (one row: 64 columns); no VPMADDUBSW, whose int16 pair sums saturate.
#include "backends/native/ops/common/NormCommon.h"
#include "backends/native/ops/common/PackedWeights.h"
#include "backends/native/ops/common/QuantCommon.h"

#include <cstring>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

constexpr size_t kA = 0, kB = 1, kAScale = 2, kBScale = 3, kAZp = 4, kBZp = 5, kBias = 6;

OpSchema matMulIntegerToFloatSchema() {
  OpSchema S;
  S.Domain = "com.microsoft";
  S.OpType = "MatMulIntegerToFloat";
  S.MinInputs = 4;
  S.MaxInputs = 7;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireInputType(Ctx, kA, {ElementType::U8, ElementType::I8}));
    RETURN_IF_ERROR(requireInputType(Ctx, kB, {ElementType::U8, ElementType::I8}));
    RETURN_IF_ERROR(requireInputType(Ctx, kAScale, {ElementType::F32}));
    RETURN_IF_ERROR(requireInputType(Ctx, kBScale, {ElementType::F32}));
    if (Ctx.hasInput(kAZp))
      RETURN_IF_ERROR(requireSameType(Ctx, kA, kAZp));
    if (Ctx.hasInput(kBZp))
      RETURN_IF_ERROR(requireSameType(Ctx, kB, kBZp));
    if (Ctx.hasInput(kBias))
      RETURN_IF_ERROR(requireInputType(Ctx, kBias, {ElementType::F32}));
    for (size_t I : {kAScale, kAZp})
      if (paramCount(Ctx, I) > 1)
        return Ctx.error(ErrorCode::Shape, "input ", I, " must be a scalar (one value for all of A)");
    Ctx.Outputs[0].Type = ElementType::F32;
    return inferMatMulShape(Ctx, kA, kB, Ctx.Outputs[0].Shape);
  };
  return S;
}

/// The float parameters of a run: a_scale * b_scale per column (1 or N values) and the bias.
struct Scaling {
  std::vector<float> Mult; ///< a_scale * b_scale[n], 1 or N values
  const float *Bias = nullptr;
};

Result<Scaling> scalingOf(const KernelContext &C, int64_t N) {
  Scaling S;
  if (C.Inputs[kAScale].elementCount() != 1)
    return runError("matmulintegertofloat", "a_scale must have one value, got ", C.Inputs[kAScale].elementCount());
  const float AS = loadFloat(C.Inputs[kAScale], 0);
  const std::vector<float> BS = loadFloats(C.Inputs[kBScale]);
  if (BS.size() != 1 && static_cast<int64_t>(BS.size()) != N)
    return runError("matmulintegertofloat", "b_scale must have 1 or ", N, " values, got ", BS.size());
  for (float B : BS)
    S.Mult.push_back(AS * B);
  if (hasRunInput(C, kBias)) {
    if (static_cast<int64_t>(C.Inputs[kBias].elementCount()) != N)
      return runError("matmulintegertofloat", "bias must have ", N, " values, got ", C.Inputs[kBias].elementCount());
    S.Bias = C.Inputs[kBias].data<float>();
  }
  return S;
}

Status runReference(const KernelContext &C, bool Par) {
  const TensorView &B = C.Inputs[kB], &Y = C.Outputs[0];
  const int64_t N = B.rank() >= 2 ? B.Dims.back() : 1;
  ASSIGN_OR_RETURN(const Scaling S, scalingOf(C, N));
  float *Out = Y.data<float>();
  return intMatMul("matmulintegertofloat", C, C.Inputs[kA], B, loadZeroPoints(C, kAZp), loadZeroPoints(C, kBZp), Y, Par,
                   [&](size_t I, int32_t Acc, int64_t, int64_t Col) {
                     const float Mult = S.Mult[S.Mult.size() == 1 ? 0 : static_cast<size_t>(Col)];
                     const float Scaled = static_cast<float>(Acc) * Mult; // Cast, then Mul
                     Out[I] = S.Bias ? Scaled + S.Bias[Col] : Scaled;     // then Add
                   });
}

#if defined(__x86_64__)
// GCC 12 flags the undefined pass-through operand inside the conversion intrinsics.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

constexpr int64_t kPanel = 16;     // columns per packed panel (one vector of int32 sums)
constexpr int64_t kTileRows = 6;   // rows per GEMM tile
constexpr int64_t kTilePanels = 4; // panels per tile: 6 x 4 accumulators, 64 columns

/// B packed for VPDPBUSD: panel p, 4-row group g holds B'[4g + i][16p + j] at byte 64 g + 4 j + i
/// (B' = B as s8; a u8 B minus 128), zero past K and N. ColSum[n] = sum_k B'[k][n]; Zp[n] = b's
/// zero point in B' terms.
struct PackedInt8B {
  int64_t K = 0, N = 0, Groups = 0, Panels = 0;
  PackedArray<int8_t> Data;
  PackedArray<int32_t> ColSum;
  std::vector<int32_t> Zp;
  bool AnyZp = false;
};

/// Key: the packed-weights cache's key of the layout (a compiled folder's packed.bin serves it).
PackedInt8B packInt8B(const ConstData &B, const std::vector<int32_t> &BZp, const std::string &Key) {
  PackedInt8B P;
  P.K = B.Dims[0], P.N = B.Dims[1], P.Groups = (P.K + 3) / 4, P.Panels = (P.N + kPanel - 1) / kPanel;
  const bool U8 = B.Type == ElementType::U8;
  const int32_t Shift = U8 ? 128 : 0;
  const uint8_t *Src = static_cast<const uint8_t *>(B.Data ? B.Data : B.Source);
  const auto value = [&](int64_t K, int64_t J) -> int32_t {
    return (U8 ? static_cast<int32_t>(Src[K * P.N + J]) : static_cast<int32_t>(static_cast<int8_t>(Src[K * P.N + J]))) -
           Shift;
  };
  P.Data.borrowOrPack(Key + "/panels", static_cast<size_t>(P.Panels * P.Groups * 64), [&](int8_t *D) {
    for (int64_t K = 0; K < P.K; ++K)
      for (int64_t J = 0; J < P.N; ++J)
        D[((J / kPanel) * P.Groups + K / 4) * 64 + (J % kPanel) * 4 + K % 4] = static_cast<int8_t>(value(K, J));
  });
  P.ColSum.borrowOrPack(Key + "/colsum", static_cast<size_t>(P.Panels * kPanel), [&](int32_t *Sum) {
    for (int64_t K = 0; K < P.K; ++K)
      for (int64_t J = 0; J < P.N; ++J)
        Sum[J] += value(K, J);
  });
  P.Zp.assign(static_cast<size_t>(P.Panels * kPanel), 0);
  for (int64_t J = 0; J < P.N; ++J) {
    P.Zp[static_cast<size_t>(J)] = BZp[BZp.size() == 1 ? 0 : static_cast<size_t>(J)] - Shift;
    P.AnyZp |= P.Zp[static_cast<size_t>(J)] != 0;
  }
  return P;
}

/// Acc[r][v] += sum over groups of dot4(A row r's 4 bytes, panel v's 16 x 4 bytes). ARow[r] points
/// at the row's group 0 (u8, at least Groups * 4 bytes); Bp at panel 0 of the tile, panels
/// PanelBytes apart.
template <int R, int V>
__attribute__((target("avx512f,avx512bw,avx512vnni"), always_inline)) inline void
vnniTile(const uint8_t *const *ARow, const int8_t *Bp, int64_t PanelBytes, int64_t Groups, __m512i (&Acc)[R][V]) {
#pragma GCC unroll 8
  for (int I = 0; I < R; ++I)
#pragma GCC unroll 4
    for (int J = 0; J < V; ++J)
      Acc[I][J] = _mm512_setzero_si512();
  for (int64_t G = 0; G < Groups; ++G) {
    __m512i Bv[V];
#pragma GCC unroll 4
    for (int J = 0; J < V; ++J) {
      Bv[J] = _mm512_loadu_si512(Bp + J * PanelBytes + G * 64);
    }
#pragma GCC unroll 8
    for (int I = 0; I < R; ++I) {
      int32_t Word;
      std::memcpy(&Word, ARow[I] + G * 4, sizeof(Word));
      const __m512i Av = _mm512_set1_epi32(Word);
#pragma GCC unroll 4
      for (int J = 0; J < V; ++J)
        Acc[I][J] = _mm512_dpbusd_epi32(Acc[I][J], Av, Bv[J]);
    }
  }
}

/// The full 6 x 4 tile and the one-row 1 x 4 tile with the accumulators as named variables: GCC
/// keeps an array of them in memory around VPDPBUSD, storing every one on every step.
#define OPT_DOT(R, J) a##R##J = _mm512_dpbusd_epi32(a##R##J, Av, B##J)
#define OPT_DOT_ROW(R)                                                                             \
  {                                                                                                \
    int32_t Word;                                                                                  \
    std::memcpy(&Word, ARow[R] + G * 4, sizeof(Word));                                             \
    const __m512i Av = _mm512_set1_epi32(Word);                                                    \
    OPT_DOT(R, 0);                                                                                 \
    OPT_DOT(R, 1);                                                                                 \
    OPT_DOT(R, 2);                                                                                 \
    OPT_DOT(R, 3);                                                                                 \
  }
#define OPT_ZERO_ROW(R) __m512i a##R##0 = Z, a##R##1 = Z, a##R##2 = Z, a##R##3 = Z
#define OPT_SAVE_ROW(R) Acc[R][0] = a##R##0, Acc[R][1] = a##R##1, Acc[R][2] = a##R##2, Acc[R][3] = a##R##3

__attribute__((target("avx512f,avx512bw,avx512vnni"), noinline)) void vnniTile6x4(const uint8_t *const *ARow, const int8_t *Bp,
                                                                          int64_t PanelBytes, int64_t Groups,
                                                                          __m512i (&Acc)[6][4]) {
  const __m512i Z = _mm512_setzero_si512();
  OPT_ZERO_ROW(0);
  OPT_ZERO_ROW(1);
  OPT_ZERO_ROW(2);
  OPT_ZERO_ROW(3);
  OPT_ZERO_ROW(4);
  OPT_ZERO_ROW(5);
  for (int64_t G = 0; G < Groups; ++G) {
    const int8_t *Src = Bp + G * 64;
    const __m512i B0 = _mm512_loadu_si512(Src), B1 = _mm512_loadu_si512(Src + PanelBytes);
    const __m512i B2 = _mm512_loadu_si512(Src + 2 * PanelBytes), B3 = _mm512_loadu_si512(Src + 3 * PanelBytes);
    OPT_DOT_ROW(0)
    OPT_DOT_ROW(1)
    OPT_DOT_ROW(2)
    OPT_DOT_ROW(3)
    OPT_DOT_ROW(4)
    OPT_DOT_ROW(5)
  }
  OPT_SAVE_ROW(0);
  OPT_SAVE_ROW(1);
  OPT_SAVE_ROW(2);
  OPT_SAVE_ROW(3);
  OPT_SAVE_ROW(4);
  OPT_SAVE_ROW(5);
}

/// One row streams B (a decoder step): four panels at once, each fetched 1 KiB ahead.
__attribute__((target("avx512f,avx512bw,avx512vnni"), noinline)) void vnniTile1x4(const uint8_t *const *ARow, const int8_t *Bp,
                                                                          int64_t PanelBytes, int64_t Groups,
                                                                          __m512i (&Acc)[1][4]) {
  const __m512i Z = _mm512_setzero_si512();
  OPT_ZERO_ROW(0);
  for (int64_t G = 0; G < Groups; ++G) {
    const int8_t *Src = Bp + G * 64;
    for (int J = 0; J < 4; ++J)
      _mm_prefetch(reinterpret_cast<const char *>(Src + J * PanelBytes + 1024), _MM_HINT_T0);
    const __m512i B0 = _mm512_loadu_si512(Src), B1 = _mm512_loadu_si512(Src + PanelBytes);
    const __m512i B2 = _mm512_loadu_si512(Src + 2 * PanelBytes), B3 = _mm512_loadu_si512(Src + 3 * PanelBytes);
    OPT_DOT_ROW(0)
  }
  OPT_SAVE_ROW(0);
}
#undef OPT_DOT
#undef OPT_DOT_ROW
#undef OPT_ZERO_ROW
#undef OPT_SAVE_ROW

/// Rows [R0, R0 + Rr) x panels [P0, P0 + Pv) of Y: the zero-point terms, the scaling and the bias
/// applied as vectors (mul, then add: the unfused graph's rounding, never a fused multiply-add).
struct TileEpilogue {
  const PackedInt8B *B;
  const float *Mult;     ///< Npad values
  const float *Bias;     ///< Npad values or null
  const int32_t *Offset; ///< Npad values: -a_zp * ColSum + K * a_zp * Zp
  const int32_t *RowSum; ///< per row (only read when B->AnyZp)
  float *Y;
  int64_t N;
};

template <int R, int V>
__attribute__((target("avx512f,avx512bw,avx512vnni"))) void vnniBlock(const TileEpilogue &E, const uint8_t *const *ARow,
                                                                        int64_t Row0, int64_t P0) {
  __m512i Acc[R][V];
  const int64_t PanelBytes = E.B->Groups * 64;
  const int8_t *Bp = E.B->Data.data() + P0 * PanelBytes;
  if constexpr (R == 6 && V == 4)
    vnniTile6x4(ARow, Bp, PanelBytes, E.B->Groups, Acc);
  else if constexpr (R == 1 && V == 4)
    vnniTile1x4(ARow, Bp, PanelBytes, E.B->Groups, Acc);
  else
    vnniTile<R, V>(ARow, Bp, PanelBytes, E.B->Groups, Acc); // edge tiles
#pragma GCC unroll 4
  for (int J = 0; J < V; ++J) {
    const int64_t Col = (P0 + J) * kPanel;
    const __m512i Off = _mm512_loadu_si512(E.Offset + Col), Zp = _mm512_loadu_si512(E.B->Zp.data() + Col);
    const __m512 Mult = _mm512_loadu_ps(E.Mult + Col);
    const __m512 Bias = E.Bias ? _mm512_loadu_ps(E.Bias + Col) : _mm512_setzero_ps();
    const int64_t Lanes = std::min<int64_t>(kPanel, E.N - Col);
    const __mmask16 Mask = static_cast<__mmask16>(Lanes >= 16 ? 0xFFFFu : (1u << Lanes) - 1u);
#pragma GCC unroll 8
    for (int I = 0; I < R; ++I) {
      __m512i T = _mm512_add_epi32(Acc[I][J], Off);
      if (E.B->AnyZp)
        T = _mm512_sub_epi32(T, _mm512_mullo_epi32(Zp, _mm512_set1_epi32(E.RowSum[Row0 + I])));
      __m512 F = _mm512_mul_ps(_mm512_cvtepi32_ps(T), Mult);
      if (E.Bias)
        F = _mm512_add_ps(F, Bias);
      _mm512_mask_storeu_ps(E.Y + (Row0 + I) * E.N + Col, Mask, F);
    }
  }
}

using BlockFn = void (*)(const TileEpilogue &, const uint8_t *const *, int64_t, int64_t);

/// vnniBlock<R, V> for R in 1..6, V in 1..4.
template <int R> BlockFn blockFor(int64_t V) {
  switch (V) {
  case 1: return vnniBlock<R, 1>;
  case 2: return vnniBlock<R, 2>;
  case 3: return vnniBlock<R, 3>;
  default: return vnniBlock<R, 4>;
  }
}
BlockFn blockFor(int64_t R, int64_t V) {
  switch (R) {
  case 1: return blockFor<1>(V);
  case 2: return blockFor<2>(V);
  case 3: return blockFor<3>(V);
  case 4: return blockFor<4>(V);
  case 5: return blockFor<5>(V);
  default: return blockFor<6>(V);
  }
}

/// The rows of A times a packed K x N B (both packed kernels): A's last dimension and Y's size
/// checked against B.
Result<int64_t> packedBRows(const TensorView &A, const TensorView &Y, int64_t K, int64_t N) {
  if (A.rank() == 0 || A.Dims.back() != K)
    return runError("matmulintegertofloat", "A ", joinInts(A.Dims), " does not match B ", K, " x ", N);
  const int64_t Rows = K ? static_cast<int64_t>(A.elementCount()) / K : 0;
  if (static_cast<int64_t>(Y.elementCount()) != Rows * N)
    return runError("matmulintegertofloat", "output ", joinInts(Y.Dims), " does not match A ", joinInts(A.Dims),
                    " x B ", K, " x ", N);
  return Rows;
}

class MatMulIntegerToFloatVnniKernel : public Kernel {
public:
  explicit MatMulIntegerToFloatVnniKernel(PackedInt8B B) : B(std::move(B)) {}

  Status run(const KernelContext &C) const override {
    const TensorView &A = C.Inputs[kA], &Y = C.Outputs[0];
    const int64_t K = B.K, N = B.N;
    ASSIGN_OR_RETURN(const int64_t Rows, packedBRows(A, Y, K, N));
    if (Rows == 0 || N == 0)
      return Status::ok();
    ASSIGN_OR_RETURN(const Scaling S, scalingOf(C, N));
    const std::vector<int32_t> AZps = loadZeroPoints(C, kAZp);
    if (AZps.size() != 1)
      return runError("matmulintegertofloat", "a_zero_point must have one value, got ", AZps.size());
    const bool S8 = A.Type == ElementType::I8;
    const int32_t AZ = AZps[0] + (S8 ? 128 : 0); // in the u8 terms of A' (an s8 A plus 128)
    const int64_t Npad = B.Panels * kPanel, Stride = B.Groups * 4;
    // Per-column vectors of this run: the scaling, the bias and the a_zero_point terms.
    std::vector<float> Mult(static_cast<size_t>(Npad), 0.0f), Bias;
    std::vector<int32_t> Offset(static_cast<size_t>(Npad), 0);
    for (int64_t J = 0; J < N; ++J) {
      Mult[static_cast<size_t>(J)] = S.Mult[S.Mult.size() == 1 ? 0 : static_cast<size_t>(J)];
      Offset[static_cast<size_t>(J)] =
          -AZ * B.ColSum[static_cast<size_t>(J)] + static_cast<int32_t>(K) * AZ * B.Zp[static_cast<size_t>(J)];
    }
    if (S.Bias) {
      Bias.assign(static_cast<size_t>(Npad), 0.0f);
      std::copy(S.Bias, S.Bias + N, Bias.begin());
    }
    // A' rows: in place when A is u8 with whole 4-byte groups, else a shifted / padded copy.
    const uint8_t *ABase = A.data<uint8_t>();
    std::vector<uint8_t> Copy;
    if (S8 || Stride != K) {
      Copy.assign(static_cast<size_t>(Rows * Stride), 0);
      for (int64_t R = 0; R < Rows; ++R)
        for (int64_t Kk = 0; Kk < K; ++Kk)
          Copy[static_cast<size_t>(R * Stride + Kk)] = static_cast<uint8_t>(ABase[R * K + Kk] + (S8 ? 128 : 0));
      ABase = Copy.data();
    }
    std::vector<int32_t> RowSum;
    if (B.AnyZp) {
      RowSum.assign(static_cast<size_t>(Rows), 0);
      for (int64_t R = 0; R < Rows; ++R)
        for (int64_t Kk = 0; Kk < K; ++Kk)
          RowSum[static_cast<size_t>(R)] += ABase[R * Stride + Kk];
    }
    TileEpilogue E{&B, Mult.data(), S.Bias ? Bias.data() : nullptr, Offset.data(), RowSum.data(), Y.data<float>(), N};
    // Tasks: groups of kTilePanels panels, each over every row block (the group's B stays in cache
    // while the rows pass); one row: several groups per task, at least ~64 KiB of B each.
    const int64_t Groups = (B.Panels + kTilePanels - 1) / kTilePanels;
    const int64_t GroupBytes = kTilePanels * B.Groups * 64;
    const size_t Grain = Rows == 1 ? static_cast<size_t>(std::max<int64_t>(1, 65536 / std::max<int64_t>(GroupBytes, 1))) : 1;
    C.Par.forRange(static_cast<size_t>(Groups), Grain, [&](size_t Lo, size_t Hi) {
      for (size_t G = Lo; G < Hi; ++G) {
        const int64_t P0 = static_cast<int64_t>(G) * kTilePanels, Pv = std::min(kTilePanels, B.Panels - P0);
        for (int64_t R0 = 0; R0 < Rows; R0 += kTileRows) {
          const int64_t Rr = std::min(kTileRows, Rows - R0);
          const uint8_t *ARow[kTileRows];
          for (int64_t I = 0; I < Rr; ++I)
            ARow[I] = ABase + (R0 + I) * Stride;
          blockFor(Rr, Pv)(E, ARow, R0, P0);
        }
      }
    });
    return Status::ok();
  }

private:
  PackedInt8B B;
};


// ---- AVX2 (no VNNI): exact u8 x s8 products on VPMADDWD ----
//
// VPMADDUBSW (ONNX Runtime's and XNNPACK's AVX2 u8s8 kernels) adds two u8 x s8 products into a
// saturating int16 and loses whole steps on real models (docs/optimizations.md). Here both
// operands are widened to int16 first (A minus its zero point once per run, B's bytes sign-extended
// on load with VPMOVSXBW) and VPMADDWD sums each pair into an int32 lane: |255 * 128 * 2| fits, so
// the accumulator is the exact integer sum of the reference.

constexpr int64_t kPanel2 = 8;       // columns per AVX2 panel (one vector of int32 sums)
constexpr int64_t kAvx2Rows = 6;     // rows per GEMM tile
constexpr int64_t kAvx2Panels = 2;   // panels per tile: 6 x 2 accumulators, 16 columns
constexpr int64_t kAvx2RowPanels = 8; // panels per one-row tile (a decoder step): 64 columns

/// B packed for VPMADDWD: panel p, k pair g holds B'[2g + i][8p + j] at byte 16 (p * Pairs + g) +
/// 2j + i (B' = B as s8; a u8 B minus 128), zero past K and N. Zp[n] = b's zero point in B' terms.
struct PackedPairB {
  int64_t K = 0, N = 0, Pairs = 0, Panels = 0;
  PackedArray<int8_t> Data;
  std::vector<int32_t> Zp;
  bool AnyZp = false;
};

/// Key: the packed-weights cache's key of the layout (a compiled folder's packed.bin serves it).
PackedPairB packPairB(const ConstData &B, const std::vector<int32_t> &BZp, const std::string &Key) {
  PackedPairB P;
  P.K = B.Dims[0], P.N = B.Dims[1], P.Pairs = (P.K + 1) / 2, P.Panels = (P.N + kPanel2 - 1) / kPanel2;
  const bool U8 = B.Type == ElementType::U8;
  const int32_t Shift = U8 ? 128 : 0;
  const uint8_t *Src = static_cast<const uint8_t *>(B.Data ? B.Data : B.Source);
  P.Data.borrowOrPack(Key + "/pairs", static_cast<size_t>(P.Panels * P.Pairs * 16), [&](int8_t *D) {
    for (int64_t K = 0; K < P.K; ++K)
      for (int64_t J = 0; J < P.N; ++J) {
        const int32_t Raw =
            U8 ? static_cast<int32_t>(Src[K * P.N + J]) : static_cast<int32_t>(static_cast<int8_t>(Src[K * P.N + J]));
        D[((J / kPanel2) * P.Pairs + K / 2) * 16 + (J % kPanel2) * 2 + K % 2] = static_cast<int8_t>(Raw - Shift);
      }
  });
  P.Zp.assign(static_cast<size_t>(P.Panels * kPanel2), 0);
  for (int64_t J = 0; J < P.N; ++J) {
    P.Zp[static_cast<size_t>(J)] = BZp[BZp.size() == 1 ? 0 : static_cast<size_t>(J)] - Shift;
    P.AnyZp |= P.Zp[static_cast<size_t>(J)] != 0;
  }
  return P;
}

/// Acc[r][v] = sum over pairs g of madd(A row r's int16 pair g, panel v's 8 x 2 bytes widened).
/// ARow[r]: the row's int16 values (A - a_zero_point, Pairs * 2 of them); Bp: panel 0 of the tile,
/// panels PanelBytes apart. Fully unrolled over R x V, the accumulators stay in registers.
template <int R, int V>
__attribute__((target("avx2"), always_inline)) inline void pairTile(const int16_t *const *ARow, const int8_t *Bp,
                                                                    int64_t PanelBytes, int64_t Pairs,
                                                                    __m256i (&Acc)[R][V]) {
#pragma GCC unroll 8
  for (int I = 0; I < R; ++I)
#pragma GCC unroll 8
    for (int J = 0; J < V; ++J)
      Acc[I][J] = _mm256_setzero_si256();
  for (int64_t G = 0; G < Pairs; ++G) {
    __m256i Bv[V];
#pragma GCC unroll 8
    for (int J = 0; J < V; ++J) {
      const int8_t *Src = Bp + J * PanelBytes + G * 16;
      if (R == 1) // one row streams B: fetch ahead
        _mm_prefetch(reinterpret_cast<const char *>(Src + 512), _MM_HINT_T0);
      Bv[J] = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i *>(Src)));
    }
#pragma GCC unroll 8
    for (int I = 0; I < R; ++I) {
      int32_t Pair;
      std::memcpy(&Pair, ARow[I] + G * 2, sizeof(Pair));
      const __m256i Av = _mm256_set1_epi32(Pair);
#pragma GCC unroll 8
      for (int J = 0; J < V; ++J)
        Acc[I][J] = _mm256_add_epi32(Acc[I][J], _mm256_madd_epi16(Av, Bv[J]));
    }
  }
}

/// The AVX2 write-back: rows [Row0, Row0 + R) x panels [P0, P0 + V): the b zero-point term, the
/// scaling and the bias (mul, then add: no FMA in this target, the unfused graph's rounding).
struct PairEpilogue {
  const PackedPairB *B;
  const float *Mult;     ///< Npad values
  const float *Bias;     ///< Npad values or null
  const int32_t *RowSum; ///< per row: sum_k (A - a_zero_point) (only read when B->AnyZp)
  float *Y;
  int64_t N;
};

template <int R, int V>
__attribute__((target("avx2"), noinline)) void pairBlock(const PairEpilogue &E, const int16_t *const *ARow, int64_t Row0,
                                                         int64_t P0) {
  __m256i Acc[R][V];
  const int64_t PanelBytes = E.B->Pairs * 16;
  pairTile<R, V>(ARow, E.B->Data.data() + P0 * PanelBytes, PanelBytes, E.B->Pairs, Acc);
#pragma GCC unroll 8
  for (int J = 0; J < V; ++J) {
    const int64_t Col = (P0 + J) * kPanel2;
    const __m256i Zp = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(E.B->Zp.data() + Col));
    const __m256 Mult = _mm256_loadu_ps(E.Mult + Col);
    const __m256 Bias = E.Bias ? _mm256_loadu_ps(E.Bias + Col) : _mm256_setzero_ps();
    const int64_t Lanes = std::min<int64_t>(kPanel2, E.N - Col);
#pragma GCC unroll 8
    for (int I = 0; I < R; ++I) {
      __m256i T = Acc[I][J];
      if (E.B->AnyZp)
        T = _mm256_sub_epi32(T, _mm256_mullo_epi32(Zp, _mm256_set1_epi32(E.RowSum[Row0 + I])));
      __m256 F = _mm256_mul_ps(_mm256_cvtepi32_ps(T), Mult);
      if (E.Bias)
        F = _mm256_add_ps(F, Bias);
      float *Dst = E.Y + (Row0 + I) * E.N + Col;
      if (Lanes == kPanel2) {
        _mm256_storeu_ps(Dst, F);
      } else {
        alignas(32) float Buf[kPanel2];
        _mm256_store_ps(Buf, F);
        std::memcpy(Dst, Buf, static_cast<size_t>(Lanes) * sizeof(float));
      }
    }
  }
}

using PairBlockFn = void (*)(const PairEpilogue &, const int16_t *const *, int64_t, int64_t);

template <int R> PairBlockFn pairBlockFor(int64_t V) {
  return V >= 2 ? pairBlock<R, 2> : pairBlock<R, 1>;
}
PairBlockFn pairBlockFor(int64_t R, int64_t V) {
  switch (R) {
  case 1: return pairBlockFor<1>(V);
  case 2: return pairBlockFor<2>(V);
  case 3: return pairBlockFor<3>(V);
  case 4: return pairBlockFor<4>(V);
  case 5: return pairBlockFor<5>(V);
  default: return pairBlockFor<6>(V);
  }
}
/// One row: pairBlock<1, V> for V in 1..8 (a decoder step streams B, 8 panels at a time).
PairBlockFn rowBlockFor(int64_t V) {
  switch (V) {
  case 1: return pairBlock<1, 1>;
  case 2: return pairBlock<1, 2>;
  case 3: return pairBlock<1, 3>;
  case 4: return pairBlock<1, 4>;
  case 5: return pairBlock<1, 5>;
  case 6: return pairBlock<1, 6>;
  case 7: return pairBlock<1, 7>;
  default: return pairBlock<1, 8>;
  }
}

class MatMulIntegerToFloatAvx2Kernel : public Kernel {
public:
  explicit MatMulIntegerToFloatAvx2Kernel(PackedPairB B) : B(std::move(B)) {}

  Status run(const KernelContext &C) const override {
    const TensorView &A = C.Inputs[kA], &Y = C.Outputs[0];
    const int64_t K = B.K, N = B.N;
    ASSIGN_OR_RETURN(const int64_t Rows, packedBRows(A, Y, K, N));
    if (Rows == 0 || N == 0)
      return Status::ok();
    ASSIGN_OR_RETURN(const Scaling S, scalingOf(C, N));
    const std::vector<int32_t> AZps = loadZeroPoints(C, kAZp);
    if (AZps.size() != 1)
      return runError("matmulintegertofloat", "a_zero_point must have one value, got ", AZps.size());
    const int64_t Npad = B.Panels * kPanel2, Stride = B.Pairs * 2;
    std::vector<float> Mult(static_cast<size_t>(Npad), 0.0f), Bias;
    for (int64_t J = 0; J < N; ++J)
      Mult[static_cast<size_t>(J)] = S.Mult[S.Mult.size() == 1 ? 0 : static_cast<size_t>(J)];
    if (S.Bias) {
      Bias.assign(static_cast<size_t>(Npad), 0.0f);
      std::copy(S.Bias, S.Bias + N, Bias.begin());
    }
    // A - a_zero_point as int16 rows of whole pairs (|value| <= 255), and their sums.
    const bool S8 = A.Type == ElementType::I8;
    const int32_t AZ = AZps[0];
    std::vector<int16_t> A16(static_cast<size_t>(Rows * Stride), 0);
    std::vector<int32_t> RowSum(static_cast<size_t>(Rows), 0);
    const uint8_t *ABase = A.data<uint8_t>();
    for (int64_t R = 0; R < Rows; ++R) {
      int32_t Sum = 0;
      for (int64_t Kk = 0; Kk < K; ++Kk) {
        const uint8_t Byte = ABase[R * K + Kk];
        const int32_t V = (S8 ? static_cast<int32_t>(static_cast<int8_t>(Byte)) : static_cast<int32_t>(Byte)) - AZ;
        A16[static_cast<size_t>(R * Stride + Kk)] = static_cast<int16_t>(V);
        Sum += V;
      }
      RowSum[static_cast<size_t>(R)] = Sum;
    }
    PairEpilogue E{&B, Mult.data(), S.Bias ? Bias.data() : nullptr, RowSum.data(), Y.data<float>(), N};
    // Tasks as the VNNI kernel's: column groups over every row block; one row: groups of 8 panels,
    // several per task (at least ~64 KiB of B each).
    const int64_t PerGroup = Rows == 1 ? kAvx2RowPanels : kAvx2Panels;
    const int64_t Groups = (B.Panels + PerGroup - 1) / PerGroup;
    const int64_t GroupBytes = PerGroup * B.Pairs * 16;
    const size_t Grain = Rows == 1 ? static_cast<size_t>(std::max<int64_t>(1, 65536 / std::max<int64_t>(GroupBytes, 1))) : 1;
    C.Par.forRange(static_cast<size_t>(Groups), Grain, [&](size_t Lo, size_t Hi) {
      for (size_t G = Lo; G < Hi; ++G) {
        const int64_t P0 = static_cast<int64_t>(G) * PerGroup, Pv = std::min(PerGroup, B.Panels - P0);
        if (Rows == 1) {
          const int16_t *ARow[1] = {A16.data()};
          rowBlockFor(Pv)(E, ARow, 0, P0);
          continue;
        }
        for (int64_t R0 = 0; R0 < Rows; R0 += kAvx2Rows) {
          const int64_t Rr = std::min(kAvx2Rows, Rows - R0);
          const int16_t *ARow[kAvx2Rows];
          for (int64_t I = 0; I < Rr; ++I)
            ARow[I] = A16.data() + (R0 + I) * Stride;
          pairBlockFor(Rr, Pv)(E, ARow, R0, P0);
        }
      }
    });
    return Status::ok();
  }

private:
  PackedPairB B;
};

/// The packed kernels' case (VNNI and AVX2): a constant 2-D B with constant (or absent)
/// b_zero_point and scalar A parameters.
bool packedBSupports(const KernelCreateInfo &I) {
  if (!inputIsConst(I, kB) || I.Inputs[kB].Const->Dims.size() != 2 ||
      (!I.Inputs[kB].Const->Data && !I.Inputs[kB].Const->Source))
    return false;
  if (I.Inputs.size() > kBZp && I.Inputs[kBZp].Present && !inputIsConst(I, kBZp))
    return false;
  return I.Inputs[kA].Shape.getRank() >= 1;
}
bool vnniSupports(const KernelCreateInfo &I) { return int8VnniAvailable() && packedBSupports(I); }
bool avx2Supports(const KernelCreateInfo &I) { return int8Avx2Available() && packedBSupports(I); }

/// A packed kernel over the constant B: Pack(B, b zero points) -> KernelT's constructor argument.
template <typename KernelT, typename PackFn>
Result<std::unique_ptr<Kernel>> createPacked(const KernelCreateInfo &I, const char *Name, PackFn Pack) {
  std::vector<int32_t> BZp = {0};
  if (I.Inputs.size() > kBZp && I.Inputs[kBZp].Present) {
    const ConstData &Z = *I.Inputs[kBZp].Const;
    BZp.clear();
    for (size_t E = 0; E < Z.elementCount(); ++E)
      BZp.push_back(Z.Type == ElementType::U8 ? static_cast<const uint8_t *>(Z.Data)[E]
                                              : static_cast<const int8_t *>(Z.Data)[E]);
  }
  const ConstData &B = *I.Inputs[kB].Const;
  if (BZp.size() != 1 && static_cast<int64_t>(BZp.size()) != B.Dims[1])
    return runError("matmulintegertofloat", "b_zero_point must have 1 or ", B.Dims[1], " values, got ", BZp.size());
  markConstConsumed(I, kB);
  return makeKernel<KernelT>(Pack(B, BZp, packedWeightsKey(I, kB, Name)));
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif

OpKernels matMulIntegerToFloatKernels() {
  OpKernels K;
  K.Domain = "com.microsoft";
  K.OpType = "MatMulIntegerToFloat";
  K.Variants.push_back({"f32_matmulintegertofloat__ref", 0, nullptr, [](const KernelCreateInfo &) {
                          return makeKernel<FunctionKernel>([](const KernelContext &C) { return runReference(C, false); });
                        }});
  K.Variants.push_back({"f32_matmulintegertofloat__parallel", 10, nullptr, [](const KernelCreateInfo &) {
                          return makeKernel<FunctionKernel>([](const KernelContext &C) { return runReference(C, true); });
                        }});
#if defined(__x86_64__)
  K.Variants.push_back({"f32_matmulintegertofloat__vnni", 30, vnniSupports, [](const KernelCreateInfo &I) {
                          return createPacked<MatMulIntegerToFloatVnniKernel>(I, "f32_matmulintegertofloat__vnni",
                                                                              packInt8B);
                        }});
  K.Variants.push_back({"f32_matmulintegertofloat__avx2_madd", 20, avx2Supports, [](const KernelCreateInfo &I) {
                          return createPacked<MatMulIntegerToFloatAvx2Kernel>(I, "f32_matmulintegertofloat__avx2_madd",
                                                                              packPairB);
                        }});
#endif
  K.TestCases = [] {
    const auto Q = [](std::vector<int64_t> D, ElementType T, bool Const = false) {
      TestInput I = Const ? constInput(std::move(D), T) : tensorInput(std::move(D), T);
      I.Low = T == ElementType::U8 ? 0 : -128, I.High = T == ElementType::U8 ? 255 : 127;
      return I;
    };
    const auto Z = [](std::vector<int64_t> D, std::vector<double> V, ElementType T) { return valuesInput(D, V, T, true); };
    const auto F = [](std::vector<int64_t> D, std::vector<double> V) { return valuesInput(D, V, ElementType::F32, true); };
    const auto Scales = [](int64_t N) {
      std::vector<double> V;
      for (int64_t I = 0; I < N; ++I)
        V.push_back(0.001 + 0.0005 * static_cast<double>(I % 7));
      return V;
    };
    const ElementType U8 = ElementType::U8, I8 = ElementType::I8;
    const auto Bias = [](int64_t N) {
      TestInput I = constInput({N});
      return I;
    };
    return std::vector<OpTestCase>{
        // quantize_dynamic's shape: u8 A with a zero point, s8 B symmetric, per-tensor scales.
        testCase("gemm_u8s8", {Q({2, 9, 64}, U8), Q({64, 70}, I8, true), F({}, {0.02}), F({}, {0.003}), Z({}, {117}, U8)}),
        testCase("gemv_u8s8_bias", {Q({1, 1, 200}, U8), Q({200, 100}, I8, true), F({}, {0.02}), F({}, {0.003}),
                                    Z({}, {3}, U8), omittedInput(), Bias(100)}),
        // per-column scales and zero points, a u8 B, K not a multiple of 4
        testCase("per_column_u8b_odd_k", {Q({7, 37}, U8), Q({37, 45}, U8, true), F({}, {0.05}), F({45}, Scales(45)),
                                          Z({}, {128}, U8), Q({45}, U8, true), Bias(45)}),
        testCase("s8_a_per_column_zp", {Q({13, 32}, I8), Q({32, 17}, I8, true), F({}, {0.01}), F({17}, Scales(17)),
                                        Z({}, {-5}, I8), Q({17}, I8, true)}),
        testCase("b_not_constant", {Q({3, 8}, U8), Q({8, 5}, I8), F({}, {0.5}), F({}, {0.25})}),
        // The AVX2 kernel's tiles: 26 rows (4 full 6-row tiles and a 2-row one), 3 column groups.
        testCase("avx2_tiles_u8s8", {Q({2, 13, 96}, U8), Q({96, 48}, I8, true), F({}, {0.02}), F({}, {0.003}),
                                     Z({}, {131}, U8), omittedInput(), Bias(48)}),
        // One row over more than one 64-column group, u8 B with per-column zero points, odd K.
        testCase("gemv_u8b_per_column_wide", {Q({1, 77}, U8), Q({77, 130}, U8, true), F({}, {0.05}), F({130}, Scales(130)),
                                              Z({}, {7}, U8), Q({130}, U8, true)}),
        // Pairs of products past int16 (255 * -128 * 2): VPMADDUBSW would saturate them.
        testCase("pairs_past_int16", {valuesInput({5, 34}, {255, 255, 255, 0, 255, 254}, U8, false),
                                      valuesInput({34, 21}, {-128, -128, 127, -128, -127, 127, 127}, I8, true),
                                      F({}, {0.01}), F({}, {0.002})}),
    };
  };
  return K;
}

OPT_REGISTER_HEAVY_SCHEMA(MatMulIntegerToFloat, matMulIntegerToFloatSchema());
OPT_REGISTER_KERNELS(MatMulIntegerToFloat, matMulIntegerToFloatKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
