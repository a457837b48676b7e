// ai.onnx.ml Imputer: replaces the elements equal to replaced_value_float / replaced_value_int64
// (NaN matches NaN) by imputed_value_floats / imputed_value_int64s (one value per feature, X's
// dimension 1, or one for all); float and int64 inputs, as ONNX Runtime. skl2onnx emits it for
// SimpleImputer.
#include "backends/native/ops/common/MlCommon.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

OpSchema imputerSchema() {
  return mlSchema("Imputer", [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireInputType(Ctx, 0, {ElementType::F32, ElementType::I64}));
    Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
    Ctx.Outputs[0].Shape = Ctx.Inputs[0].Shape;
    return Status::ok();
  });
}

template <typename T> class ImputerKernel : public Kernel {
public:
  ImputerKernel(T Replaced, std::vector<T> Imputed) : Replaced(Replaced), Imputed(std::move(Imputed)) {}
  Status run(const KernelContext &Ctx) const override {
    const TensorView &X = Ctx.Inputs[0];
    if (X.rank() == 0)
      return runError("imputer", "input must have at least one dimension");
    const size_t Stride = static_cast<size_t>(X.rank() == 1 ? X.Dims[0] : X.Dims[1]);
    const bool PerFeature = Imputed.size() == Stride;
    const bool NanReplaced = std::isnan(static_cast<float>(Replaced));
    const T *In = X.data<T>();
    T *Out = Ctx.Outputs[0].data<T>();
    for (size_t I = 0, Count = X.elementCount(); I < Count; ++I) {
      const bool Hit = (NanReplaced && std::isnan(static_cast<float>(In[I]))) || In[I] == Replaced;
      Out[I] = Hit ? Imputed[PerFeature ? I % Stride : 0] : In[I];
    }
    return Status::ok();
  }

private:
  T Replaced;
  std::vector<T> Imputed;
};

Result<std::unique_ptr<Kernel>> createImputer(const KernelCreateInfo &Info) {
  const Node &N = Info.N;
  ASSIGN_OR_RETURN(std::vector<float> Floats, N.getFloats("imputed_value_floats", {}));
  ASSIGN_OR_RETURN(std::vector<int64_t> Ints, N.getInts("imputed_value_int64s", {}));
  if (Floats.empty() == Ints.empty())
    return attrError(N, "imputed_value_floats", "or 'imputed_value_int64s' must be given (exactly one of them)");
  if (Info.Inputs[0].Type == ElementType::F32) {
    if (Floats.empty())
      return attrError(N, "imputed_value_floats", "is required for a float input");
    ASSIGN_OR_RETURN(const float Replaced, N.getFloat("replaced_value_float", 0.0f));
    return makeKernel<ImputerKernel<float>>(Replaced, std::move(Floats));
  }
  if (Ints.empty())
    return attrError(N, "imputed_value_int64s", "is required for an int64 input");
  ASSIGN_OR_RETURN(const int64_t Replaced, N.getInt("replaced_value_int64", 0));
  return makeKernel<ImputerKernel<int64_t>>(Replaced, std::move(Ints));
}

std::vector<OpTestCase> imputerCases() {
  const double Nan = std::nan("");
  return {testCase("nan_per_feature", {valuesInput({3, 3}, {1, Nan, 3, Nan, 5, 6, 7, 8, Nan}, ElementType::F32, false)},
                   {{"imputed_value_floats", attrFloats({-1, -2, -3})}, {"replaced_value_float", attrFloat(Nan)}}),
          testCase("zero_one_value", {valuesInput({2, 4}, {0, 1, 0, 2, 3, 0, 4, 0}, ElementType::F32, false)},
                   {{"imputed_value_floats", attrFloats({9})}}),
          testCase("int64", {valuesInput({2, 3}, {-1, 1, 2, 3, -1, 5}, ElementType::I64, false)},
                   {{"imputed_value_int64s", attrInts({7, 8, 9})}, {"replaced_value_int64", attrInt(-1)}})};
}

OPT_REGISTER_SCHEMA(Imputer, imputerSchema());
OPT_REGISTER_KERNELS(Imputer, OpKernels{kMlDomain, "Imputer", {{"any_imputer__ref", 0, nullptr, createImputer}}, imputerCases});

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
