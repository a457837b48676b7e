// ai.onnx.ml Scaler: Y = (X - offset) * scale, float output; offset and scale hold one value or
// one per feature (X's dimension 1, or 0 for 1-D X, as ONNX Runtime indexes them). skl2onnx emits
// it for StandardScaler, MinMaxScaler, MaxAbsScaler and RobustScaler.
#include "backends/native/ops/common/MlCommon.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

OpSchema scalerSchema() {
  return mlSchema("Scaler", [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireMlNumeric(Ctx, 0));
    Ctx.Outputs[0].Type = ElementType::F32;
    Ctx.Outputs[0].Shape = Ctx.Inputs[0].Shape;
    return Status::ok();
  });
}

class ScalerKernel : public Kernel {
public:
  ScalerKernel(std::vector<float> Offset, std::vector<float> Scale) : Offset(std::move(Offset)), Scale(std::move(Scale)) {}
  Status run(const KernelContext &Ctx) const override {
    const TensorView &X = Ctx.Inputs[0];
    if (X.rank() == 0)
      return runError("scaler", "input must have at least one dimension");
    const size_t Stride = static_cast<size_t>(X.rank() == 1 ? X.Dims[0] : X.Dims[1]);
    for (const std::vector<float> *V : {&Offset, &Scale})
      if (V->size() != 1 && V->size() != Stride)
        return runError("scaler", V == &Offset ? "offset" : "scale", " has ", V->size(),
                        " values, expected 1 or the input's ", Stride, " features");
    float *Y = Ctx.Outputs[0].data<float>();
    const size_t Count = X.elementCount();
    mlVisitNumeric(X.Type, [&](auto Zero) {
      using T = decltype(Zero);
      // double input scales in double, as ORT does; the others in float.
      using C = typename std::conditional<std::is_same<T, double>::value, double, float>::type;
      const T *In = X.data<T>();
      for (size_t I = 0; I < Count; ++I) {
        const size_t F = Stride ? I % Stride : 0;
        const C O = Offset[Offset.size() == 1 ? 0 : F], S = Scale[Scale.size() == 1 ? 0 : F];
        Y[I] = static_cast<float>((static_cast<C>(In[I]) - O) * S);
      }
    });
    return Status::ok();
  }

private:
  std::vector<float> Offset, Scale;
};

Result<std::unique_ptr<Kernel>> createScaler(const KernelCreateInfo &Info) {
  ASSIGN_OR_RETURN(std::vector<float> Offset, Info.N.getFloats("offset", {0.0f}));
  ASSIGN_OR_RETURN(std::vector<float> Scale, Info.N.getFloats("scale", {1.0f}));
  if (Offset.empty())
    return attrError(Info.N, "offset", "is empty");
  if (Scale.empty())
    return attrError(Info.N, "scale", "is empty");
  return makeKernel<ScalerKernel>(std::move(Offset), std::move(Scale));
}

std::vector<OpTestCase> scalerCases() {
  return {testCase("per_feature", {tensorInput({5, 3})},
                   {{"offset", attrFloats({0.5f, -1, 2})}, {"scale", attrFloats({2, 0.25f, -1})}}),
          testCase("scalar", {tensorInput({4, 2}, ElementType::F64)},
                   {{"offset", attrFloats({0.5f})}, {"scale", attrFloats({3})}}),
          testCase("int64_1d", {tensorInput({3}, ElementType::I64)},
                   {{"offset", attrFloats({1, 2, 3})}, {"scale", attrFloats({0.5f})}})};
}

OPT_REGISTER_SCHEMA(Scaler, scalerSchema());
OPT_REGISTER_KERNELS(Scaler, OpKernels{kMlDomain, "Scaler", {{"f32_scaler__ref", 0, nullptr, createScaler}}, scalerCases});

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
