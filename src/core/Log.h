// Internal logging: OPT_LOG(Warning, "x=", X) formats only when the level is enabled.
#pragma once

#include <sstream>
#include <string>

#include "Optimium/Runtime/Logging/LogWriter.h"

namespace optimium {
namespace runtime {
namespace detail {

bool isLogEnabled(LogLevel Level);
void logMessage(LogLevel Level, const std::string &Message);

template <typename... Args> void logParts(LogLevel Level, const Args &...Parts) {
  std::ostringstream OS;
  using Expand = int[];
  (void)Expand{0, ((void)(OS << Parts), 0)...};
  logMessage(Level, OS.str());
}

#define OPT_LOG(Level, ...)                                                                        \
  do {                                                                                             \
    if (::optimium::runtime::detail::isLogEnabled(::optimium::runtime::LogLevel::Level))           \
      ::optimium::runtime::detail::logParts(::optimium::runtime::LogLevel::Level, __VA_ARGS__);    \
  } while (0)

} // namespace detail
} // namespace runtime
} // namespace optimium
