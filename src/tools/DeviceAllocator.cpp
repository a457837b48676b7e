// DMA-BUF heap allocation for optimium-run; see DeviceAllocator.h.
#include "tools/DeviceAllocator.h"

#include <fcntl.h>
#include <linux/dma-buf.h>
#include <linux/dma-heap.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "tools/Npy.h"

namespace optimium {
namespace tools {

namespace rt = optimium::runtime;

namespace {

std::string errnoText(int E) { return std::strerror(E); }

/// Opens the heap; -1 with errno set on failure.
int openHeap(const std::string &Path) { return ::open(Path.c_str(), O_RDWR | O_CLOEXEC); }

} // namespace

std::unique_ptr<DeviceAllocator> DeviceAllocator::create(const std::string &Flag, const std::string &HeapPath) {
  std::unique_ptr<DeviceAllocator> A(new DeviceAllocator());
  A->HeapPath = HeapPath;
  if (Flag == "cpu")
    return A;
  if (Flag != "auto" && Flag != "dmabuf")
    throw ToolError("--device_allocator=" + Flag + ": expected auto, cpu or dmabuf");
  const bool Required = Flag == "dmabuf";
  A->HeapFd = openHeap(HeapPath);
  if (A->HeapFd < 0) {
    const int E = errno;
    if (!Required)
      return A; // auto: host memory
    if (E == ENOENT)
      throw ToolError("--device_allocator=dmabuf: " + HeapPath +
                      " does not exist (this kernel offers no DMA-BUF system heap, CONFIG_DMABUF_HEAPS_SYSTEM); use "
                      "--device_allocator=auto or cpu");
    throw ToolError("--device_allocator=dmabuf: cannot open " + HeapPath + ": " + errnoText(E));
  }
  // Probe with one page: a node that opens but does not allocate (not a heap, no permission to
  // allocate) fails here, not in the middle of preparing inputs.
  try {
    DmaBuffer Probe = A->allocateDmaBuffer(1);
    freeDmaBuffer(Probe);
  } catch (const ToolError &) {
    ::close(A->HeapFd);
    A->HeapFd = -1;
    if (Required)
      throw;
  }
  return A;
}

DeviceAllocator::~DeviceAllocator() {
  for (DmaBuffer &B : Buffers)
    freeDmaBuffer(B);
  if (HeapFd >= 0)
    ::close(HeapFd);
}

std::string DeviceAllocator::name() const { return isDmaBuf() ? "dmabuf (" + HeapPath + ")" : "cpu"; }

DeviceAllocator::DmaBuffer DeviceAllocator::allocateDmaBuffer(size_t Bytes) {
  const size_t Page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t Len = (Bytes + Page - 1) / Page * Page;
  dma_heap_allocation_data Data;
  std::memset(&Data, 0, sizeof(Data));
  Data.len = Len;
  Data.fd_flags = O_RDWR | O_CLOEXEC;
  if (::ioctl(HeapFd, DMA_HEAP_IOCTL_ALLOC, &Data) != 0) {
    const int E = errno;
    if (E == ENOTTY || E == EINVAL)
      throw ToolError("--device_allocator=dmabuf: " + HeapPath + " is not a DMA-BUF heap (" + errnoText(E) + ")");
    throw ToolError("--device_allocator=dmabuf: allocating " + std::to_string(Len) + " bytes from " + HeapPath +
                    " failed: " + errnoText(E));
  }
  DmaBuffer B;
  B.Fd = static_cast<int>(Data.fd);
  B.Bytes = Len;
  B.Map = ::mmap(nullptr, Len, PROT_READ | PROT_WRITE, MAP_SHARED, B.Fd, 0);
  if (B.Map == MAP_FAILED) {
    const int E = errno;
    ::close(B.Fd);
    throw ToolError("--device_allocator=dmabuf: mapping a " + std::to_string(Len) + "-byte dma-buf failed: " +
                    errnoText(E));
  }
  // The CPU reads and writes the buffer until it is freed (the native device is the CPU): one
  // access bracket for its whole life keeps the caches coherent for a device that imports it.
  dma_buf_sync Sync{DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW};
  (void)::ioctl(B.Fd, DMA_BUF_IOCTL_SYNC, &Sync);
  return B;
}

void DeviceAllocator::freeDmaBuffer(DmaBuffer &B) {
  if (B.Fd < 0)
    return;
  dma_buf_sync Sync{DMA_BUF_SYNC_END | DMA_BUF_SYNC_RW};
  (void)::ioctl(B.Fd, DMA_BUF_IOCTL_SYNC, &Sync);
  ::munmap(B.Map, B.Bytes);
  ::close(B.Fd);
  B.Fd = -1;
}

rt::Tensor DeviceAllocator::allocate(rt::ElementType Type, const std::vector<int64_t> &Dims) {
  const rt::TensorShape Shape = rt::TensorShape::fromDims(Dims);
  if (!isDmaBuf() || Type == rt::ElementType::String) // strings are host objects, never device memory
    return rt::tensor(Type, Shape);
  size_t Count = 1;
  for (int64_t D : Dims)
    Count *= static_cast<size_t>(D);
  // The runtime's padding promise: kTensorPaddingBytes readable after the data.
  Buffers.push_back(allocateDmaBuffer(Count * rt::getElementSize(Type) + rt::kTensorPaddingBytes));
  return rt::tensor(Type, Shape, Buffers.back().Map, /*Padding=*/true);
}

} // namespace tools
} // namespace optimium
