// Xor: logical xor of bool tensors, with numpy broadcasting. The machinery is shared in common/ElementwiseBinary.h.
#include "backends/native/ops/common/ElementwiseBinary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct XorOp {
  template <typename C> static bool apply(C A, C B, const BinaryParams &) { return A != B; }
};

using XorTypes = TypeList<bool>;

BinaryDesc xorDesc() {
  BinaryDesc D;
  D.OpType = "Xor";
  D.Name = "xor";
  D.ExtraCases = [] {
    const TestInput A = valuesInput({4}, {0, 0, 1, 1}, ElementType::Bool, false);
    const TestInput B = valuesInput({4}, {0, 1, 0, 1}, ElementType::Bool, false);
    const TestInput C = valuesInput({2, 1}, {0, 1}, ElementType::Bool, false);
    return std::vector<OpTestCase>{testCase("truth_table", {A, B}), testCase("broadcast", {A, C})};
  };
  return D;
}

OPT_REGISTER_SCHEMA(Xor, binarySchema<XorOp>(xorDesc(), XorTypes()));
OPT_REGISTER_KERNELS(Xor, binaryKernels<XorOp>(xorDesc(), XorTypes()));

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
