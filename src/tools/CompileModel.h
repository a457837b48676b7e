// optimium-compile: compiles an ONNX model into a compiled model folder (or one bundle file) that
// loadModel loads with no ONNX parsing, shape inference or passes (docs/compiled-models.md).
// main() (CompileModelMain.cpp) calls compileModelMain().
//
//   optimium-compile <model.onnx | model folder> -o <out.opt/> [--bundle] [--precision=f32|bf16]
//                    [--keep_intermediates] [--verify]
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
};

/// Compiles Options.Model into Options.Output. Returns "" on success, else the error message
/// (nothing is left at Output then, except a folder that existed before). Summary says what was written.
std::string compileModel(const CompileOptions &Options, std::ostream &Summary);

/// Parses argv and calls compileModel; exit status 0 on success, 1 on errors, 2 on bad usage.
int compileModelMain(int Argc, char **Argv, std::ostream &Out, std::ostream &Err);
int compileModelMain(int Argc, char **Argv);

} // namespace tools
} // namespace optimium
