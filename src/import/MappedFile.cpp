// mmap-based file access for model and external weight files.
#include "import/MappedFile.h"

#include "core/HugeMap.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace optimium {
namespace runtime {
namespace detail {

MappedFile::~MappedFile() {
  if (Data && Size)
    ::munmap(const_cast<uint8_t *>(Data), Size);
}

void MappedFile::releaseResidentPages() const {
  if (Data && Size)
    ::madvise(const_cast<uint8_t *>(Data), Size, MADV_DONTNEED);
}

bool MappedFile::releaseResidentPages(const void *P, size_t Bytes) const {
  const uintptr_t B = reinterpret_cast<uintptr_t>(P), Lo = reinterpret_cast<uintptr_t>(Data);
  if (!Data || !P || B < Lo || Bytes > Size || B - Lo > Size - Bytes)
    return false;
  const uintptr_t Page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t First = (B + Page - 1) / Page * Page, Last = (B + Bytes) / Page * Page;
  if (Last > First)
    ::madvise(reinterpret_cast<void *>(First), Last - First, MADV_DONTNEED);
  return true;
}

std::shared_ptr<const SourceFile> MappedFile::sourceFile() const {
  std::lock_guard<std::mutex> Lock(FileMutex);
  if (File || !Data)
    return File;
  const int Fd = ::open(Path.c_str(), O_RDONLY | O_CLOEXEC);
  if (Fd < 0)
    return nullptr;
  struct stat St;
  if (::fstat(Fd, &St) != 0 || static_cast<uint64_t>(St.st_dev) != Device || static_cast<uint64_t>(St.st_ino) != Inode) {
    ::close(Fd);
    return nullptr;
  }
  File = std::make_shared<SourceFile>(Fd, Path);
  return File;
}

ScopedSourceFiles::ScopedSourceFiles(const std::vector<std::shared_ptr<MappedFile>> *Files)
    : Releaser([Files](const void *P, size_t Bytes) {
        if (Files)
          for (const auto &F : *Files)
            if (F && F->releaseResidentPages(P, Bytes))
              return;
      }),
      Locator([Files](const void *P, size_t Bytes) {
        SourceFileRange R;
        if (!Files || !P)
          return R;
        const uintptr_t B = reinterpret_cast<uintptr_t>(P);
        for (const auto &F : *Files) {
          const uintptr_t Lo = reinterpret_cast<uintptr_t>(F ? F->Data : nullptr);
          if (!Lo || B < Lo || Bytes > F->Size || B - Lo > F->Size - Bytes)
            continue;
          R.File = F->sourceFile();
          R.Offset = R.File ? B - Lo : 0;
          break;
        }
        return R;
      }) {}

namespace {
/// A read-only private mapping of Fd's Size bytes starting on a 2 MiB boundary (the file mapped
/// over a PROT_NONE reservation of mapHugeAligned), with MADV_HUGEPAGE: see MappedFile::open.
/// MAP_FAILED when any step fails (nothing left mapped).
void *mapFileHugeAligned(int Fd, size_t Size) {
  void *Reserved = mapHugeAligned(Size, /*Writable=*/false);
  if (!Reserved)
    return MAP_FAILED;
  void *P = ::mmap(Reserved, Size, PROT_READ, MAP_PRIVATE | MAP_FIXED, Fd, 0);
  if (P == MAP_FAILED) {
    const size_t Page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    ::munmap(Reserved, (Size + Page - 1) / Page * Page);
    return MAP_FAILED;
  }
#ifdef MADV_HUGEPAGE
  ::madvise(P, Size, MADV_HUGEPAGE); // advisory: fine if refused
#endif
  return P;
}
} // namespace

Result<std::shared_ptr<MappedFile>> MappedFile::open(const std::string &Path, bool HugeFolios) {
  const int Fd = ::open(Path.c_str(), O_RDONLY | O_CLOEXEC);
  if (Fd < 0)
    return makeError(ErrorCode::IO, "cannot open '", Path, "': ", std::strerror(errno));
  struct stat St;
  if (::fstat(Fd, &St) != 0) {
    const int E = errno;
    ::close(Fd);
    return makeError(ErrorCode::IO, "cannot stat '", Path, "': ", std::strerror(E));
  }
  auto F = std::make_shared<MappedFile>();
  F->Path = Path;
  F->Size = static_cast<size_t>(St.st_size);
  F->Device = static_cast<uint64_t>(St.st_dev);
  F->Inode = static_cast<uint64_t>(St.st_ino);
  if (F->Size > 0) {
    void *P = HugeFolios ? mapFileHugeAligned(Fd, F->Size) : MAP_FAILED;
    if (P == MAP_FAILED)
      P = ::mmap(nullptr, F->Size, PROT_READ, MAP_PRIVATE, Fd, 0);
    if (P == MAP_FAILED) {
      const int E = errno;
      ::close(Fd);
      F->Size = 0;
      return makeError(ErrorCode::IO, "cannot map '", Path, "': ", std::strerror(E));
    }
    F->Data = static_cast<const uint8_t *>(P);
  }
  ::close(Fd);
  return F;
}

} // namespace detail
} // namespace runtime
} // namespace optimium
