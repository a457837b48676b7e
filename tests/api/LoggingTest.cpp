// Log level filtering, custom writers, FileWriter, clearing, thread safety and level names.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>
#include <utility>
#include <vector>

#include "Optimium/Runtime/Exceptions.h"
#include "Optimium/Runtime/Logging/ConsoleWriter.h"
#include "Optimium/Runtime/Logging/FileWriter.h"
#include "Optimium/Runtime/Logging/LogSettings.h"
#include "core/Log.h"

namespace rt = optimium::runtime;

namespace {

struct Captured {
  std::mutex Lock;
  std::vector<std::pair<rt::LogLevel, std::string>> Lines;
};

class CaptureWriter : public rt::logging::LogWriter {
public:
  explicit CaptureWriter(std::shared_ptr<Captured> Sink) : Sink(std::move(Sink)) {}
  void write(rt::LogLevel Level, rt::StringRef Message) override {
    std::lock_guard<std::mutex> G(Sink->Lock);
    Sink->Lines.emplace_back(Level, Message.str());
  }

private:
  std::shared_ptr<Captured> Sink;
};

class LoggingTest : public ::testing::Test {
protected:
  void SetUp() override {
    Saved = rt::logging::getLogLevel();
    rt::logging::clearLogWriters();
  }
  void TearDown() override {
    rt::logging::clearLogWriters();
    rt::logging::setLogLevel(Saved);
  }
  rt::LogLevel Saved = rt::LogLevel::Warning;
};

} // namespace

TEST_F(LoggingTest, WriterReceivesMessagesAtOrAboveLevel) {
  auto Sink = std::make_shared<Captured>();
  rt::logging::addLogWriter(std::make_unique<CaptureWriter>(Sink));
  rt::logging::setLogLevel(rt::LogLevel::Info);
  EXPECT_EQ(rt::logging::getLogLevel(), rt::LogLevel::Info);
  EXPECT_FALSE(rt::detail::isLogEnabled(rt::LogLevel::Verbose));
  EXPECT_TRUE(rt::detail::isLogEnabled(rt::LogLevel::Info));

  OPT_LOG(Debug, "debug ", 1);
  OPT_LOG(Verbose, "verbose ", 2);
  OPT_LOG(Info, "info ", 3);
  OPT_LOG(Warning, "warning ", 4);
  OPT_LOG(Error, "error ", 5);
  ASSERT_EQ(Sink->Lines.size(), 3u);
  EXPECT_EQ(Sink->Lines[0].first, rt::LogLevel::Info);
  EXPECT_EQ(Sink->Lines[0].second, "info 3");
  EXPECT_EQ(Sink->Lines[1].second, "warning 4");
  EXPECT_EQ(Sink->Lines[2].first, rt::LogLevel::Error);

  rt::logging::setLogLevel(rt::LogLevel::Debug);
  OPT_LOG(Debug, "now visible");
  ASSERT_EQ(Sink->Lines.size(), 4u);
  EXPECT_EQ(Sink->Lines[3].second, "now visible");
}

TEST_F(LoggingTest, DisabledLevelDoesNotFormat) {
  rt::logging::setLogLevel(rt::LogLevel::Error);
  int Evaluated = 0;
  auto Count = [&] { return ++Evaluated; };
  OPT_LOG(Info, "value ", Count());
  EXPECT_EQ(Evaluated, 0);
}

TEST_F(LoggingTest, EveryWriterGetsTheMessageAndClearStops) {
  auto A = std::make_shared<Captured>(), B = std::make_shared<Captured>();
  rt::logging::addLogWriter(std::make_unique<CaptureWriter>(A));
  rt::logging::addLogWriter(std::make_unique<CaptureWriter>(B));
  rt::detail::logMessage(rt::LogLevel::Warning, "both");
  EXPECT_EQ(A->Lines.size(), 1u);
  EXPECT_EQ(B->Lines.size(), 1u);
  rt::logging::clearLogWriters();
  rt::detail::logMessage(rt::LogLevel::Error, "nobody");
  EXPECT_EQ(A->Lines.size(), 1u);
  EXPECT_EQ(B->Lines.size(), 1u);
}

TEST_F(LoggingTest, NullWriterIsRejected) {
  EXPECT_THROW(rt::logging::addLogWriter(nullptr), rt::InvalidArgumentError);
}

