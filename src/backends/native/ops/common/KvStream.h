// Row loops of the decode-step attention (ops/Attention.cpp): each key / value row of a head is
// read once, copied into the present cache output and used for every query row of the head in the
// same pass, instead of a Concat copying the cache and the attention reading the copy back.
#pragma once

#include <cstdint>

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

/// Rows of one head: Rows rows of D floats at Src (consecutive rows SrcStride floats apart).
struct KvRows {
  const float *Src = nullptr;
  int64_t Rows = 0, SrcStride = 0;
};

/// Copies the rows to Dst (D floats apart) and writes Scores[q * ScoreStride + t] =
/// dot(Q + q * D, row t) for the NQ query rows at Q (contiguous, D floats each).
/// Stream: Dst is 64-byte aligned, D * 4 a multiple of 64, and the copy bypasses the caches.
void kvCopyDot(const KvRows &In, float *Dst, int64_t D, const float *Q, int64_t NQ, float *Scores,
               int64_t ScoreStride, bool Stream, bool Avx512);

/// Copies the rows to Dst (as kvCopyDot) and accumulates Acc[q * D + e] += P[q * PStride + t] *
/// row t [e] for the NQ probability rows at P.
void kvCopyAxpy(const KvRows &In, float *Dst, int64_t D, const float *P, int64_t NQ, int64_t PStride, float *Acc,
                bool Stream, bool Avx512);

/// Orders the streaming stores before later reads of their data (a no-op off x86).
void kvStreamFence();

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
