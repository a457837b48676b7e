// BitShift: elementwise shift; direction "LEFT" or "RIGHT" (required). Unsigned integers; signed
// ones from opset 28 (arithmetic right shift, wrapping left shift). A shift that is negative or at
// least the bit width gives what the sign extension alone produces: -1 for a right shift of a
// negative value, 0 otherwise (C++ leaves such shifts undefined).
#include "backends/native/ops/common/ElementwiseBinary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

template <typename C> bool isNegative(C V) { return std::is_signed<C>::value && V < C(0); }

struct BitShiftOp {
  template <typename C> static C apply(C A, C B, const BinaryParams &P) {
    const bool Left = P.Mode != 0;
    if (isNegative(B) || static_cast<uint64_t>(B) >= sizeof(C) * 8)
      return !Left && isNegative(A) ? static_cast<C>(-1) : C(0);
    using U = typename std::make_unsigned<C>::type;
    if (Left)
      return static_cast<C>(static_cast<U>(static_cast<U>(A) << B));
    return static_cast<C>(A >> B); // arithmetic for signed types (GCC/Clang, and C++20)
  }
};

using BitShiftTypes = TypeList<uint8_t, uint16_t, uint32_t, uint64_t, int8_t, int16_t, int32_t, int64_t>;

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
  D.Validate = [](const ShapeContext &Ctx) -> Status {
    const ElementType T = Ctx.Inputs[0].Type;
    const bool Signed = T == ElementType::I8 || T == ElementType::I16 || T == ElementType::I32 || T == ElementType::I64;
    if (Signed && Ctx.N.OpsetVersion > 0 && Ctx.N.OpsetVersion < 28)
      return Ctx.error(ErrorCode::Type, "input 0 has element type ", toString(T),
                       "; signed integers need opset 28 or newer (node opset ", Ctx.N.OpsetVersion, ")");
    return Status::ok();
  };
  D.IntLow = -70, D.IntHigh = 70;
  D.DefaultOpset = 28;
  D.DefaultAttrs = {{"direction", attrString("LEFT")}};
  D.ExtraCases = [] {
    const TestInput A = rangeInput({3, 4}, ElementType::U8, 0, 255);
    const TestInput B = rangeInput({4}, ElementType::U8, 0, 9);
    const TestInput SA = rangeInput({3, 4}, ElementType::I32, -1000, 1000);
    const TestInput SB = rangeInput({4}, ElementType::I32, -3, 40);
    return std::vector<OpTestCase>{
        testCase("right", {A, B}, {{"direction", attrString("RIGHT")}}),
        testCase("left", {A, B}, {{"direction", attrString("LEFT")}}),
        withOpset(testCase("right_signed", {SA, SB}, {{"direction", attrString("RIGHT")}}), 28),
        withOpset(testCase("left_signed", {SA, SB}, {{"direction", attrString("LEFT")}}), 28),
    };
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
