// Or: logical or of bool tensors, with numpy broadcasting. The machinery is shared in common/ElementwiseBinary.h.
#include "backends/native/ops/common/ElementwiseBinary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct OrOp {
  template <typename C> static bool apply(C A, C B, const BinaryParams &) { return A || B; }
};

using OrTypes = TypeList<bool>;

BinaryDesc orDesc() {
  BinaryDesc D;
  D.OpType = "Or";
  D.Name = "or";
  D.ExtraCases = [] {
    const TestInput A = valuesInput({4}, {0, 0, 1, 1}, ElementType::Bool, false);
    const TestInput B = valuesInput({4}, {0, 1, 0, 1}, ElementType::Bool, false);
    const TestInput C = valuesInput({2, 1}, {0, 1}, ElementType::Bool, false);
    return std::vector<OpTestCase>{testCase("truth_table", {A, B}), testCase("broadcast", {A, C})};
  };
  return D;
}

OPT_REGISTER_SCHEMA(Or, binarySchema<OrOp>(orDesc(), OrTypes()));
OPT_REGISTER_KERNELS(Or, binaryKernels<OrOp>(orDesc(), OrTypes()));

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
