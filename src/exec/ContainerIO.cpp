// Binding and reading sequence/optional graph values through the request (see ContainerIO.h).
#include "exec/ContainerIO.h"

#include <cstring>

#include "Optimium/Runtime/Exceptions.h"
#include "core/ErrorConversion.h"
#include "exec/Request.h"

namespace optimium {
namespace runtime {
namespace detail {

namespace {

RequestImpl &checkedImpl(const InferRequest &R, const char *What) {
  if (!R.impl())
    throw InvalidStateError(std::string(What) + ": this InferRequest is empty");
  return *R.impl();
}

std::shared_ptr<ContainerValue> toContainer(const Value &V, const HostContainer &H) {
  if (unwrapOptional(H.Kind) != unwrapOptional(V.Kind) || (isOptionalKind(H.Kind) && !isOptionalKind(V.Kind)))
    throw InvalidArgumentError("input '" + V.Name + "' is a " + toString(V.Kind) + " value, given a " +
                               toString(H.Kind));
  auto C = makeContainer(V.Kind, H.Type != ElementType::Undefined ? H.Type : V.Type);
  C->HasValue = H.HasValue;
  if (!H.HasValue)
    return C;
  for (const Tensor &T : H.Tensors) {
    if (!T.impl() || (!T.impl()->data() && T.getElementCount() != 0))
      throw InvalidArgumentError("input '" + V.Name + "' holds an empty or released tensor");
    if (T.getType() != C->Type)
      throw TypeError("input '" + V.Name + "' holds a " + toString(T.getType()) + " tensor, the model expects " +
                      toString(C->Type) + " elements");
    TensorView View;
    View.Type = T.getType();
    View.Dims = T.impl()->Dims;
    View.Data = T.impl()->data();
    Result<OwnedTensor> Copy = copyToOwned(View);
    throwIfError(Copy.status());
    C->Tensors.push_back(std::move(Copy).value());
  }
  if (unwrapOptional(V.Kind) == ValueKind::Tensor && C->Tensors.size() != 1)
    throw InvalidArgumentError("input '" + V.Name + "' is an optional tensor with a value: give exactly one tensor");
  return C;
}

} // namespace

void inferWithContainers(InferRequest &R, const std::map<std::string, Tensor> &Tensors,
                         const std::map<std::string, HostContainer> &Containers) {
  RequestImpl &Impl = checkedImpl(R, "inferWithContainers");
  const ModelImpl &M = *Impl.M;
  const Graph &G = *M.G;
  for (const auto &KV : Containers) {
    const int V = G.findValue(KV.first);
    if (V < 0 || !G.Values[V].IsGraphInput || !isContainerKind(G.Values[V].Kind))
      throw InvalidArgumentError("model '" + M.Name + "' has no sequence/optional input named '" + KV.first + "'");
  }
  std::vector<std::shared_ptr<ContainerValue>> Bound(G.Inputs.size());
  std::vector<Tensor> Ordered;
  for (size_t UI : M.UserInputs) {
    const Value &V = G.Values[G.Inputs[UI]];
    if (isContainerKind(V.Kind)) {
      auto It = Containers.find(V.Name);
      if (It == Containers.end())
        throw InvalidArgumentError("input '" + V.Name + "' (a " + std::string(toString(V.Kind)) + ") is missing");
      Bound[UI] = toContainer(V, It->second);
      Ordered.push_back(Tensor());
      continue;
    }
    auto It = Tensors.find(V.Name);
    if (It == Tensors.end())
      throw InvalidArgumentError("input '" + V.Name + "' of model '" + M.Name + "' is missing");
    Ordered.push_back(It->second);
  }
  {
    std::lock_guard<std::mutex> Lock(Impl.Mu);
    if (Impl.State == InferStatus::Running)
      throw InvalidOperationError("inferWithContainers: the request is already running; wait() for it first");
    Impl.ContainerInputs = std::move(Bound);
  }
  throwIfError(Impl.start(std::move(Ordered)));
}

bool isContainerValue(const InferRequest &R, const std::string &Name) {
  if (!R.impl())
    return false;
  const Graph &G = *R.impl()->M->G;
  const int V = G.findValue(Name);
  return V >= 0 && isContainerKind(G.Values[V].Kind);
}

HostContainer getContainerOutput(const InferRequest &R, const std::string &Name) {
  RequestImpl &Impl = checkedImpl(R, "getContainerOutput");
  const Graph &G = *Impl.M->G;
  const int V = G.findValue(Name);
  if (V < 0 || !G.Values[V].IsGraphOutput || !isContainerKind(G.Values[V].Kind))
    throw InvalidArgumentError("getContainerOutput: model '" + Impl.M->Name + "' has no sequence/optional output '" +
                               Name + "'");
  std::lock_guard<std::mutex> Lock(Impl.Mu);
  if (Impl.State != InferStatus::Ready || !Impl.HasRun || V >= static_cast<int>(Impl.Containers.size()) ||
      !Impl.Containers[V])
    throw InvalidOperationError("getContainerOutput: no finished run has produced '" + Name + "'");
  const ContainerValue &C = *Impl.Containers[V];
  HostContainer H;
  H.Kind = C.Kind;
  H.Type = C.Type;
  H.HasValue = C.HasValue;
  for (const OwnedTensor &E : C.Tensors) {
    Tensor T = tensor(E.View.Type, TensorShape::fromDims(E.View.Dims));
    const size_t Bytes = E.View.elementCount() * getElementSize(E.View.Type);
    if (Bytes)
      std::memcpy(T.data(), E.View.Data, Bytes);
    H.Tensors.push_back(std::move(T));
  }
  return H;
}

} // namespace detail
} // namespace runtime
} // namespace optimium
