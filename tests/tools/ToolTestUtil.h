// Helpers the tool tests share: reading a file whole, and running a tool's real binary with its
// stdout captured and its stderr written to a file.
#pragma once

#include <sys/wait.h>

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

} // namespace optimium_test
