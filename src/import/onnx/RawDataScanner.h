// Finds the raw_data bytes of the main graph's initializers inside the serialized model, so weights
// can be used in place (zero copy) instead of through protobuf's string copies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace optimium {
namespace runtime {
namespace detail {

struct RawSpan {
  const uint8_t *Data = nullptr;
  size_t Size = 0;
};

/// One entry per initializer of ModelProto.graph, in order (empty span when it has no raw_data).
/// Returns false when the bytes cannot be walked (the caller then falls back to copies).
bool scanInitializerRawData(const uint8_t *Data, size_t Size, std::vector<RawSpan> &Out);

} // namespace detail
} // namespace runtime
} // namespace optimium
