// Maps internal error codes to the documented exception types.
#include "core/ErrorConversion.h"

#include "Optimium/Runtime/Exceptions.h"

namespace optimium {
namespace runtime {
namespace detail {

namespace {
template <typename F> auto dispatch(const Status &S, F &&Fn) {
  const std::string &M = S.message();
  switch (S.code()) {
  case ErrorCode::InvalidArgument: return Fn(InvalidArgumentError(M));
  case ErrorCode::InvalidState: return Fn(InvalidStateError(M));
  case ErrorCode::InvalidOperation: return Fn(InvalidOperationError(M));
  case ErrorCode::Type: return Fn(TypeError(M));
  case ErrorCode::Shape: return Fn(ShapeError(M));
  case ErrorCode::Extension: return Fn(ExtensionError(M));
  case ErrorCode::Device: return Fn(DeviceError(M));
  case ErrorCode::Model: return Fn(ModelError(M));
  case ErrorCode::Request: return Fn(RequestError(M));
  case ErrorCode::Infer: return Fn(InferError(M));
  case ErrorCode::OutOfResource: return Fn(OutOfResourceError(M));
  case ErrorCode::Container: return Fn(ContainerError(M));
  case ErrorCode::Remote: return Fn(RemoteError(M));
  case ErrorCode::IO: return Fn(IOError(M));
  case ErrorCode::Network: return Fn(NetworkError(M));
  case ErrorCode::OS: return Fn(OSError(M));
  case ErrorCode::NotImplemented: return Fn(NotImplementedError(M));
  case ErrorCode::Ok: break;
  }
  return Fn(InvalidStateError("internal error: " + M));
}
} // namespace

void throwIfError(const Status &S) {
  if (S.isOk())
    return;
  dispatch(S, [](auto &&E) -> int { throw E; });
}

std::exception_ptr toExceptionPtr(const Status &S) {
  if (S.isOk())
    return nullptr;
  return dispatch(S, [](auto &&E) { return std::make_exception_ptr(E); });
}

} // namespace detail
} // namespace runtime
} // namespace optimium
