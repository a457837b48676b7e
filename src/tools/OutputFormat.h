// What optimium-run does with results: IREE's buffer-view text, writing an output to a .npy or
// raw file (--output=), and comparing with an expected output (--expected_output=).
//   --output=-            print
//   --output=             skip this output
//   --output=@out.npy     write a .npy file (truncating); +out.npy appends another array
//   --output=@out.bin     raw bytes (any extension other than .npy); +out.bin appends
// Floating-point elements match when |actual - expected| <= tol * max(1, |expected|); NaN matches
// NaN; integers and booleans must be equal.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>

#include "Optimium/Runtime.h"
#include "tools/Npy.h"

namespace optimium {
namespace tools {

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

} // namespace tools
} // namespace optimium
