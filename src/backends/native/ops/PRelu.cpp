// PRelu: x < 0 ? slope * x : x, with slope unidirectionally broadcast to x (the output has x's
// shape). Floats, and i32/i64/u32/u64 as opset 16 allows.
#include "backends/native/ops/common/ElementwiseBinary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct PReluOp {
  template <typename C> static C apply(C X, C Slope, const BinaryParams &) {
    return X < C(0) ? static_cast<C>(Slope * X) : X;
  }
};

using PReluTypes = TypeList<float, double, float16, bfloat16, int32_t, int64_t, uint32_t, uint64_t>;

BinaryDesc preluDesc() {
  BinaryDesc D;
  D.OpType = "PRelu";
  D.Name = "prelu";
  D.Unidirectional = true;
  D.ExtraCases = [] {
    return std::vector<OpTestCase>{
        testCase("channel_slope", {tensorInput({2, 3, 4, 5}), tensorInput({3, 1, 1})}),
        testCase("scalar_slope", {tensorInput({3, 4}), tensorInput({1})}),
    };
  };
  return D;
}

OPT_REGISTER_SCHEMA(PRelu, binarySchema<PReluOp>(preluDesc(), PReluTypes()));
OPT_REGISTER_KERNELS(PRelu, binaryKernels<PReluOp>(preluDesc(), PReluTypes()));

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
