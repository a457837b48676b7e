// The host's packed-weights cache (OptRtWeightsCache, Backend.h) as the native factories use it: a
// factory that packs a constant input asks for it under a key first and borrows a hit's bytes (no
// packing, no copy); on a miss it packs as before and stores the result (optimium-compile records
// those into the compiled folder's packed.bin, which a later load serves from its mapping).
//
// The native backend sets the node's cache around each factory call (ScopedWeightsCache), as
// ScopedSourceFiles does for the file pages, so KernelCreateInfo and every op stay unchanged.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "Optimium/Runtime/Extension/Backend.h"
#include "backends/native/Kernel.h"
#include "backends/native/ops/common/Gemm.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

/// The cache of the node whose kernel this thread creates (null outside a create or without one).
class ScopedWeightsCache {
public:
  explicit ScopedWeightsCache(const OptRtWeightsCache *Cache);
  ~ScopedWeightsCache();
  ScopedWeightsCache(const ScopedWeightsCache &) = delete;
  ScopedWeightsCache &operator=(const ScopedWeightsCache &) = delete;

private:
  const OptRtWeightsCache *Previous;
};
const OptRtWeightsCache *currentWeightsCache();

/// A control-flow node's subgraph creates its nodes' kernels inside the owner's create, under the
/// owner's host scope: each body node adds its own part to the keys (the subgraph attribute, its
/// position and name; nested subgraphs add theirs after), so two body nodes never share an entry.
class ScopedWeightsKeyScope {
public:
  explicit ScopedWeightsKeyScope(const std::string &Part);
  ~ScopedWeightsKeyScope();
  ScopedWeightsKeyScope(const ScopedWeightsKeyScope &) = delete;
  ScopedWeightsKeyScope &operator=(const ScopedWeightsKeyScope &) = delete;

private:
  size_t PreviousSize;
};

/// The key of constant input Input packed in Layout (the kernel variant and packing parameters,
/// e.g. "f32_gemm__avx2_6x16/kc192"): the subgraph scope (if any), the input index, the layout, the constant's type and dims,
/// and this CPU's feature mask (a CPU with other features never takes another's packing).
std::string packedWeightsKey(const KernelCreateInfo &I, size_t Input, const std::string &Layout);

/// A hit of exactly Bytes bytes (the host answers only an entry of that size), 64-byte aligned:
/// its data (borrowed: it lives as long as the model). Null on a miss, without a cache, or when the
/// entry is not aligned (a logged miss: the caller packs).
const void *lookupPackedWeights(const std::string &Key, size_t Bytes);
/// Offers the packed bytes of a miss to the cache (no-op without one).
void storePackedWeights(const std::string &Key, const void *Data, size_t Bytes);

/// The floats packB / packBBf16 fill for K x N with MK's panels.
size_t packedBFloats(const GemmMicroKernel &MK, int64_t K, int64_t N, bool Bf16);
/// Out becomes the cached packing of K x N (Kc, Bf16 as packed) borrowed from the cache: true on a
/// hit. Else Out is untouched and the caller packs, then calls storePackedB.
bool borrowPackedB(const std::string &Key, const GemmMicroKernel &MK, int64_t K, int64_t N, int64_t Kc, bool Bf16,
                   PackedB &Out);
void storePackedB(const std::string &Key, const PackedB &B);

/// PackedA likewise (packA's layout: Conv's weights as the left operand).
bool borrowPackedA(const std::string &Key, const GemmMicroKernel &MK, int64_t M, int64_t K, int64_t Kc, PackedA &Out);
void storePackedA(const std::string &Key, const PackedA &A);

/// Generic float buffers (conv weight layouts): Out borrows a hit of exactly Floats floats.
bool borrowPackedFloats(const std::string &Key, size_t Floats, AlignedFloats &Out);
void storePackedFloats(const std::string &Key, const AlignedFloats &Data);

/// Out becomes Key's packing of Floats floats: borrowed on a hit; else Out is resized to Floats
/// zeros, Fill(Out.data()) writes the layout and the result is offered to the cache. Fill must
/// produce the same bytes on every call with the same key (a later load borrows them).
template <class Pack> void packFloatsCached(const std::string &Key, size_t Floats, AlignedFloats &Out, Pack &&Fill) {
  if (borrowPackedFloats(Key, Floats, Out))
    return;
  Out.resize(Floats);
  std::fill_n(Out.data(), Floats, 0.0f);
  Fill(Out.data());
  storePackedFloats(Key, Out);
}

/// A packed constant of another element type (the int8 kernels' int8 / int16 / int32 layouts):
/// borrowed from the cache (read only) or owned.
template <class T> class PackedArray {
public:
  /// Key's N elements borrowed on a hit of exactly N * sizeof(T) bytes; else N zeros, owned,
  /// filled by Fill(T *) and offered to the cache.
  template <class Pack> void borrowOrPack(const std::string &Key, size_t N, Pack &&Fill) {
    Count = N;
    Borrowed = N ? static_cast<const T *>(lookupPackedWeights(Key, N * sizeof(T))) : nullptr;
    if (Borrowed)
      return;
    Owned.assign(N, T());
    Fill(Owned.data());
    if (N)
      storePackedWeights(Key, Owned.data(), N * sizeof(T));
  }
  const T *data() const { return Borrowed ? Borrowed : Owned.data(); }
  const T &operator[](size_t I) const { return data()[I]; }
  size_t size() const { return Count; }
  bool empty() const { return Count == 0; }

private:
  std::vector<T> Owned;
  const T *Borrowed = nullptr;
  size_t Count = 0;
};

/// Cache lookups made on this thread so far (the native backend's check that a factory which
/// keeps a packed copy of a constant asked the cache for it).
uint64_t packedLookupCount();

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
