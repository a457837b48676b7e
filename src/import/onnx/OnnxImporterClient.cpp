// The shared runtime's side of the ONNX importer module (see OnnxImporterModule.h): importOnnxPath
// and importOnnxBuffer load liboptimium-runtime-onnx.so from beside the runtime library on first
// use and call into it. Compiled into liboptimium-runtime.so only, in place of OnnxImporter.cpp.
#include "import/onnx/OnnxImporterModule.h"

#include "core/LibraryPath.h"
#include "import/onnx/LegacyOpsets.h"
#include "import/onnx/ModelMetadata.h"
#include "ir/Scopes.h"

namespace optimium {
namespace runtime {
namespace detail {

namespace {

OnnxHostFunctions hostFunctions() {
  OnnxHostFunctions H;
  H.GraphFindValue = [](const Graph &G, const std::string &Name) { return G.findValue(Name); };
  H.GraphAddValue = [](Graph &G, Value V) { return G.addValue(std::move(V)); };
  H.GraphRebuildUseLists = [](Graph &G) { G.rebuildUseLists(); };
  H.NodeDescribe = [](const Node &N) { return N.describe(); };
  H.CapturedNames = [](const Node &N) { return capturedNames(N); };
  H.IsLogEnabled = [](LogLevel Level) { return isLogEnabled(Level); };
  H.LogMessage = [](LogLevel Level, const std::string &Message) { logMessage(Level, Message); };
  H.UpgradeLegacyNode = [](Node &N) { return upgradeLegacyNode(N); };
  H.ReadModelMetadata = [](const std::vector<std::pair<std::string, std::string>> &Props) {
    return readModelMetadata(Props);
  };
  H.MapFile = [](const std::string &Path, bool HugeFolios) { return MappedFile::open(Path, HugeFolios); };
  H.ReleaseResidentPages = [](const MappedFile &F, const void *P, size_t Bytes) {
    return F.releaseResidentPages(P, Bytes);
  };
  H.AllocateConst = [](ElementType Type, std::vector<int64_t> Dims) { return ConstData::allocate(Type, std::move(Dims)); };
  H.MakeSymbol = [](const std::string &Symbol) { return Expr(Symbol); };
  H.ShapeFromDims = [](const std::vector<int64_t> &Dims) { return TensorShape::fromDims(Dims); };
  H.ElementSize = [](ElementType Type) { return getElementSize(Type); };
  H.ElementTypeName = [](ElementType Type) { return toString(Type); };
  return H;
}

struct LoadedModule {
  const OnnxImporterFunctions *Functions = nullptr;
  std::string Error;
};

// Loaded once per process and never unloaded (RTLD_NODELETE): graphs, mappings and deleters made
// by its code outlive any one call.
const LoadedModule &onnxModule() {
  static const OnnxHostFunctions Host = hostFunctions();
  static const LoadedModule Loaded = [] {
    LoadedModule L;
    std::string Tried;
    const bool Found = loadModuleBeside(kOnnxModuleFile, kOnnxModuleEntry, [&](void *Sym) -> std::string {
      using Entry = const OnnxImporterFunctions *(*)(const OnnxHostFunctions *);
      const OnnxImporterFunctions *F = Sym ? reinterpret_cast<Entry>(Sym)(&Host) : nullptr;
      if (!F || F->Abi != kOnnxModuleAbi || F->Bytes != sizeof(OnnxImporterFunctions) || !F->ImportPath ||
          !F->ImportBuffer)
        return std::string("not the ONNX importer of this runtime build (") +
               (Sym ? "its tables do not match" : std::string("no ") + kOnnxModuleEntry) + ")";
      L.Functions = F;
      return "";
    }, Tried);
    if (!Found)
      L.Error = std::string("loading an ONNX model needs the importer module ") + kOnnxModuleFile +
                " beside the runtime library, which was not usable: " +
                (Tried.empty() ? std::string("the runtime library's own path is unknown") : Tried);
    return L;
  }();
  return Loaded;
}

} // namespace

Result<ImportedModel> importOnnxPath(const std::string &Path) {
  const LoadedModule &M = onnxModule();
  if (!M.Functions)
    return makeError(ErrorCode::Extension, Path, ": ", M.Error);
  return M.Functions->ImportPath(Path);
}

Result<ImportedModel> importOnnxBuffer(const uint8_t *Data, size_t Size, const std::string &BaseDir,
                                       const std::string &SourceName, std::shared_ptr<const void> Owner,
                                       ExternalDataReader Reader) {
  const LoadedModule &M = onnxModule();
  if (!M.Functions)
    return makeError(ErrorCode::Extension, SourceName, ": ", M.Error);
  return M.Functions->ImportBuffer(Data, Size, BaseDir, SourceName, std::move(Owner), std::move(Reader));
}

} // namespace detail
} // namespace runtime
} // namespace optimium
