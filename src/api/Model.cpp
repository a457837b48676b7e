// Model: thin public wrapper over ModelImpl.
#include "Optimium/Runtime/Model.h"

#include <algorithm>

#include "Optimium/Runtime/Exceptions.h"

#include "core/ErrorConversion.h"
#include "exec/InputShapes.h"
#include "exec/Request.h"
#include "ir/InferShapes.h"

namespace optimium {
namespace runtime {

using namespace detail;

namespace {
const ModelImpl &checked(const std::shared_ptr<ModelImpl> &Impl) {
  if (!Impl)
    throw InvalidStateError("this Model is empty (default-constructed or moved from)");
  return *Impl;
}
} // namespace

std::string Model::getName() const { return checked(Impl).Name; }
ArrayRef<StringRef> Model::getInputNames() const { return checked(Impl).InputNames; }
ArrayRef<StringRef> Model::getOutputNames() const { return checked(Impl).OutputNames; }

const TensorInfo &Model::getTensorInfo(StringRef Name) const {
  const TensorInfo *TI = checked(Impl).findTensor(Name.str());
  if (!TI)
    throw InvalidArgumentError("model '" + Impl->Name + "' has no tensor named '" + Name.str() + "'");
  return *TI;
}

const TensorInfo &Model::getInputTensorInfo(size_t Index) const {
  const ModelImpl &M = checked(Impl);
  if (Index >= M.InputNames.size())
    throw InvalidArgumentError("input index " + std::to_string(Index) + " is out of range: model '" + M.Name + "' has " +
                               std::to_string(M.InputNames.size()) + " input(s)");
  return *M.findTensor(M.InputNames[Index].str());
}

const TensorInfo &Model::getOutputTensorInfo(size_t Index) const {
  const ModelImpl &M = checked(Impl);
  if (Index >= M.OutputNames.size())
    throw InvalidArgumentError("output index " + std::to_string(Index) + " is out of range: model '" + M.Name + "' has " +
                               std::to_string(M.OutputNames.size()) + " output(s)");
  return *M.findTensor(M.OutputNames[Index].str());
}

ArrayRef<TensorInfo> Model::getTensors() const { return checked(Impl).Tensors; }
ArrayRef<OpInfo> Model::getOperations() const { return checked(Impl).Ops; }
bool Model::isDynamic() const { return checked(Impl).Dynamic; }

bool Model::hasAttribute(StringRef Key) const { return checked(Impl).G->Metadata.count(Key.str()) != 0; }
Attribute Model::getAttribute(StringRef Key) const {
  const auto &MD = checked(Impl).G->Metadata;
  auto It = MD.find(Key.str());
  return It == MD.end() ? Attribute() : It->second;
}
ArrayRef<StringRef> Model::getAttributeKeys() const { return checked(Impl).AttributeKeyRefs; }

TensorShape Model::inferShape(StringRef Name, const std::map<std::string, TensorShape> &InputShapes) const {
  const ModelImpl &M = checked(Impl);
  // Every graph input; a Preserved one may be omitted (its base shape is used).
  std::vector<TensorShape> Ordered;
  for (int V : M.G->Inputs) {
    const std::string &In = M.G->Values[V].Name;
    auto It = InputShapes.find(In);
    const detail::StatefulInput *S = M.findStateful(In);
    if (It != InputShapes.end())
      Ordered.push_back(It->second);
    else if (S && S->Preserved)
      Ordered.push_back(TensorShape::fromDims(S->BaseDims));
    else
      throw InvalidArgumentError("inferShape: no shape given for input '" + In + "'");
  }
  for (const auto &KV : InputShapes) {
    const int V = M.G->findValue(KV.first);
    if (V < 0 || !M.G->Values[V].IsGraphInput)
      throw InvalidArgumentError("inferShape: '" + KV.first + "' is not an input of model '" + M.Name + "'");
  }
  return inferShape(Name, make_array(Ordered));
}

TensorShape Model::inferShape(StringRef Name, ArrayRef<TensorShape> InputShapes) const {
  const ModelImpl &M = checked(Impl);
  const Graph &G = *M.G;
  const int Target = G.findValue(Name.str());
  if (Target < 0)
    throw InvalidArgumentError("inferShape: model '" + M.Name + "' has no tensor named '" + Name.str() + "'");
  std::vector<TensorShape> Expanded;
  if (InputShapes.size() == M.UserInputs.size() && M.UserInputs.size() != G.Inputs.size()) {
    // The inputs infer() takes (getInputNames order): Preserved inputs get their base shape.
    Expanded.resize(G.Inputs.size());
    for (size_t K = 0; K < M.UserInputs.size(); ++K)
      Expanded[M.UserInputs[K]] = InputShapes[K];
    for (const detail::StatefulInput &S : M.Stateful)
      if (S.Preserved)
        Expanded[S.InputIndex] = TensorShape::fromDims(S.BaseDims);
    InputShapes = make_array(Expanded);
  }
  if (InputShapes.size() != G.Inputs.size())
    throw InvalidArgumentError("inferShape: model '" + M.Name + "' has " + std::to_string(G.Inputs.size()) +
                               " input(s), got " + std::to_string(InputShapes.size()) + " shape(s)");
  std::vector<ValueInfo> Infos = initialValueInfos(G);
  SymbolBindings Symbols;
  for (size_t I = 0; I < G.Inputs.size(); ++I) {
    const Value &V = G.Values[G.Inputs[I]];
    Status S = bindInputShape(G, I, InputShapes[I], Symbols);
    if (!S.isOk())
      throwIfError(makeError(ErrorCode::Shape, "inferShape: ", S.message()));
    if (!InputShapes[I].isCompatible(V.Shape))
      throw ShapeError("inferShape: input '" + V.Name + "' has shape " + InputShapes[I].toString() +
                       ", the model expects " + V.Shape.toString());
    Infos[G.Inputs[I]].Shape = InputShapes[I];
  }
  throwIfError(propagateShapes(G, Infos, /*CheckDeclared=*/false));
  return Infos[Target].Shape;
}

InferRequest Model::createRequest() const {
  if (checked(Impl).ShutDown.load())
    throwIfError(Impl->shutDownError("createRequest"));
  auto R = std::make_shared<RequestImpl>(Impl);
  throwIfError(R->initStateful());
  return InferRequest(std::move(R));
}

} // namespace runtime
} // namespace optimium
