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

/// The 4 x 4 transpose of each 128-bit half of X[0..3] (Y[j] lane i <- X[i] lane j, per half):
/// in-lane shuffles only.
__attribute__((target("avx2"), always_inline)) inline void transpose4x4Halves(const __m256 X[4], __m256 Y[4]) {
  const __m256 T0 = _mm256_unpacklo_ps(X[0], X[1]), T1 = _mm256_unpackhi_ps(X[0], X[1]);
  const __m256 T2 = _mm256_unpacklo_ps(X[2], X[3]), T3 = _mm256_unpackhi_ps(X[2], X[3]);
  Y[0] = _mm256_shuffle_ps(T0, T2, 0x44);
  Y[1] = _mm256_shuffle_ps(T0, T2, 0xEE);
  Y[2] = _mm256_shuffle_ps(T1, T3, 0x44);
  Y[3] = _mm256_shuffle_ps(T1, T3, 0xEE);
}

/// Loads the 8 x 8 block whose row i is the 8 floats at Src + i * Stride, transposed: R[j] lane i
/// <- Src[i * Stride + j]. The loads put rows i and i + 4 into the two 128-bit halves of one
/// register (vinsertf128 from memory), so only the in-lane shuffles remain: 16 instead of
/// transpose8x8's 24, of which 8 cross lanes.
__attribute__((target("avx2"), always_inline)) inline void loadTransposed8x8(const float *Src, int64_t Stride,
                                                                             __m256 R[8]) {
  __m256 X[8];
  for (int I = 0; I < 4; ++I) {
    const float *Lo = Src + I * Stride, *Hi = Src + (I + 4) * Stride;
    X[I] = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(Lo)), _mm_loadu_ps(Hi), 1);
    X[I + 4] = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(Lo + 4)), _mm_loadu_ps(Hi + 4), 1);
  }
  transpose4x4Halves(X, R);
  transpose4x4Halves(X + 4, R + 4);
}

/// Stores R transposed: Dst[j * Stride + i] <- R[i] lane j, with in-lane shuffles and 128-bit
/// stores (the inverse of loadTransposed8x8).
__attribute__((target("avx2"), always_inline)) inline void storeTransposed8x8(const __m256 R[8], float *Dst,
                                                                              int64_t Stride) {
  __m256 V[8];
  transpose4x4Halves(R, V);         // V[j]: row j, columns 0-3 | row j + 4, columns 0-3
  transpose4x4Halves(R + 4, V + 4); // columns 4-7
  for (int J = 0; J < 4; ++J) {
    float *Lo = Dst + J * Stride, *Hi = Dst + (J + 4) * Stride;
    _mm_storeu_ps(Lo, _mm256_castps256_ps128(V[J]));
    _mm_storeu_ps(Lo + 4, _mm256_castps256_ps128(V[J + 4]));
    _mm_storeu_ps(Hi, _mm256_extractf128_ps(V[J], 1));
    _mm_storeu_ps(Hi + 4, _mm256_extractf128_ps(V[J + 4], 1));
  }
}

} // namespace vec256
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
#endif
