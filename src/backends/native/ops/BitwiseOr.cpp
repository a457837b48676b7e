// BitwiseOr: bitwise or of integer tensors, with numpy broadcasting. The machinery is shared in common/ElementwiseBinary.h.
#include "backends/native/ops/common/ElementwiseBinary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct BitwiseOrOp {
  template <typename C> static C apply(C A, C B, const BinaryParams &) { return static_cast<C>(A | B); }
};

using BitwiseOrTypes = TypeList<int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t>;

BinaryDesc bitwiseorDesc() {
  BinaryDesc D;
  D.OpType = "BitwiseOr";
  D.Name = "bitwiseor";
  return D;
}

OPT_REGISTER_SCHEMA(BitwiseOr, binarySchema<BitwiseOrOp>(bitwiseorDesc(), BitwiseOrTypes()));
OPT_REGISTER_KERNELS(BitwiseOr, binaryKernels<BitwiseOrOp>(bitwiseorDesc(), BitwiseOrTypes()));

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
