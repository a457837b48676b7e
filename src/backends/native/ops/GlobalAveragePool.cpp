// GlobalAveragePool (f32): [N, C, spatial...] -> [N, C, 1, ...], the mean over all spatial dims.
#include "backends/native/ops/common/OpUtil.h"
#include "backends/native/ops/common/MathApprox.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

OpSchema globalAveragePoolSchema() {
  OpSchema S;
  S.OpType = "GlobalAveragePool";
  S.MinInputs = S.MaxInputs = 1;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireInputType(Ctx, 0, {ElementType::F32}));
    const TensorShape &In = Ctx.Inputs[0].Shape;
    if (In.getRank() < 3)
      return Ctx.error(ErrorCode::Shape, "input must be [N, C, spatial...], got ", In.toString());
    std::vector<Expr> Dims{In[0], In[1]};
    Dims.resize(In.getRank(), Expr(1));
    Ctx.Outputs[0].Type = ElementType::F32;
    Ctx.Outputs[0].Shape = TensorShape(std::move(Dims));
    return Status::ok();
  };
  return S;
}

Status globalAverage(const KernelContext &Ctx, bool Parallel) {
  const TensorView &X = Ctx.Inputs[0], &Y = Ctx.Outputs[0];
  if (X.rank() < 3 || Y.elementCount() != static_cast<size_t>(X.Dims[0] * X.Dims[1]))
    return runError("globalaveragepool", "unexpected shapes ", joinInts(X.Dims), " -> ", joinInts(Y.Dims));
  const int64_t Planes = X.Dims[0] * X.Dims[1], Size = product(X.Dims, 2, X.rank());
  const float *In = X.data<float>();
  float *Out = Y.data<float>();
  const auto Body = [&](size_t Lo, size_t Hi) {
    for (size_t P = Lo; P < Hi; ++P) {
      const float *Plane = In + static_cast<int64_t>(P) * Size;
      if (Parallel) {
        // Independent partial sums: one float accumulator serialized on the add latency (EfficientNet-B0's
        // 17 GAPs took 1.63 ms of 16).
        const float Sum = approx::sumF32(Plane, static_cast<size_t>(Size));
        Out[P] = Sum / static_cast<float>(Size);
      } else {
        double Sum = 0;
        for (int64_t I = 0; I < Size; ++I)
          Sum += Plane[I];
        Out[P] = static_cast<float>(Sum / static_cast<double>(Size));
      }
    }
  };
  if (Parallel)
    Ctx.Par.forRange(static_cast<size_t>(Planes), std::max<int64_t>(1, 16384 / std::max<int64_t>(Size, 1)), Body);
  else
    Body(0, static_cast<size_t>(Planes));
  return Status::ok();
}

OpKernels globalAveragePoolKernels() {
  OpKernels K;
  K.OpType = "GlobalAveragePool";
  const auto F32 = [](const KernelCreateInfo &I) { return inputIs(I, 0, ElementType::F32); };
  K.Variants.push_back({"f32_globalaveragepool__ref", 0, F32, [](const KernelCreateInfo &) {
                          return makeKernel<FunctionKernel>([](const KernelContext &C) { return globalAverage(C, false); });
                        }});
  K.Variants.push_back({"f32_globalaveragepool__parallel", 10, F32, [](const KernelCreateInfo &) {
                          return makeKernel<FunctionKernel>([](const KernelContext &C) { return globalAverage(C, true); });
                        }});
  K.TestCases = [] {
    return std::vector<OpTestCase>{
        testCase("2d", {tensorInput({2, 3, 5, 5})}),
        testCase("1d", {tensorInput({1, 4, 7})}),
        testCase("3d", {tensorInput({1, 2, 3, 4, 5})}),
        testCase("many_planes", {tensorInput({2, 64, 7, 7})}),
        testCase("large_planes", {tensorInput({1, 3, 112, 112})}),
        testCase("plane_tails", {tensorInput({1, 5, 9, 9})}),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(GlobalAveragePool, globalAveragePoolSchema());
OPT_REGISTER_KERNELS(GlobalAveragePool, globalAveragePoolKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
