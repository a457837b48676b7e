// DepthToSpace: moves blocks of channels into blocksize x blocksize spatial tiles (DCR or CRD
// order), any element type, NCHW. Schema and kernels are shared with SpaceToDepth
// (common/DepthSpace.h); this file holds the harness cases and the registration.
#include "backends/native/ops/common/DepthSpace.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

std::vector<OpTestCase> depthToSpaceCases() {
  return std::vector<OpTestCase>{
      testCase("dcr", {tensorInput({1, 8, 2, 3})}, {{"blocksize", attrInt(2)}}),
      testCase("crd", {tensorInput({2, 8, 3, 2})}, {{"blocksize", attrInt(2)}, {"mode", attrString("CRD")}}),
      testCase("b3_u8", {typedInputs({1, 18, 2, 2}, ElementType::U8)[0]}, {{"blocksize", attrInt(3)}}),
      testCase("big", {tensorInput({2, 64, 16, 16})}, {{"blocksize", attrInt(4)}, {"mode", attrString("CRD")}}),
  };
}

OPT_REGISTER_SCHEMA(DepthToSpace, depthSpaceSchema<DepthSpaceOp::DepthToSpace>());
OPT_REGISTER_KERNELS(DepthToSpace, depthSpaceKernels<DepthSpaceOp::DepthToSpace>(depthToSpaceCases));

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
