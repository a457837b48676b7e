// ai.onnx.ml Normalizer: each vector along dimension 1 (the row of a 2-D X) divided by its MAX
// (largest value), L1 (sum of |x|) or L2 (Euclidean) norm; float output; an all-zero norm leaves the
// values unchanged. Float math as ONNX Runtime's (L2: sign(x) * sqrt(x^2 / sum)). skl2onnx emits it
// for Normalizer and after LogisticRegression's scores.
#include "backends/native/ops/common/MlCommon.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

enum class Norm { Max, L1, L2 };

Result<Norm> normOf(const Node &N) {
  ASSIGN_OR_RETURN(const std::string S, N.getString("norm", "MAX"));
  if (S == "MAX")
    return Norm::Max;
  if (S == "L1")
    return Norm::L1;
  if (S == "L2")
    return Norm::L2;
  return attrError(N, "norm", "is '", S, "', expected MAX, L1 or L2");
}

OpSchema normalizerSchema() {
  return mlSchema("Normalizer", [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireMlNumeric(Ctx, 0));
    RETURN_IF_ERROR(normOf(Ctx.N).status());
    Ctx.Outputs[0].Type = ElementType::F32;
    Ctx.Outputs[0].Shape = Ctx.Inputs[0].Shape;
    return Status::ok();
  });
}

template <typename T> void normalize(Norm M, const T *In, float *Out, size_t Count, size_t Step) {
  float Scale = 0;
  if (M == Norm::Max) {
    Scale = std::numeric_limits<float>::lowest();
    for (size_t I = 0; I < Count; ++I)
      Scale = std::max(Scale, static_cast<float>(In[I * Step]));
  } else {
    for (size_t I = 0; I < Count; ++I) {
      const T X = In[I * Step];
      Scale += M == Norm::L1 ? static_cast<float>(X < 0 ? -X : X) : static_cast<float>(X * X);
    }
  }
  for (size_t I = 0; I < Count; ++I) {
    const T X = In[I * Step];
    float &Y = Out[I * Step];
    if (Scale == 0.0f)
      Y = static_cast<float>(X);
    else if (M == Norm::L2)
      Y = X < 0 ? -std::sqrt(static_cast<float>(X * X) / Scale) : std::sqrt(static_cast<float>(X * X) / Scale);
    else
      Y = static_cast<float>(X) / Scale;
  }
}

class NormalizerKernel : public Kernel {
public:
  explicit NormalizerKernel(Norm M) : M(M) {}
  Status run(const KernelContext &Ctx) const override {
    const TensorView &X = Ctx.Inputs[0];
    if (X.rank() == 0)
      return runError("normalizer", "input must have at least one dimension");
    const size_t Count = static_cast<size_t>(X.rank() == 1 ? X.Dims[0] : X.Dims[1]);
    const size_t Inner = X.rank() > 2 ? static_cast<size_t>(product(X.Dims, 2, X.rank())) : 1;
    const size_t Outer = X.rank() == 1 ? 1 : static_cast<size_t>(X.Dims[0]);
    float *Y = Ctx.Outputs[0].data<float>();
    mlVisitNumeric(X.Type, [&](auto Zero) {
      using T = decltype(Zero);
      for (size_t O = 0; O < Outer; ++O)
        for (size_t I = 0; I < Inner; ++I) {
          const size_t Base = O * Count * Inner + I;
          normalize<T>(M, X.data<T>() + Base, Y + Base, Count, Inner);
        }
    });
    return Status::ok();
  }

private:
  Norm M;
};

Result<std::unique_ptr<Kernel>> createNormalizer(const KernelCreateInfo &Info) {
  ASSIGN_OR_RETURN(const Norm M, normOf(Info.N));
  return makeKernel<NormalizerKernel>(M);
}

std::vector<OpTestCase> normalizerCases() {
  return {testCase("max", {tensorInput({4, 5})}, {{"norm", attrString("MAX")}}),
          testCase("l1", {tensorInput({3, 6})}, {{"norm", attrString("L1")}}),
          testCase("l2", {tensorInput({5, 4})}, {{"norm", attrString("L2")}}),
          testCase("l2_rank3", {tensorInput({2, 3, 4})}, {{"norm", attrString("L2")}}),
          testCase("l1_double_1d", {tensorInput({7}, ElementType::F64)}, {{"norm", attrString("L1")}}),
          testCase("max_int64", {valuesInput({2, 3}, {3, -4, 5, 0, 0, 0}, ElementType::I64, false)},
                   {{"norm", attrString("MAX")}})};
}

OPT_REGISTER_SCHEMA(Normalizer, normalizerSchema());
OPT_REGISTER_KERNELS(Normalizer, OpKernels{kMlDomain,
                                           "Normalizer",
                                           {{"f32_normalizer__ref", 0, nullptr, createNormalizer}},
                                           normalizerCases});

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
