// Cache-blocked single-precision GEMM shared by Conv, Gemm and MatMul: operands are packed into
// MR-row / NR-column panels per K block, and a register-tiled microkernel (AVX-512, AVX2 or
// portable, chosen by the caller from gemmIsaAvailable) computes one MR x NR tile at a time.
// Constant operands (weights) are packed once at kernel creation; everything else per run.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <new>

#include "backends/native/Kernel.h"
#include "backends/native/ops/common/FusedActivation.h"
#include "core/LargeAlloc.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

enum class GemmIsa { Portable, Avx2, Avx512 };

/// K block of the packed layouts: every K block but the last is this deep. Code that packs panels
/// itself (Conv's direct im2col packing) must use the same value. 192: a 192 x 32 B panel (24 KiB)
/// and a 12-row A panel (9 KiB) fit a 32 KiB L1d too (Zen 4), and 3x3 convolutions' K = 9 * 64 *
/// 2^n splits into whole blocks; on this Emerald Rapids 128..320 measured the same.
constexpr int64_t GemmKC = 192;

/// What the last K block of a tile adds to its result while it is still in registers: a per-row
/// bias (Conv's per-output-channel bias; Bias[i] is for the tile's row i) and a fused activation
/// (Relu/Clip, Sigmoid, SiLU, HardSigmoid, HardSwish). Saves the separate passes over C that would each stream it through the cache again.
struct GemmTileEpilogue {
  const float *Bias = nullptr;    ///< nullptr: no bias
  const float *ColBias = nullptr; ///< per column (MatMul's fused bias): ColBias[j] for the tile's column j
  FusedAct Act; ///< a fused activation (Conv's: clamp, sigmoid, SiLU, hard sigmoid / swish)
  bool Gelu = false; ///< then GELU (erf form, approx::geluErfF32's values): a fused MatMul + Gelu
};

/// One microkernel call: C[0:Mr, 0:Nr] (row stride Ldc) = Alpha * Atile * Bpanel + (Accumulate ? C :
/// Beta * C), where Bpanel is Kc x NR (k-major) and Atile is, for Lda == 0, a packed Kc x MR panel
/// (k-major), else Mr rows of the caller's matrix (row i at A + i * Lda, k contiguous; rows past Mr
/// are never read). Beta == 0 never reads C. Ep (may be nullptr) is applied after that, to the
/// final values. BNext (may be nullptr) is a Kc x NR panel the next tiles will read: the kernel
/// prefetches it into L2 while it computes.
struct GemmTile {
  int64_t Kc = 0;
  const float *A = nullptr;
  int64_t Lda = 0;
  const float *B = nullptr;
  const float *BNext = nullptr;
  float *C = nullptr;
  int64_t Ldc = 0, Mr = 0, Nr = 0;
  float Alpha = 1, Beta = 0;
  bool Accumulate = false;
  const GemmTileEpilogue *Ep = nullptr;
};
using GemmMicroFn = void (*)(const GemmTile &T);

struct GemmMicroKernel {
  GemmIsa Isa;
  const char *Name; ///< "avx512_12x32": goes into kernel variant names.
  int64_t MR, NR;
  GemmMicroFn Fn;
};

/// Whether this CPU (and build) can run the microkernel of Isa.
bool gemmIsaAvailable(GemmIsa Isa);
const GemmMicroKernel &gemmMicroKernel(GemmIsa Isa);

/// A strided read-only matrix: element (R, C) is Data[R * RowStride + C * ColStride]; a transposed
/// operand is the same memory with the strides swapped.
struct MatrixRef {
  const float *Data;
  int64_t RowStride, ColStride;
};

