// MappedFile: dropping resident pages keeps the mapping's content (a file-backed read-only
// mapping re-reads it), and a range that is not inside the mapping is left alone.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "import/MappedFile.h"

using namespace optimium::runtime::detail;

namespace {

/// Bytes of this process's anonymous PROT_NONE mappings (/proc/self/maps rows "---p" without a
/// path): where a reservation that was not handed back would show.
size_t protNoneAnonymousBytes() {
  std::ifstream Maps("/proc/self/maps");
  std::string Line;
  size_t Total = 0;
  while (std::getline(Maps, Line)) {
    unsigned long Lo = 0, Hi = 0, Inode = 0;
    char Perms[8] = {0}, Dev[16] = {0};
    unsigned long long Off = 0;
    int Consumed = 0;
    if (std::sscanf(Line.c_str(), "%lx-%lx %7s %llx %15s %lu %n", &Lo, &Hi, Perms, &Off, Dev, &Inode, &Consumed) < 6)
      continue;
    const bool NoPath = Line.find_first_not_of(' ', static_cast<size_t>(Consumed)) == std::string::npos;
    if (std::strcmp(Perms, "---p") == 0 && Inode == 0 && NoPath)
      Total += Hi - Lo;
  }
  return Total;
}

/// Resident memory of this process in KiB (VmRSS).
long residentKiB() {
  std::ifstream F("/proc/self/status");
  std::string Line;
  while (std::getline(F, Line))
    if (Line.rfind("VmRSS:", 0) == 0)
      return std::stol(Line.substr(6));
  return -1;
}

} // namespace

TEST(MappedFile, ReleasedPagesReadBackTheSameBytes) {
  const std::string Path = ::testing::TempDir() + "/mapped_file_test.bin";
  const size_t Size = 8u << 20; // 8 MiB: large enough to see in VmRSS
  std::vector<unsigned char> Bytes(Size);
  for (size_t I = 0; I < Size; ++I)
    Bytes[I] = static_cast<unsigned char>((I * 2654435761u) >> 13);
  {
    std::ofstream F(Path, std::ios::binary);
    F.write(reinterpret_cast<const char *>(Bytes.data()), static_cast<std::streamsize>(Size));
  }
  auto R = MappedFile::open(Path);
  ASSERT_TRUE(R.isOk()) << R.status().message();
  const std::shared_ptr<MappedFile> F = R.value();
  ASSERT_EQ(F->Size, Size);
  volatile unsigned Sum = 0;
  for (size_t I = 0; I < Size; I += 4096)
    Sum = Sum + F->Data[I]; // touch every page (volatile: the loads stay)
  const long Touched = residentKiB();
  // Part of the mapping (unaligned ends: only whole pages inside go), then all of it.
  EXPECT_TRUE(F->releaseResidentPages(F->Data + 1000, Size / 2));
  F->releaseResidentPages();
  const long Released = residentKiB();
  EXPECT_LT(Released, Touched - 4096) << "dropping 8 MiB of touched pages should lower VmRSS (" << Touched << " -> "
                                      << Released << " KiB)";
  EXPECT_EQ(std::memcmp(F->Data, Bytes.data(), Size), 0); // faulted back in, unchanged
  (void)Sum;
  // Ranges outside the mapping are refused and touch nothing.
  EXPECT_FALSE(F->releaseResidentPages(Bytes.data(), 4096));
  EXPECT_FALSE(F->releaseResidentPages(F->Data + Size - 10, 11));
  EXPECT_FALSE(F->releaseResidentPages(nullptr, 0));
  EXPECT_EQ(Bytes[4096], static_cast<unsigned char>((4096u * 2654435761u) >> 13));
  std::remove(Path.c_str());
}

TEST(MappedFile, HugeFolioMappingStartsOnATwoMiBBoundaryWithTheFilesBytes) {
  // packed.bin's mapping (MappedFile::open(Path, /*HugeFolios=*/true)): 2 MiB aligned, the same
  // bytes, a size that is not a page multiple, and an empty file mapped as nothing.
  const std::string Path = ::testing::TempDir() + "/mapped_file_huge_test.bin";
  const size_t Size = (3u << 20) + 1234;
  std::vector<unsigned char> Bytes(Size);
  for (size_t I = 0; I < Size; ++I)
    Bytes[I] = static_cast<unsigned char>((I * 2246822519u) >> 11);
  {
    std::ofstream F(Path, std::ios::binary);
    F.write(reinterpret_cast<const char *>(Bytes.data()), static_cast<std::streamsize>(Size));
  }
  const size_t ProtNoneBefore = protNoneAnonymousBytes();
  for (int Round = 0; Round < 3; ++Round) { // mapped and unmapped again: no leftover reservation in the way
    auto R = MappedFile::open(Path, /*HugeFolios=*/true);
    ASSERT_TRUE(R.isOk()) << R.status().message();
    const std::shared_ptr<MappedFile> F = R.value();
    ASSERT_EQ(F->Size, Size);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(F->Data) % (uintptr_t{2} << 20), 0u);
    EXPECT_EQ(std::memcmp(F->Data, Bytes.data(), Size), 0);
    EXPECT_TRUE(F->releaseResidentPages(F->Data, Size));
    EXPECT_EQ(std::memcmp(F->Data, Bytes.data(), Size), 0);
    // The PROT_NONE reservation's parts around the file's pages were handed back (an unaligned
    // start leaves up to 2 MiB before them, the rest after).
    EXPECT_EQ(protNoneAnonymousBytes(), ProtNoneBefore) << "round " << Round;
  }
  EXPECT_EQ(protNoneAnonymousBytes(), ProtNoneBefore);
  {
    std::ofstream F(Path, std::ios::binary | std::ios::trunc);
  }
  auto Empty = MappedFile::open(Path, /*HugeFolios=*/true);
  ASSERT_TRUE(Empty.isOk()) << Empty.status().message();
  EXPECT_EQ(Empty.value()->Size, 0u);
  EXPECT_EQ(Empty.value()->Data, nullptr);
  auto Missing = MappedFile::open(Path + ".missing", /*HugeFolios=*/true);
  ASSERT_FALSE(Missing.isOk());
  EXPECT_NE(Missing.status().message().find("mapped_file_huge_test.bin.missing"), std::string::npos);
  std::remove(Path.c_str());
}
