// A hook between the loader and kernel factories: a factory that packs a constant straight from
// the model file's mapping hands back the bytes it is done with, so a big weight never has all of
// its file pages resident next to its packed copy. The loader (import/MappedFile's
// ScopedSourceFiles) says what releasing means on its own thread while it creates kernels;
// elsewhere releaseSourceRange does nothing. It lives in core so kernels never include the importer.
#pragma once

#include <cstddef>
#include <functional>

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

} // namespace detail
} // namespace runtime
} // namespace optimium
