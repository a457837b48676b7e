// Writes log lines to Android's logcat. Exists only when building for Android.
#pragma once

#if defined(__ANDROID__)
#include "Optimium/Runtime/Logging/LogWriter.h"

namespace optimium {
namespace runtime {
namespace logging {

class OPTIMIUM_RT_API AndroidLogWriter : public LogWriter {
public:
  void write(LogLevel Level, StringRef Message) override;
};

} // namespace logging
} // namespace runtime
} // namespace optimium
#endif
