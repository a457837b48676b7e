// The native factories' side of the packed-weights cache (PackedWeights.h).
#include "backends/native/ops/common/PackedWeights.h"

#include <algorithm>
#include <cstddef>
#include <cstdio>

#include "core/CpuFeatureMask.h"
#include "core/CpuFeatures.h"
#include "core/Log.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

namespace {
thread_local const OptRtWeightsCache *Current = nullptr;

bool usable(const OptRtWeightsCache *C) {
  return C && C->struct_size >= offsetof(OptRtWeightsCache, store) + sizeof(C->store) && C->lookup && C->store;
}
} // namespace

static thread_local std::string KeyScope; // ScopedWeightsKeyScope's parts, each ending in '|'

ScopedWeightsKeyScope::ScopedWeightsKeyScope(const std::string &Part) : PreviousSize(KeyScope.size()) {
  KeyScope += Part;
  KeyScope += '|';
}
ScopedWeightsKeyScope::~ScopedWeightsKeyScope() { KeyScope.resize(PreviousSize); }

ScopedWeightsCache::ScopedWeightsCache(const OptRtWeightsCache *Cache) : Previous(Current) {
  Current = usable(Cache) ? Cache : nullptr;
}
ScopedWeightsCache::~ScopedWeightsCache() { Current = Previous; }
const OptRtWeightsCache *currentWeightsCache() { return Current; }

std::string packedWeightsKey(const KernelCreateInfo &I, size_t Input, const std::string &Layout) {
  std::string Key = KeyScope + "in" + std::to_string(Input) + "/" + Layout;
  if (Input < I.Inputs.size() && I.Inputs[Input].Const) {
    const ConstData &C = *I.Inputs[Input].Const;
    Key += "/t" + std::to_string(static_cast<int>(C.Type)) + ":";
    for (size_t D = 0; D < C.Dims.size(); ++D)
      Key += (D ? "x" : "") + std::to_string(C.Dims[D]);
  }
  char Cpu[32];
  std::snprintf(Cpu, sizeof(Cpu), "/cpu%llx", static_cast<unsigned long long>(cpuFeatureMask(cpuFeatures())));
  return Key + Cpu;
}

static thread_local uint64_t Lookups = 0;
uint64_t packedLookupCount() { return Lookups; }

const void *lookupPackedWeights(const std::string &Key, size_t Bytes) {
  ++Lookups;
  if (!Current)
    return nullptr;
  const void *Data = nullptr;
  if (!Current->lookup(Current->state, Key.data(), Key.size(), Bytes, &Data) || !Data)
    return nullptr;
  if (reinterpret_cast<uintptr_t>(Data) % 64) { // a host breaking the contract: never read unaligned
    OPT_LOG(Warning, "packed weights '", Key, "': the cache's entry is not 64-byte aligned; packing again");
    return nullptr;
  }
  return Data;
}

void storePackedWeights(const std::string &Key, const void *Data, size_t Bytes) {
  if (Current && Data)
    Current->store(Current->state, Key.data(), Key.size(), Data, Bytes);
}

size_t packedBFloats(const GemmMicroKernel &MK, int64_t K, int64_t N, bool Bf16) {
  const int64_t Npad = (N + MK.NR - 1) / MK.NR * MK.NR;
  const int64_t Floats = Bf16 ? (Npad * K + 1) / 2 : Npad * K;
  return static_cast<size_t>(std::max<int64_t>(1, Floats));
}

bool borrowPackedB(const std::string &Key, const GemmMicroKernel &MK, int64_t K, int64_t N, int64_t Kc, bool Bf16,
                   PackedB &Out) {
  const size_t Floats = packedBFloats(MK, K, N, Bf16);
  const void *Data = lookupPackedWeights(Key, Floats * sizeof(float));
  if (!Data)
    return false;
  Out.K = K;
  Out.N = N;
  Out.Kc = Kc;
  Out.Bf16 = Bf16;
  // Kernels only read packed weights; the mapping is read-only.
  Out.Data.borrow(const_cast<float *>(static_cast<const float *>(Data)), Floats);
  return true;
}

void storePackedB(const std::string &Key, const PackedB &B) {
  storePackedWeights(Key, B.Data.data(), B.Data.size() * sizeof(float));
}

bool borrowPackedA(const std::string &Key, const GemmMicroKernel &MK, int64_t M, int64_t K, int64_t Kc, PackedA &Out) {
  const int64_t Mpad = (M + MK.MR - 1) / MK.MR * MK.MR;
  const size_t Floats = static_cast<size_t>(std::max<int64_t>(1, Mpad * K));
  const void *Data = lookupPackedWeights(Key, Floats * sizeof(float));
  if (!Data)
    return false;
  Out.M = M;
  Out.K = K;
  Out.Kc = Kc;
  Out.Data.borrow(const_cast<float *>(static_cast<const float *>(Data)), Floats);
  return true;
}

void storePackedA(const std::string &Key, const PackedA &A) {
  storePackedWeights(Key, A.Data.data(), A.Data.size() * sizeof(float));
}

bool borrowPackedFloats(const std::string &Key, size_t Floats, AlignedFloats &Out) {
  const void *Data = lookupPackedWeights(Key, Floats * sizeof(float));
  if (!Data)
    return false;
  Out.borrow(const_cast<float *>(static_cast<const float *>(Data)), Floats);
  return true;
}

void storePackedFloats(const std::string &Key, const AlignedFloats &Data) {
  storePackedWeights(Key, Data.data(), Data.size() * sizeof(float));
}

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
