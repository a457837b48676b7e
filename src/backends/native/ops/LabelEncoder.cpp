// ai.onnx.ml LabelEncoder (opsets 1, 2 and 4): maps each element of X through keys -> values, the
// default for keys not listed. Opset 1: classes_strings (string -> its index, default_int64);
// opset 2: keys_{strings,int64s,floats} -> values_{int64s,floats} with default_int64 (-1) /
// default_float (-0.0); opset 4 also keys_tensor / values_tensor / default_tensor (float, double,
// int64, int32, int16 or string keys; numeric values). A NaN key matches NaN. String outputs are
// rejected at load: the native backend produces no string tensors (string inputs, which come only
// from the caller or from constants, are read).
#include <map>
#include <unordered_map>

#include "backends/native/ops/common/MlCommon.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct Mapping {
  ElementType KeyType = ElementType::Undefined, ValueType = ElementType::Undefined;
  std::vector<std::string> StringKeys;
  std::vector<int64_t> IntKeys;
  std::vector<double> FloatKeys;
  std::vector<double> Values; ///< as double (float outputs)
  std::vector<int64_t> IntValues;
  double Default = 0;
  int64_t IntDefault = -1;
};

bool isInt(ElementType T) { return T == ElementType::I64 || T == ElementType::I32 || T == ElementType::I16; }

/// A tensor attribute as (type, doubles, int64s, strings).
Status tensorAttr(const Node &N, const char *Attr, ElementType &T, std::vector<double> &D, std::vector<int64_t> &I,
                  std::vector<std::string> &S) {
  auto It = N.Attrs.find(Attr);
  if (It == N.Attrs.end())
    return Status::ok();
  if (It->second.K != AttrValue::Kind::Tensor || !It->second.T)
    return attrError(N, Attr, "must be a tensor");
  const ConstData &C = *It->second.T;
  T = C.Type;
  if (T == ElementType::String) {
    S = C.Strings;
    return Status::ok();
  }
  if (T != ElementType::F32 && T != ElementType::F64 && T != ElementType::I64 && T != ElementType::I32 &&
      T != ElementType::I16)
    return attrError(N, Attr, "has element type ", toString(T), ", supported: float, double, int64, int32, int16, string");
  ASSIGN_OR_RETURN(D, mlTensorValues(N, Attr));
  if (T == ElementType::I64)
    I.assign(C.as<int64_t>(), C.as<int64_t>() + C.elementCount());
  else
    for (double V : D)
      I.push_back(static_cast<int64_t>(V));
  return Status::ok();
}

