// The per-thread scratch stack (ThreadScratch.h): frames nest and release LIFO, memory is reused
// across frames (what makes the second inference fault nothing), alignment, one stack per thread,
// pointers usable from other threads while the frame lives, and requests past the reservation.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "backends/native/ops/common/ThreadScratch.h"
#include "exec/ThreadPool.h"

using namespace optimium::runtime::detail;
using namespace optimium::runtime::detail::ops;

namespace {

bool aligned64(const void *P) { return reinterpret_cast<uintptr_t>(P) % 64 == 0; }

TEST(ThreadScratch, FramesNestAndReleaseInOrder) {
  const size_t Before = threadScratchStats().InUse;
  {
    ScratchFrame Outer;
    float *A = Outer.take<float>(1000);
    ASSERT_NE(A, nullptr);
    EXPECT_TRUE(aligned64(A));
    const size_t AfterOuter = threadScratchStats().InUse;
    EXPECT_GE(AfterOuter, Before + 1000 * sizeof(float));
    {
      ScratchFrame Inner;
      int64_t *B = Inner.take<int64_t>(3);
      EXPECT_TRUE(aligned64(B));
      // Above the outer frame's block, not overlapping it.
      EXPECT_GE(reinterpret_cast<char *>(B), reinterpret_cast<char *>(A + 1000));
      EXPECT_GT(threadScratchStats().InUse, AfterOuter);
    }
    EXPECT_EQ(threadScratchStats().InUse, AfterOuter);
    // Two takes in one frame do not overlap either.
    float *C = Outer.take<float>(1);
    EXPECT_GE(C, A + 1000);
    EXPECT_TRUE(aligned64(C));
  }
  EXPECT_EQ(threadScratchStats().InUse, Before);
}

TEST(ThreadScratch, MemoryIsReusedAcrossFrames) {
  float *First = nullptr;
  {
    ScratchFrame F;
    First = F.take<float>(300000); // ~1.2 MB, a conv's im2col panel
    First[0] = 1.0f, First[299999] = 2.0f;
  }
  const ThreadScratchStats S = threadScratchStats();
  for (int I = 0; I < 3; ++I) {
    ScratchFrame F;
    EXPECT_EQ(F.take<float>(300000), First); // the same pages: nothing new is mapped or faulted
  }
  EXPECT_EQ(threadScratchStats().HighWater, S.HighWater);
  if (S.Reserved) {
    EXPECT_EQ(S.Reserved, threadScratchReserveBytes());
    // The small-page prefix ends on a huge-page boundary.
    EXPECT_EQ((reinterpret_cast<uintptr_t>(S.Base) + threadScratchSmallPageBytes()) % (size_t{2} << 20), 0u);
    EXPECT_GE(S.HighWater, 300000 * sizeof(float));
  }
}

TEST(ThreadScratch, ZeroSizedTakesAreDistinctAndAligned) {
  ScratchFrame F;
  void *A = F.bytes(0), *B = F.bytes(0);
  EXPECT_NE(A, B);
  EXPECT_TRUE(aligned64(A));
  EXPECT_TRUE(aligned64(B));
}

TEST(ThreadScratch, EachThreadHasItsOwnStack) {
  constexpr int kThreads = 4;
  constexpr size_t kFloats = 100000;
  std::vector<const void *> Bases(kThreads);
  std::vector<int> Errors(kThreads, 0);
  std::vector<std::thread> Threads;
  for (int T = 0; T < kThreads; ++T)
    Threads.emplace_back([&, T] {
      for (int Round = 0; Round < 50; ++Round) {
        ScratchFrame F;
        float *P = F.take<float>(kFloats);
        for (size_t I = 0; I < kFloats; ++I)
          P[I] = static_cast<float>(T * 1000 + Round);
        std::this_thread::yield();
        for (size_t I = 0; I < kFloats; ++I) // no other thread wrote here meanwhile
          Errors[static_cast<size_t>(T)] += P[I] != static_cast<float>(T * 1000 + Round);
      }
      Bases[static_cast<size_t>(T)] = threadScratchStats().Base;
      if (threadScratchStats().InUse != 0)
        ++Errors[static_cast<size_t>(T)];
    });
  for (auto &Th : Threads)
    Th.join();
  for (int T = 0; T < kThreads; ++T) {
    EXPECT_EQ(Errors[static_cast<size_t>(T)], 0) << "thread " << T;
    for (int U = 0; U < T; ++U) {
      if (Bases[static_cast<size_t>(T)]) {
        EXPECT_NE(Bases[static_cast<size_t>(T)], Bases[static_cast<size_t>(U)]);
      }
    }
  }
}

TEST(ThreadScratch, WorkersWriteThroughTheCallersFrame) {
  // The kernels' pattern: the calling thread takes a buffer, a parallelFor's workers fill it (each
  // with its own nested frame for its private part), the caller reads it after the join.
  PoolConfig Config;
  Config.Threads = 2;
  ThreadPool Pool(Config);
  ScratchFrame F;
  constexpr size_t kN = 1 << 16;
  float *Shared = F.take<float>(kN);
  Pool.parallelFor(64, 1, [&](size_t Lo, size_t Hi) {
    for (size_t Chunk = Lo; Chunk < Hi; ++Chunk) {
      ScratchFrame Private;
      float *Mine = Private.take<float>(kN / 64);
      for (size_t I = 0; I < kN / 64; ++I)
        Mine[I] = static_cast<float>(Chunk * (kN / 64) + I);
      std::memcpy(Shared + Chunk * (kN / 64), Mine, kN / 64 * sizeof(float));
    }
  });
  for (size_t I = 0; I < kN; ++I)
    ASSERT_EQ(Shared[I], static_cast<float>(I)) << I;
}

TEST(ThreadScratch, RequestsPastTheReservationGetTheirOwnBlock) {
  const size_t Before = threadScratchStats().InUse;
  {
    ScratchFrame F;
    const size_t Big = threadScratchReserveBytes() + 1;
    char *P = static_cast<char *>(F.bytes(Big)); // address space only: touched at both ends
    ASSERT_NE(P, nullptr);
    EXPECT_TRUE(aligned64(P));
    P[0] = 1, P[Big - 1] = 2;
    EXPECT_EQ(threadScratchStats().InUse, Before); // not on the stack
    float *Small = F.take<float>(16); // the stack still serves the frame's small requests
    EXPECT_TRUE(aligned64(Small));
  }
  EXPECT_EQ(threadScratchStats().InUse, Before);
}

} // namespace
