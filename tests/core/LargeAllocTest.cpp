// Large blocks (src/core/LargeAlloc.h): alignment, zero fill, and which part gets huge pages.
#include "core/LargeAlloc.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <sys/resource.h>

using namespace optimium::runtime::detail;

namespace {

constexpr size_t kMiB = size_t{1} << 20;
constexpr size_t kHuge = 2 * kMiB;

long minorFaultsOfThisThread() {
  rusage U{};
  getrusage(RUSAGE_THREAD, &U);
  return U.ru_minflt;
}

long vmstat(const std::string &Key) {
  std::ifstream F("/proc/vmstat");
  std::string Name;
  long Value = 0;
  while (F >> Name >> Value)
    if (Name == Key)
      return Value;
  return -1;
}

bool transparentHugePagesOff() {
  std::ifstream F("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string Line;
  return !std::getline(F, Line) || Line.find("[never]") != std::string::npos;
}

// Writes one byte per 4 KiB page of [P + From, P + To); returns the minor faults that took.
long touchPages(char *P, size_t From, size_t To) {
  const long Before = minorFaultsOfThisThread();
  for (size_t I = From; I < To; I += 4096)
    P[I] = 1;
  return minorFaultsOfThisThread() - Before;
}

} // namespace

TEST(LargeAlloc, HugePagesCoverWholeStretchesAndATailOfAtLeastHalfAHugePage) {
  EXPECT_EQ(hugePageBytesOf(0), 0u);
  EXPECT_EQ(hugePageBytesOf(kHuge - 1), 0u); // a heap block
  EXPECT_EQ(hugePageBytesOf(kHuge), kHuge);
  EXPECT_EQ(hugePageBytesOf(kHuge + kMiB - 1), kHuge);     // short tail: 4 KiB pages
  EXPECT_EQ(hugePageBytesOf(kHuge + kMiB), 2 * kHuge);      // long tail: a huge page too
  EXPECT_EQ(hugePageBytesOf(3 * kHuge + 300 * 1024), 3 * kHuge);
  EXPECT_EQ(hugePageBytesOf(3 * kHuge + kHuge - 64), 4 * kHuge);
}

TEST(LargeAlloc, BlocksAreAlignedZeroedAndFreed) {
  for (size_t Bytes : {size_t{100}, kHuge - 1, kHuge, kHuge + kMiB + 4096 * 7 + 3, 5 * kHuge + 12345}) {
    size_t Mapped = 0;
    char *P = static_cast<char *>(allocateBlock(Bytes, /*Zero=*/true, Mapped));
    ASSERT_NE(P, nullptr) << Bytes;
    const size_t Alignment = Bytes >= largeBlockBytes() ? kHuge : 64;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(P) % Alignment, 0u) << Bytes;
    if (Bytes >= largeBlockBytes())
      EXPECT_EQ(Mapped, (Bytes + kHuge - 1) / kHuge * kHuge) << Bytes;
    else
      EXPECT_EQ(Mapped, 0u) << Bytes;
    for (size_t I = 0; I < Bytes; I += 997)
      ASSERT_EQ(P[I], 0) << Bytes << " at " << I;
    EXPECT_EQ(P[Bytes - 1], 0);
    std::memset(P, 0x5a, Bytes);
    freeBlock(P, Mapped);
  }
}

// The first touch of a long tail is one huge-page fault, not ~480 4 KiB ones (what the first
// inference paid in MobileNetV2's arena); a short tail stays in 4 KiB pages.
TEST(LargeAlloc, ALongTailIsOneHugePageAndAShortOneStaysInSmallPages) {
  if (transparentHugePagesOff())
    GTEST_SKIP() << "transparent huge pages are off on this host";
  const long FallbacksBefore = vmstat("thp_fault_fallback");
  size_t Mapped = 0;
  const size_t LongTail = kHuge + kHuge - 100 * 1024; // 3.9 MiB, like MobileNetV2's arena
  char *P = static_cast<char *>(allocateBlock(LongTail, /*Zero=*/false, Mapped));
  ASSERT_NE(P, nullptr);
  const long LongTailFaults = touchPages(P, kHuge, LongTail);
  freeBlock(P, Mapped);

  const size_t ShortTail = kHuge + 300 * 1024;
  P = static_cast<char *>(allocateBlock(ShortTail, /*Zero=*/false, Mapped));
  ASSERT_NE(P, nullptr);
  const long HeadFaults = touchPages(P, 0, kHuge);
  const long ShortTailFaults = touchPages(P, kHuge, ShortTail);
  freeBlock(P, Mapped);
  if (vmstat("thp_fault_fallback") != FallbacksBefore)
    GTEST_SKIP() << "the kernel had no free huge page at hand (thp_fault_fallback grew)";
  EXPECT_LE(LongTailFaults, 2) << "the 1.9 MiB tail was faulted in small pages";
  EXPECT_LE(HeadFaults, 2);
  EXPECT_GE(ShortTailFaults, 70) << "the 300 KiB tail should stay in 4 KiB pages (75 of them)";
}
