// optimium-run: our equivalent of IREE's iree-run-module (the spec's torq-run-module), written only
// against the public C++ API. Everything here is a library function so it can be tested; main()
// (RunModuleMain.cpp) only calls runModuleMain().
//
// Supported syntax (same as iree-run-module):
//   --input=2x2xf32=1 2 3 4          values, separated by spaces and/or commas
//   --input=2x2xf32=[[1,2][3,4]]     brackets are separators too (not checked against the shape)
//   --input=2x2xf32=1                a single value fills the tensor
//   --input=2x2xf32  / 2x2xf32=      no value: zeros
//   --input=1x8xf32=@file.bin        raw little-endian bytes from the start of file.bin
//   --input=1x8xf32=+file.bin        the next bytes of file.bin, continuing where the previous
//                                    `@`/`+` read of the same path stopped
//   --input=@file.npy                the first array of file.npy (shape and type from the file)
//   --input=+file.npy                the next array of file.npy (concatenated .npy arrays)
//   --input=*file.npy                every remaining array of file.npy, as successive inputs
// A raw file (`@`/`+` on a non-.npy path) must be consumed exactly by the inputs reading it.
// Element types: i1 (bool), i8 si8 ui8 i16 si16 ui16 i32 si32 ui32 i64 si64 ui64 f16 bf16 f32 f64.
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

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "Optimium/Runtime.h"
#include "tools/Npy.h"

namespace optimium {
namespace tools {

struct RunModuleOptions {
  std::string Module;
  std::string Function = "main";
  std::string Device = "native";
  bool DeviceGiven = false;
  std::string HwType;
  std::string DeviceAllocator = "auto";
  std::vector<std::string> Inputs;
  std::vector<std::string> Outputs;
  std::vector<std::string> ExpectedOutputs;
  size_t OutputMaxElementCount = 1024;
  double ExpectedTolerance = 1e-4;
  int Threads = 0;
  bool PrintStatistics = false;
  bool DumpDevices = false;
  bool Help = false;
  /// No argument at all: run the bundled digits model over its held-out set.
  bool NoArguments = false;
};

/// Parses the command line (argv[0] is the program name). `--flagfile=path` is replaced by the flags
/// in the file (one per line, '#' comments and blank lines skipped, nested flagfiles allowed).
/// ToolError with a one-line message on an unknown flag or a bad value.
RunModuleOptions parseFlags(int Argc, const char *const *Argv);
/// Expands --flagfile= arguments (exposed for tests).
std::vector<std::string> expandFlagfiles(const std::vector<std::string> &Args, int Depth = 0);
/// The --help text.
std::string usage();

/// IREE spelling of an element type ("f32", "i8", "ui8", "i1" for bool, ...).
std::string elementTypeName(runtime::ElementType Type);
/// Parses an IREE element type spelling; false when unknown.
bool parseElementTypeName(const std::string &Name, runtime::ElementType &Type);
/// "1x10xf32" (just "f32" for a scalar).
std::string formatShapeAndType(const std::vector<int64_t> &Dims, runtime::ElementType Type);

/// Files opened by `@`/`+`/`*` specs, so that `+` continues where the previous read stopped.
class InputStreams {
public:
  /// Opens Path at offset 0 (`@`, Continue = false) or at the current position (`+`/`*`).
  std::istream &open(const std::string &Path, bool Continue);
  /// ToolError naming the file when a raw (non-.npy) file was not read to its end.
  void checkRawFilesConsumed(const std::string &FlagName) const;
  /// Marks Path as a raw file (the size check applies).
  void markRaw(const std::string &Path) { Raw[Path] = true; }

private:
  std::map<std::string, std::unique_ptr<std::ifstream>> Streams;
  std::map<std::string, bool> Raw;
};

/// Parses one --input spec into zero or more arrays (`*file.npy` may give several). Expected, when
/// given, is the model input the (first) array feeds: it supplies shape and type of a raw file named
/// without metadata (`@file.bin`). Errors are ToolError: "<FlagName> '<spec>': <what is wrong>".
std::vector<HostArray> parseInputSpec(const std::string &Spec, InputStreams &Streams,
                                      const runtime::TensorInfo *Expected = nullptr,
                                      const std::string &FlagName = "--input");
/// Parses a list of specs sharing one InputStreams; Expected[i] is the i-th model input (may be
/// shorter). Checks raw files were consumed exactly.
std::vector<HostArray> parseInputSpecs(const std::vector<std::string> &Specs,
                                       const std::vector<runtime::TensorInfo> &Expected = {},
                                       const std::string &FlagName = "--input");
/// One spec -> one runtime tensor (validated against Expected when given).
runtime::Tensor parseInputSpec(const std::string &Spec, const runtime::TensorInfo *Expected = nullptr);

/// Checks inputs against the model's inputs (count, element type, rank, dims; a symbolic dim must
/// take the same value everywhere it appears). ToolError naming the input index and name with the
/// expected vs actual shape/type.
void validateInputs(const std::vector<HostArray> &Inputs, const std::vector<runtime::TensorInfo> &Infos);

/// A runtime tensor owning a copy of A, and back.
runtime::Tensor toTensor(const HostArray &A);
HostArray fromTensor(const runtime::Tensor &T);

/// IREE's buffer view text: "2x2xf32=[1 2][3 4]"; a leaf dimension stops after MaxElements elements
/// in total and ends with "...". Floats print with %G, like IREE.
std::string formatBufferView(const HostArray &A, size_t MaxElements = 1024);
/// "result[<Index>]: hal.buffer_view\n<buffer view>" (no trailing newline), as iree-run-module.
std::string formatOutput(size_t Index, const HostArray &A, size_t MaxElements = 1024);
std::string formatOutput(size_t Index, const runtime::Tensor &T, size_t MaxElements = 1024);

/// Writes output Index according to Spec ("-", "", "@path", "+path"); prints to Out for "-".
void writeOutput(const std::string &Spec, size_t Index, const HostArray &A, std::ostream &Out,
                 size_t MaxElements);

/// Compares Actual with Expected. Returns "" on a match, else one line describing the first
/// mismatch (shape/type, or the first differing element with both values and the mismatch count).
std::string compareArrays(const HostArray &Expected, const HostArray &Actual, double Tolerance = 1e-4);

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
