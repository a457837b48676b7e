// OIP REST message parsing, tensor conversion and JSON writers (see OipCodec.h).
#include "OipCodec.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <type_traits>

namespace optimium {
namespace remote {
namespace oip {

namespace rt = optimium::runtime;
using json = nlohmann::json;

namespace {

struct DatatypeName {
  rt::ElementType Type;
  const char *Name;
};
// Triton's names; BF16 is Triton's extension of the V2 list.
const DatatypeName kDatatypes[] = {
    {rt::ElementType::Bool, "BOOL"},  {rt::ElementType::U8, "UINT8"},   {rt::ElementType::U16, "UINT16"},
    {rt::ElementType::U32, "UINT32"}, {rt::ElementType::U64, "UINT64"}, {rt::ElementType::I8, "INT8"},
    {rt::ElementType::I16, "INT16"},  {rt::ElementType::I32, "INT32"},  {rt::ElementType::I64, "INT64"},
    {rt::ElementType::F16, "FP16"},   {rt::ElementType::F32, "FP32"},   {rt::ElementType::F64, "FP64"},
    {rt::ElementType::BF16, "BF16"},  {rt::ElementType::String, "BYTES"},
};

constexpr uint64_t kMaxElements = uint64_t(1) << 40;
constexpr int kMaxDataDepth = 64;

std::string shapeText(const std::vector<int64_t> &Dims) {
  std::string S = "[";
  for (size_t I = 0; I < Dims.size(); ++I)
    S += (I ? "," : "") + std::to_string(Dims[I]);
  return S + "]";
}

std::string shapeText(const rt::TensorShape &Shape) {
  std::string S = "[";
  for (size_t I = 0; I < Shape.getRank(); ++I)
    S += (I ? "," : "") + (Shape[I].isConst() ? std::to_string(Shape[I].value()) : Shape[I].toString());
  return S + "]";
}

bool elementCount(const std::vector<int64_t> &Shape, uint64_t &Count) {
  Count = 1;
  for (int64_t D : Shape) {
    if (D < 0)
      return false;
    if (D != 0 && Count > kMaxElements / static_cast<uint64_t>(D))
      return false;
    Count *= static_cast<uint64_t>(D);
  }
  return Count <= kMaxElements;
}

// Flattens nested arrays into their leaves (row-major), bounded in depth.
bool flatten(const json &J, std::vector<const json *> &Leaves, int Depth) {
  if (!J.is_array()) {
    Leaves.push_back(&J);
    return true;
  }
  if (Depth >= kMaxDataDepth)
    return false;
  for (const json &E : J)
    if (!flatten(E, Leaves, Depth + 1))
      return false;
  return true;
}

template <typename T> bool toInteger(const json &J, T &Out) {
  if (J.is_number_unsigned()) {
    uint64_t V = J.get<uint64_t>();
    if (V > static_cast<uint64_t>(std::numeric_limits<T>::max()))
      return false;
    Out = static_cast<T>(V);
    return true;
  }
  if (J.is_number_integer()) {
    int64_t V = J.get<int64_t>();
    if (std::is_unsigned<T>::value) {
      if (V < 0 || static_cast<uint64_t>(V) > static_cast<uint64_t>(std::numeric_limits<T>::max()))
        return false;
    } else if (V < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
               V > static_cast<int64_t>(std::numeric_limits<T>::max())) {
      return false;
    }
    Out = static_cast<T>(V);
    return true;
  }
  return false;
}

bool toDouble(const json &J, double &Out) {
  if (J.is_number_float()) {
    Out = J.get<double>();
    return true;
  }
  if (J.is_number_unsigned()) {
    Out = static_cast<double>(J.get<uint64_t>());
    return true;
  }
  if (J.is_number_integer()) {
    Out = static_cast<double>(J.get<int64_t>());
    return true;
  }
  return false;
}

template <typename T>
bool fillIntegers(const std::vector<const json *> &Leaves, void *Dest, const std::string &Name, std::string &Error) {
  T *P = static_cast<T *>(Dest);
  for (size_t I = 0; I < Leaves.size(); ++I)
    if (!toInteger<T>(*Leaves[I], P[I])) {
      Error = "input '" + Name + "': element " + std::to_string(I) + " (" + Leaves[I]->dump() +
              ") is not an integer in the datatype's range";
      return false;
    }
  return true;
}

template <typename T> T fromDouble(double V) { return T(static_cast<float>(V)); }
template <> double fromDouble<double>(double V) { return V; }

template <typename T>
bool fillFloats(const std::vector<const json *> &Leaves, void *Dest, const std::string &Name, std::string &Error) {
  T *P = static_cast<T *>(Dest);
  for (size_t I = 0; I < Leaves.size(); ++I) {
    double V = 0;
    if (!toDouble(*Leaves[I], V)) {
      Error = "input '" + Name + "': element " + std::to_string(I) + " (" + Leaves[I]->dump() + ") is not a number";
      return false;
    }
    P[I] = fromDouble<T>(V);
  }
  return true;
}

bool fillJson(const std::vector<const json *> &Leaves, rt::Tensor &T, const std::string &Name, std::string &Error) {
  void *D = T.data();
  switch (T.getType()) {
  case rt::ElementType::Bool: {
    bool *P = static_cast<bool *>(D);
    for (size_t I = 0; I < Leaves.size(); ++I) {
      if (!Leaves[I]->is_boolean()) {
        Error = "input '" + Name + "': element " + std::to_string(I) + " (" + Leaves[I]->dump() + ") is not a boolean";
        return false;
      }
      P[I] = Leaves[I]->get<bool>();
    }
    return true;
  }
  case rt::ElementType::I8: return fillIntegers<int8_t>(Leaves, D, Name, Error);
  case rt::ElementType::I16: return fillIntegers<int16_t>(Leaves, D, Name, Error);
  case rt::ElementType::I32: return fillIntegers<int32_t>(Leaves, D, Name, Error);
  case rt::ElementType::I64: return fillIntegers<int64_t>(Leaves, D, Name, Error);
  case rt::ElementType::U8: return fillIntegers<uint8_t>(Leaves, D, Name, Error);
  case rt::ElementType::U16: return fillIntegers<uint16_t>(Leaves, D, Name, Error);
  case rt::ElementType::U32: return fillIntegers<uint32_t>(Leaves, D, Name, Error);
  case rt::ElementType::U64: return fillIntegers<uint64_t>(Leaves, D, Name, Error);
  case rt::ElementType::F16: return fillFloats<rt::float16>(Leaves, D, Name, Error);
  case rt::ElementType::BF16: return fillFloats<rt::bfloat16>(Leaves, D, Name, Error);
  case rt::ElementType::F32: return fillFloats<float>(Leaves, D, Name, Error);
  case rt::ElementType::F64: return fillFloats<double>(Leaves, D, Name, Error);
  case rt::ElementType::String: {
    std::string *P = static_cast<std::string *>(D);
    for (size_t I = 0; I < Leaves.size(); ++I) {
      if (!Leaves[I]->is_string()) {
        Error = "input '" + Name + "': element " + std::to_string(I) + " (" + Leaves[I]->dump() + ") is not a string";
        return false;
      }
      P[I] = Leaves[I]->get<std::string>();
    }
    return true;
  }
  default:
    Error = "input '" + Name + "': element type " + rt::toString(T.getType()) + " has no OIP datatype";
    return false;
  }
}

void appendDouble(double V, std::string &Out) {
  if (std::isnan(V)) {
    Out += "NaN";
    return;
  }
  if (std::isinf(V)) {
    Out += V > 0 ? "Infinity" : "-Infinity";
    return;
  }
  char Buf[32];
  auto R = std::to_chars(Buf, Buf + sizeof(Buf), V);
  Out.append(Buf, R.ptr);
}

void appendFloat(float V, std::string &Out) {
  if (std::isnan(V) || std::isinf(V)) {
    appendDouble(V, Out);
    return;
  }
  char Buf[32];
  auto R = std::to_chars(Buf, Buf + sizeof(Buf), V); // shortest round-trip form of the float
  Out.append(Buf, R.ptr);
}

template <typename T> void appendIntegers(const void *D, size_t N, std::string &Out) {
  const T *P = static_cast<const T *>(D);
  char Buf[24];
  for (size_t I = 0; I < N; ++I) {
    if (I)
      Out.push_back(',');
    auto R = std::to_chars(Buf, Buf + sizeof(Buf), P[I]);
    Out.append(Buf, R.ptr);
  }
}

json dimsJson(const rt::TensorShape &Shape) {
  json A = json::array();
  for (const rt::Expr &E : Shape)
    A.push_back(E.isConst() ? E.value() : int64_t(-1));
  return A;
}

std::string datatypeOrRuntimeName(rt::ElementType T) {
  std::string N = datatypeName(T);
  if (!N.empty())
    return N;
  N = rt::toString(T);
  for (char &C : N)
    C = static_cast<char>(std::toupper(static_cast<unsigned char>(C)));
  return N;
}

} // namespace

std::string datatypeName(rt::ElementType Type) {
  for (const auto &D : kDatatypes)
    if (D.Type == Type)
      return D.Name;
  return "";
}

rt::ElementType elementTypeOf(const std::string &Datatype) {
  for (const auto &D : kDatatypes)
    if (Datatype == D.Name)
      return D.Type;
  return rt::ElementType::Undefined;
}

std::string jsonString(const std::string &S) {
  return json(S).dump(-1, ' ', false, json::error_handler_t::replace);
}

bool parseInferRequest(const char *Header, size_t HeaderSize, size_t BinarySize, OipInferRequest &Out,
                       std::string &Error) {
  Out = OipInferRequest();
  json J = json::parse(Header, Header + HeaderSize, nullptr, /*allow_exceptions=*/false);
  if (J.is_discarded()) {
    Error = "malformed JSON in the inference request header";
    return false;
  }
  if (!J.is_object()) {
    Error = "the inference request must be a JSON object";
    return false;
  }
  if (auto It = J.find("id"); It != J.end()) {
    if (!It->is_string()) {
      Error = "'id' must be a string";
      return false;
    }
    Out.HasId = true;
    Out.Id = It->get<std::string>();
  }
  if (auto It = J.find("parameters"); It != J.end()) {
    if (!It->is_object()) {
      Error = "'parameters' must be an object";
      return false;
    }
    if (auto B = It->find("binary_data_output"); B != It->end()) {
      if (!B->is_boolean()) {
        Error = "'binary_data_output' must be a boolean";
        return false;
      }
      Out.BinaryOutputDefault = B->get<bool>();
    }
  }
  auto Inputs = J.find("inputs");
  if (Inputs == J.end() || !Inputs->is_array()) {
    Error = "'inputs' must be an array";
    return false;
  }
  std::set<std::string> Names;
  size_t Offset = 0;
  for (json &I : *Inputs) {
    if (!I.is_object()) {
      Error = "each input must be an object";
      return false;
    }
    OipInput In;
    auto Name = I.find("name"), Datatype = I.find("datatype"), Shape = I.find("shape");
    if (Name == I.end() || !Name->is_string()) {
      Error = "each input needs a string 'name'";
      return false;
    }
    In.Name = Name->get<std::string>();
    if (!Names.insert(In.Name).second) {
      Error = "input '" + In.Name + "' given twice";
      return false;
    }
    if (Datatype == I.end() || !Datatype->is_string()) {
      Error = "input '" + In.Name + "' needs a string 'datatype'";
      return false;
    }
    In.Datatype = Datatype->get<std::string>();
    if (elementTypeOf(In.Datatype) == rt::ElementType::Undefined) {
      Error = "input '" + In.Name + "': unknown datatype '" + In.Datatype + "'";
      return false;
    }
    if (Shape == I.end() || !Shape->is_array()) {
      Error = "input '" + In.Name + "' needs a 'shape' array";
      return false;
    }
    for (const json &D : *Shape) {
      if (!D.is_number_integer() || D.get<int64_t>() < 0) {
        Error = "input '" + In.Name + "': shape dimensions must be non-negative integers";
        return false;
      }
      In.Shape.push_back(D.get<int64_t>());
    }
    uint64_t Count = 0;
    if (!elementCount(In.Shape, Count)) {
      Error = "input '" + In.Name + "': shape " + shapeText(In.Shape) + " is too large";
      return false;
    }
    if (auto P = I.find("parameters"); P != I.end()) {
      if (!P->is_object()) {
        Error = "input '" + In.Name + "': 'parameters' must be an object";
        return false;
      }
      if (auto B = P->find("binary_data_size"); B != P->end()) {
        if (!B->is_number_unsigned() && !(B->is_number_integer() && B->get<int64_t>() >= 0)) {
          Error = "input '" + In.Name + "': 'binary_data_size' must be a non-negative integer";
          return false;
        }
        In.Binary = true;
        In.BinarySize = B->get<uint64_t>();
      }
    }
    auto Data = I.find("data");
    if (Data != I.end()) {
      if (In.Binary) {
        Error = "input '" + In.Name + "' has both 'data' and 'binary_data_size'";
        return false;
      }
      In.HasJsonData = true;
      In.Data = std::move(*Data);
    } else if (!In.Binary) {
      Error = "input '" + In.Name + "' has neither 'data' nor 'parameters.binary_data_size'";
      return false;
    }
    if (In.Binary) {
      if (In.BinarySize > BinarySize - Offset) {
        Error = "input '" + In.Name + "': binary_data_size " + std::to_string(In.BinarySize) +
                " runs past the end of the body (" + std::to_string(BinarySize - Offset) + " bytes left)";
        return false;
      }
      In.BinaryOffset = Offset;
      Offset += static_cast<size_t>(In.BinarySize);
    }
    Out.Inputs.push_back(std::move(In));
  }
  if (Offset != BinarySize) {
    Error = std::to_string(BinarySize - Offset) + " bytes of binary data after the inputs' binary_data_size total (" +
            std::to_string(Offset) + ")";
    return false;
  }
  if (auto Outputs = J.find("outputs"); Outputs != J.end()) {
    if (!Outputs->is_array()) {
      Error = "'outputs' must be an array";
      return false;
    }
    Out.HasOutputs = true;
    std::set<std::string> OutNames;
    for (const json &O : *Outputs) {
      auto Name = O.is_object() ? O.find("name") : O.end();
      if (!O.is_object() || Name == O.end() || !Name->is_string()) {
        Error = "each requested output needs a string 'name'";
        return false;
      }
      OipRequestedOutput R;
      R.Name = Name->get<std::string>();
      if (!OutNames.insert(R.Name).second) {
        Error = "output '" + R.Name + "' requested twice";
        return false;
      }
      if (auto P = O.find("parameters"); P != O.end()) {
        if (!P->is_object()) {
          Error = "output '" + R.Name + "': 'parameters' must be an object";
          return false;
        }
        if (auto B = P->find("binary_data"); B != P->end()) {
          if (!B->is_boolean()) {
            Error = "output '" + R.Name + "': 'binary_data' must be a boolean";
            return false;
          }
          R.Binary = B->get<bool>() ? 1 : 0;
        }
        if (auto C = P->find("classification"); C != P->end() && !(C->is_number() && C->get<double>() == 0)) {
          Error = "output '" + R.Name + "': the classification extension is not supported";
          return false;
        }
      }
      Out.Outputs.push_back(std::move(R));
    }
  }
  return true;
}

bool makeInputTensor(const OipInput &In, const rt::TensorInfo &Info, const char *Body, rt::Tensor &Out,
                     std::string &Error) {
  const rt::ElementType Type = elementTypeOf(In.Datatype);
  if (Type != Info.Type) {
    Error = "input '" + In.Name + "': datatype " + In.Datatype + " does not match the model's " +
            datatypeOrRuntimeName(Info.Type);
    return false;
  }
  bool ShapeOk = In.Shape.size() == Info.Shape.getRank();
  for (size_t I = 0; ShapeOk && I < In.Shape.size(); ++I)
    if (Info.Shape[I].isConst() && Info.Shape[I].value() != In.Shape[I])
      ShapeOk = false;
  if (!ShapeOk) {
    Error = "input '" + In.Name + "': shape " + shapeText(In.Shape) + " does not match the model's " +
            shapeText(Info.Shape);
    return false;
  }
  uint64_t Count = 0;
  elementCount(In.Shape, Count); // checked by parseInferRequest
  if (In.Binary) {
    if (Type != rt::ElementType::String) {
      const uint64_t Expected = Count * rt::getElementSize(Type);
      if (In.BinarySize != Expected) {
        Error = "input '" + In.Name + "': binary_data_size " + std::to_string(In.BinarySize) + " does not match shape " +
                shapeText(In.Shape) + " of " + In.Datatype + " (" + std::to_string(Expected) + " bytes)";
        return false;
      }
    }
  } else {
    std::vector<const json *> Leaves;
    if (!flatten(In.Data, Leaves, 0)) {
      Error = "input '" + In.Name + "': 'data' nested deeper than " + std::to_string(kMaxDataDepth);
      return false;
    }
    if (Leaves.size() != Count) {
      Error = "input '" + In.Name + "': " + std::to_string(Leaves.size()) + " elements in 'data', shape " +
              shapeText(In.Shape) + " needs " + std::to_string(Count);
      return false;
    }
    if (Type == rt::ElementType::String || Count > 0) {
      Out = rt::tensor(Type, rt::TensorShape::fromDims(In.Shape));
      return fillJson(Leaves, Out, In.Name, Error);
    }
  }
  Out = rt::tensor(Type, rt::TensorShape::fromDims(In.Shape));
  if (!In.Binary)
    return true;
  const char *Src = Body + In.BinaryOffset;
  if (Type == rt::ElementType::String) {
    // Elements are <uint32 little-endian length><bytes>, back to back.
    std::string *P = static_cast<std::string *>(Out.data());
    uint64_t Pos = 0;
    for (uint64_t I = 0; I < Count; ++I) {
      if (In.BinarySize - Pos < 4) {
        Error = "input '" + In.Name + "': BYTES data ends inside element " + std::to_string(I);
        return false;
      }
      uint32_t Len = 0;
      std::memcpy(&Len, Src + Pos, 4);
      Pos += 4;
      if (In.BinarySize - Pos < Len) {
        Error = "input '" + In.Name + "': BYTES element " + std::to_string(I) + " runs past binary_data_size";
        return false;
      }
      P[I].assign(Src + Pos, Len);
      Pos += Len;
    }
    if (Pos != In.BinarySize) {
      Error = "input '" + In.Name + "': " + std::to_string(In.BinarySize - Pos) + " bytes after the last BYTES element";
      return false;
    }
    return true;
  }
  if (In.BinarySize)
    std::memcpy(Out.data(), Src, static_cast<size_t>(In.BinarySize));
  if (Type == rt::ElementType::Bool) {
    // Normalize to 0/1 so a byte like 0x02 cannot produce an invalid bool.
    uint8_t *P = static_cast<uint8_t *>(Out.data());
    for (uint64_t I = 0; I < Count; ++I)
      P[I] = P[I] != 0;
  }
  return true;
}

bool appendJsonData(const rt::Tensor &T, std::string &Out, std::string &Error) {
  const size_t N = T.getElementCount();
  const void *D = T.data();
  Out.push_back('[');
  switch (T.getType()) {
  case rt::ElementType::Bool: {
    const uint8_t *P = static_cast<const uint8_t *>(D);
    for (size_t I = 0; I < N; ++I)
      Out += I ? (P[I] ? ",true" : ",false") : (P[I] ? "true" : "false");
    break;
  }
  case rt::ElementType::I8: appendIntegers<int8_t>(D, N, Out); break;
  case rt::ElementType::I16: appendIntegers<int16_t>(D, N, Out); break;
  case rt::ElementType::I32: appendIntegers<int32_t>(D, N, Out); break;
  case rt::ElementType::I64: appendIntegers<int64_t>(D, N, Out); break;
  case rt::ElementType::U8: appendIntegers<uint8_t>(D, N, Out); break;
  case rt::ElementType::U16: appendIntegers<uint16_t>(D, N, Out); break;
  case rt::ElementType::U32: appendIntegers<uint32_t>(D, N, Out); break;
  case rt::ElementType::U64: appendIntegers<uint64_t>(D, N, Out); break;
  case rt::ElementType::F16:
    for (size_t I = 0; I < N; ++I) {
      if (I)
        Out.push_back(',');
      appendFloat(static_cast<float>(static_cast<const rt::float16 *>(D)[I]), Out);
    }
    break;
  case rt::ElementType::BF16:
    for (size_t I = 0; I < N; ++I) {
      if (I)
        Out.push_back(',');
      appendFloat(static_cast<float>(static_cast<const rt::bfloat16 *>(D)[I]), Out);
    }
    break;
  case rt::ElementType::F32:
    for (size_t I = 0; I < N; ++I) {
      if (I)
        Out.push_back(',');
      appendFloat(static_cast<const float *>(D)[I], Out);
    }
    break;
  case rt::ElementType::F64:
    for (size_t I = 0; I < N; ++I) {
      if (I)
        Out.push_back(',');
      appendDouble(static_cast<const double *>(D)[I], Out);
    }
    break;
  case rt::ElementType::String:
    for (size_t I = 0; I < N; ++I) {
      if (I)
        Out.push_back(',');
      Out += jsonString(static_cast<const std::string *>(D)[I]);
    }
    break;
  default:
    Error = std::string("element type ") + rt::toString(T.getType()) + " has no OIP datatype";
    return false;
  }
  Out.push_back(']');
  return true;
}

bool appendBinaryData(const rt::Tensor &T, std::string &Out, std::string &Error) {
  if (T.getType() == rt::ElementType::String) {
    const std::string *P = static_cast<const std::string *>(T.data());
    for (size_t I = 0, N = T.getElementCount(); I < N; ++I) {
      if (P[I].size() > UINT32_MAX) {
        Error = "a BYTES element is larger than 4 GiB";
        return false;
      }
      uint32_t Len = static_cast<uint32_t>(P[I].size());
      Out.append(reinterpret_cast<const char *>(&Len), 4);
      Out += P[I];
    }
    return true;
  }
  if (datatypeName(T.getType()).empty()) {
    Error = std::string("element type ") + rt::toString(T.getType()) + " has no OIP datatype";
    return false;
  }
  Out.append(static_cast<const char *>(T.data()), T.getTensorSize());
  return true;
}

std::string modelMetadataJson(const std::string &Name, const rt::Model &M) {
  json J;
  J["name"] = Name;
  J["versions"] = json::array({"1"});
  J["platform"] = "onnx";
  auto describe = [](const rt::TensorInfo &Info) {
    return json{{"name", Info.Name}, {"datatype", datatypeOrRuntimeName(Info.Type)}, {"shape", dimsJson(Info.Shape)}};
  };
  json Inputs = json::array(), Outputs = json::array();
  for (size_t I = 0; I < M.getInputNames().size(); ++I)
    Inputs.push_back(describe(M.getInputTensorInfo(I)));
  for (size_t I = 0; I < M.getOutputNames().size(); ++I)
    Outputs.push_back(describe(M.getOutputTensorInfo(I)));
  J["inputs"] = std::move(Inputs);
  J["outputs"] = std::move(Outputs);
  return J.dump(-1, ' ', false, json::error_handler_t::replace);
}

} // namespace oip
} // namespace remote
} // namespace optimium
