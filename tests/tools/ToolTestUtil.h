// Helpers the tool tests share: a test's own temp folder, reading and copying files, and running a
// tool's real binary with its stdout captured and its stderr written to a file.
#pragma once

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace optimium_test {

inline std::string readFile(const std::string &Path) {
  std::ifstream F(Path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(F)), std::istreambuf_iterator<char>());
}

inline void copyFile(const std::string &From, const std::string &To) {
  std::ifstream In(From, std::ios::binary);
  std::ofstream Out(To, std::ios::binary | std::ios::trunc);
  Out << In.rdbuf();
}

/// A folder of the running test's own under gtest's temp dir (created): Prefix, the test's suite and
/// name, and the process id, so that two checkouts' test runs at once (a developer's and a helper's)
/// never share one (one run's stderr.txt was read by the other).
inline std::string testTempDir(const std::string &Prefix) {
  const auto *Info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string Dir = ::testing::TempDir() + Prefix + Info->test_suite_name() + "_" + Info->name() + "_" +
                    std::to_string(::getpid());
  ::mkdir(Dir.c_str(), 0755);
  return Dir;
}

inline std::string shellQuote(const std::string &S) {
  std::string Q = "'";
  for (char C : S)
    Q += C == '\'' ? std::string("'\\''") : std::string(1, C);
  return Q + "'";
}

struct RunResult {
  int Code = -1; ///< exit code; 128 + signal when killed
  std::string Out, Err;
};

/// Runs Binary with Args through the shell; stderr goes through ErrFile (overwritten).
inline RunResult runProcess(const std::string &Binary, const std::vector<std::string> &Args,
                            const std::string &ErrFile) {
  std::string Cmd = shellQuote(Binary);
  for (const std::string &A : Args)
    Cmd += " " + shellQuote(A);
  Cmd += " 2>" + shellQuote(ErrFile);
  RunResult R;
  FILE *P = ::popen(Cmd.c_str(), "r");
  if (!P)
    return R;
  char Buf[4096];
  size_t N;
  while ((N = std::fread(Buf, 1, sizeof(Buf), P)) > 0)
    R.Out.append(Buf, N);
  const int Status = ::pclose(P);
  R.Code = WIFEXITED(Status) ? WEXITSTATUS(Status) : 128 + (WIFSIGNALED(Status) ? WTERMSIG(Status) : 0);
  R.Err = readFile(ErrFile);
  return R;
}

/// Binary run by env(1) with the environment assignment Env ("NAME=value") in front.
inline RunResult runWithEnv(const std::string &Binary, const std::string &Env, const std::vector<std::string> &Args,
                            const std::string &ErrFile) {
  std::vector<std::string> A{Env, Binary};
  A.insert(A.end(), Args.begin(), Args.end());
  return runProcess("env", A, ErrFile);
}

} // namespace optimium_test
