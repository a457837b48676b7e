// --flagfile=PATH for the tools' command lines (optimium-run, optimium-benchmark): the flags of a
// file, one per line, replace the argument.
#pragma once

#include <string>
#include <vector>

namespace optimium {
namespace tools {

/// Replaces each `--flagfile=path` argument by the flags in the file (one per line, '#' comments and
/// blank lines skipped, nested flagfiles allowed up to 16 deep). ToolError when a file cannot be
/// opened.
std::vector<std::string> expandFlagfiles(const std::vector<std::string> &Args, int Depth = 0);

} // namespace tools
} // namespace optimium
