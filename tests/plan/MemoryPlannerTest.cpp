// The arena planner: conflicting tensors never overlap; non-conflicting ones share memory.
#include <gtest/gtest.h>

#include "plan/MemoryPlanner.h"

using namespace optimium::runtime::detail;

TEST(MemoryPlanner, ChainReusesMemoryAndNeverOverlapsLiveTensors) {
  // A chain t0 -> t1 -> t2 -> t3: only neighbours are live together.
  std::vector<BufferRequest> R{{1000}, {2000}, {1000}, {2000}};
  auto Conflicts = [](size_t A, size_t B) { return (A > B ? A - B : B - A) <= 1; };
  MemoryPlan P = planMemory(R, Conflicts, true);
  for (size_t A = 0; A < R.size(); ++A)
    for (size_t B = 0; B < R.size(); ++B)
      if (A != B && Conflicts(A, B)) {
        const bool Overlap = P.Offsets[A] < P.Offsets[B] + R[B].Bytes && P.Offsets[B] < P.Offsets[A] + R[A].Bytes;
        EXPECT_FALSE(Overlap) << A << " vs " << B;
      }
  EXPECT_LT(P.ArenaBytes, 6000u + 4 * kArenaAlignment);
  EXPECT_LE(P.ArenaBytes, 2048u + 1024u + 64u);
  for (size_t O : P.Offsets)
    EXPECT_EQ(O % kArenaAlignment, 0u);
  EXPECT_FALSE(P.Exclusive[0] && P.Exclusive[2] && P.Offsets[0] == P.Offsets[2]);
}

TEST(MemoryPlanner, WithoutSharingEveryTensorHasItsOwnBytes) {
  std::vector<BufferRequest> R{{10}, {100}, {1000}};
  MemoryPlan P = planMemory(R, [](size_t, size_t) { return false; }, false);
  EXPECT_EQ(P.Offsets[0], 0u);
  EXPECT_EQ(P.Offsets[1], 64u);
  EXPECT_EQ(P.Offsets[2], 192u);
  for (bool E : P.Exclusive)
    EXPECT_TRUE(E);
}

TEST(MemoryPlanner, AllConflictingIsTheSumOfSizes) {
  std::vector<BufferRequest> R{{64}, {128}, {256}};
  MemoryPlan P = planMemory(R, [](size_t, size_t) { return true; }, true);
  EXPECT_EQ(P.ArenaBytes, 448u);
}