Result<Mapping> readMapping(const Node &N) {
  Mapping M;
  ASSIGN_OR_RETURN(const std::vector<std::string> Classes, mlStrings(N, "classes_strings"));
  if (N.OpsetVersion < 2 || !Classes.empty()) {
    if (Classes.empty())
      return attrError(N, "classes_strings", "is required (opset 1)");
    M.KeyType = ElementType::String;
    M.ValueType = ElementType::I64;
    M.StringKeys = Classes;
    for (size_t I = 0; I < Classes.size(); ++I)
      M.IntValues.push_back(static_cast<int64_t>(I));
    ASSIGN_OR_RETURN(M.IntDefault, N.getInt("default_int64", -1));
    return M;
  }
  ASSIGN_OR_RETURN(M.StringKeys, mlStrings(N, "keys_strings"));
  ASSIGN_OR_RETURN(M.IntKeys, N.getInts("keys_int64s", {}));
  ASSIGN_OR_RETURN(const std::vector<float> FloatKeys, N.getFloats("keys_floats", {}));
  M.FloatKeys.assign(FloatKeys.begin(), FloatKeys.end());
  ASSIGN_OR_RETURN(const std::vector<std::string> StringValues, mlStrings(N, "values_strings"));
  ASSIGN_OR_RETURN(M.IntValues, N.getInts("values_int64s", {}));
  ASSIGN_OR_RETURN(const std::vector<float> FloatValues, N.getFloats("values_floats", {}));
  M.Values.assign(FloatValues.begin(), FloatValues.end());
  if (!M.StringKeys.empty())
    M.KeyType = ElementType::String;
  else if (!M.IntKeys.empty())
    M.KeyType = ElementType::I64;
  else if (!M.FloatKeys.empty())
    M.KeyType = ElementType::F32;
  if (!StringValues.empty())
    M.ValueType = ElementType::String;
  else if (!M.IntValues.empty())
    M.ValueType = ElementType::I64;
  else if (!M.Values.empty())
    M.ValueType = ElementType::F32;
  std::vector<double> KD, VD, DD;
  std::vector<int64_t> KI, VI, DI;
  std::vector<std::string> KS, VS, DS;
  ElementType KT = ElementType::Undefined, VT = ElementType::Undefined, DT = ElementType::Undefined;
  RETURN_IF_ERROR(tensorAttr(N, "keys_tensor", KT, KD, KI, KS));
  RETURN_IF_ERROR(tensorAttr(N, "values_tensor", VT, VD, VI, VS));
  RETURN_IF_ERROR(tensorAttr(N, "default_tensor", DT, DD, DI, DS));
  if (KT != ElementType::Undefined) {
    M.KeyType = KT;
    M.StringKeys = KS;
    M.IntKeys = isInt(KT) ? KI : std::vector<int64_t>();
    M.FloatKeys = KT == ElementType::F32 || KT == ElementType::F64 ? KD : std::vector<double>();
  }
  if (VT != ElementType::Undefined) {
    M.ValueType = VT;
    M.Values = VD;
    M.IntValues = VI;
  }
  if (M.KeyType == ElementType::Undefined)
    return attrError(N, "keys_tensor", "(or keys_strings / keys_int64s / keys_floats) is required");
  if (M.ValueType == ElementType::Undefined)
    return attrError(N, "values_tensor", "(or values_strings / values_int64s / values_floats) is required");
  if (M.ValueType == ElementType::String)
    return makeError(ErrorCode::Model, N.describe(),
                     ": string values are not supported: the native backend produces no string tensors");
  const size_t Keys = M.StringKeys.size() + M.IntKeys.size() + M.FloatKeys.size();
  const size_t Values = isInt(M.ValueType) ? M.IntValues.size() : M.Values.size();
  if (Keys != Values)
    return attrError(N, "values_tensor", "has ", Values, " values but there are ", Keys, " keys");
  if (isInt(M.ValueType)) {
    ASSIGN_OR_RETURN(M.IntDefault, N.getInt("default_int64", -1));
    if (DT != ElementType::Undefined && !DI.empty())
      M.IntDefault = DI[0];
  } else {
    ASSIGN_OR_RETURN(const float D, N.getFloat("default_float", -0.0f));
    M.Default = D;
    if (DT != ElementType::Undefined && !DD.empty())
      M.Default = DD[0];
  }
  return M;
}

OpSchema labelEncoderSchema() {
  return mlSchema("LabelEncoder", [](ShapeContext &Ctx) -> Status {
    ASSIGN_OR_RETURN(const Mapping M, readMapping(Ctx.N));
    const ElementType T = Ctx.Inputs[0].Type;
    const bool FloatKeys = M.KeyType == ElementType::F32 || M.KeyType == ElementType::F64;
    const bool Ok = T == M.KeyType || (FloatKeys && (T == ElementType::F32 || T == ElementType::F64)) ||
                    (isInt(M.KeyType) && isInt(T));
    if (!Ok)
      return Ctx.error(ErrorCode::Type, "input 0 has element type ", toString(T), " but the keys are ",
                       toString(M.KeyType));
    Ctx.Outputs[0].Type = M.ValueType;
    Ctx.Outputs[0].Shape = Ctx.Inputs[0].Shape;
    return Status::ok();
  });
}

/// Orders doubles with NaN equal to NaN (a NaN key matches a NaN input).
struct NanLess {
  bool operator()(double A, double B) const {
    if (std::isnan(A) || std::isnan(B))
      return !std::isnan(A) && std::isnan(B);
    return A < B;
  }
};

