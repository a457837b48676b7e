// optimium-run: our equivalent of IREE's iree-run-module (the spec's torq-run-module), written only
// against the public C++ API. Everything here is a library function so it can be tested; main()
// (RunModuleMain.cpp) only calls runModuleMain().
//
// Its parts: RunModuleFlags.h (command line), InputSpec.h (--input and --expected_output specs,
// with their syntax), OutputFormat.h (printing, writing and comparing results), Devices.h (--device);
// this file is the flow that ties them together. Results:
//   --output=-            print (default when no --output is given, unless --expected_output is:
//                         then, as iree-run-module, results are compared, not printed)
//   --output=             skip this output
//   --output=@out.npy     write a .npy file (truncating); +out.npy appends another array
//   --output=@out.bin     raw bytes (any extension other than .npy); +out.bin appends
// --output / --expected_output, when given, need one entry per model output (as IREE).
//   --expected_output=... same syntax as --input (`(ignored)` skips one output). Floating-point
//   elements match when |actual - expected| <= tol * max(1, |expected|), tol = 1e-4 by default
//   (--expected_tolerance=X); NaN matches NaN; integers and booleans must be equal.
#pragma once

#include <ostream>
#include <string>

#include "tools/RunModuleFlags.h"

namespace optimium {
namespace tools {

/// Runs the tool; returns the exit code (0 ok, 1 any error or mismatch). Never throws: every error
/// prints as one line "optimium-run: error: <message>" on Err. Specs are parsed before the model
/// loads (except `@file.bin` without shape, which needs the model's input), inputs are validated
/// against the model before it runs. After the results: "optimium-run: inference took X.XXX ms".
int runModule(const RunModuleOptions &Options, std::ostream &Out, std::ostream &Err);
/// The bundled digits demo over ModelDir (model.onnx, test_images.npy, test_labels.npy).
int runBundledModel(const std::string &ModelDir, std::ostream &Out, std::ostream &Err);
/// Folder of the bundled model: next to the executable's share/, the install path, the source tree.
std::string findBundledModelDir();
/// parseFlags + runModule with std::cout / std::cerr; what main() calls.
int runModuleMain(int Argc, char **Argv);

} // namespace tools
} // namespace optimium
