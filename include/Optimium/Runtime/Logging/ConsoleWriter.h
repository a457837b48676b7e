// Writes log lines to stderr.
#pragma once

#include "Optimium/Runtime/Logging/LogWriter.h"

namespace optimium {
namespace runtime {
namespace logging {

class OPTIMIUM_RT_API ConsoleWriter : public LogWriter {
public:
  void write(LogLevel Level, StringRef Message) override;
};

} // namespace logging
} // namespace runtime
} // namespace optimium
