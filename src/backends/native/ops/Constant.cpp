// Constant: a tensor from one of the value* attributes (value, value_float(s), value_int(s),
// value_string(s)); always folded at load, so the kernel only runs when a caller keeps the node.
// sparse_value is refused.
#include "backends/native/ops/common/Indexing.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

const char *const ValueAttrs[] = {"value", "value_float", "value_floats", "value_int",
                                  "value_ints", "value_string", "value_strings", "sparse_value"};

Result<std::shared_ptr<ConstData>> constantValue(const Node &N) {
  const char *Found = nullptr;
  for (const char *A : ValueAttrs) {
    if (!N.hasAttr(A))
      continue;
    if (Found)
      return makeError(ErrorCode::Model, N.describe(), ": attributes '", Found, "' and '", A,
                       "' are both set; exactly one value attribute is allowed");
    Found = A;
  }
  if (!Found)
    return makeError(ErrorCode::Model, N.describe(), ": one of the attributes value, value_float, value_floats, "
                                                      "value_int, value_ints, value_string, value_strings is required");
  const std::string Name = Found;
  const AttrValue &A = N.Attrs.at(Name);
  const auto WrongKind = [&] {
    return makeError(ErrorCode::Model, N.describe(), ": attribute '", Name, "' has the wrong kind");
  };
  if (Name == "sparse_value")
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'sparse_value' (sparse tensors) is not supported");
  if (Name == "value") {
    if (A.K != AttrValue::Kind::Tensor || !A.T)
      return WrongKind();
    return A.T;
  }
  if (Name == "value_float" || Name == "value_floats") {
    const bool Scalar = Name == "value_float";
    if (A.K != (Scalar ? AttrValue::Kind::Float : AttrValue::Kind::Floats))
      return WrongKind();
    std::vector<float> V = Scalar ? std::vector<float>{A.F} : A.Floats;
    auto C = ConstData::allocate(ElementType::F32, Scalar ? std::vector<int64_t>{} : std::vector<int64_t>{static_cast<int64_t>(V.size())});
    if (!V.empty())
      std::memcpy(C->mutableData(), V.data(), V.size() * sizeof(float));
    return C;
  }
  if (Name == "value_int" || Name == "value_ints") {
    const bool Scalar = Name == "value_int";
    if (A.K != (Scalar ? AttrValue::Kind::Int : AttrValue::Kind::Ints))
      return WrongKind();
    std::vector<int64_t> V = Scalar ? std::vector<int64_t>{A.I} : A.Ints;
    auto C = ConstData::allocate(ElementType::I64, Scalar ? std::vector<int64_t>{} : std::vector<int64_t>{static_cast<int64_t>(V.size())});
    if (!V.empty())
      std::memcpy(C->mutableData(), V.data(), V.size() * sizeof(int64_t));
    return C;
  }
  const bool Scalar = Name == "value_string";
  if (A.K != (Scalar ? AttrValue::Kind::String : AttrValue::Kind::Strings))
    return WrongKind();
  std::vector<std::string> V = Scalar ? std::vector<std::string>{A.S} : A.Strings;
  auto C = ConstData::allocate(ElementType::String, Scalar ? std::vector<int64_t>{} : std::vector<int64_t>{static_cast<int64_t>(V.size())});
  for (size_t I = 0; I < V.size(); ++I)
    C->Strings[I] = V[I];
  return C;
}

Status computeConstant(const Node &N, const std::vector<TensorView> &, const std::vector<TensorView> &Out,
                       const Parallel &) {
  ASSIGN_OR_RETURN(const std::shared_ptr<ConstData> C, constantValue(N));
  if (C->Type == ElementType::String)
    return runError("any_constant__ref", "string constants are only supported folded at load");
  if (Out[0].Type != C->Type || Out[0].elementCount() != C->elementCount())
    return runError("any_constant__ref", "output does not match the constant's type or shape");
  if (C->Bytes)
    std::memcpy(Out[0].Data, C->Data, C->Bytes);
  return Status::ok();
}

OpSchema constantSchema() {
  OpSchema S;
  S.OpType = "Constant";
  S.MinInputs = S.MaxInputs = 0;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    ASSIGN_OR_RETURN(std::shared_ptr<ConstData> C, constantValue(Ctx.N));
    Ctx.Outputs[0].Type = C->Type;
    Ctx.Outputs[0].Shape = TensorShape::fromDims(C->Dims);
    Ctx.Outputs[0].Const = std::move(C); // always folded, whatever its size: it is a weight
    return Status::ok();
  };
  return S;
}

OpKernels constantKernels() {
  OpKernels K;
  K.OpType = "Constant";
  K.Variants.push_back(computeVariant("any_constant__ref", 0, computeConstant));
  K.TestCases = [] {
    AttrValue T;
    T.K = AttrValue::Kind::Tensor;
    T.T = ConstData::allocate(ElementType::F32, {2, 3});
    for (int I = 0; I < 6; ++I)
      static_cast<float *>(T.T->mutableData())[I] = 0.5f * I - 1;
    return std::vector<OpTestCase>{
        testCase("tensor", {}, {{"value", T}}),
        testCase("float", {}, {{"value_float", attrFloat(2.5f)}}),
        testCase("floats", {}, {{"value_floats", attrFloats({1, 2, 3})}}),
        testCase("int", {}, {{"value_int", attrInt(-7)}}),
        testCase("ints", {}, {{"value_ints", attrInts({4, 5})}}),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(Constant, constantSchema());
OPT_REGISTER_KERNELS(Constant, constantKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