/// 64-byte aligned float storage (packed panels, im2col buffers); not zero-filled. A large one
/// (packed weights) is mapped with huge pages (core/LargeAlloc.h).
class AlignedFloats {
public:
  AlignedFloats() {}
  explicit AlignedFloats(size_t N) { resize(N); }
  /// Contents are unspecified afterwards; a buffer already big enough is kept (per-task scratch
  /// reused across calls allocates once).
  void resize(size_t N) {
    if (Ptr && N <= Capacity) {
      Size = N;
      return;
    }
    const size_t Bytes = ((N * sizeof(float) + 63) / 64) * 64 + 64;
    size_t Mapped = 0;
    void *P = allocateBlock(Bytes, /*Zero=*/false, Mapped);
    if (!P)
      throw std::bad_alloc();
    Ptr = std::unique_ptr<float, Free>(static_cast<float *>(P), Free{Mapped});
    Size = Capacity = N;
  }
  /// N floats at P, owned by someone else (a slice of one large block for many packed operands,
  /// faulted in with huge pages instead of each as its own heap block); outlives this object.
  void borrow(float *P, size_t N) {
    Ptr = std::unique_ptr<float, Free>(P, Free{Free::Borrowed});
    Size = Capacity = N;
  }
  float *data() const { return Ptr.get(); }
  size_t size() const { return Size; }

private:
  struct Free {
    static constexpr size_t Borrowed = ~size_t{0};
    Free() : Mapped(0) {}
    explicit Free(size_t M) : Mapped(M) {}
    void operator()(float *P) const {
      if (Mapped != Borrowed)
        freeBlock(P, Mapped);
    }
    size_t Mapped;
  };
  std::unique_ptr<float, Free> Ptr;
  size_t Size = 0, Capacity = 0;
};

/// Left operand (M x K) packed for one microkernel, in K blocks of Kc.
struct PackedA {
  int64_t M = 0, K = 0, Kc = GemmKC;
  AlignedFloats Data;
};
/// Right operand (K x N) packed for one microkernel, in K blocks of Kc. A GEMM runs with its packed
/// B's Kc (an A packed for it must have the same); only MatMul's constant weights use another.
struct PackedB {
  int64_t K = 0, N = 0, Kc = GemmKC;
  AlignedFloats Data;
  /// Data holds bfloat16 weights (GemmBf16.h's layout, two per float slot) instead of floats:
  /// gemmPacked/gemmRowsA/gemmA and gemvPacked read them as their exact float32 values.
  bool Bf16 = false;
};

/// The K block for a constant B of depth K that activations read in place (MatMul's weights) on
/// Isa's kernel. AVX2: all of K up to 1024 (one block: C written once, no accumulating passes over
/// it), else equal blocks of at most 1024; a Kc x 16 panel (64 KiB) stays in L2 while the row tiles
/// reuse it. On Zen 3 (AVX2, one thread) against blocks of at most 256: BERT-mini's FFN down
/// (M 128, K 1024, N 256) 752 -> 693 us min, 817 -> 754 median; ConvNeXt-T's M 784 K 768 N 192
/// 2518 -> 2346 us min, M 49 K 3072 N 768 3095 -> 2865. The other kernels keep blocks of at most
/// 256 (AVX-512's 32-column panel would be 128 KiB at 1024, unmeasured).
int64_t gemmKcForWeights(int64_t K, GemmIsa Isa);

void packA(const GemmMicroKernel &MK, int64_t M, int64_t K, MatrixRef A, PackedA &Out, int64_t Kc = GemmKC);
void packB(const GemmMicroKernel &MK, int64_t K, int64_t N, MatrixRef B, PackedB &Out, const Parallel &Par);
/// Rows of B packed between two AfterRows calls at most: a weight packed from the model file has
/// at most this many rows resident beside the packed copy, whatever its K block.
constexpr int64_t GemmReleaseRows = 256;
/// packB in order of rows, calling AfterRows(K0, K1) once rows [K0, K1) of B are packed (a weight
/// packed from the model file releases those rows' pages), GemmReleaseRows at most at a time;
/// blocks of Kc.
void packB(const GemmMicroKernel &MK, int64_t K, int64_t N, MatrixRef B, PackedB &Out, const Parallel &Par,
           const std::function<void(int64_t, int64_t)> &AfterRows, int64_t Kc = GemmKC);

