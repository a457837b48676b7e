// The per-thread scratch stack (ThreadScratch.h): frames nest and release LIFO, memory is reused
// across frames (what makes the second inference fault nothing), alignment, one stack per thread,
// pointers usable from other threads while the frame lives, and growth past the first block.
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
  EXPECT_EQ(threadScratchStats().Reserved, S.Reserved); // nothing new allocated
  EXPECT_GE(S.HighWater, 300000 * sizeof(float));
  EXPECT_GE(S.Reserved, S.HighWater);
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

TEST(ThreadScratch, GrowsInBlocksThatAreKept) {
  // Run on a fresh thread, so the stack starts empty.
  std::thread([] {
    EXPECT_EQ(threadScratchStats().Segments, 0u);
    char *Small = nullptr, *Big = nullptr;
    {
      ScratchFrame Outer;
      Small = static_cast<char *>(Outer.bytes(1000));
      EXPECT_EQ(threadScratchStats().Segments, 1u);
      EXPECT_EQ(threadScratchStats().Reserved, threadScratchSmallPageBytes());
      {
        ScratchFrame Inner; // past the first block: a second one of at least 2 MiB
        Big = static_cast<char *>(Inner.bytes(3 << 20));
        EXPECT_EQ(threadScratchStats().Segments, 2u);
        EXPECT_GE(threadScratchStats().Reserved, threadScratchSmallPageBytes() + (size_t{3} << 20));
        EXPECT_TRUE(Big + (3 << 20) <= Small || Big >= Small + 1000); // no overlap
        std::memset(Big, 1, 3 << 20);
        std::memset(Small, 2, 1000);
        EXPECT_EQ(Big[(3 << 20) - 1], 1);
      }
      EXPECT_EQ(threadScratchStats().InUse, 1024u); // 1000 bytes rounded to 64
    }
    const ThreadScratchStats Kept = threadScratchStats();
    EXPECT_EQ(Kept.InUse, 0u);
    {
      ScratchFrame Again; // the same blocks serve the same requests: nothing allocated
      EXPECT_EQ(Again.bytes(1000), Small);
      ScratchFrame Inner;
      EXPECT_EQ(Inner.bytes(3 << 20), Big);
    }
    EXPECT_EQ(threadScratchStats().Reserved, Kept.Reserved);
    {
      ScratchFrame Larger; // a free block too small for a request is replaced by a larger one
      Larger.bytes(1000);
      char *P = static_cast<char *>(Larger.bytes(size_t{9} << 20));
      P[0] = 1, P[(size_t{9} << 20) - 1] = 2;
      EXPECT_EQ(threadScratchStats().Segments, 2u);
      EXPECT_GE(threadScratchStats().Reserved, threadScratchSmallPageBytes() + (size_t{9} << 20));
    }
  }).join();
}

} // namespace
