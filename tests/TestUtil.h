// Shared helpers of the unit tests: paths of test data and .npy reading.
#pragma once

#include <string>
#include <vector>

#include "Optimium/Runtime.h"

namespace optimium_test {

/// Absolute path of a file in the source tree, e.g. dataPath("tests/models/mlp/model.onnx").
std::string dataPath(const std::string &Relative);

/// Reads a .npy file into a runtime tensor (owning a copy). Throws std::runtime_error on failure.
optimium::runtime::Tensor readNpy(const std::string &Path);

/// Max abs difference between two float32 tensors of the same element count.
double maxAbsDiff(const optimium::runtime::Tensor &A, const optimium::runtime::Tensor &B);

} // namespace optimium_test
