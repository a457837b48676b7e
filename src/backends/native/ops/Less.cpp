// Less: elementwise <, a bool tensor, with numpy broadcasting. The machinery is shared in common/ElementwiseBinary.h.
#include "backends/native/ops/common/ElementwiseBinary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct LessOp {
  template <typename C> static bool apply(C A, C B, const BinaryParams &) { return A < B; }
};

using LessTypes = TypeList<float, double, float16, bfloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t>;

BinaryDesc lessDesc() {
  BinaryDesc D;
  D.OpType = "Less";
  D.Name = "less";
  D.ExtraCases = [] {
    const TestInput A = valuesInput({2, 6}, {1, 2, 3, 4, 5, 6, 3, 3, -1, 0, 2, 9}, ElementType::F32, false);
    const TestInput B = valuesInput({6}, {1, 3, 3, 2, 5, 0}, ElementType::F32, false);
    const TestInput IA = valuesInput({2, 6}, {1, 2, 3, 4, 5, 6, 3, 3, -1, 0, 2, 9}, ElementType::I64, false);
    const TestInput IB = valuesInput({6}, {1, 3, 3, 2, 5, 0}, ElementType::I64, false);
    return std::vector<OpTestCase>{testCase("ties", {A, B}), testCase("ties_i64", {IA, IB})};
  };
  return D;
}

OPT_REGISTER_SCHEMA(Less, binarySchema<LessOp>(lessDesc(), LessTypes()));
OPT_REGISTER_KERNELS(Less, binaryKernels<LessOp>(lessDesc(), LessTypes()));

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
