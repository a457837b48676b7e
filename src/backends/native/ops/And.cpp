// And: logical and of bool tensors, with numpy broadcasting. The machinery is shared in common/ElementwiseBinary.h.
#include "backends/native/ops/common/ElementwiseBinary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct AndOp {
  template <typename C> static bool apply(C A, C B, const BinaryParams &) { return A && B; }
};

using AndTypes = TypeList<bool>;

BinaryDesc andDesc() {
  BinaryDesc D;
  D.OpType = "And";
  D.Name = "and";
  D.ExtraCases = [] {
    const TestInput A = valuesInput({4}, {0, 0, 1, 1}, ElementType::Bool, false);
    const TestInput B = valuesInput({4}, {0, 1, 0, 1}, ElementType::Bool, false);
    const TestInput C = valuesInput({2, 1}, {0, 1}, ElementType::Bool, false);
    return std::vector<OpTestCase>{testCase("truth_table", {A, B}), testCase("broadcast", {A, C})};
  };
  return D;
}

OPT_REGISTER_SCHEMA(And, binarySchema<AndOp>(andDesc(), AndTypes()));
OPT_REGISTER_KERNELS(And, binaryKernels<AndOp>(andDesc(), AndTypes()));

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
