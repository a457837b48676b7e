// Interface of a log sink.
#pragma once

#include <cstdint>

#include "Optimium/Runtime/Export.h"
#include "Optimium/Runtime/Utils/StringRef.h"

namespace optimium {
namespace runtime {

enum class LogLevel : uint8_t { Debug = 0, Verbose, Info, Warning, Error };

OPTIMIUM_RT_API const char *toString(LogLevel Level);

namespace logging {

class OPTIMIUM_RT_API LogWriter {
public:
  virtual ~LogWriter();
  /// Called with the runtime's log lock held: writers need no locking of their own.
  virtual void write(LogLevel Level, StringRef Message) = 0;
};

} // namespace logging
} // namespace runtime
} // namespace optimium