class LabelEncoderKernel : public Kernel {
public:
  explicit LabelEncoderKernel(Mapping Map) : M(std::move(Map)) {
    for (size_t I = 0; I < M.StringKeys.size(); ++I)
      Strings.emplace(M.StringKeys[I], I);
    for (size_t I = 0; I < M.IntKeys.size(); ++I)
      Ints.emplace(M.IntKeys[I], I);
    for (size_t I = 0; I < M.FloatKeys.size(); ++I)
      Floats.emplace(M.FloatKeys[I], I);
  }
  Status run(const KernelContext &Ctx) const override {
    const TensorView &X = Ctx.Inputs[0], &Y = Ctx.Outputs[0];
    const size_t Count = X.elementCount();
    const size_t Miss = static_cast<size_t>(-1);
    for (size_t I = 0; I < Count; ++I) {
      size_t Hit = Miss;
      if (X.Type == ElementType::String) {
        auto It = Strings.find(X.data<std::string>()[I]);
        Hit = It == Strings.end() ? Miss : It->second;
      } else if (X.Type == ElementType::F32 || X.Type == ElementType::F64) {
        const double V = X.Type == ElementType::F32 ? X.data<float>()[I] : X.data<double>()[I];
        auto It = Floats.find(V);
        Hit = It == Floats.end() ? Miss : It->second;
      } else {
        const int64_t V = X.Type == ElementType::I64   ? X.data<int64_t>()[I]
                          : X.Type == ElementType::I32 ? X.data<int32_t>()[I]
                                                       : X.data<int16_t>()[I];
        auto It = Ints.find(V);
        Hit = It == Ints.end() ? Miss : It->second;
      }
      switch (Y.Type) {
      case ElementType::I64: Y.data<int64_t>()[I] = Hit == Miss ? M.IntDefault : M.IntValues[Hit]; break;
      case ElementType::I32:
        Y.data<int32_t>()[I] = static_cast<int32_t>(Hit == Miss ? M.IntDefault : M.IntValues[Hit]);
        break;
      case ElementType::I16:
        Y.data<int16_t>()[I] = static_cast<int16_t>(Hit == Miss ? M.IntDefault : M.IntValues[Hit]);
        break;
      case ElementType::F64: Y.data<double>()[I] = Hit == Miss ? M.Default : M.Values[Hit]; break;
      default: Y.data<float>()[I] = static_cast<float>(Hit == Miss ? M.Default : M.Values[Hit]); break;
      }
    }
    return Status::ok();
  }

private:
  Mapping M;
  std::unordered_map<std::string, size_t> Strings;
  std::unordered_map<int64_t, size_t> Ints;
  std::map<double, size_t, NanLess> Floats;
};

Result<std::unique_ptr<Kernel>> createLabelEncoder(const KernelCreateInfo &Info) {
  ASSIGN_OR_RETURN(Mapping M, readMapping(Info.N));
  return makeKernel<LabelEncoderKernel>(std::move(M));
}

std::vector<OpTestCase> labelEncoderCases() {
  const double Nan = std::nan("");
  AttrValue FloatKeys;
  FloatKeys.K = AttrValue::Kind::Tensor;
  FloatKeys.T = ConstData::allocate(ElementType::F64, {3});
  const double KeyValues[] = {0.5, Nan, -1};
  std::memcpy(FloatKeys.T->mutableData(), KeyValues, sizeof(KeyValues));
  AttrValue IntValues;
  IntValues.K = AttrValue::Kind::Tensor;
  IntValues.T = ConstData::allocate(ElementType::I64, {3});
  const int64_t Ints[] = {7, 8, 9};
  std::memcpy(IntValues.T->mutableData(), Ints, sizeof(Ints));
  return {withOpset(testCase("int_to_float", {valuesInput({2, 3}, {1, 2, 3, 4, 2, 1}, ElementType::I64, false)},
                             {{"keys_int64s", attrInts({1, 2, 5})},
                              {"values_floats", attrFloats({0.5f, -1, 2})},
                              {"default_float", attrFloat(3)}}),
                    2),
          withOpset(testCase("float_to_int", {valuesInput({5}, {0.5, 1, -1, 0.25, 0.5}, ElementType::F32, false)},
                             {{"keys_floats", attrFloats({0.5f, -1})}, {"values_int64s", attrInts({10, 20})}}),
                    2),
          withOpset(testCase("double_tensor_keys_nan", {valuesInput({4}, {0.5, Nan, 2, -1}, ElementType::F64, false)},
                             {{"keys_tensor", FloatKeys}, {"values_tensor", IntValues}}),
                    4)};
}

OPT_REGISTER_SCHEMA(LabelEncoder, labelEncoderSchema());
OPT_REGISTER_KERNELS(LabelEncoder, OpKernels{kMlDomain,
                                             "LabelEncoder",
                                             {{"any_labelencoder__ref", 0, nullptr, createLabelEncoder}},
                                             labelEncoderCases});

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