/// C's columns written to separate matrices: columns [Begin[p], Begin[p + 1]) go to C[p] (its
/// column 0 there, row stride Ldc[p]). Every boundary must be a multiple of the microkernel's NR
/// (a tile never straddles two parts). A merged MatMul writes its projections this way.
struct GemmColumnSplit {
  size_t Parts = 0;
  const int64_t *Begin = nullptr; ///< Parts + 1 entries, Begin[0] == 0, Begin[Parts] == N
  float *const *C = nullptr;
  const int64_t *Ldc = nullptr;
};

/// The epilogue of a whole GEMM: RowBias[i] (i a row of C) is added to row i; then the activation.
struct GemmEpilogue {
  const float *RowBias = nullptr;
  const float *ColBias = nullptr; ///< ColBias[j] (j a column of C) is added to column j
  FusedAct Act; ///< then the fused activation
  bool Gelu = false; ///< last, GELU (erf form) of every element, as approx::geluErfF32 computes it
  const GemmColumnSplit *Split = nullptr; ///< C and Ldc are ignored when set
};

/// C (M x N, row stride Ldc) = Alpha * A * B + Beta * C on packed operands, split over Par, then
/// Ep (optional) applied in the microkernel's write-back.
void gemmPacked(const GemmMicroKernel &MK, const PackedA &A, const PackedB &B, float Alpha, float Beta, float *C,
                int64_t Ldc, const Parallel &Par, const GemmEpilogue *Ep = nullptr);

/// B (K x N) read in place: element (k, j) is Base[RowOffsets[k] + ColOffsets[j]], or
/// Base[RowOffsets[k] + j] when ColOffsets is null (an im2col matrix whose rows are slices of the
/// input: Conv; ColOffsets skips the padding columns between output rows). Only those elements
/// are read.
struct GemmRowsB {
  const float *Base = nullptr;
  const int64_t *RowOffsets = nullptr; ///< K entries
  int64_t N = 0;
  const int64_t *ColOffsets = nullptr; ///< N entries, or null
};
/// Dst (Kc x NR floats, k-major, zeros past Cols) = rows [K0, K0 + Kc) of B's columns [Col0, Col0 +
/// Cols) read in place: the panel copy gemmPackedRowsB makes (AVX-512 when NR is 32 and the CPU
/// has it). The bf16 compute GEMM (GemmBf16Dot.h) converts such a panel.
void copyRowsBPanel(const GemmRowsB &B, int64_t K0, int64_t Kc, int64_t Col0, int64_t Cols, int64_t NR, float *Dst);
/// gemmPacked with B's rows read in place: each K-block column panel is copied into an L1-sized
/// buffer right before its tiles use it (no separate pass packing all of B through L2).
void gemmPackedRowsB(const GemmMicroKernel &MK, const PackedA &A, const GemmRowsB &B, float Alpha, float Beta,
                     float *C, int64_t Ldc, const Parallel &Par, const GemmEpilogue *Ep = nullptr);

/// gemmPacked with A (M x K) read in place, row i at A + i * Lda with k contiguous: no packing of A
/// per run (activations times constant weights: MatMul, Gemm, Attention).
void gemmRowsA(const GemmMicroKernel &MK, int64_t M, int64_t K, const float *A, int64_t Lda, const PackedB &B,
               float Alpha, float Beta, float *C, int64_t Ldc, const Parallel &Par, const GemmEpilogue *Ep = nullptr);
/// Any strided A: read in place when k is contiguous (gemmRowsA), else packed for this call.
void gemmA(const GemmMicroKernel &MK, int64_t M, int64_t K, MatrixRef A, const PackedB &B, float Alpha, float Beta,
           float *C, int64_t Ldc, const Parallel &Par, const GemmEpilogue *Ep = nullptr);

/// Y (1 x N) = A (1 x K) x B for a packed B: one pass over B's panels, no packing of A (the
/// one-row case of decoder steps, where GEMM tiles would be 1/MR full).
void gemvPacked(const GemmMicroKernel &MK, const float *A, const PackedB &B, float *Y, const Parallel &Par);
/// Convenience: packs B for this call, then gemmA.
void sgemm(const GemmMicroKernel &MK, int64_t M, int64_t N, int64_t K, float Alpha, MatrixRef A, MatrixRef B,
           float Beta, float *C, int64_t Ldc, const Parallel &Par);

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
