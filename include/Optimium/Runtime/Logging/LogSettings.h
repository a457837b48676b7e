// Log level and log writers. Configure before initialize(); writers receive every message at or
// above the level. With no writer added, warnings and errors go to stderr.
#pragma once

#include <memory>

#include "Optimium/Runtime/Export.h"
#include "Optimium/Runtime/Logging/LogWriter.h"

namespace optimium {
namespace runtime {
namespace logging {

OPTIMIUM_RT_API void setLogLevel(LogLevel Level);
OPTIMIUM_RT_API LogLevel getLogLevel();
OPTIMIUM_RT_API void addLogWriter(std::unique_ptr<LogWriter> Writer);
OPTIMIUM_RT_API void clearLogWriters();

} // namespace logging
} // namespace runtime
} // namespace optimium
