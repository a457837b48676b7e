// Log level, log writers and the internal logMessage() behind OPT_LOG. One mutex guards the writer
// list and every write, so writers need no locking. The state is leaked on purpose: code that logs
// from static destructors at exit must still find it.
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "Optimium/Runtime/Exceptions.h"
#include "Optimium/Runtime/Logging/ConsoleWriter.h"
#include "Optimium/Runtime/Logging/FileWriter.h"
#include "Optimium/Runtime/Logging/LogSettings.h"
#include "core/Log.h"

#if defined(__ANDROID__)
#include <android/log.h>

#include "Optimium/Runtime/Logging/AndroidLogWriter.h"
#endif

namespace optimium {
namespace runtime {

const char *toString(LogLevel Level) {
  switch (Level) {
  case LogLevel::Debug: return "Debug";
  case LogLevel::Verbose: return "Verbose";
  case LogLevel::Info: return "Info";
  case LogLevel::Warning: return "Warning";
  case LogLevel::Error: return "Error";
  }
  return "Unknown";
}

namespace {

const char *upperName(LogLevel Level) {
  switch (Level) {
  case LogLevel::Debug: return "DEBUG";
  case LogLevel::Verbose: return "VERBOSE";
  case LogLevel::Info: return "INFO";
  case LogLevel::Warning: return "WARNING";
  case LogLevel::Error: return "ERROR";
  }
  return "UNKNOWN";
}

/// "[optimium][WARNING] message\n" written in one call, so concurrent processes don't interleave.
void writeLine(std::FILE *F, LogLevel Level, StringRef Message) {
  std::string Line = "[optimium][";
  Line += upperName(Level);
  Line += "] ";
  Line.append(Message.data(), Message.size());
  Line += '\n';
  std::fwrite(Line.data(), 1, Line.size(), F);
}

/// Level from OPTIMIUM_RT_LOG_LEVEL (debug|verbose|info|warning|error, any case); Warning otherwise.
int levelFromEnvironment() {
  const char *Env = std::getenv("OPTIMIUM_RT_LOG_LEVEL");
  if (!Env || !*Env)
    return static_cast<int>(LogLevel::Warning);
  std::string V(Env);
  for (char &C : V)
    C = static_cast<char>(std::tolower(static_cast<unsigned char>(C)));
  static const struct {
    const char *Name;
    LogLevel Level;
  } Names[] = {{"debug", LogLevel::Debug},
               {"verbose", LogLevel::Verbose},
               {"info", LogLevel::Info},
               {"warning", LogLevel::Warning},
               {"error", LogLevel::Error}};
  for (const auto &N : Names)
    if (V == N.Name)
      return static_cast<int>(N.Level);
  std::fprintf(stderr,
               "[optimium][WARNING] ignoring OPTIMIUM_RT_LOG_LEVEL='%s' (expected debug, verbose, info, warning "
               "or error)\n",
               Env);
  return static_cast<int>(LogLevel::Warning);
}

/// The level, read from the environment once, on first use.
std::atomic<int> &levelCell() {
  static std::atomic<int> Level{levelFromEnvironment()};
  return Level;
}

struct LogState {
  std::mutex Lock;
  std::vector<std::unique_ptr<logging::LogWriter>> Writers;
  bool WriterEverAdded = false;
};

LogState &state() {
  static LogState *S = new LogState(); // leaked: see the file comment
  return *S;
}

/// Set while this thread is inside logMessage(): a writer that logs is dropped, not deadlocked.
thread_local bool InsideLog = false;

} // namespace

namespace logging {

void setLogLevel(LogLevel Level) {
  if (static_cast<int>(Level) < static_cast<int>(LogLevel::Debug) ||
      static_cast<int>(Level) > static_cast<int>(LogLevel::Error))
    throw InvalidArgumentError("invalid log level " + std::to_string(static_cast<int>(Level)));
  levelCell().store(static_cast<int>(Level), std::memory_order_relaxed);
}

LogLevel getLogLevel() { return static_cast<LogLevel>(levelCell().load(std::memory_order_relaxed)); }

void addLogWriter(std::unique_ptr<LogWriter> Writer) {
  if (!Writer)
    throw InvalidArgumentError("addLogWriter(): the writer is null");
  LogState &S = state();
  std::lock_guard<std::mutex> G(S.Lock);
  S.Writers.push_back(std::move(Writer));
  S.WriterEverAdded = true;
}

void clearLogWriters() {
  LogState &S = state();
  std::vector<std::unique_ptr<LogWriter>> Old;
  {
    std::lock_guard<std::mutex> G(S.Lock);
    Old.swap(S.Writers);
  }
  // Old writers are destroyed outside the lock (a FileWriter closes its file).
}

LogWriter::~LogWriter() = default;

void ConsoleWriter::write(LogLevel Level, StringRef Message) { writeLine(stderr, Level, Message); }

FileWriter::FileWriter(const std::string &Path) : File(std::fopen(Path.c_str(), "a")) {
  if (!File)
    throw IOError("cannot open log file '" + Path + "': " + std::strerror(errno));
}

FileWriter::~FileWriter() {
  if (File)
    std::fclose(File);
}

void FileWriter::write(LogLevel Level, StringRef Message) {
  if (!File)
    return;
  // Files get a local timestamp in front: "2024-05-01 12:00:00.123 [optimium][INFO] ...".
  const auto Now = std::chrono::system_clock::now();
  const std::time_t T = std::chrono::system_clock::to_time_t(Now);
  const long Ms = static_cast<long>(
      std::chrono::duration_cast<std::chrono::milliseconds>(Now.time_since_epoch()).count() % 1000);
  std::tm Local;
  localtime_r(&T, &Local);
  char Stamp[40];
  const size_t N = std::strftime(Stamp, sizeof(Stamp), "%Y-%m-%d %H:%M:%S", &Local);
  std::fprintf(File, "%.*s.%03ld ", static_cast<int>(N), Stamp, Ms);
  writeLine(File, Level, Message);
  std::fflush(File);
}

#if defined(__ANDROID__)
void AndroidLogWriter::write(LogLevel Level, StringRef Message) {
  int Priority = ANDROID_LOG_INFO;
  switch (Level) {
  case LogLevel::Debug: Priority = ANDROID_LOG_DEBUG; break;
  case LogLevel::Verbose: Priority = ANDROID_LOG_VERBOSE; break;
  case LogLevel::Info: Priority = ANDROID_LOG_INFO; break;
  case LogLevel::Warning: Priority = ANDROID_LOG_WARN; break;
  case LogLevel::Error: Priority = ANDROID_LOG_ERROR; break;
  }
  const std::string Text = Message.str(); // __android_log_write needs a terminated string
  __android_log_write(Priority, "optimium", Text.c_str());
}
#endif

} // namespace logging

namespace detail {

bool isLogEnabled(LogLevel Level) {
  return static_cast<int>(Level) >= levelCell().load(std::memory_order_relaxed);
}

void logMessage(LogLevel Level, const std::string &Message) {
  if (!isLogEnabled(Level) || InsideLog)
    return;
  LogState &S = state();
  std::lock_guard<std::mutex> G(S.Lock);
  InsideLog = true;
  if (!S.WriterEverAdded) {
    if (static_cast<int>(Level) >= static_cast<int>(LogLevel::Warning))
      writeLine(stderr, Level, Message);
  } else {
    for (const auto &W : S.Writers) {
      try {
        W->write(Level, Message);
      } catch (...) {
        // A failing writer must not take the runtime down; the others still get the message.
      }
    }
  }
  InsideLog = false;
}

} // namespace detail

} // namespace runtime
} // namespace optimium
