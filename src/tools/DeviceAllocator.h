// optimium-run's --device_allocator: where the input buffers handed to the device come from.
// cpu: host memory from the runtime. dmabuf: buffers of the Linux DMA-BUF system heap
// (/dev/dma_heap/system) mapped into this process, which a device driver can import without a
// copy; the native CPU device reads them in place. auto: dmabuf when the heap exists and allocates,
// else cpu (as the Torq runtime's --torq_device_allocator=auto probes for a usable heap).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "Optimium/Runtime.h"

namespace optimium {
namespace tools {

/// The kernel's DMA-BUF system heap.
constexpr const char *kSystemDmaHeap = "/dev/dma_heap/system";

class DeviceAllocator {
public:
  /// Flag is auto, cpu or dmabuf. dmabuf: ToolError saying why HeapPath cannot be used (it does
  /// not exist, cannot be opened, or is not a DMA-BUF heap). auto: never fails (falls back to cpu).
  static std::unique_ptr<DeviceAllocator> create(const std::string &Flag, const std::string &HeapPath = kSystemDmaHeap);
  ~DeviceAllocator();
  DeviceAllocator(const DeviceAllocator &) = delete;
  DeviceAllocator &operator=(const DeviceAllocator &) = delete;

  /// "cpu", or "dmabuf (/dev/dma_heap/system)".
  std::string name() const;
  bool isDmaBuf() const { return HeapFd >= 0; }
  /// A tensor whose buffer comes from this allocator. A dma-buf lives as long as the allocator:
  /// keep it alive longer than every tensor (and request) using its buffers. ToolError when the
  /// heap cannot give Bytes (beyond its size, out of memory).
  runtime::Tensor allocate(runtime::ElementType Type, const std::vector<int64_t> &Dims);

private:
  struct DmaBuffer {
    int Fd = -1;
    void *Map = nullptr;
    size_t Bytes = 0;
  };
  DeviceAllocator() = default;
  /// One dma-buf of at least Bytes, mapped read-write with CPU access begun; ToolError on failure.
  DmaBuffer allocateDmaBuffer(size_t Bytes);
  static void freeDmaBuffer(DmaBuffer &B);

  int HeapFd = -1; ///< -1: cpu
  std::string HeapPath;
  std::vector<DmaBuffer> Buffers;
};

} // namespace tools
} // namespace optimium
