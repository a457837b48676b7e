// The ONNX importer as a module of its own (liboptimium-runtime-onnx.so): the shared runtime
// loads it, and with it libprotobuf and libonnx_proto, only when a model comes as ONNX, so a
// process that runs a compiled folder never pays protobuf's start-up (its descriptor index is
// built by static initialisers: ~2.2 ms of CPU per process on the Zen 3 VM; docs/compiled-models.md).
// Builds that embed the runtime's objects (the Python module, optimium-compile, the unit tests,
// the fuzzers) link the importer directly and never use this.
//
// The two sides are one build of one source tree: the module calls back into the runtime through
// OnnxHostFunctions for the few runtime-internal functions the importer uses (hidden in the
// runtime library), and hands back its two entry points in OnnxImporterFunctions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/Log.h"
#include "import/MappedFile.h"
#include "import/onnx/OnnxImporter.h"
#include "ir/Graph.h"

namespace optimium {
namespace runtime {
namespace detail {

/// Raised whenever either table changes.
constexpr uint32_t kOnnxModuleAbi = 1;
/// The module's file name, looked up beside the runtime library.
constexpr const char *kOnnxModuleFile = "liboptimium-runtime-onnx.so";
/// Its one exported symbol: const OnnxImporterFunctions *(const OnnxHostFunctions *); null when
/// the host's table does not match the module's build.
constexpr const char *kOnnxModuleEntry = "optimium_rt_onnx_importer";

/// The runtime's functions the importer calls (the module defines forwarders of the same names).
struct OnnxHostFunctions {
  uint32_t Abi = kOnnxModuleAbi;
  uint32_t Bytes = sizeof(OnnxHostFunctions);
  /// Layouts both sides must agree on (one build; a stale module is refused, not trusted).
  size_t GraphBytes = sizeof(Graph), NodeBytes = sizeof(Node), ValueBytes = sizeof(Value);
  int (*GraphFindValue)(const Graph &, const std::string &) = nullptr;
  int (*GraphAddValue)(Graph &, Value) = nullptr;
  void (*GraphRebuildUseLists)(Graph &) = nullptr;
  std::string (*NodeDescribe)(const Node &) = nullptr;
  std::vector<std::string> (*CapturedNames)(const Node &) = nullptr;
  bool (*IsLogEnabled)(LogLevel) = nullptr;
  void (*LogMessage)(LogLevel, const std::string &) = nullptr;
  Status (*UpgradeLegacyNode)(Node &) = nullptr;
  Result<std::map<std::string, Attribute>> (*ReadModelMetadata)(const std::vector<std::pair<std::string, std::string>> &) =
      nullptr;
  Result<std::shared_ptr<MappedFile>> (*MapFile)(const std::string &, bool) = nullptr;
  bool (*ReleaseResidentPages)(const MappedFile &, const void *, size_t) = nullptr;
  std::shared_ptr<ConstData> (*AllocateConst)(ElementType, std::vector<int64_t>) = nullptr;
  // Public API functions: the module links nothing of the runtime, so these come this way too.
  Expr (*MakeSymbol)(const std::string &) = nullptr;
  TensorShape (*ShapeFromDims)(const std::vector<int64_t> &) = nullptr;
  size_t (*ElementSize)(ElementType) = nullptr;
  const char *(*ElementTypeName)(ElementType) = nullptr;
};

/// What the module offers: OnnxImporter.h's two functions.
struct OnnxImporterFunctions {
  uint32_t Abi = kOnnxModuleAbi;
  uint32_t Bytes = sizeof(OnnxImporterFunctions);
  Result<ImportedModel> (*ImportPath)(const std::string &) = nullptr;
  Result<ImportedModel> (*ImportBuffer)(const uint8_t *, size_t, const std::string &, const std::string &,
                                        std::shared_ptr<const void>, ExternalDataReader) = nullptr;
};

} // namespace detail
} // namespace runtime
} // namespace optimium
