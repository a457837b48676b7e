// Appends log lines to a file (IOError when it cannot be opened).
#pragma once

#include <cstdio>
#include <string>

#include "Optimium/Runtime/Logging/LogWriter.h"

namespace optimium {
namespace runtime {
namespace logging {

class OPTIMIUM_RT_API FileWriter : public LogWriter {
public:
  explicit FileWriter(const std::string &Path);
  ~FileWriter() override;
  FileWriter(const FileWriter &) = delete;
  FileWriter &operator=(const FileWriter &) = delete;
  void write(LogLevel Level, StringRef Message) override;

private:
  std::FILE *File;
};

} // namespace logging
} // namespace runtime
} // namespace optimium
