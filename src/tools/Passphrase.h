// Where the tools take a passphrase from: the first line of a file, or the environment variable
// OPTIMIUM_RT_PASSPHRASE; never the command line, where other users of the machine could read it
// in the process list (optimium-encrypt, optimium-compile; docs/encrypted-models.md).
#pragma once

#include <cstdlib>
#include <fstream>
#include <string>

namespace optimium {
namespace tools {

/// The passphrase: the first line of File (without its line break) when File is given, else the
/// environment variable. Returns "" on success, else an error message (never holding the passphrase).
inline std::string readPassphraseFrom(const std::string &File, std::string &Passphrase) {
  Passphrase.clear();
  if (!File.empty()) {
    std::ifstream In(File, std::ios::binary);
    if (!In)
      return "cannot read the passphrase file '" + File + "'";
    std::getline(In, Passphrase);
    if (!Passphrase.empty() && Passphrase.back() == '\r')
      Passphrase.pop_back();
    if (Passphrase.empty())
      return "the passphrase file '" + File + "' starts with an empty line";
    return "";
  }
  const char *Env = std::getenv("OPTIMIUM_RT_PASSPHRASE");
  if (!Env || !*Env)
    return "no passphrase: give --passphrase-file FILE or set OPTIMIUM_RT_PASSPHRASE";
  Passphrase = Env;
  return "";
}

/// Whether a command-line argument tries to pass the passphrase itself (refused).
inline bool isPassphraseArgument(const std::string &A) {
  return A == "--passphrase" || A.compare(0, 13, "--passphrase=") == 0;
}

} // namespace tools
} // namespace optimium
