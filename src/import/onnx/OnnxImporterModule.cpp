// liboptimium-runtime-onnx.so's own part (see OnnxImporterModule.h): the entry point, and the
// runtime-internal functions the importer (OnnxImporter.cpp, RawDataScanner.cpp, linked beside this
// file) calls, defined here as forwarders into the runtime that loaded the module.
#include "import/onnx/OnnxImporterModule.h"

#include "import/onnx/LegacyOpsets.h"
#include "import/onnx/ModelMetadata.h"
#include "ir/Scopes.h"

namespace optimium {
namespace runtime {
namespace detail {

// Set once by the entry point, before the runtime calls anything else of the module.
static const OnnxHostFunctions *Host = nullptr;

int Graph::findValue(const std::string &Name) const { return Host->GraphFindValue(*this, Name); }
int Graph::addValue(Value V) { return Host->GraphAddValue(*this, std::move(V)); }
void Graph::rebuildUseLists() { Host->GraphRebuildUseLists(*this); }
std::string Node::describe() const { return Host->NodeDescribe(*this); }
std::vector<std::string> capturedNames(const Node &N) { return Host->CapturedNames(N); }
bool isLogEnabled(LogLevel Level) { return Host->IsLogEnabled(Level); }
void logMessage(LogLevel Level, const std::string &Message) { Host->LogMessage(Level, Message); }
Status upgradeLegacyNode(Node &N) { return Host->UpgradeLegacyNode(N); }
Result<std::map<std::string, Attribute>> readModelMetadata(const std::vector<std::pair<std::string, std::string>> &Props) {
  return Host->ReadModelMetadata(Props);
}
Result<std::shared_ptr<MappedFile>> MappedFile::open(const std::string &Path, bool HugeFolios) {
  return Host->MapFile(Path, HugeFolios);
}
bool MappedFile::releaseResidentPages(const void *P, size_t Bytes) const {
  return Host->ReleaseResidentPages(*this, P, Bytes);
}
std::shared_ptr<ConstData> ConstData::allocate(ElementType Type, std::vector<int64_t> Dims) {
  return Host->AllocateConst(Type, std::move(Dims));
}

} // namespace detail

Expr::Expr(const std::string &Symbol) : Expr(detail::Host->MakeSymbol(Symbol)) {}
TensorShape TensorShape::fromDims(const std::vector<int64_t> &Dims) { return detail::Host->ShapeFromDims(Dims); }
size_t getElementSize(ElementType Type) { return detail::Host->ElementSize(Type); }
const char *toString(ElementType Type) { return detail::Host->ElementTypeName(Type); }

} // namespace runtime
} // namespace optimium

using namespace optimium::runtime::detail;

extern "C" __attribute__((visibility("default"))) const OnnxImporterFunctions *
optimium_rt_onnx_importer(const OnnxHostFunctions *H) {
  const OnnxHostFunctions Expected;
  if (!H || H->Abi != Expected.Abi || H->Bytes != Expected.Bytes || H->GraphBytes != Expected.GraphBytes ||
      H->NodeBytes != Expected.NodeBytes || H->ValueBytes != Expected.ValueBytes)
    return nullptr;
  Host = H;
  static OnnxImporterFunctions Functions;
  Functions.ImportPath = &importOnnxPath;
  Functions.ImportBuffer = &importOnnxBuffer;
  return &Functions;
}
