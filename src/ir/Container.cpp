// Run-time sequence and optional values: allocation, copies and assignment (see Container.h).
#include "ir/Container.h"

#include <cstring>

#include "core/TensorImpl.h"

namespace optimium {
namespace runtime {
namespace detail {

Result<OwnedTensor> allocateOwnedTensor(ElementType Type, const std::vector<int64_t> &Dims) {
  if (Type == ElementType::String || Type == ElementType::Undefined)
    return makeError(ErrorCode::Type, "element type ", toString(Type), " is not supported here");
  size_t Count = 1;
  for (int64_t D : Dims) {
    if (D < 0)
      return makeError(ErrorCode::Shape, "negative dimension ", D);
    Count *= static_cast<size_t>(D);
  }
  std::shared_ptr<Buffer> B = Buffer::allocate(Count * getElementSize(Type));
  if (!B)
    return makeError(ErrorCode::OutOfResource, "cannot allocate a tensor of ", Count, " ", toString(Type),
                     " elements");
  if (B->Bytes)
    std::memset(B->Data, 0, B->Bytes);
  OwnedTensor R;
  R.View.Type = Type;
  R.View.Dims = Dims;
  R.View.Data = B->Data;
  R.Keep = std::move(B);
  return R;
}

Result<OwnedTensor> copyToOwned(const TensorView &V) {
  if (isContainerKind(V.Kind))
    return makeError(ErrorCode::Type, "expected a tensor, got a ", toString(V.Kind), " value");
  ASSIGN_OR_RETURN(OwnedTensor R, allocateOwnedTensor(V.Type, V.Dims));
  const size_t Bytes = V.elementCount() * getElementSize(V.Type);
  if (Bytes)
    std::memcpy(R.View.Data, V.Data, Bytes);
  return R;
}

std::shared_ptr<ContainerValue> makeContainer(ValueKind K, ElementType T) {
  auto C = std::make_shared<ContainerValue>();
  C->reset(K, T);
  return C;
}

TensorView containerView(const std::shared_ptr<ContainerValue> &C) {
  TensorView V;
  V.Kind = C->Kind;
  V.Type = C->Type;
  V.Data = C.get();
  return V;
}

bool holdsValue(const TensorView &V) {
  if (const ContainerValue *C = V.container())
    return C->HasValue;
  return V.Data != nullptr || V.Type != ElementType::Undefined;
}

Status assignContainer(ContainerValue &Dst, const TensorView &Src, const std::string &What) {
  const ValueKind Want = unwrapOptional(Dst.Kind);
  if (const ContainerValue *S = Src.container()) {
    if (S == &Dst)
      return Status::ok();
    if (!S->HasValue) {
      if (!isOptionalKind(Dst.Kind))
        return makeError(ErrorCode::Infer, What, " is an empty optional where a ", toString(Dst.Kind),
                         " value is needed");
      Dst.HasValue = false;
      Dst.Tensors.clear();
      return Status::ok();
    }
    if (unwrapOptional(S->Kind) != Want)
      return makeError(ErrorCode::Type, What, " is a ", toString(S->Kind), " value where a ", toString(Dst.Kind),
                       " value is needed");
    Dst.Type = S->Type;
    Dst.HasValue = true;
    Dst.Tensors = S->Tensors;
    return Status::ok();
  }
  if (Want != ValueKind::Tensor)
    return makeError(ErrorCode::Type, What, " is a tensor where a ", toString(Dst.Kind), " value is needed");
  ASSIGN_OR_RETURN(OwnedTensor T, copyToOwned(Src));
  Dst.Type = Src.Type;
  Dst.HasValue = true;
  Dst.Tensors.assign(1, std::move(T));
  return Status::ok();
}

} // namespace detail
} // namespace runtime
} // namespace optimium
