// BitwiseXor: bitwise xor of integer tensors, with numpy broadcasting. The machinery is shared in common/ElementwiseBinary.h.
#include "backends/native/ops/common/ElementwiseBinary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct BitwiseXorOp {
  template <typename C> static C apply(C A, C B, const BinaryParams &) { return static_cast<C>(A ^ B); }
};

using BitwiseXorTypes = TypeList<int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t>;

BinaryDesc bitwisexorDesc() {
  BinaryDesc D;
  D.OpType = "BitwiseXor";
  D.Name = "bitwisexor";
  return D;
}

OPT_REGISTER_SCHEMA(BitwiseXor, binarySchema<BitwiseXorOp>(bitwisexorDesc(), BitwiseXorTypes()));
OPT_REGISTER_KERNELS(BitwiseXor, binaryKernels<BitwiseXorOp>(bitwisexorDesc(), BitwiseXorTypes()));

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
