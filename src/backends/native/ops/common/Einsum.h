// Einsum equation parsing: every operand's dims and the output's become labels (letters, and
// numbered ellipsis labels broadcast across operands, right-aligned); shared by the schema and
// the kernels.
#pragma once

#include <string>
#include <vector>

#include "backends/native/ops/common/Indexing.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

struct EinsumSpec {
  /// Labels per input dim and per output dim: 'a'..'z', 'A'..'Z', or 256 + k for ellipsis dim k.
  std::vector<std::vector<int>> Inputs;
  std::vector<int> Output;
  /// Every label, output labels first, then the summed ones.
  std::vector<int> AllLabels;
};

/// Parses Equation for inputs of the given ranks; ModelError naming the node on bad syntax.
Result<EinsumSpec> parseEinsum(const Node &N, const std::vector<size_t> &Ranks);

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
