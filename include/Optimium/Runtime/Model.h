// A loaded model: metadata and the factory of InferRequests. Copies share the same model.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "Optimium/Runtime/Attribute.h"
#include "Optimium/Runtime/Export.h"
#include "Optimium/Runtime/InferRequest.h"
#include "Optimium/Runtime/Options.h"
#include "Optimium/Runtime/Shape.h"
#include "Optimium/Runtime/TensorInfo.h"
#include "Optimium/Runtime/Utils/ArrayRef.h"
#include "Optimium/Runtime/Utils/StringRef.h"

namespace optimium {
namespace runtime {

struct ModelImpl;

class OPTIMIUM_RT_API Model {
public:
  Model() {}

  std::string getName() const;
  ArrayRef<StringRef> getInputNames() const;
  ArrayRef<StringRef> getOutputNames() const;
  /// InvalidArgumentError naming the tensor when it does not exist.
  const TensorInfo &getTensorInfo(StringRef Name) const;
  const TensorInfo &getInputTensorInfo(size_t Index) const;
  const TensorInfo &getOutputTensorInfo(size_t Index) const;
  /// Every tensor of the model: inputs, outputs, intermediates and constants.
  ArrayRef<TensorInfo> getTensors() const;
  ArrayRef<OpInfo> getOperations() const;
  /// Whether any input has a symbolic dimension.
  bool isDynamic() const;

  bool hasAttribute(StringRef Key) const;
  /// Empty Attribute when the key does not exist.
  Attribute getAttribute(StringRef Key) const;
  ArrayRef<StringRef> getAttributeKeys() const;

  /// Shape of tensor Name given the input shapes, by input name or in input order.
  TensorShape inferShape(StringRef Name, const std::map<std::string, TensorShape> &InputShapes) const;
  TensorShape inferShape(StringRef Name, ArrayRef<TensorShape> InputShapes) const;

  InferRequest createRequest() const;

  explicit operator bool() const { return static_cast<bool>(Impl); }

  // Internal.
  explicit Model(std::shared_ptr<ModelImpl> I) : Impl(std::move(I)) {}
  const std::shared_ptr<ModelImpl> &impl() const { return Impl; }

private:
  std::shared_ptr<ModelImpl> Impl;
};

/// Loads a model from a path: an .onnx file, or a folder holding model.onnx (external weight
/// files beside it are read). IOError when the path does not exist, ContainerError when it is
/// not a model, ModelError when the model is invalid or uses an unsupported operation.
OPTIMIUM_RT_API Model loadModel(const std::string &Path, const ModelLoadOptions &Options = {});
/// Loads a model from the bytes of an ONNX file. The buffer is NOT copied: keep it alive for
/// the lifetime of the Model and every request created from it.
OPTIMIUM_RT_API Model loadModel(const uint8_t *Data, size_t Size, const ModelLoadOptions &Options = {});

} // namespace runtime
} // namespace optimium
