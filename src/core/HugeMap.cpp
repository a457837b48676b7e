// 2 MiB-aligned mappings (see HugeMap.h).
#include "core/HugeMap.h"

#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace optimium {
namespace runtime {
namespace detail {

void *mapHugeAligned(size_t Bytes, bool Writable) {
#if defined(__linux__)
  const uintptr_t Huge = uintptr_t{2} << 20;
  const uintptr_t Page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  if (Bytes > SIZE_MAX - Huge - Page)
    return nullptr;
  const size_t Rounded = (Bytes + Page - 1) / Page * Page;
  const int Flags = MAP_PRIVATE | MAP_ANONYMOUS | (Writable ? 0 : MAP_NORESERVE);
  void *Raw = mmap(nullptr, Rounded + Huge, Writable ? PROT_READ | PROT_WRITE : PROT_NONE, Flags, -1, 0);
  if (Raw == MAP_FAILED)
    return nullptr;
  const uintptr_t Start = reinterpret_cast<uintptr_t>(Raw), End = Start + Rounded + Huge;
  const uintptr_t Aligned = (Start + Huge - 1) / Huge * Huge;
  if (Aligned > Start)
    munmap(Raw, Aligned - Start);
  if (End > Aligned + Rounded)
    munmap(reinterpret_cast<void *>(Aligned + Rounded), End - (Aligned + Rounded));
  return reinterpret_cast<void *>(Aligned);
#else
  (void)Bytes;
  (void)Writable;
  return nullptr;
#endif
}

} // namespace detail
} // namespace runtime
} // namespace optimium
