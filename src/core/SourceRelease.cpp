// The thread's source-range releaser and locator, and SourceFile's reads (see SourceRelease.h).
#include "core/SourceRelease.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace optimium {
namespace runtime {
namespace detail {

namespace {
thread_local const std::function<void(const void *, size_t)> *CurrentReleaser = nullptr;
thread_local const std::function<SourceFileRange(const void *, size_t)> *CurrentLocator = nullptr;
} // namespace

void releaseSourceRange(const void *P, size_t Bytes) {
  if (CurrentReleaser && *CurrentReleaser)
    (*CurrentReleaser)(P, Bytes);
}

ScopedSourceReleaser::ScopedSourceReleaser(std::function<void(const void *, size_t)> R)
    : Release(std::move(R)), Prev(CurrentReleaser) {
  CurrentReleaser = &Release;
}

ScopedSourceReleaser::~ScopedSourceReleaser() { CurrentReleaser = Prev; }

SourceFile::SourceFile(int Fd, std::string Path) : Fd(Fd), Path(std::move(Path)) {}

SourceFile::~SourceFile() {
  if (Fd >= 0)
    ::close(Fd);
}

Status SourceFile::read(uint64_t Offset, void *Dst, size_t Bytes) const {
  char *Out = static_cast<char *>(Dst);
  while (Bytes) {
    const ssize_t N = ::pread(Fd, Out, Bytes, static_cast<off_t>(Offset));
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0)
      return makeError(ErrorCode::IO, "cannot read ", Bytes, " bytes at offset ", Offset, " of '", Path,
                       "': ", std::strerror(errno));
    if (N == 0)
      return makeError(ErrorCode::IO, "'", Path, "' ends before offset ", Offset + Bytes,
                       " (truncated since it was loaded?)");
    Out += N;
    Offset += static_cast<uint64_t>(N);
    Bytes -= static_cast<size_t>(N);
  }
  return Status::ok();
}

SourceFileRange locateSourceRange(const void *P, size_t Bytes) {
  if (CurrentLocator && *CurrentLocator)
    return (*CurrentLocator)(P, Bytes);
  return SourceFileRange();
}

ScopedSourceLocator::ScopedSourceLocator(std::function<SourceFileRange(const void *, size_t)> L)
    : Locate(std::move(L)), Prev(CurrentLocator) {
  CurrentLocator = &Locate;
}

ScopedSourceLocator::~ScopedSourceLocator() { CurrentLocator = Prev; }

} // namespace detail
} // namespace runtime
} // namespace optimium
