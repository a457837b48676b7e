// The thread's source-range releaser (see SourceRelease.h).
#include "core/SourceRelease.h"

namespace optimium {
namespace runtime {
namespace detail {

namespace {
thread_local const std::function<void(const void *, size_t)> *CurrentReleaser = nullptr;
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

} // namespace detail
} // namespace runtime
} // namespace optimium
