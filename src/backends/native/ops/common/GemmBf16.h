// Weights stored as bfloat16 (passes/Bf16Weights): a PackedB with Bf16 set holds the bf16 bits of
// the weights in PackedB's panel order (K blocks of Kc, NR-column panels, k-major rows), half the
// bytes of the float32 panels. Within a packed row, columns j and j + NR/2 share a 32-bit slot (j
// in the low half), so a vector shift and a mask turn one load into the row's two float halves.
// bfloat16 -> float32 is exact: the products are the float32 products of the stored weights, only
// read at half the memory traffic (the decoder-step GEMVs are bound by it).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "Optimium/Runtime/Types/BFloat16.h"
#include "backends/native/ops/common/Gemm.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

/// The u16 position of column J in a packed bf16 row of NR columns.
inline int64_t bf16Slot(int64_t J, int64_t NR) {
  const int64_t Half = NR / 2;
  return 2 * (J % Half) + J / Half;
}

/// packB for a bfloat16 matrix: element (k, j) is the u16 at Bits + k * RowStride + j * ColStride
/// (u16 units; any alignment, read with memcpy). Sets Out.Bf16. AfterRows(K0, K1), when set, runs
/// once rows [K0, K1) are packed, GemmReleaseRows at most at a time, as for packB.
void packBBf16(const GemmMicroKernel &MK, int64_t K, int64_t N, const void *Bits, int64_t RowStride,
               int64_t ColStride, PackedB &Out, const std::function<void(int64_t, int64_t)> &AfterRows,
               int64_t Kc);

/// The u16 view of a bf16 PackedB's storage.
inline const uint16_t *bf16Data(const PackedB &B) { return reinterpret_cast<const uint16_t *>(B.Data.data()); }

/// In with input I (bfloat16 weights) replaced by its float32 values, stored in Wide: what the
/// float32 reference kernels of MatMul and Gemm run bf16-weight cases on.
inline std::vector<TensorView> widenBf16Input(const std::vector<TensorView> &In, size_t I, std::vector<float> &Wide) {
  const uint16_t *Bits = In[I].data<uint16_t>();
  Wide.resize(In[I].elementCount());
  for (size_t E = 0; E < Wide.size(); ++E)
    Wide[E] = bfloat16::toFloat(Bits[E]);
  std::vector<TensorView> Out = In;
  Out[I].Type = ElementType::F32;
  Out[I].Data = Wide.data();
  return Out;
}

/// Dst (Kc x NR floats, k-major: the microkernel's B panel) = the bf16 panel Src (Kc packed rows).
void unpackBf16Panel(const GemmMicroKernel &MK, const uint16_t *Src, int64_t Kc, float *Dst);

/// Acc[0:NR) += A (1 x Kc) x one Kc x NR bf16 slab (the GEMV's step over a packed bf16 B).
using GemvBf16SlabFn = void (*)(const float *A, const uint16_t *Slab, int64_t Kc, int64_t NR, float *Acc);
GemvBf16SlabFn gemvBf16SlabFor(const GemmMicroKernel &MK);

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
