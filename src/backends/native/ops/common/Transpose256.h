// The 8 x 8 float transpose in AVX registers, shared by the AVX2 kernels that move between
// channels-in-lanes and NCHW planes (Winograd's packing, the blocked depthwise, the 1x1 kernels'
// write-back, the transposed GEMM's planes): the 8-lane twin of vec512::transpose16x16.
// Only call it after a run-time check for AVX2 (the build does not use -march=native).
#pragma once

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace vec256 {

/// Transposes the 8 x 8 block R in registers (R[i] lane j <- R[j] lane i).
__attribute__((target("avx2"), always_inline)) inline void transpose8x8(__m256 R[8]) {
  __m256 T[8];
  for (int I = 0; I < 8; I += 2) {
    T[I] = _mm256_unpacklo_ps(R[I], R[I + 1]);
    T[I + 1] = _mm256_unpackhi_ps(R[I], R[I + 1]);
  }
  for (int I = 0; I < 8; I += 4) {
    R[I] = _mm256_shuffle_ps(T[I], T[I + 2], 0x44);
    R[I + 1] = _mm256_shuffle_ps(T[I], T[I + 2], 0xEE);
    R[I + 2] = _mm256_shuffle_ps(T[I + 1], T[I + 3], 0x44);
    R[I + 3] = _mm256_shuffle_ps(T[I + 1], T[I + 3], 0xEE);
  }
  // R[j] (j < 4) holds column j of rows 0-3 in its low half and column j + 4 in its high half;
  // R[j + 4] the same for rows 4-7. A 128-bit permute joins the halves.
  for (int J = 0; J < 4; ++J) {
    T[J] = _mm256_permute2f128_ps(R[J], R[J + 4], 0x20);
    T[J + 4] = _mm256_permute2f128_ps(R[J], R[J + 4], 0x31);
  }
  for (int I = 0; I < 8; ++I)
    R[I] = T[I];
}

} // namespace vec256
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
#endif
