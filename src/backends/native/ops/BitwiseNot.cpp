// BitwiseNot: bitwise complement of integer tensors. The elementwise machinery is shared in common/ElementwiseUnary.h.
#include "backends/native/ops/common/ElementwiseUnary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct BitwiseNotOp {
  template <typename C> static C apply(C X, const UnaryParams &P) {
    (void)P;
    return static_cast<C>(~X);
  }
};

using BitwiseNotTypes = TypeList<int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t>;

UnaryDesc bitwisenotDesc() {
  UnaryDesc D;
  D.OpType = "BitwiseNot";
  D.Name = "bitwisenot";
  return D;
}

OpKernels bitwisenotKernels() {
  OpKernels K = unaryKernels<BitwiseNotOp>(bitwisenotDesc(), BitwiseNotTypes());
  return K;
}

OPT_REGISTER_SCHEMA(BitwiseNot, unarySchema<BitwiseNotOp>(bitwisenotDesc(), BitwiseNotTypes()));
OPT_REGISTER_KERNELS(BitwiseNot, bitwisenotKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
