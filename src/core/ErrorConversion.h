// The API boundary: Status -> public exception, exception -> Status.
#pragma once

#include <exception>

#include "core/Status.h"

namespace optimium {
namespace runtime {
namespace detail {

/// Throws the public exception type matching S.code() (nothing when S is ok).
void throwIfError(const Status &S);
/// The exception_ptr of the public exception matching S (null when ok).
std::exception_ptr toExceptionPtr(const Status &S);

template <typename T> T valueOrThrow(Result<T> R) {
  throwIfError(R.status());
  return std::move(R).value();
}

} // namespace detail
} // namespace runtime
} // namespace optimium
