// Tensor storage (detail::Buffer), tensor creation and the Tensor handle's members. Every member
// that needs the handle's implementation throws InvalidStateError on an empty or released tensor.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <string>
#include <sys/stat.h>
#include <utility>

#include "Optimium/Runtime/Exceptions.h"
#include "Optimium/Runtime/Tensor.h"
#include "core/ErrorConversion.h"
#include "core/LargeAlloc.h"
#include "core/Status.h"
#include "core/TensorImpl.h"

namespace optimium {
namespace runtime {

namespace detail {

Buffer::~Buffer() {
  if (ConstructedStrings == ElementType::String && Data) {
    auto *Strings = static_cast<std::string *>(Data);
    for (size_t I = 0; I < StringCount; ++I)
      Strings[I].~basic_string();
  }
  if (Owned)
    freeBlock(Data, MappedBytes);
}

std::shared_ptr<Buffer> Buffer::allocateLongLived(size_t Bytes) {
  size_t Mapped = 0;
  void *P = allocateBlock(Bytes, /*Zero=*/false, Mapped);
  if (!P)
    return nullptr;
  auto B = std::make_shared<Buffer>();
  B->Data = P;
  B->Bytes = Bytes;
  B->Owned = true;
  B->MappedBytes = Mapped;
  return B;
}

std::shared_ptr<Buffer> Buffer::allocate(size_t Bytes, size_t Padding) {
  // Round the block up to a multiple of the alignment (aligned_alloc's contract, and it keeps the
  // tail readable by full vectors); never allocate zero bytes so an empty tensor still has a
  // distinct, non-null address.
  if (Bytes > std::numeric_limits<size_t>::max() - Padding - kTensorAlignment)
    return nullptr;
  size_t Total = Bytes + Padding;
  Total = (Total + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
  if (Total == 0)
    Total = kTensorAlignment;
  void *P = nullptr;
  if (posix_memalign(&P, kTensorAlignment, Total) != 0 || !P)
    return nullptr;
  // Zero the padding so kernels that read past the end see deterministic values.
  if (Total > Bytes)
    std::memset(static_cast<char *>(P) + Bytes, 0, Total - Bytes);
  auto B = std::make_shared<Buffer>();
  B->Data = P;
  B->Bytes = Bytes;
  B->Owned = true;
  return B;
}

std::shared_ptr<Buffer> Buffer::wrap(void *Data, size_t Bytes) {
  auto B = std::make_shared<Buffer>();
  B->Data = Data;
  B->Bytes = Bytes;
  B->Owned = false;
  return B;
}

} // namespace detail

namespace {

using detail::ErrorCode;
using detail::makeError;
using detail::throwIfError;

std::string dimsToString(const std::vector<int64_t> &Dims) {
  if (Dims.empty())
    return "scalar";
  std::string S;
  for (size_t I = 0; I < Dims.size(); ++I) {
    if (I)
      S += 'x';
    S += std::to_string(Dims[I]);
  }
  return S;
}

/// Concrete dims and element count of a creation request; InvalidArgumentError otherwise.
detail::Status checkCreation(ElementType Type, const TensorShape &Shape, std::vector<int64_t> &Dims,
                             size_t &Count, size_t &Bytes) {
  if (Type == ElementType::Undefined || getElementSize(Type) == 0)
    return makeError(ErrorCode::InvalidArgument, "cannot create a tensor of element type ", toString(Type));
  Dims.clear();
  Dims.reserve(Shape.getRank());
  for (size_t I = 0; I < Shape.getRank(); ++I) {
    if (!Shape[I].isConst())
      return makeError(ErrorCode::InvalidArgument, "cannot create a tensor of symbolic shape ", Shape.toString(),
                       ": dimension ", I, " is '", Shape[I].toString(), "'");
    const int64_t D = Shape[I].value();
    if (D < 0)
      return makeError(ErrorCode::InvalidArgument, "cannot create a tensor with negative dimension ", D,
                       " at index ", I);
    Dims.push_back(D);
  }
  Count = 1;
  bool Overflow = false;
  for (int64_t D : Dims) {
    const size_t UD = static_cast<size_t>(D);
    if (UD != 0 && Count > std::numeric_limits<size_t>::max() / UD)
      Overflow = true;
    Count *= UD;
  }
  const size_t ES = getElementSize(Type);
  if (Overflow || (Count != 0 && Count > std::numeric_limits<size_t>::max() / ES))
    return makeError(ErrorCode::OutOfResource, "tensor of shape ", dimsToString(Dims), "x", toString(Type),
                     " is too large to allocate");
  Bytes = Count * ES;
  return detail::Status::ok();
}

TensorImpl &requireImpl(const std::shared_ptr<TensorImpl> &Impl, const char *What) {
  if (!Impl)
    throw InvalidStateError(std::string("Tensor::") + What + "() called on an empty or released tensor");
  return *Impl;
}

/// The impl, checked to still view memory.
TensorImpl &requireData(const std::shared_ptr<TensorImpl> &Impl, const char *What) {
  TensorImpl &I = requireImpl(Impl, What);
  if (I.DeviceStorage)
    throw InvalidStateError(std::string("Tensor::") + What + "() called on a device tensor (its data is in the memory of " +
                            I.DeviceStorage->Device.toString() + "); copy it with toHost() first");
  if (!I.Storage)
    throw InvalidStateError(std::string("Tensor::") + What + "() called on a tensor whose data was released");
  if (!I.data() && I.bytes() != 0)
    throw InvalidStateError(std::string("Tensor::") + What + "() called on a tensor without data");
  return I;
}

} // namespace

Tensor tensor(ElementType Type, const TensorShape &Shape, bool Padding) {
  std::vector<int64_t> Dims;
  size_t Count = 0, Bytes = 0;
  throwIfError(checkCreation(Type, Shape, Dims, Count, Bytes));
  std::shared_ptr<detail::Buffer> Storage = detail::Buffer::allocate(Bytes, Padding ? kTensorPaddingBytes : 0);
  if (!Storage)
    throwIfError(makeError(ErrorCode::OutOfResource, "cannot allocate ", Bytes, " bytes for a tensor of shape ",
                           dimsToString(Dims), " and element type ", toString(Type)));
  if (Type == ElementType::String) {
    auto *Strings = static_cast<std::string *>(Storage->Data);
    for (size_t I = 0; I < Count; ++I) {
      new (Strings + I) std::string();
      // Count each one as it is built so the destructor cleans up exactly those.
      Storage->ConstructedStrings = ElementType::String;
      Storage->StringCount = I + 1;
    }
  }
  auto Impl = std::make_shared<TensorImpl>();
  Impl->Type = Type;
  Impl->Shape = TensorShape::fromDims(Dims);
  Impl->Dims = std::move(Dims);
  Impl->ElementCount = Count;
  Impl->Storage = std::move(Storage);
  Impl->Offset = 0;
  Impl->Padding = Padding;
  Impl->UserBuffer = false;
  return Tensor(std::move(Impl));
}

Tensor tensor(ElementType Type, const TensorShape &Shape, void *Data, bool Padding) {
  std::vector<int64_t> Dims;
  size_t Count = 0, Bytes = 0;
  detail::Status S = checkCreation(Type, Shape, Dims, Count, Bytes);
  if (!S.isOk() && S.code() == ErrorCode::OutOfResource) // nothing is allocated: the shape is just invalid
    S = detail::Status(ErrorCode::InvalidArgument, S.message());
  throwIfError(S);
  if (!Data && Bytes != 0)
    throwIfError(makeError(ErrorCode::InvalidArgument, "user buffer is null but the tensor of shape ",
                           dimsToString(Dims), " and element type ", toString(Type), " needs ", Bytes, " bytes"));
  auto Impl = std::make_shared<TensorImpl>();
  Impl->Type = Type;
  Impl->Shape = TensorShape::fromDims(Dims);
  Impl->Dims = std::move(Dims);
  Impl->ElementCount = Count;
  Impl->Storage = detail::Buffer::wrap(Data, Bytes);
  Impl->Offset = 0;
  Impl->Padding = Padding;
  Impl->UserBuffer = true;
  return Tensor(std::move(Impl));
}

namespace detail {
Tensor makeTensorView(ElementType Type, const std::vector<int64_t> &Dims, std::shared_ptr<Buffer> Storage,
                      size_t Offset) {
  auto Impl = std::make_shared<TensorImpl>();
  Impl->Type = Type;
  Impl->Shape = TensorShape::fromDims(Dims);
  Impl->Dims = Dims;
  size_t Count = 1;
  for (int64_t D : Dims)
    Count *= static_cast<size_t>(D < 0 ? 0 : D);
  Impl->ElementCount = Count;
  // Buffer does not record its tail padding, so: a view has padding when at least
  // kTensorPaddingBytes of the buffer follow it, or when it ends exactly at the end of a block the
  // runtime allocated (allocate() pads by default). Views of user memory never claim padding.
  const size_t End = Offset + Count * getElementSize(Type);
  Impl->Padding = Storage && Storage->Owned && End <= Storage->Bytes &&
                  (Storage->Bytes - End >= kTensorPaddingBytes || End == Storage->Bytes);
  Impl->UserBuffer = Storage && !Storage->Owned;
  Impl->Storage = std::move(Storage);
  Impl->Offset = Offset;
  return Tensor(std::move(Impl));
}

Tensor makeDeviceTensor(ElementType Type, const std::vector<int64_t> &Dims, std::shared_ptr<DeviceMemory> Memory) {
  auto Impl = std::make_shared<TensorImpl>();
  Impl->Type = Type;
  Impl->Shape = TensorShape::fromDims(Dims);
  Impl->Dims = Dims;
  size_t Count = 1;
  for (int64_t D : Dims)
    Count *= static_cast<size_t>(D < 0 ? 0 : D);
  Impl->ElementCount = Count;
  Impl->Padding = false;
  Impl->DeviceStorage = std::move(Memory);
  return Tensor(std::move(Impl));
}
} // namespace detail

ElementType Tensor::getType() const { return requireImpl(Impl, "getType").Type; }
const TensorShape &Tensor::getShape() const { return requireImpl(Impl, "getShape").Shape; }
size_t Tensor::getElementCount() const { return requireImpl(Impl, "getElementCount").ElementCount; }
size_t Tensor::getTensorSize() const { return requireImpl(Impl, "getTensorSize").bytes(); }
bool Tensor::hasPadding() const { return requireImpl(Impl, "hasPadding").Padding; }
bool Tensor::isUserBuffer() const { return requireImpl(Impl, "isUserBuffer").UserBuffer; }

// data() returns null (rather than throwing) for an impl whose storage was dropped internally, so
// that operator bool (Impl && data()) never throws.
void *Tensor::data() { return requireImpl(Impl, "data").data(); }
const void *Tensor::data() const { return requireImpl(Impl, "data").data(); }

bool Tensor::isDeviceTensor() const { return Impl && Impl->DeviceStorage; }

DeviceID Tensor::getDevice() const {
  const TensorImpl &I = requireImpl(Impl, "getDevice");
  if (I.DeviceStorage)
    return I.DeviceStorage->Device;
  return getLocalInfo().Devices[0]; // the native CPU comes first
}

Tensor Tensor::toHost() const {
  const TensorImpl &I = requireImpl(Impl, "toHost");
  if (!I.DeviceStorage)
    return *this;
  Tensor Host = tensor(I.Type, I.Shape, /*Padding=*/true);
  if (I.bytes())
    throwIfError(I.DeviceStorage->copyToHost(Host.data(), I.bytes()));
  return Host;
}

void Tensor::copyTo(const Tensor &Dest) const {
  if (isDeviceTensor()) {
    toHost().copyTo(Dest);
    return;
  }
  const TensorImpl &Src = requireData(Impl, "copyTo");
  if (!Dest.Impl)
    throw InvalidArgumentError("Tensor::copyTo(): the destination tensor is empty or released");
  const TensorImpl &Dst = requireData(Dest.Impl, "copyTo");
  if (Src.Type != Dst.Type)
    throwIfError(makeError(ErrorCode::Type, "cannot copy a tensor of element type ", toString(Src.Type),
                           " into a tensor of element type ", toString(Dst.Type)));
  if (Src.Dims != Dst.Dims)
    throwIfError(makeError(ErrorCode::Shape, "cannot copy a tensor of shape ", dimsToString(Src.Dims),
                           " into a tensor of shape ", dimsToString(Dst.Dims)));
  void *To = Dst.data();
  const void *From = Src.data();
  if (To == From || Src.bytes() == 0)
    return;
  if (Src.Type == ElementType::String) {
    const auto *S = static_cast<const std::string *>(From);
    auto *D = static_cast<std::string *>(To);
    for (size_t I = 0; I < Src.ElementCount; ++I)
      D[I] = S[I];
    return;
  }
  std::memmove(To, From, Src.bytes()); // views of one buffer may overlap
}

Tensor Tensor::clone() const {
  if (isDeviceTensor())
    return toHost(); // a fresh host copy
  const TensorImpl &Src = requireData(Impl, "clone");
  Tensor Copy = tensor(Src.Type, Src.Shape, Src.Padding);
  copyTo(Copy);
  return Copy;
}

void Tensor::save(const std::string &Path) const {
  if (isDeviceTensor()) {
    toHost().save(Path);
    return;
  }
  const TensorImpl &Src = requireData(Impl, "save");
  if (Src.Type == ElementType::String)
    throwIfError(makeError(ErrorCode::Type, "cannot save a string tensor to '", Path, "' as raw bytes"));
  std::FILE *F = std::fopen(Path.c_str(), "wb");
  if (!F)
    throwIfError(makeError(ErrorCode::IO, "cannot open '", Path, "' for writing: ", std::strerror(errno)));
  const size_t Bytes = Src.bytes();
  const size_t Written = Bytes ? std::fwrite(Src.data(), 1, Bytes, F) : 0;
  const int WriteErr = Written != Bytes ? errno : 0;
  const bool CloseFailed = std::fclose(F) != 0;
  if (Written != Bytes)
    throwIfError(makeError(ErrorCode::IO, "cannot write ", Bytes, " bytes to '", Path,
                           "': ", WriteErr ? std::strerror(WriteErr) : "short write"));
  if (CloseFailed)
    throwIfError(makeError(ErrorCode::IO, "cannot write '", Path, "': ", std::strerror(errno)));
}

void Tensor::load(const std::string &Path) {
  const TensorImpl &Dst = requireData(Impl, "load");
  if (Dst.Type == ElementType::String)
    throwIfError(makeError(ErrorCode::Type, "cannot load a string tensor from '", Path, "' as raw bytes"));
  std::FILE *F = std::fopen(Path.c_str(), "rb");
  if (!F)
    throwIfError(makeError(ErrorCode::IO, "cannot open '", Path, "' for reading: ", std::strerror(errno)));
  struct stat St;
  if (fstat(fileno(F), &St) != 0) {
    const int Err = errno;
    std::fclose(F);
    throwIfError(makeError(ErrorCode::IO, "cannot stat '", Path, "': ", std::strerror(Err)));
  }
  if (!S_ISREG(St.st_mode)) {
    std::fclose(F);
    throwIfError(makeError(ErrorCode::IO, "cannot load '", Path, "': not a regular file"));
  }
  const size_t Bytes = Dst.bytes();
  if (static_cast<uint64_t>(St.st_size) != static_cast<uint64_t>(Bytes)) {
    std::fclose(F);
    throwIfError(makeError(ErrorCode::InvalidArgument, "cannot load '", Path, "': expected ", Bytes,
                           " bytes for a tensor of shape ", dimsToString(Dst.Dims), " and element type ",
                           toString(Dst.Type), ", but the file has ", static_cast<uint64_t>(St.st_size), " bytes"));
  }
  const size_t Read = Bytes ? std::fread(Dst.data(), 1, Bytes, F) : 0;
  const int ReadErr = std::ferror(F) ? errno : 0;
  std::fclose(F);
  if (Read != Bytes)
    throwIfError(makeError(ErrorCode::IO, "cannot read ", Bytes, " bytes from '", Path,
                           "': ", ReadErr ? std::strerror(ReadErr) : "unexpected end of file"));
}

// Releasing an empty handle is a no-op, so release() may be called twice.
void Tensor::release() { Impl.reset(); }

void Tensor::checkElementType(ElementType Expected) const {
  const ElementType Actual = requireImpl(Impl, "checkElementType").Type;
  if (Actual != Expected)
    throwIfError(makeError(ErrorCode::Type, "tensor has element type ", toString(Actual), ", not ",
                           toString(Expected)));
}

void Tensor::fillBytes(const void *Value, size_t ElementSize) {
  TensorImpl &I = requireData(Impl, "fill");
  if (ElementSize != getElementSize(I.Type))
    throwIfError(makeError(ErrorCode::Type, "cannot fill a tensor of element type ", toString(I.Type),
                           " with ", ElementSize, "-byte values"));
  char *P = static_cast<char *>(I.data());
  if (I.Type == ElementType::String) {
    const auto &V = *static_cast<const std::string *>(Value);
    auto *S = reinterpret_cast<std::string *>(P);
    for (size_t K = 0; K < I.ElementCount; ++K)
      S[K] = V;
    return;
  }
  for (size_t K = 0; K < I.ElementCount; ++K)
    std::memcpy(P + K * ElementSize, Value, ElementSize);
}

} // namespace runtime
} // namespace optimium
