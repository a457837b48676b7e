// Status / Result<T>: the cheap error type used everywhere inside the runtime. Converted to the
// public exception types only at the API boundary (api/ErrorConversion.h: throwIfError).
#pragma once

#include <cassert>
#include <memory>
#include <sstream>
#include <string>
#include <utility>

namespace optimium {
namespace runtime {
namespace detail {

/// One code per public exception type.
enum class ErrorCode {
  Ok = 0,
  InvalidArgument,
  InvalidState,
  InvalidOperation,
  Type,
  Shape,
  Extension,
  Device,
  Model,
  Request,
  Infer,
  OutOfResource,
  Container,
  Remote,
  IO,
  Network,
  OS,
  NotImplemented,
};

class Status {
public:
  Status() {}
  Status(ErrorCode Code, std::string Message)
      : State(Code == ErrorCode::Ok ? nullptr : std::make_shared<Payload>(Payload{Code, std::move(Message)})) {}
  static Status ok() { return Status(); }

  bool isOk() const { return !State; }
  explicit operator bool() const { return isOk(); }
  ErrorCode code() const { return State ? State->Code : ErrorCode::Ok; }
  const std::string &message() const {
    static const std::string Empty;
    return State ? State->Message : Empty;
  }
  /// Same code, message prefixed with context ("while loading 'x.onnx': ...").
  Status withContext(const std::string &Context) const {
    if (isOk())
      return *this;
    return Status(code(), Context + ": " + message());
  }

private:
  struct Payload {
    ErrorCode Code;
    std::string Message;
  };
  std::shared_ptr<const Payload> State;
};

/// Builds a message from stream-able parts: makeError(ErrorCode::Shape, "node '", N, "' ...").
template <typename... Args> Status makeError(ErrorCode Code, const Args &...Parts) {
  std::ostringstream OS;
  using Expand = int[];
  (void)Expand{0, ((void)(OS << Parts), 0)...};
  return Status(Code, OS.str());
}

template <typename T> class Result {
public:
  Result(T Value) : Value(std::move(Value)), HasValue(true) {}
  Result(Status S) : Err(std::move(S)), HasValue(false) { assert(!Err.isOk() && "Result from an ok Status"); }

  bool isOk() const { return HasValue; }
  explicit operator bool() const { return HasValue; }
  const Status &status() const { return Err; }
  T &value() & { return Value; }
  const T &value() const & { return Value; }
  T &&value() && { return std::move(Value); }
  T &operator*() { return Value; }
  T *operator->() { return &Value; }

private:
  T Value{};
  Status Err;
  bool HasValue;
};

#define OPT_CONCAT_IMPL(A, B) A##B
#define OPT_CONCAT(A, B) OPT_CONCAT_IMPL(A, B)

#define RETURN_IF_ERROR(Expr)                                                                      \
  do {                                                                                             \
    ::optimium::runtime::detail::Status OptStatus_ = (Expr);                                       \
    if (!OptStatus_.isOk())                                                                        \
      return OptStatus_;                                                                           \
  } while (0)

#define ASSIGN_OR_RETURN_IMPL(Tmp, Lhs, Expr)                                                      \
  auto Tmp = (Expr);                                                                               \
  if (!Tmp.isOk())                                                                                 \
    return Tmp.status();                                                                           \
  Lhs = std::move(Tmp).value();

#define ASSIGN_OR_RETURN(Lhs, Expr) ASSIGN_OR_RETURN_IMPL(OPT_CONCAT(OptResult_, __LINE__), Lhs, Expr)

} // namespace detail
} // namespace runtime
} // namespace optimium
