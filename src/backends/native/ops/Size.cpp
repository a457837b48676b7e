// Size: the input's element count as an i64 scalar, any element type; folded at load when the
// input's shape is constant.
#include "backends/native/ops/common/Indexing.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

Status computeSize(const Node &, const std::vector<TensorView> &In, const std::vector<TensorView> &Out,
                   const Parallel &) {
  *Out[0].data<int64_t>() = static_cast<int64_t>(In[0].elementCount());
  return Status::ok();
}

OpSchema sizeSchema() {
  OpSchema S;
  S.OpType = "Size";
  S.MinInputs = S.MaxInputs = 1;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    Ctx.Outputs[0].Type = ElementType::I64;
    Ctx.Outputs[0].Shape = TensorShape();
    return foldIfConstant(Ctx, computeSize, /*ShapeOnlyMask=*/1u);
  };
  return S;
}

OpKernels sizeKernels() {
  OpKernels K;
  K.OpType = "Size";
  K.Variants.push_back(computeVariant("any_size__ref", 0, computeSize));
  K.TestCases = [] {
    return std::vector<OpTestCase>{
        testCase("rank3", {tensorInput({2, 3, 4})}),
        testCase("scalar", {tensorInput({})}),
        testCase("empty", typedInputs({0, 3}, ElementType::I64)),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(Size, sizeSchema());
OPT_REGISTER_KERNELS(Size, sizeKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
