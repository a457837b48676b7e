// BitwiseAnd: bitwise and of integer tensors, with numpy broadcasting. The machinery is shared in common/ElementwiseBinary.h.
#include "backends/native/ops/common/ElementwiseBinary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct BitwiseAndOp {
  template <typename C> static C apply(C A, C B, const BinaryParams &) { return static_cast<C>(A & B); }
};

using BitwiseAndTypes = TypeList<int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t>;

BinaryDesc bitwiseandDesc() {
  BinaryDesc D;
  D.OpType = "BitwiseAnd";
  D.Name = "bitwiseand";
  return D;
}

OPT_REGISTER_SCHEMA(BitwiseAnd, binarySchema<BitwiseAndOp>(bitwiseandDesc(), BitwiseAndTypes()));
OPT_REGISTER_KERNELS(BitwiseAnd, binaryKernels<BitwiseAndOp>(bitwiseandDesc(), BitwiseAndTypes()));

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
