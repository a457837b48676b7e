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
/// The --help text.
std::string usage();

} // namespace tools
} // namespace optimium
