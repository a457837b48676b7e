// Shared helpers of the unit tests: paths of test data, .npy reading, loading models from bytes.
#pragma once

#include <random>
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

/// Loads a model from ONNX bytes with fusion on or off (EnableMemoryOptimization: off runs every
/// ONNX node) and a thread count (0: the runtime's default).
/// loadModel over Bytes, which it does not copy: keep Bytes alive as long as the model.
optimium::runtime::Model loadModelBytes(const std::string &Bytes, bool MemOpt = true, int Threads = 0);

/// Deterministic test data: Scale * sin(Freq i + Phase) + Offset for i in [0, N).
std::vector<float> wave(size_t N, float Scale, float Phase = 0.0f, float Freq = 0.37f, float Offset = 0.0f);

/// Deterministic random test data: N floats uniform in [Lo, Hi) from std::mt19937(Seed), in order.
/// Inline so that test binaries not linking TestUtil.cpp (the sim tests) can use it.
inline std::vector<float> randomFloats(size_t N, unsigned Seed, float Lo = -1.0f, float Hi = 1.0f) {
  std::mt19937 Gen(Seed);
  std::uniform_real_distribution<float> Dist(Lo, Hi);
  std::vector<float> V(N);
  for (float &X : V)
    X = Dist(Gen);
  return V;
}

/// The op types of a loaded model, in execution order.
std::vector<std::string> opTypeList(const optimium::runtime::Model &M);

} // namespace optimium_test
