// SpaceToDepth: moves blocksize x blocksize spatial tiles into channels (DCR order, or CRD of
// recent opsets), any element type, NCHW. Schema and kernels are shared with DepthToSpace
// (common/DepthSpace.h); this file holds the harness cases and the registration.
#include "backends/native/ops/common/DepthSpace.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

std::vector<OpTestCase> spaceToDepthCases() {
  return std::vector<OpTestCase>{
      testCase("b2", {tensorInput({1, 2, 4, 6})}, {{"blocksize", attrInt(2)}}),
      testCase("b3_i64", {typedInputs({2, 3, 3, 6}, ElementType::I64)[0]}, {{"blocksize", attrInt(3)}}),
      testCase("big", {tensorInput({2, 4, 32, 32})}, {{"blocksize", attrInt(4)}}),
      testCase("crd", {tensorInput({2, 3, 4, 6})}, {{"blocksize", attrInt(2)}, {"mode", attrString("CRD")}}),
  };
}

OPT_REGISTER_SCHEMA(SpaceToDepth, depthSpaceSchema<DepthSpaceOp::SpaceToDepth>());
OPT_REGISTER_KERNELS(SpaceToDepth, depthSpaceKernels<DepthSpaceOp::SpaceToDepth>(spaceToDepthCases));

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
