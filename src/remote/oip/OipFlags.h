// The command-line flags of the OIP endpoint, shared by optimium-remote-server and
// optimium-oip-server: each main takes its own flags and lets this take the OIP ones.
#pragma once

#include <string>
#include <vector>

#include "OipServer.h"

namespace optimium {
namespace remote {
namespace oip {

struct OipFlags {
  bool Enabled = false; ///< --http-port was given
  OipOptions Options;   ///< Port, Models, Workers, ModelThreads, MaxBodyBytes from the flags
};

/// Removes --http-port N, --model NAME=PATH (repeatable), --http-workers N, --model-threads N and
/// --http-max-body-bytes N (each also as --flag=value) from Args into Out. False with Error set on
/// a malformed value.
bool extractOipFlags(std::vector<std::string> &Args, OipFlags &Out, std::string &Error);

/// The usage lines of those flags.
const char *oipFlagsUsage();

} // namespace oip
} // namespace remote
} // namespace optimium
