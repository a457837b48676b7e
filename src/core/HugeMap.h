// 2 MiB-aligned mappings: large blocks (LargeAlloc.cpp) and the huge-folio mapping of packed
// weights (import/MappedFile.cpp) both over-map by one huge page and trim.
#pragma once

#include <cstddef>

namespace optimium {
namespace runtime {
namespace detail {

/// Maps Bytes (rounded up to whole pages) of private anonymous memory starting on a 2 MiB boundary,
/// read-write when Writable, else PROT_NONE (a reservation for a file to be mapped over with
/// MAP_FIXED): one huge page more is mapped and what lies outside the aligned part is unmapped
/// again. No MADV_HUGEPAGE: the caller advises what it wants. nullptr on failure (or not on Linux).
void *mapHugeAligned(size_t Bytes, bool Writable);

} // namespace detail
} // namespace runtime
} // namespace optimium
