// The model manifest (optimium.json beside model.onnx): which graph inputs are Preserved (kept in
// the request between runs, optionally fed back from an output) and Resizable (concrete base shape
// that may change at run time). Parsing and the file's location; graph checks are in ModelLoader.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/Status.h"

namespace optimium {
namespace runtime {
namespace detail {

struct ManifestEntry {
  std::string Name;
  bool Preserved = false;
  bool Resizable = false;
  std::string UpdateFrom;        ///< Output whose value becomes this input's next value ("" = none).
  bool HasBaseShape = false;
  std::vector<int64_t> BaseShape; ///< Concrete; overrides the ONNX declared shape.
};

struct Manifest {
  std::string Path; ///< For error messages.
  std::vector<ManifestEntry> Tensors;

  const ManifestEntry *find(const std::string &Name) const;
  ManifestEntry &getOrAdd(const std::string &Name);
};

constexpr int kManifestVersion = 1;

/// ModelError naming Path and the offending key on malformed JSON or unknown fields.
Result<Manifest> parseManifest(const std::string &Text, const std::string &Path);
/// Reads and parses the file (IOError when unreadable).
Result<Manifest> readManifest(const std::string &Path);
/// JSON text of M (stable key order, 2-space indent).
std::string serializeManifest(const Manifest &M);
/// The manifest that goes with a model path, "" when there is none: <folder>/optimium.json for a
/// folder (or a file named model.onnx), <dir>/<stem>.optimium.json for any other .onnx file.
std::string manifestPathFor(const std::string &ModelPath);

} // namespace detail
} // namespace runtime
} // namespace optimium
