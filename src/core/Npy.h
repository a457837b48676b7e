// Reading and writing NumPy .npy files (format versions 1.0, 2.0 and 3.0): the one implementation,
// used by the runtime (intermediate dumps) and the command-line tools. Only C-order arrays of
// fixed-size numeric dtypes are supported. Several arrays may be
// concatenated in one file (what `+file.npy` outputs produce); readNpy() reads the next one from an
// open stream so `+file.npy` / `*file.npy` inputs can continue where the previous one stopped.
//
// Runtime-independent: uses only the ElementType enum of the public headers. It is compiled once
// as the static library optimium_npy, linked into the runtime (where its symbols are hidden) and
// into the tools, which cannot reach the runtime's internals through the shared library.
#pragma once

#include <cstddef>
#include <cstdint>
#include <istream>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "Optimium/Runtime/ElementType.h"

namespace optimium {
namespace npy {

/// A dense, row-major host array: what the tools parse, read, compare and print.
struct HostArray {
  runtime::ElementType Type = runtime::ElementType::Undefined;
  std::vector<int64_t> Dims;
  std::vector<uint8_t> Bytes;

  size_t elementCount() const;
  size_t byteSize() const { return Bytes.size(); }
};

/// Thrown for every malformed file or failed read/write; the message is one line. The tools throw
/// it for their own errors too (tools/Npy.h names it NpyError), so one catch covers both.
class NpyError : public std::runtime_error {
public:
  explicit NpyError(const std::string &Message) : std::runtime_error(Message) {}
};

/// Bytes of one element; 0 for Undefined and String (not supported by the tools).
size_t elementByteSize(runtime::ElementType Type);
/// Product of Dims (1 for a scalar); NpyError on a negative dim or overflow.
size_t dimsElementCount(const std::vector<int64_t> &Dims);

/// NumPy descr of an element type ("<f4", "|b1", ...). bf16 has no NumPy dtype: it is stored as
/// "<u2" (its raw bits), as the Python bindings do. NpyError for String/Undefined.
std::string npyDescr(runtime::ElementType Type);
/// Element type of a NumPy descr; NpyError naming it when unsupported.
runtime::ElementType elementTypeFromNpyDescr(const std::string &Descr);

/// Reads the next array from In. NpyError (prefixed with Name) on a malformed header, Fortran
/// order, an unsupported dtype or truncated data.
HostArray readNpy(std::istream &In, const std::string &Name = "npy");
/// True when In is at its end (no further array to read).
bool atNpyEnd(std::istream &In);
/// Reads the first array of the file at Path.
HostArray readNpyFile(const std::string &Path);
/// Reads every array of the file at Path (concatenated .npy).
std::vector<HostArray> readAllNpy(const std::string &Path);

/// Writes one array (format 1.0, or 2.0 when the header needs it) to Out.
void writeNpy(std::ostream &Out, runtime::ElementType Type, const std::vector<int64_t> &Dims,
              const void *Data, size_t Bytes);
void writeNpy(std::ostream &Out, const HostArray &A);
/// Writes (Append = false: truncates) or appends (Append = true) one array to the file at Path.
void writeNpyFile(const std::string &Path, runtime::ElementType Type, const std::vector<int64_t> &Dims,
                  const void *Data, size_t Bytes, bool Append = false);
void writeNpyFile(const std::string &Path, const HostArray &A, bool Append = false);

} // namespace npy
} // namespace optimium
