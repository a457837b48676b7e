// Sequence and optional graph inputs/outputs (ONNX sequence(tensor), optional(tensor | sequence)).
// The public API passes tensors only; this internal entry point binds such inputs and reads such
// outputs as host tensors (the conformance runner uses it). Models that use sequences only inside
// the graph need none of this: they run through infer()/getOutput() as usual.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "Optimium/Runtime/InferRequest.h"
#include "Optimium/Runtime/Tensor.h"
#include "ir/Graph.h"

namespace optimium {
namespace runtime {
namespace detail {

/// A sequence or optional value on the host side.
struct HostContainer {
  ValueKind Kind = ValueKind::Sequence;
  ElementType Type = ElementType::Undefined; ///< Element type (Undefined: any, for empty values).
  bool HasValue = true;                      ///< Optionals: whether the element is there.
  std::vector<Tensor> Tensors;               ///< Sequence elements, or the optional's tensor.
};

/// infer() for models with sequence/optional inputs: tensor inputs by name in Tensors, the others
/// in Containers (copied into the request). Errors as infer(): InvalidArgumentError for a missing,
/// unknown or wrong-kind input, TypeError for wrong element types.
void inferWithContainers(InferRequest &R, const std::map<std::string, Tensor> &Tensors,
                         const std::map<std::string, HostContainer> &Containers);

/// Whether value Name of R's model is a sequence/optional value (false for tensors and unknown names).
bool isContainerValue(const InferRequest &R, const std::string &Name);

/// A sequence/optional graph output of the last finished run, copied out. InvalidArgumentError
/// when Name is not such an output, InvalidOperationError when no run has finished.
HostContainer getContainerOutput(const InferRequest &R, const std::string &Name);

} // namespace detail
} // namespace runtime
} // namespace optimium
