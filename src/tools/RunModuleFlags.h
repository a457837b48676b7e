// optimium-run's command line: the options, their parsing and the --help text.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "Optimium/Runtime/Options.h"

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
  runtime::ComputePrecision Precision = runtime::ComputePrecision::Float32;
  /// An encrypted model's passphrase comes from this file's first line, else from the variable
  /// OPTIMIUM_RT_PASSPHRASE (tools/Passphrase.h); never from the command line.
  std::string PassphraseFile;
  bool PrintStatistics = false;
  bool DumpDevices = false;
  bool Help = false;
  /// No argument at all: run the bundled digits model over its held-out set.
  bool NoArguments = false;
  /// Not a flag: set by runModuleMain only. Once the results are printed and written (and stdout,
  /// stderr and the output files flushed and closed), the process ends with _exit(code) instead of
  /// unwinding: the model's ~100-200 MB of mappings, its thread pool and every library's static
  /// destructors (protobuf's descriptor pools among them) are left to the kernel, which frees them
  /// anyway (docs/compiled-models.md, "Load time and memory"). An embedder calling runModule keeps
  /// the full teardown.
  bool ExitWithoutTeardown = false;
};

/// Parses the command line (argv[0] is the program name). `--flagfile=path` is replaced by the flags
/// in the file (one per line, '#' comments and blank lines skipped, nested flagfiles allowed).
/// ToolError with a one-line message on an unknown flag or a bad value.
RunModuleOptions parseFlags(int Argc, const char *const *Argv);
/// The --help text.
std::string usage();

} // namespace tools
} // namespace optimium
