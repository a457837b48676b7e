// Arena memory planning: places tensors at offsets of one buffer so that tensors whose lifetimes
// overlap never share bytes (greedy by size, as LiteRT's arena planner).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace optimium {
namespace runtime {
namespace detail {

struct BufferRequest {
  size_t Bytes = 0;
};

struct MemoryPlan {
  std::vector<size_t> Offsets; ///< One per request.
  size_t ArenaBytes = 0;
  /// Whether request i owns its bytes exclusively (no other request overlaps them).
  std::vector<bool> Exclusive;
};

constexpr size_t kArenaAlignment = 64;

/// Conflicts(A, B): whether requests A and B are live at the same time. With Share = false
/// every request gets its own bytes.
MemoryPlan planMemory(const std::vector<BufferRequest> &Requests,
                      const std::function<bool(size_t, size_t)> &Conflicts, bool Share);

} // namespace detail
} // namespace runtime
} // namespace optimium
