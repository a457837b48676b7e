// AveragePool (f32): kernel_shape, strides, pads, auto_pad, ceil_mode, count_include_pad and
// dilations (opset 19). With count_include_pad the divisor counts padding positions but not the
// ceil_mode overhang past the end padding (as ONNX Runtime does).
#include "backends/native/ops/common/Pooling.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct AverageReducer {
  bool CountIncludePad = false;
  float init() const { return 0.0f; }
  float add(float Acc, float V) const { return Acc + V; }
  float finish(float Acc, int64_t Valid, int64_t Padded) const {
    const int64_t Count = CountIncludePad ? Padded : Valid;
    return Count > 0 ? Acc / static_cast<float>(Count) : 0.0f;
  }
};

Result<AverageReducer> parseReducer(const Node &N) {
  ASSIGN_OR_RETURN(const int64_t Include, N.getInt("count_include_pad", 0));
  if (Include != 0 && Include != 1)
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'count_include_pad' value ", Include,
                     " must be 0 or 1");
  AverageReducer R;
  R.CountIncludePad = Include == 1;
  return R;
}

OpSchema averagePoolSchema() {
  OpSchema S;
  S.OpType = "AveragePool";
  S.MinInputs = S.MaxInputs = 1;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    ASSIGN_OR_RETURN(const AverageReducer R, parseReducer(Ctx.N));
    (void)R;
    return inferPool(Ctx, /*AllowCeilMode=*/true);
  };
  return S;
}

KernelVariant averagePoolVariant(const std::string &Name, int Priority, bool Fast2D) {
  const auto Supports = [Fast2D](const KernelCreateInfo &I) {
    return inputIs(I, 0, ElementType::F32) && (!Fast2D || I.Inputs[0].Shape.getRank() == 4);
  };
  return {Name, Priority, Supports, [Name, Fast2D](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
            ASSIGN_OR_RETURN(const AverageReducer R, parseReducer(I.N));
            ASSIGN_OR_RETURN(WindowAttrs W, parseWindowAttrs(I.N, I.Inputs[0].Shape.getRank() - 2, nullptr, true));
            return makeKernel<PoolKernel<AverageReducer>>(Name, std::move(W), R, Fast2D);
          }};
}

OpKernels averagePoolKernels() {
  OpKernels K;
  K.OpType = "AveragePool";
  K.Variants.push_back(averagePoolVariant("f32_averagepool__ref", 0, false));
  K.Variants.push_back(averagePoolVariant("f32_averagepool__2d", 10, true));
  K.TestCases = [] {
    std::vector<OpTestCase> Cases = poolingCases();
    // Every window case again with the padding counted in the divisor.
    const size_t N = Cases.size();
    for (size_t I = 0; I < N; ++I) {
      OpTestCase C = Cases[I];
      C.Label += "_count_include_pad";
      C.Attrs["count_include_pad"] = attrInt(1);
      Cases.push_back(C);
    }
    return Cases;
  };
  return K;
}

OPT_REGISTER_SCHEMA(AveragePool, averagePoolSchema());
OPT_REGISTER_KERNELS(AveragePool, averagePoolKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
