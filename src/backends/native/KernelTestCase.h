// Test cases of the kernel harness (tests/backends/native/KernelHarnessTest.cpp), which runs every
// variant of an op on them and checks it against the op's reference variant. Each op file declares
// its cases next to its kernels (OpKernels::TestCases in KernelRegistry.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/OpSchema.h"

namespace optimium {
namespace runtime {
namespace detail {

/// One input of a harness test case: random values (uniform in [Low, High]) unless Values is set.
struct TestInput {
  ElementType Type = ElementType::F32;
  std::vector<int64_t> Dims;
  std::vector<double> Values;
  bool Constant = false; ///< Passed as a constant at create time (weights, shape tensors).
  /// A Constant whose bytes lie in a file the harness maps while it creates kernels, as a model's
  /// constants lie in the file the loader maps (core/SourceRelease.h's locateSourceRange finds them).
  bool InFile = false;
  bool Omitted = false;  ///< An omitted optional input.
  double Low = -1.0, High = 1.0;
  /// A sequence/optional input: Kind != Tensor, one entry of Elements per element (its dims; an
  /// optional without entries is empty). Type is the element type; Dims is unused.
  ValueKind Kind = ValueKind::Tensor;
  std::vector<std::vector<int64_t>> Elements;
};

struct OpTestCase {
  std::string Label;
  std::map<std::string, AttrValue> Attrs;
  std::vector<TestInput> Inputs;
  int NumOutputs = 1;
  double Tolerance = 1e-4; ///< Max abs diff relative to max(1, |reference|).
  int OpsetVersion = 0;    ///< Opset the node is built with; 0 = the harness default (17).
};

} // namespace detail
} // namespace runtime
} // namespace optimium
