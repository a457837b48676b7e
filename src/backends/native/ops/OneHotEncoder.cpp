// ai.onnx.ml OneHotEncoder: each element of X becomes a float vector over the categories
// (cats_int64s for integer or float inputs, whose values are truncated to int64 as in ONNX Runtime;
// cats_strings for a string input): Y = X's shape + [categories]. An unknown value gives zeros, or
// is an error with zeros = 0. skl2onnx emits it for OneHotEncoder.
#include <unordered_map>

#include "backends/native/ops/common/MlCommon.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct Categories {
  std::vector<int64_t> Ints;
  std::vector<std::string> Strings;
  bool Zeros = true;
  size_t size() const { return Ints.empty() ? Strings.size() : Ints.size(); }
};

Result<Categories> readCategories(const Node &N) {
  Categories C;
  ASSIGN_OR_RETURN(C.Ints, N.getInts("cats_int64s", {}));
  ASSIGN_OR_RETURN(C.Strings, mlStrings(N, "cats_strings"));
  ASSIGN_OR_RETURN(const int64_t Zeros, N.getInt("zeros", 1));
  C.Zeros = Zeros != 0;
  if (C.Ints.empty() == C.Strings.empty())
    return attrError(N, "cats_int64s", "or 'cats_strings' must be given (exactly one of them)");
  return C;
}

OpSchema oneHotEncoderSchema() {
  return mlSchema("OneHotEncoder", [](ShapeContext &Ctx) -> Status {
    ASSIGN_OR_RETURN(const Categories C, readCategories(Ctx.N));
    if (C.Strings.empty())
      RETURN_IF_ERROR(requireMlNumeric(Ctx, 0));
    else
      RETURN_IF_ERROR(requireInputType(Ctx, 0, {ElementType::String}));
    std::vector<Expr> Dims = Ctx.Inputs[0].Shape.dims();
    Dims.push_back(Expr(static_cast<long long>(C.size())));
    Ctx.Outputs[0].Type = ElementType::F32;
    Ctx.Outputs[0].Shape = TensorShape(std::move(Dims));
    return Status::ok();
  });
}

class OneHotEncoderKernel : public Kernel {
public:
  explicit OneHotEncoderKernel(Categories C) : C(std::move(C)) {
    for (size_t I = 0; I < this->C.Ints.size(); ++I)
      IntIndex.emplace(this->C.Ints[I], I);
    for (size_t I = 0; I < this->C.Strings.size(); ++I)
      StringIndex.emplace(this->C.Strings[I], I);
  }
  Status run(const KernelContext &Ctx) const override {
    const TensorView &X = Ctx.Inputs[0];
    const size_t Count = X.elementCount(), Cats = C.size();
    float *Y = Ctx.Outputs[0].data<float>();
    std::fill(Y, Y + Count * Cats, 0.0f);
    for (size_t I = 0; I < Count; ++I) {
      size_t Hit = Cats;
      if (X.Type == ElementType::String) {
        auto It = StringIndex.find(X.data<std::string>()[I]);
        Hit = It == StringIndex.end() ? Cats : It->second;
      } else {
        int64_t V = 0;
        mlVisitNumeric(X.Type, [&](auto Zero) { V = static_cast<int64_t>(X.data<decltype(Zero)>()[I]); });
        auto It = IntIndex.find(V);
        Hit = It == IntIndex.end() ? Cats : It->second;
      }
      if (Hit < Cats)
        Y[I * Cats + Hit] = 1.0f;
      else if (!C.Zeros)
        return runError("onehotencoder", "element ", I, " is not a known category and zeros = 0");
    }
    return Status::ok();
  }

private:
  Categories C;
  std::unordered_map<int64_t, size_t> IntIndex;
  std::unordered_map<std::string, size_t> StringIndex;
};

Result<std::unique_ptr<Kernel>> createOneHotEncoder(const KernelCreateInfo &Info) {
  ASSIGN_OR_RETURN(Categories C, readCategories(Info.N));
  return makeKernel<OneHotEncoderKernel>(std::move(C));
}

std::vector<OpTestCase> oneHotEncoderCases() {
  return {testCase("int64", {valuesInput({2, 3}, {1, 3, 7, 3, 2, 1}, ElementType::I64, false)},
                   {{"cats_int64s", attrInts({1, 2, 3, 5})}}),
          testCase("float", {valuesInput({4, 1}, {2, 5, 1.5, 4}, ElementType::F32, false)},
                   {{"cats_int64s", attrInts({1, 2, 4, 5})}, {"zeros", attrInt(0)}})};
}

OPT_REGISTER_SCHEMA(OneHotEncoder, oneHotEncoderSchema());
OPT_REGISTER_KERNELS(OneHotEncoder, OpKernels{kMlDomain,
                                              "OneHotEncoder",
                                              {{"f32_onehotencoder__ref", 0, nullptr, createOneHotEncoder}},
                                              oneHotEncoderCases});

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
