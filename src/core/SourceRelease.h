// Hooks between the loader and kernel factories for constants that lie in a file the loader
// mapped (a compiled folder's weights.bin, an ONNX file). A factory that packs a constant straight
// from the mapping hands back the bytes it is done with, so a big weight never has all of its file
// pages resident next to its packed copy (releaseSourceRange). A kernel that reads small parts of a
// big constant at run time (an embedding table's rows) can read them from the file instead of
// through the mapping (locateSourceRange). The loader (import/MappedFile's ScopedSourceFiles) says
// what both mean on its own thread while it creates kernels; elsewhere they do nothing. They live
// in core so kernels never include the importer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "core/Status.h"

namespace optimium {
namespace runtime {
namespace detail {

/// Releases [P, P + Bytes) from the resident set when the calling thread's releaser knows the
/// range (a read-only file mapping); otherwise nothing.
void releaseSourceRange(const void *P, size_t Bytes);

/// Sets the calling thread's releaser for the scope's lifetime (nests: the previous one returns).
class ScopedSourceReleaser {
public:
  explicit ScopedSourceReleaser(std::function<void(const void *, size_t)> Release);
  ~ScopedSourceReleaser();
  ScopedSourceReleaser(const ScopedSourceReleaser &) = delete;
  ScopedSourceReleaser &operator=(const ScopedSourceReleaser &) = delete;

private:
  std::function<void(const void *, size_t)> Release;
  const std::function<void(const void *, size_t)> *Prev;
};

/// An open, read-only file whose bytes a mapped constant also is, read by offset (pread): what is
/// read this way is copied out of the page cache and never mapped into the process, so it does not
/// count in its resident set however the page cache holds the file (see MappedFile::sourceFile).
class SourceFile {
public:
  /// Takes Fd (closed by the destructor); Path is for messages.
  SourceFile(int Fd, std::string Path);
  ~SourceFile();
  SourceFile(const SourceFile &) = delete;
  SourceFile &operator=(const SourceFile &) = delete;
  /// Copies Bytes bytes at Offset of the file into Dst. An IOError naming the file when a read
  /// fails or the file ends before Offset + Bytes (truncated since it was mapped).
  Status read(uint64_t Offset, void *Dst, size_t Bytes) const;
  const std::string &path() const { return Path; }

private:
  int Fd;
  std::string Path;
};

/// Where a constant's bytes lie in a file: File null when not in one the loader knows.
struct SourceFileRange {
  std::shared_ptr<const SourceFile> File;
  uint64_t Offset = 0; ///< of the constant's first byte in File
};

/// The file range [P, P + Bytes) was mapped from, when the calling thread's locator knows it;
/// otherwise File is null.
SourceFileRange locateSourceRange(const void *P, size_t Bytes);

/// Sets the calling thread's locator for the scope's lifetime (nests: the previous one returns).
class ScopedSourceLocator {
public:
  explicit ScopedSourceLocator(std::function<SourceFileRange(const void *, size_t)> Locate);
  ~ScopedSourceLocator();
  ScopedSourceLocator(const ScopedSourceLocator &) = delete;
  ScopedSourceLocator &operator=(const ScopedSourceLocator &) = delete;

private:
  std::function<SourceFileRange(const void *, size_t)> Locate;
  const std::function<SourceFileRange(const void *, size_t)> *Prev;
};

} // namespace detail
} // namespace runtime
} // namespace optimium
