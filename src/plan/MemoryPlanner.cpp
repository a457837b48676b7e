// Greedy-by-size placement: largest tensors first, each at the lowest offset that does not
// overlap an already placed, conflicting tensor.
#include "plan/MemoryPlanner.h"

#include <algorithm>
#include <numeric>

namespace optimium {
namespace runtime {
namespace detail {

namespace {
size_t alignUp(size_t V) { return (V + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment; }
} // namespace

MemoryPlan planMemory(const std::vector<BufferRequest> &Requests,
                      const std::function<bool(size_t, size_t)> &Conflicts, bool Share) {
  MemoryPlan Plan;
  const size_t N = Requests.size();
  Plan.Offsets.assign(N, 0);
  Plan.Exclusive.assign(N, true);
  if (!Share) {
    size_t Offset = 0;
    for (size_t I = 0; I < N; ++I) {
      Plan.Offsets[I] = Offset;
      Offset += alignUp(std::max<size_t>(Requests[I].Bytes, 1));
    }
    Plan.ArenaBytes = Offset;
    return Plan;
  }
  std::vector<size_t> Order(N);
  std::iota(Order.begin(), Order.end(), 0);
  std::stable_sort(Order.begin(), Order.end(), [&](size_t A, size_t B) { return Requests[A].Bytes > Requests[B].Bytes; });
  std::vector<size_t> Placed;
  for (size_t R : Order) {
    const size_t Size = alignUp(std::max<size_t>(Requests[R].Bytes, 1));
    std::vector<std::pair<size_t, size_t>> Busy; // [begin, end) of conflicting placed requests
    for (size_t P : Placed)
      if (Conflicts(R, P))
        Busy.emplace_back(Plan.Offsets[P], Plan.Offsets[P] + alignUp(std::max<size_t>(Requests[P].Bytes, 1)));
    std::sort(Busy.begin(), Busy.end());
    size_t Offset = 0;
    for (const auto &B : Busy) {
      if (Offset + Size <= B.first)
        break;
      Offset = std::max(Offset, B.second);
    }
    Plan.Offsets[R] = Offset;
    Plan.ArenaBytes = std::max(Plan.ArenaBytes, Offset + Size);
    Placed.push_back(R);
  }
  // Exclusivity: a request sharing any byte with another one may be overwritten.
  for (size_t A = 0; A < N; ++A) {
    const size_t AEnd = Plan.Offsets[A] + alignUp(std::max<size_t>(Requests[A].Bytes, 1));
    for (size_t B = A + 1; B < N; ++B) {
      const size_t BEnd = Plan.Offsets[B] + alignUp(std::max<size_t>(Requests[B].Bytes, 1));
      if (Plan.Offsets[A] < BEnd && Plan.Offsets[B] < AEnd) {
        Plan.Exclusive[A] = false;
        Plan.Exclusive[B] = false;
      }
    }
  }
  return Plan;
}

} // namespace detail
} // namespace runtime
} // namespace optimium
