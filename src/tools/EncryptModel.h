// optimium-encrypt: writes an encrypted copy of a model folder (docs/encrypted-models.md). main()
// (EncryptModelMain.cpp) calls encryptModelMain().
//
//   optimium-encrypt <model.onnx | model-folder> -o <out-folder> [--passphrase-file F]
//
// The passphrase comes from --passphrase-file (its first line) or, without it, from the
// environment variable OPTIMIUM_RT_PASSPHRASE; never from the command line, where other users of
// the machine could read it in the process list.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

namespace optimium {
namespace tools {

struct EncryptOptions {
  std::string Input;          ///< .onnx file or model folder
  std::string OutFolder;      ///< created; must be missing or empty
  std::string PassphraseFile; ///< "" = OPTIMIUM_RT_PASSPHRASE
  int ScryptLog2N = 14;       ///< scrypt cost: N = 2^ScryptLog2N (r = 8, p = 1)
};

/// The passphrase Options name: the first line of PassphraseFile (without its line break), or the
/// environment variable. Returns "" on success, else an error message (never holding the passphrase).
std::string readPassphrase(const EncryptOptions &Options, std::string &Passphrase);

/// Encrypts the model. Returns "" on success, else an error message; Summary lists the files written.
std::string encryptModel(const EncryptOptions &Options, std::ostream &Summary);

/// Parses argv and calls encryptModel; exit status 0 on success, 1 on errors (printed to Err).
int encryptModelMain(int Argc, char **Argv, std::ostream &Out, std::ostream &Err);
int encryptModelMain(int Argc, char **Argv);

} // namespace tools
} // namespace optimium
