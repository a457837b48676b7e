// ai.onnx.ml FeatureVectorizer: concatenates its inputs' rows into one float row per batch item,
// input i contributing inputdimensions[i] columns (its first values, zero padded when it has fewer),
// as ONNX Runtime. A 1-D input is one row.
#include "backends/native/ops/common/MlCommon.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

OpSchema featureVectorizerSchema() {
  OpSchema S = mlSchema("FeatureVectorizer", [](ShapeContext &Ctx) -> Status {
    ASSIGN_OR_RETURN(const std::vector<int64_t> Dims, Ctx.N.getInts("inputdimensions", {}));
    if (Dims.size() != Ctx.Inputs.size())
      return attrError(Ctx.N, "inputdimensions", "has ", Dims.size(), " values, expected one per input (",
                       Ctx.Inputs.size(), ")");
    int64_t Total = 0;
    for (size_t I = 0; I < Dims.size(); ++I) {
      RETURN_IF_ERROR(requireMlNumeric(Ctx, I));
      if (Dims[I] < 0)
        return attrError(Ctx.N, "inputdimensions", "has a negative value");
      Total += Dims[I];
    }
    const TensorShape &X = Ctx.Inputs[0].Shape;
    Ctx.Outputs[0].Type = ElementType::F32;
    Ctx.Outputs[0].Shape = TensorShape({X.getRank() <= 1 ? Expr(1) : X[0], Expr(static_cast<long long>(Total))});
    return Status::ok();
  });
  S.MaxInputs = -1;
  return S;
}

class FeatureVectorizerKernel : public Kernel {
public:
  explicit FeatureVectorizerKernel(std::vector<int64_t> Dims) : Dims(std::move(Dims)) {}
  Status run(const KernelContext &Ctx) const override {
    const TensorView &Y = Ctx.Outputs[0];
    const int64_t Rows = Y.Dims[0], Width = Y.Dims[1];
    float *Out = Y.data<float>();
    int64_t Col = 0;
    for (size_t In = 0; In < Ctx.Inputs.size(); ++In) {
      const TensorView &X = Ctx.Inputs[In];
      const int64_t XRows = X.rank() <= 1 ? 1 : X.Dims[0];
      if (XRows != Rows)
        return runError("featurevectorizer", "input ", In, " has ", XRows, " rows, input 0 has ", Rows);
      const int64_t Per = XRows ? static_cast<int64_t>(X.elementCount()) / XRows : 0, Take = std::min(Per, Dims[In]);
      mlVisitNumeric(X.Type, [&](auto Zero) {
        using T = decltype(Zero);
        for (int64_t R = 0; R < Rows; ++R) {
          float *O = Out + R * Width + Col;
          for (int64_t C = 0; C < Dims[In]; ++C)
            O[C] = C < Take ? static_cast<float>(X.data<T>()[R * Per + C]) : 0.0f;
        }
      });
      Col += Dims[In];
    }
    return Status::ok();
  }

private:
  std::vector<int64_t> Dims;
};

Result<std::unique_ptr<Kernel>> createFeatureVectorizer(const KernelCreateInfo &Info) {
  ASSIGN_OR_RETURN(std::vector<int64_t> Dims, Info.N.getInts("inputdimensions", {}));
  return makeKernel<FeatureVectorizerKernel>(std::move(Dims));
}

std::vector<OpTestCase> featureVectorizerCases() {
  return {testCase("three_inputs", {tensorInput({3, 2}), tensorInput({3, 4}, ElementType::I64), tensorInput({3, 1}, ElementType::F64)},
                   {{"inputdimensions", attrInts({2, 3, 2})}}),
          testCase("one_row", {tensorInput({5}), tensorInput({2}, ElementType::I32)},
                   {{"inputdimensions", attrInts({5, 2})}})};
}

OPT_REGISTER_SCHEMA(FeatureVectorizer, featureVectorizerSchema());
OPT_REGISTER_KERNELS(FeatureVectorizer, OpKernels{kMlDomain,
                                                  "FeatureVectorizer",
                                                  {{"f32_featurevectorizer__ref", 0, nullptr, createFeatureVectorizer}},
                                                  featureVectorizerCases});

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
