// Equal: elementwise ==, a bool tensor (bool, integer, float and, from opset 19, string inputs), with
// numpy broadcasting. The machinery is shared in common/ElementwiseBinary.h.
#include "backends/native/ops/common/ElementwiseBinary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct EqualOp {
  template <typename C> static bool apply(C A, C B, const BinaryParams &) { return A == B; }
};

using EqualTypes = TypeList<bool, float, double, float16, bfloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t>;

BinaryDesc equalDesc() {
  BinaryDesc D;
  D.OpType = "Equal";
  D.Name = "equal";
  D.ExtraCases = [] {
    const TestInput A = valuesInput({2, 6}, {1, 2, 3, 4, 5, 6, 3, 3, -1, 0, 2, 9}, ElementType::F32, false);
    const TestInput B = valuesInput({6}, {1, 3, 3, 2, 5, 0}, ElementType::F32, false);
    const TestInput IA = valuesInput({2, 6}, {1, 2, 3, 4, 5, 6, 3, 3, -1, 0, 2, 9}, ElementType::I64, false);
    const TestInput IB = valuesInput({6}, {1, 3, 3, 2, 5, 0}, ElementType::I64, false);
    return std::vector<OpTestCase>{testCase("ties", {A, B}), testCase("ties_i64", {IA, IB})};
  };
  return D;
}

using EqualTypesWithString = TypeList<bool, float, double, float16, bfloat16, int8_t, int16_t, int32_t, int64_t,
                                      uint8_t, uint16_t, uint32_t, uint64_t, std::string>;

OpKernels equalKernels() {
  OpKernels K = binaryKernels<EqualOp>(equalDesc(), EqualTypes());
  // Strings (std::string objects): no harness case, since harness buffers hold raw bytes.
  pushBinaryVariants<EqualOp>(K.Variants, equalDesc(), TypeList<std::string>());
  return K;
}

OPT_REGISTER_SCHEMA(Equal, binarySchema<EqualOp>(equalDesc(), EqualTypesWithString()));
OPT_REGISTER_KERNELS(Equal, equalKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
