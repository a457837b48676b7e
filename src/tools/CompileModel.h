// optimium-compile: compiles an ONNX model into a compiled model folder (or one bundle file) that
// loadModel loads with no ONNX parsing, shape inference or passes (docs/compiled-models.md).
// main() (CompileModelMain.cpp) calls compileModelMain().
//
//   optimium-compile <model.onnx | model folder> -o <out.opt/> [--bundle] [--precision=f32|bf16]
//                    [--keep_intermediates] [--verify] [--encrypt | --passphrase-file FILE]
//
// --encrypt (passphrase from OPTIMIUM_RT_PASSPHRASE) or --passphrase-file writes the folder's files
// encrypted (AES-256-GCM, scrypt; docs/encrypted-models.md) straight from memory: the compiled
// files never reach the disk in the clear.
//
// Unlike the other tools, this one links the runtime's objects (it runs the loader's passes and
// writes the folder, which the shared library does not export).
#pragma once

#include <ostream>
#include <string>

namespace optimium {
namespace tools {

struct CompileOptions {
  std::string Model;
  std::string Output;
  bool Bundle = false;             ///< one file (loadModel(path) and loadModel(bytes) take it)
  bool Bf16 = false;               ///< ComputePrecision::BFloat16
  bool KeepIntermediates = false;  ///< no fusions (every intermediate stays readable)
  bool Verify = false;             ///< read the output back, all CRCs checked
  bool Encrypt = false;            ///< encrypt the folder (passphrase: PassphraseFile or the environment)
  std::string PassphraseFile;      ///< "" = OPTIMIUM_RT_PASSPHRASE
  int ScryptLog2N = 14;            ///< scrypt cost N = 2^ScryptLog2N (r = 8, p = 1)
};

/// Compiles Options.Model into Options.Output. Returns "" on success, else the error message
/// (nothing is left at Output then, except a folder that existed before). Summary says what was written.
std::string compileModel(const CompileOptions &Options, std::ostream &Summary);

/// Parses argv and calls compileModel; exit status 0 on success, 1 on errors, 2 on bad usage.
int compileModelMain(int Argc, char **Argv, std::ostream &Out, std::ostream &Err);
int compileModelMain(int Argc, char **Argv);

} // namespace tools
} // namespace optimium
