// bfloat16 compute for float32 GEMMs (the ComputePrecision::BFloat16 load option): both operands
// are rounded to bfloat16 (round to nearest even) and VDPBF16PS multiplies pairs of them into
// float32 accumulators (AVX512_BF16: 32 products per instruction where an FMA does 16). Weights
// are converted once when the kernel is created, activations while they are packed per run; the
// epilogue (bias, clamp, GELU) runs on the float32 accumulators as in the float32 GEMM.
//
// Layouts (K blocks of Kc, Kc even; a pair p of a block is its k = 2p and 2p + 1):
// - B (K x N): per K block, NR-column panels of ceil(Kc / 2) rows of NR 32-bit slots; slot j of
//   row p is B(2p, j) in the low half and B(2p + 1, j) in the high half (zero past K and N). This
//   is VDPBF16PS's operand order, and AMX's B tile layout too (TDPBF16PS reads 16 rows of 16 such
//   pairs: a 32-column panel is two tiles, a row stride of 128 bytes).
// - A (M x K): row-major bfloat16 rows of ceil(K / 2) pairs (k contiguous, zero past K): each
//   pair is broadcast to the 16 lanes. AMX's A tile layout (16 rows of 32 k) is the same.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/native/ops/common/Gemm.h"
#include "backends/native/ops/common/PackedWeights.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

constexpr int64_t kBf16DotMR = 12, kBf16DotNR = 32;
/// The microkernel's name in kernel variant names ("f32_matmul_bf16c__avx512bf16_12x32").
constexpr const char *kBf16DotName = "avx512bf16_12x32";

/// Whether this CPU (and build) runs the bf16 compute kernels: AVX512_BF16 with AVX-512 F/BW/VL.
bool bf16DotAvailable();

/// The K block for a bf16 B of depth K: all of K up to 512 (one pass over C), else equal even
/// blocks of at most 512 (a 512-deep 32-column panel is 32 KiB of pairs).
int64_t bf16DotKc(int64_t K);

/// B packed as bf16 pairs (layout above).
struct Bf16DotB {
  int64_t K = 0, N = 0, Kc = 0;
  PackedArray<uint32_t> Slots;
};
/// Packs the float32 B (K x N, any strides) as bf16 pairs in K blocks of Kc (even); borrowed from
/// the packed-weights cache (a compiled folder's packed.bin) under Key when it holds them.
void packBf16DotB(int64_t K, int64_t N, MatrixRef B, Bf16DotB &Out, int64_t Kc, const std::string &Key);

/// A packed as row-major bf16 pairs (layout above), ceil(K / 2) pairs per row.
struct Bf16DotA {
  int64_t M = 0, K = 0;
  PackedArray<uint32_t> Slots;
  int64_t pairsPerRow() const { return (K + 1) / 2; }
};
/// Packs the float32 A (M x K, any strides: a convolution's weights) as bf16 rows; borrowed from
/// the packed-weights cache under Key when it holds them.
void packBf16DotA(int64_t M, int64_t K, MatrixRef A, Bf16DotA &Out, const std::string &Key);

/// C (M x N, row stride Ldc) = A x B (+ Ep) with A's float32 rows read at A + i * Lda (k
/// contiguous) and rounded to bf16 per run: MatMul / Gemm with constant weights.
void gemmBf16DotRowsA(int64_t M, int64_t K, const float *A, int64_t Lda, const Bf16DotB &B, float *C, int64_t Ldc,
                      const Parallel &Par, const GemmEpilogue *Ep = nullptr);

/// C (M x N) = A x B (+ Ep) with the constant A packed and B's float32 rows read in place (a
/// convolution's im2col matrix, GemmRowsB), each K-block column panel rounded to bf16 pairs right
/// before its tiles use it.
void gemmBf16DotRowsB(const Bf16DotA &A, const GemmRowsB &B, float *C, int64_t Ldc, const Parallel &Par,
                      const GemmEpilogue *Ep = nullptr);

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
