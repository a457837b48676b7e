// ai.onnx.ml Binarizer: Y = X > threshold ? 1 : 0, of X's type. The default threshold is ONNX
// Runtime's (1.0; the ONNX schema says 0.0, skl2onnx always sets it); a NaN input is an error there
// and here.
#include "backends/native/ops/common/MlCommon.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

OpSchema binarizerSchema() {
  return mlSchema("Binarizer", [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireMlNumeric(Ctx, 0));
    Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
    Ctx.Outputs[0].Shape = Ctx.Inputs[0].Shape;
    return Status::ok();
  });
}

class BinarizerKernel : public Kernel {
public:
  explicit BinarizerKernel(float Threshold) : Threshold(Threshold) {}
  Status run(const KernelContext &Ctx) const override {
    const TensorView &X = Ctx.Inputs[0];
    const size_t Count = X.elementCount();
    Status S = Status::ok();
    mlVisitNumeric(X.Type, [&](auto Zero) {
      using T = decltype(Zero);
      const T *In = X.data<T>();
      T *Out = Ctx.Outputs[0].data<T>();
      for (size_t I = 0; I < Count; ++I) {
        if (std::isnan(static_cast<float>(In[I]))) {
          S = runError("binarizer", "input element ", I, " is NaN");
          return;
        }
        Out[I] = In[I] > Threshold ? T(1) : T(0);
      }
    });
    return S;
  }

private:
  float Threshold;
};

Result<std::unique_ptr<Kernel>> createBinarizer(const KernelCreateInfo &Info) {
  ASSIGN_OR_RETURN(const float Threshold, Info.N.getFloat("threshold", 1.0f));
  return makeKernel<BinarizerKernel>(Threshold);
}

std::vector<OpTestCase> binarizerCases() {
  return {testCase("float", {tensorInput({4, 5})}, {{"threshold", attrFloat(0.2f)}}),
          testCase("default", {tensorInput({3, 3}, ElementType::F64)}),
          testCase("int64", {valuesInput({2, 3}, {3, -4, 5, 0, 1, 2}, ElementType::I64, false)},
                   {{"threshold", attrFloat(1.5f)}})};
}

OPT_REGISTER_SCHEMA(Binarizer, binarizerSchema());
OPT_REGISTER_KERNELS(Binarizer, OpKernels{kMlDomain,
                                          "Binarizer",
                                          {{"any_binarizer__ref", 0, nullptr, createBinarizer}},
                                          binarizerCases});

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
