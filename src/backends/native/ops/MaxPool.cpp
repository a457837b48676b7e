// MaxPool (f32): kernel_shape, strides, pads, auto_pad, dilations, ceil_mode. storage_order only
// affects the optional Indices output, which the native backend does not produce (ModelError).
#include <cmath>

#include "backends/native/ops/common/Pooling.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct MaxReducer {
  float init() const { return -INFINITY; }
  float add(float Acc, float V) const { return V > Acc || std::isnan(V) ? V : Acc; }
  float finish(float Acc, int64_t, int64_t) const { return Acc; }
};

Status checkMaxPoolAttrs(const Node &N) {
  ASSIGN_OR_RETURN(const int64_t StorageOrder, N.getInt("storage_order", 0));
  if (StorageOrder != 0 && StorageOrder != 1)
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'storage_order' value ", StorageOrder,
                     " must be 0 or 1");
  if (N.Outputs.size() > 1 && N.Outputs[1] >= 0)
    return makeError(ErrorCode::Model, N.describe(),
                     ": the optional 'Indices' output of MaxPool is not supported by the native backend");
  return Status::ok();
}

OpSchema maxPoolSchema() {
  OpSchema S;
  S.OpType = "MaxPool";
  S.MinInputs = S.MaxInputs = 1;
  S.MinOutputs = 1;
  S.MaxOutputs = 2;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(checkMaxPoolAttrs(Ctx.N));
    return inferPool(Ctx, /*AllowCeilMode=*/true);
  };
  return S;
}

KernelVariant maxPoolVariant(const std::string &Name, int Priority, bool Fast2D) {
  const auto Supports = [Fast2D](const KernelCreateInfo &I) {
    return inputIs(I, 0, ElementType::F32) && (!Fast2D || I.Inputs[0].Shape.getRank() == 4);
  };
  return {Name, Priority, Supports, [Name, Fast2D](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
            RETURN_IF_ERROR(checkMaxPoolAttrs(I.N));
            ASSIGN_OR_RETURN(WindowAttrs W, parseWindowAttrs(I.N, I.Inputs[0].Shape.getRank() - 2, nullptr, true));
            return makeKernel<PoolKernel<MaxReducer>>(Name, std::move(W), MaxReducer{}, Fast2D);
          }};
}

OpKernels maxPoolKernels() {
  OpKernels K;
  K.OpType = "MaxPool";
  K.Variants.push_back(maxPoolVariant("f32_maxpool__ref", 0, false));
  K.Variants.push_back(maxPoolVariant("f32_maxpool__2d", 10, true));
  K.TestCases = [] {
    std::vector<OpTestCase> Cases = poolingCases();
    Cases.push_back(testCase("storage_order", {tensorInput({1, 1, 4, 4})},
                             {{"kernel_shape", attrInts({2, 2})}, {"storage_order", attrInt(1)}}));
    return Cases;
  };
  return K;
}

OPT_REGISTER_SCHEMA(MaxPool, maxPoolSchema());
OPT_REGISTER_KERNELS(MaxPool, maxPoolKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
