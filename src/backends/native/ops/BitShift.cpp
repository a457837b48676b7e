// BitShift: elementwise shift of unsigned integers; direction "LEFT" or "RIGHT" (required).
// Shifting by the bit width or more gives 0 (C++ leaves it undefined).
#include "backends/native/ops/common/ElementwiseBinary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct BitShiftOp {
  template <typename C> static C apply(C A, C B, const BinaryParams &P) {
    if (B >= static_cast<C>(sizeof(C) * 8))
      return C(0);
    return static_cast<C>(P.Mode ? A << B : A >> B);
  }
};

using BitShiftTypes = TypeList<uint8_t, uint16_t, uint32_t, uint64_t>;

BinaryDesc bitshiftDesc() {
  BinaryDesc D;
  D.OpType = "BitShift";
  D.Name = "bitshift";
  D.Params = [](const Node &N) -> Result<BinaryParams> {
    if (!N.hasAttr("direction"))
      return makeError(ErrorCode::Model, N.describe(), ": required attribute 'direction' is missing");
    ASSIGN_OR_RETURN(const std::string Dir, N.getString("direction", ""));
    if (Dir != "LEFT" && Dir != "RIGHT")
      return makeError(ErrorCode::Model, N.describe(), ": attribute 'direction' must be \"LEFT\" or \"RIGHT\", got \"",
                       Dir, "\"");
    BinaryParams P;
    P.Mode = Dir == "LEFT";
    return P;
  };
  D.IntLow = 0, D.IntHigh = 70;
  D.DefaultAttrs = {{"direction", attrString("LEFT")}};
  D.ExtraCases = [] {
    const TestInput A = rangeInput({3, 4}, ElementType::U8, 0, 255);
    const TestInput B = rangeInput({4}, ElementType::U8, 0, 9);
    return std::vector<OpTestCase>{testCase("right", {A, B}, {{"direction", attrString("RIGHT")}}),
                                   testCase("left", {A, B}, {{"direction", attrString("LEFT")}})};
  };
  return D;
}

OPT_REGISTER_SCHEMA(BitShift, binarySchema<BitShiftOp>(bitshiftDesc(), BitShiftTypes()));
OPT_REGISTER_KERNELS(BitShift, binaryKernels<BitShiftOp>(bitshiftDesc(), BitShiftTypes()));

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
