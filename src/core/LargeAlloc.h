// Large aligned blocks straight from the kernel: weights (ONNX initializer copies, packed GEMM
// panels) and activation arenas are tens of MB, and faulting them in 4 KiB at a time was half of
// ResNet-18's load time. Blocks from largeBlockBytes() up are mmap'ed 2 MiB aligned with
// transparent huge pages requested (MADV_HUGEPAGE; the kernel zero-fills them, so no memset
// either) and unmapped when freed, which also hands a dropped weight copy back at once.
#pragma once

#include <cstddef>

namespace optimium {
namespace runtime {
namespace detail {

/// Blocks at least this large are mapped (one huge page).
constexpr size_t largeBlockBytes() { return size_t{2} << 20; }

/// How much of a large block of Bytes gets transparent huge pages (from its start): every whole
/// 2 MiB stretch, and the tail too when it is at least half a huge page. A short tail stays in
/// 4 KiB pages, so a block just over a huge page does not make almost two of them resident; a long
/// one costs under 1 MiB of extra residence at most and saves hundreds of 4 KiB faults on first
/// touch (MobileNetV2's 3.9 MiB arena: 468 faults in its 1.9 MiB tail during the first inference,
/// on the worker threads; docs/compiled-models.md). 0 below largeBlockBytes().
size_t hugePageBytesOf(size_t Bytes);

/// Bytes of storage, 64-byte aligned (2 MiB for a large block), zero-filled when Zero (a large
/// block always is); nullptr on failure. MappedBytes receives what freeBlock needs: 0 for a heap
/// block. Meant for long-lived blocks: a large one is faulted in afresh after every allocation.
void *allocateBlock(size_t Bytes, bool Zero, size_t &MappedBytes);

/// Frees a block of allocateBlock.
void freeBlock(void *P, size_t MappedBytes);

} // namespace detail
} // namespace runtime
} // namespace optimium