TEST_F(LoggingTest, FileWriterAppendsLines) {
  const std::string Path = "/tmp/optimium_logging_test_" + std::to_string(getpid()) + ".log";
  std::remove(Path.c_str());
  {
    std::ofstream Pre(Path);
    Pre << "existing line\n";
  }
  rt::logging::setLogLevel(rt::LogLevel::Info);
  rt::logging::addLogWriter(std::make_unique<rt::logging::FileWriter>(Path));
  OPT_LOG(Warning, "hello ", 42);
  OPT_LOG(Debug, "hidden");
  rt::logging::clearLogWriters(); // closes the file
  std::ifstream In(Path);
  std::stringstream Content;
  Content << In.rdbuf();
  const std::string Text = Content.str();
  EXPECT_EQ(Text.rfind("existing line\n", 0), 0u) << Text; // appended, not truncated
  EXPECT_NE(Text.find("[optimium][WARNING] hello 42\n"), std::string::npos) << Text;
  EXPECT_EQ(Text.find("hidden"), std::string::npos) << Text;
  std::remove(Path.c_str());
}

TEST_F(LoggingTest, FileWriterThatCannotOpenNamesThePath) {
  const std::string Path = "/nonexistent_dir_for_optimium/x.log";
  try {
    rt::logging::FileWriter W(Path);
    FAIL() << "no IOError";
  } catch (const rt::IOError &E) {
    EXPECT_NE(std::string(E.what()).find(Path), std::string::npos) << E.what();
  }
}

TEST_F(LoggingTest, ConsoleWriterFormat) {
  rt::logging::setLogLevel(rt::LogLevel::Warning);
  rt::logging::addLogWriter(std::make_unique<rt::logging::ConsoleWriter>());
  testing::internal::CaptureStderr();
  OPT_LOG(Warning, "console message");
  OPT_LOG(Info, "not shown");
  const std::string Err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(Err, "[optimium][WARNING] console message\n");
}

TEST_F(LoggingTest, ConcurrentLoggingDeliversEveryMessage) {
  auto Sink = std::make_shared<Captured>();
  rt::logging::addLogWriter(std::make_unique<CaptureWriter>(Sink));
  rt::logging::setLogLevel(rt::LogLevel::Debug);
  std::vector<std::thread> Threads;
  for (int T = 0; T < 8; ++T)
    Threads.emplace_back([T] {
      for (int I = 0; I < 200; ++I)
        OPT_LOG(Info, "thread ", T, " message ", I);
    });
  for (auto &Th : Threads)
    Th.join();
  EXPECT_EQ(Sink->Lines.size(), 1600u);
}

TEST_F(LoggingTest, LevelNames) {
  EXPECT_STREQ(rt::toString(rt::LogLevel::Debug), "Debug");
  EXPECT_STREQ(rt::toString(rt::LogLevel::Verbose), "Verbose");
  EXPECT_STREQ(rt::toString(rt::LogLevel::Info), "Info");
  EXPECT_STREQ(rt::toString(rt::LogLevel::Warning), "Warning");
  EXPECT_STREQ(rt::toString(rt::LogLevel::Error), "Error");
}

// The environment is read once per process (possibly already during static initialization), so
// it is set here and checked in a freshly executed child ("threadsafe" death tests re-exec the
// binary, which inherits the environment).
TEST(LoggingEnvTest, LevelFromEnvironment) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const char *Old = std::getenv("OPTIMIUM_RT_LOG_LEVEL");
  const std::string Saved = Old ? Old : "";
  setenv("OPTIMIUM_RT_LOG_LEVEL", "DeBuG", 1);
  EXPECT_EXIT(std::exit(rt::logging::getLogLevel() == rt::LogLevel::Debug ? 0 : 1), ::testing::ExitedWithCode(0), "");
  setenv("OPTIMIUM_RT_LOG_LEVEL", "error", 1);
  EXPECT_EXIT(std::exit(rt::logging::getLogLevel() == rt::LogLevel::Error ? 0 : 1), ::testing::ExitedWithCode(0), "");
  setenv("OPTIMIUM_RT_LOG_LEVEL", "bogus", 1);
  EXPECT_EXIT(std::exit(rt::logging::getLogLevel() == rt::LogLevel::Warning ? 0 : 1), ::testing::ExitedWithCode(0),
              "");
  if (Old)
    setenv("OPTIMIUM_RT_LOG_LEVEL", Saved.c_str(), 1);
  else
    unsetenv("OPTIMIUM_RT_LOG_LEVEL");
}
