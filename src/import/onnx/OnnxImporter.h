// ONNX -> graph IR. Accepts a .onnx file, a folder holding one, or the bytes of a model.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "core/Status.h"
#include "import/MappedFile.h"
#include "ir/Graph.h"

namespace optimium {
namespace runtime {
namespace detail {

struct ImportedModel {
  std::unique_ptr<Graph> G;
  std::string Name;
  /// Owns whatever constants point into (mapped files, the caller's buffer is not owned).
  std::vector<std::shared_ptr<const void>> KeepAlive;
  /// The mapped model and external-data files among KeepAlive.
  std::vector<std::shared_ptr<MappedFile>> Mappings;
};

/// Newest default-domain opset whose semantics this runtime follows.
constexpr int kMaxSupportedOpset = 28;
/// Oldest default-domain opset accepted; nodes of opsets 1..6 go through upgradeLegacyNode.
constexpr int kMinSupportedOpset = 1;

/// Whether input Input of a default-domain node of type OpType reads a constant's bytes straight
/// from the (possibly unaligned) model file: Gather's data (rows copied out) and MatMul's B (packed
/// from it). The importer leaves such initializers without an aligned copy, and the loader does
/// not make one for these readers.
inline bool readsFileBytesInPlace(const std::string &OpType, size_t Input) {
  return (OpType == "Gather" && Input == 0) || (OpType == "MatMul" && Input == 1);
}

/// Bytes of one file of a model held in memory (e.g. decrypted), kept alive by Owner.
struct ModelFileBytes {
  const uint8_t *Data = nullptr;
  size_t Size = 0;
  std::shared_ptr<const void> Owner;
};
/// Supplies the external data file at Location (relative to the model folder, already checked to
/// be inside it) instead of mapping it from disk: an encrypted folder hands out decrypted buffers.
using ExternalDataReader = std::function<Result<ModelFileBytes>(const std::string &Location)>;

/// Path: an .onnx file, or a folder holding model.onnx (or exactly one *.onnx).
Result<ImportedModel> importOnnxPath(const std::string &Path);
/// Bytes of an ONNX model; not copied (constants may point into them). External data files are
/// resolved against BaseDir (empty: external data is an error). Owner, when given, owns the bytes
/// and is kept alive with the model (the Python bindings hand over their copy this way); without
/// it the caller keeps the bytes alive. Reader, when given, supplies the external data files
/// (BaseDir then only names them in messages).
Result<ImportedModel> importOnnxBuffer(const uint8_t *Data, size_t Size, const std::string &BaseDir,
                                       const std::string &SourceName, std::shared_ptr<const void> Owner = nullptr,
                                       ExternalDataReader Reader = nullptr);

} // namespace detail
} // namespace runtime
} // namespace optimium
