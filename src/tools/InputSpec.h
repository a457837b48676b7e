// Input specs as iree-run-module takes them (--input=1x224x224x3xi8=@file.bin): parsing into host
// arrays, checking them against a model's inputs, and converting to and from runtime tensors. Used
// by optimium-run (inputs and --expected_output) and optimium-benchmark (--input).
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
#pragma once

#include <fstream>
#include <istream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "Optimium/Runtime.h"
#include "tools/Npy.h"

namespace optimium {
namespace tools {

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

} // namespace tools
} // namespace optimium
