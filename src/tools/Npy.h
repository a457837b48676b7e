// The tools' names for the .npy library (core/Npy.h, the static library optimium_npy): host arrays,
// reading and writing, and ToolError, the one exception type the tools throw and catch.
#pragma once

#include "core/Npy.h"

namespace optimium {
namespace tools {

using HostArray = npy::HostArray;
/// Every tool error, a malformed .npy file as well as a bad flag, is reported through this type.
using ToolError = npy::NpyError;

using npy::atNpyEnd;
using npy::dimsElementCount;
using npy::elementByteSize;
using npy::elementTypeFromNpyDescr;
using npy::npyDescr;
using npy::readAllNpy;
using npy::readNpy;
using npy::readNpyFile;
using npy::writeNpy;
using npy::writeNpyFile;

} // namespace tools
} // namespace optimium
