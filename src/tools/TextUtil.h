// Small string and file helpers shared by the tools' sources (header-only, internal to the tools).
#pragma once

#include <cctype>
#include <cstring>
#include <string>
#include <sys/stat.h>

#include "Optimium/Runtime/Options.h"

namespace optimium {
namespace tools {

inline std::string trim(const std::string &S) {
  size_t B = 0, E = S.size();
  while (B < E && std::isspace(static_cast<unsigned char>(S[B])))
    ++B;
  while (E > B && std::isspace(static_cast<unsigned char>(S[E - 1])))
    --E;
  return S.substr(B, E - B);
}

/// A --compute_precision value: "float32" (also "fp32", "f32") or "bfloat16" (also "bf16"); false
/// for anything else.
inline bool parseComputePrecision(const std::string &S, runtime::ComputePrecision &Out) {
  if (S == "float32" || S == "fp32" || S == "f32")
    Out = runtime::ComputePrecision::Float32;
  else if (S == "bfloat16" || S == "bf16")
    Out = runtime::ComputePrecision::BFloat16;
  else
    return false;
  return true;
}

inline bool startsWith(const std::string &S, const char *P) { return S.compare(0, std::strlen(P), P) == 0; }
inline bool endsWith(const std::string &S, const char *Suffix) {
  const size_t N = std::strlen(Suffix);
  return S.size() >= N && S.compare(S.size() - N, N, Suffix) == 0;
}

inline bool fileExists(const std::string &Path) {
  struct stat St;
  return ::stat(Path.c_str(), &St) == 0;
}
inline bool isDirectory(const std::string &Path) {
  struct stat St;
  return ::stat(Path.c_str(), &St) == 0 && S_ISDIR(St.st_mode);
}

/// S with line breaks turned into spaces (error messages are one line).
inline std::string oneLine(std::string S) {
  for (char &C : S)
    if (C == '\n' || C == '\r')
      C = ' ';
  while (!S.empty() && S.back() == ' ')
    S.pop_back();
  return S;
}

} // namespace tools
} // namespace optimium
