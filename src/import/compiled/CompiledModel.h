// The compiled model folder (optimium-compile's output): the graph after every load-time pass, its
// constants in one page-aligned weights file that loadModel maps and borrows, and a small header
// with the format and runtime versions, the CPU features it was compiled for, the manifest marks
// and the model metadata. The same files concatenated form the single-file (bundle) form that
// loadModel(bytes) takes. Layout and versioning: docs/compiled-models.md.
//
// Every file of a folder is read through readFolderFile (the one place a decrypting layer slots in);
// every byte read is bounds-checked, and any inconsistency is a ContainerError naming the file.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "Optimium/Runtime/Attribute.h"
#include "core/CpuFeatures.h"
#include "core/Status.h"
#include "import/Manifest.h"
#include "import/MappedFile.h"
#include "import/onnx/OnnxImporter.h"
#include "ir/Graph.h"

namespace optimium {
namespace runtime {
namespace detail {

class SealedFolder;

/// The newest folder format this runtime reads and the one it writes. A reader refuses a higher
/// version (ContainerError naming the file and both versions); bump it on any layout change.
constexpr uint32_t kCompiledFormatVersion = 1;

/// The files of a folder (and the sections of a bundle).
constexpr const char *kCompiledHeaderFile = "header.bin";
constexpr const char *kCompiledGraphFile = "graph.bin";
constexpr const char *kCompiledWeightsFile = "weights.bin";
constexpr const char *kCompiledPackedFile = "packed.bin";

/// Every file starts with this 32-byte preamble: magic (8), format version (u32), flags (u32, 0),
/// body size (u64), CRC-32 of the body (u32; the weights' is written but checked only by
/// verifyCompiledModel, since checking it would read every weight at load), reserved (u32).
constexpr size_t kCompiledPreambleBytes = 32;
/// Constants of at least one page start on a page of the weights file (so the mapping hands
/// kernels page-aligned data and releases whole pages); smaller ones on 64 bytes.
constexpr size_t kCompiledPageAlignment = 4096;
constexpr size_t kCompiledSmallAlignment = 64;
/// weights.bin holds the constants below this size first, then the larger ones (the encoder's
/// layOutWeights says why). A writer's choice: readers take every constant at its recorded offset.
constexpr size_t kCompiledHotConstantBytes = size_t{64} << 10;
/// The bundle (single-file form) starts with this magic.
constexpr char kCompiledBundleMagic[9] = "OPTMBNDL";

/// What the header holds besides the graph.
struct CompileInfo {
  uint32_t FormatVersion = kCompiledFormatVersion;
  std::string RuntimeVersion; ///< "major.minor.patch (commit)" of the compiler
  uint64_t CpuMask = 0;       ///< cpuFeatureMask of the CPU features the passes were gated on
  std::string CpuText;        ///< CpuFeatures::toString() of the same
  bool Bf16Compute = false;   ///< compiled with ComputePrecision::BFloat16
  bool KeepIntermediates = false; ///< compiled with fusions off
  std::string ModelName;
  /// The manifest marks, with concrete base shapes (the graph already has the marked inputs'
  /// shapes: symbols for resizable ones).
  std::vector<ManifestEntry> Marks;
};

/// A compiled model to read: a folder, or a bundle's bytes.
struct CompiledSource {
  std::string Folder; ///< set for a folder
  const uint8_t *Bundle = nullptr;
  size_t BundleSize = 0;
  std::shared_ptr<const void> BundleOwner; ///< keeps Bundle alive (may be empty: caller's buffer)
  std::string Label;  ///< for messages: the folder path or "in-memory model"
  /// An encrypted folder (optimium-compile --passphrase-file), opened with its passphrase: every file
  /// is decrypted into memory through it (Folder is its path).
  std::shared_ptr<const SealedFolder> Sealed;
  /// The fuzzer's hook: skip the CRC-32 checks (and the header's record of the other files), so
  /// mutated bytes reach the decoder instead of stopping at the checksum. Never set by the loader.
  bool SkipChecksums = false;
};

/// One file's bytes: mapped from the folder, or a range of the bundle.
struct FolderFile {
  const uint8_t *Data = nullptr;
  size_t Size = 0;
  std::string Path;                      ///< for messages: folder/name or "in-memory model:name"
  std::shared_ptr<const void> Owner;     ///< keeps Data alive
  std::shared_ptr<MappedFile> Mapping;   ///< when mapped (the loader releases pages through it)
};

/// The one function every file of a compiled model is read through. A missing file is a
/// ContainerError naming it (Optional: an empty FolderFile instead).
Result<FolderFile> readFolderFile(const CompiledSource &Src, const std::string &Name, bool Optional = false);

/// Path is a folder holding a compiled model's header file.
bool isCompiledFolder(const std::string &Path);
/// The bytes start with the bundle magic.
bool isCompiledBundle(const uint8_t *Data, size_t Size);

/// packed.bin: the kernels' packed constant weights (OptRtWeightsCache entries recorded by
/// optimium-compile), each on a 64-byte boundary (4096 for a page or more), behind an index of
/// keys whose CRC-32 is checked at load (the entries' own bytes only by --verify).
struct PackedWeights {
  struct Entry {
    const uint8_t *Data;
    uint64_t Size;
  };
  std::map<std::string, Entry> Entries;
  std::shared_ptr<const void> Owner; ///< keeps the bytes alive
  std::string Path;                  ///< for messages
};
/// Entries as recorded: key -> packed bytes.
using PackedRecord = std::map<std::string, std::vector<uint8_t>>;
/// packed.bin's bytes for Record; GraphCrc (graph.bin's preamble CRC) ties it to its graph.
std::vector<uint8_t> encodePackedWeights(const PackedRecord &Record, uint32_t GraphCrc);

struct CompiledModel {
  ImportedModel Imported; ///< the graph after passes; constants borrow the mapped weights file
  CompileInfo Info;
  std::shared_ptr<PackedWeights> Packed; ///< null when the folder has no packed.bin
};

/// Reads and checks the header and graph, maps the weights. ContainerError naming the file on
/// anything malformed, truncated or of a newer format version.
Result<CompiledModel> readCompiledModel(const CompiledSource &Src);

/// The files of a compiled model, encoded.
struct CompiledFiles {
  std::vector<uint8_t> Header, Graph, Weights;
  std::vector<uint8_t> Packed; ///< packed.bin; empty: none written
};

/// Encodes G (after passes) with Info. ContainerError when a constant has no bytes to write.
Result<CompiledFiles> encodeCompiledModel(const Graph &G, const CompileInfo &Info);
/// Writes the files into Dir (created when missing); IOError naming the path on failure.
Status writeCompiledFolder(const CompiledFiles &Files, const std::string &Dir);
/// The single-file form: magic, section table, the files each on a page boundary.
std::vector<uint8_t> bundleCompiledFiles(const CompiledFiles &Files);
/// Also checks the weights file's CRC (which loading skips). ContainerError on a mismatch.
Status verifyCompiledModel(const CompiledSource &Src);

} // namespace detail
} // namespace runtime
} // namespace optimium
