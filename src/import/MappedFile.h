// Read-only memory mapping of a file: weights stay in the page cache and are shared, not copied.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/SourceRelease.h"
#include "core/Status.h"

namespace optimium {
namespace runtime {
namespace detail {

struct MappedFile {
  const uint8_t *Data = nullptr;
  size_t Size = 0;
  std::string Path;
  uint64_t Device = 0, Inode = 0; ///< of the file mapped (st_dev, st_ino)
  ~MappedFile();
  /// IOError naming the path when it does not exist or cannot be read. HugeFolios, for a file
  /// read whole soon after (a compiled folder's packed.bin): the mapping starts on a 2 MiB boundary
  /// with MADV_HUGEPAGE, so that a read from disk fills the page cache with 2 MiB folios, which
  /// later faults map whole (Linux 6.18, ext4: ResNet-50's 159 MB packed.bin in 153 faults and
  /// 0.8 ms where 4 KiB folios take 2500 faults and 7.8 ms). Pages already cached keep their
  /// folios; falls back to a plain mapping when the aligned one fails.
  static Result<std::shared_ptr<MappedFile>> open(const std::string &Path, bool HugeFolios = false);
  /// Drops the pages read so far from this process's resident set (MADV_DONTNEED). The mapping is
  /// read-only and file-backed, so its content is unchanged: a later read faults the page back in
  /// from the page cache. Called once kernels have packed their weights, so bytes that only fed
  /// the packing stop counting twice.
  void releaseResidentPages() const;
  /// The same for the whole pages inside [P, P + Bytes) when that range lies in this mapping
  /// (false: not ours, nothing done).
  bool releaseResidentPages(const void *P, size_t Bytes) const;
  /// The mapped file open for reads by offset (core/SourceRelease.h): what is read through it is
  /// never mapped, so a kernel reading a few rows of a big table this way does not make the
  /// table resident around them (this kernel, Linux 6.18, maps a file's whole large folio on a
  /// fault, and a file written or copied in big writes sits in the page cache in folios of up to
  /// 2 MiB). Opened by path on the first call and kept while the mapping lives; null when the
  /// file cannot be opened or the path now names another file (replaced since it was mapped).
  std::shared_ptr<const SourceFile> sourceFile() const;

private:
  mutable std::mutex FileMutex;
  mutable std::shared_ptr<const SourceFile> File;
};

/// While the loader creates a model's kernels, the mapped files that model reads: a kernel factory
/// that packs a weight straight from the file (ConstData::Source) hands back the rows it is done
/// with (core/SourceRelease.h's releaseSourceRange), and the pages of those rows that lie in one
/// of these mappings leave the resident set; a factory asking where a constant lies in a file
/// (locateSourceRange) gets the mapping's sourceFile() and the offset. Set by the loader on its
/// own thread for the duration of kernel creation.
class ScopedSourceFiles {
public:
  explicit ScopedSourceFiles(const std::vector<std::shared_ptr<MappedFile>> *Files);

private:
  ScopedSourceReleaser Releaser;
  ScopedSourceLocator Locator;
};

} // namespace detail
} // namespace runtime
} // namespace optimium
