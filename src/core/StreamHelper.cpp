// operator<< for the public types (Utils/StreamHelper.h), the toString()s of the enums declared in
// InferRequest.h / Options.h, and TensorInfo / QuantScheme printing. Tensors print numpy-like,
// eliding each dimension beyond config::getPrintThreshold() elements.
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "Optimium/Runtime/Utils/StreamHelper.h"
#include "core/ErrorConversion.h"
#include "core/LowPrecision.h"
#include "core/TensorImpl.h"

namespace optimium {
namespace runtime {

const char *toString(InferStatus Status) {
  switch (Status) {
  case InferStatus::Ready: return "Ready";
  case InferStatus::Running: return "Running";
  case InferStatus::Fault: return "Fault";
  }
  return "Unknown";
}

const char *toString(SchedulerType Type) {
  switch (Type) {
  case SchedulerType::Auto: return "Auto";
  case SchedulerType::Exclusive: return "Exclusive";
  case SchedulerType::Sequential: return "Sequential";
  case SchedulerType::Pipeline: return "Pipeline";
  }
  return "Unknown";
}

const char *toString(ComputePrecision Precision) {
  switch (Precision) {
  case ComputePrecision::Float32: return "float32";
  case ComputePrecision::BFloat16: return "bfloat16";
  }
  return "Unknown";
}

namespace {

/// "1x3x224x224", "batchx3" with symbols, "scalar" for rank 0.
std::string shapeString(const TensorShape &Shape) {
  if (Shape.getRank() == 0)
    return "scalar";
  std::string S;
  for (size_t I = 0; I < Shape.getRank(); ++I) {
    if (I)
      S += 'x';
    S += Shape[I].isConst() ? std::to_string(Shape[I].value()) : Shape[I].toString();
  }
  return S;
}

/// A float with the configured precision: fixed, or scientific for very large / small values.
std::string formatReal(double V, int Precision) {
  if (std::isnan(V))
    return "nan";
  if (std::isinf(V))
    return V < 0 ? "-inf" : "inf";
  const double A = std::fabs(V);
  char Buf[512];
  if (A != 0 && (A >= 1e16 || A < 1e-4))
    std::snprintf(Buf, sizeof(Buf), "%.*e", Precision, V);
  else
    std::snprintf(Buf, sizeof(Buf), "%.*f", Precision, V);
  return Buf;
}

std::string quoteString(const std::string &S) {
  std::string R = "\"";
  for (char C : S) {
    switch (C) {
    case '"': R += "\\\""; break;
    case '\\': R += "\\\\"; break;
    case '\n': R += "\\n"; break;
    case '\t': R += "\\t"; break;
    default: R += C;
    }
  }
  return R + "\"";
}

std::string formatElement(ElementType Type, const void *Data, size_t Index, int Precision) {
  switch (Type) {
  case ElementType::Bool: return static_cast<const uint8_t *>(Data)[Index] ? "true" : "false";
  case ElementType::I8: return std::to_string(static_cast<const int8_t *>(Data)[Index]);
  case ElementType::I16: return std::to_string(static_cast<const int16_t *>(Data)[Index]);
  case ElementType::I32: return std::to_string(static_cast<const int32_t *>(Data)[Index]);
  case ElementType::I64: return std::to_string(static_cast<const int64_t *>(Data)[Index]);
  case ElementType::U8: return std::to_string(static_cast<const uint8_t *>(Data)[Index]);
  case ElementType::U16: return std::to_string(static_cast<const uint16_t *>(Data)[Index]);
  case ElementType::U32: return std::to_string(static_cast<const uint32_t *>(Data)[Index]);
  case ElementType::U64: return std::to_string(static_cast<const uint64_t *>(Data)[Index]);
  case ElementType::F16: return formatReal(static_cast<float>(static_cast<const float16 *>(Data)[Index]), Precision);
  case ElementType::BF16:
    return formatReal(static_cast<float>(static_cast<const bfloat16 *>(Data)[Index]), Precision);
  case ElementType::F32: return formatReal(static_cast<const float *>(Data)[Index], Precision);
  case ElementType::F64: return formatReal(static_cast<const double *>(Data)[Index], Precision);
  case ElementType::String: return quoteString(static_cast<const std::string *>(Data)[Index]);
  case ElementType::I4: case ElementType::U4: case ElementType::I2: case ElementType::U2:
    return std::to_string(detail::lowp::subByteIntValue(Type, static_cast<const uint8_t *>(Data)[Index]));
  case ElementType::F8E4M3FN: case ElementType::F8E4M3FNUZ: case ElementType::F8E5M2:
  case ElementType::F8E5M2FNUZ: case ElementType::F8E8M0: case ElementType::F4E2M1:
    return formatReal(static_cast<float>(detail::lowp::lowPrecisionToDouble(Type, static_cast<const uint8_t *>(Data)[Index])),
                      Precision);
  case ElementType::Undefined: break;
  }
  return "?";
}

/// Indices of a dimension of size N to print; -1 marks the elided middle.
std::vector<int64_t> visibleIndices(int64_t N, int Threshold) {
  std::vector<int64_t> R;
  if (Threshold < 0 || N <= Threshold) {
    for (int64_t I = 0; I < N; ++I)
      R.push_back(I);
    return R;
  }
  const int64_t Head = (Threshold + 1) / 2, Tail = Threshold / 2;
  for (int64_t I = 0; I < Head; ++I)
    R.push_back(I);
  R.push_back(-1);
  for (int64_t I = N - Tail; I < N; ++I)
    R.push_back(I);
  return R;
}

struct TensorPrinter {
  const TensorImpl &T;
  const void *Data;
  std::vector<size_t> Strides;
  int Threshold;
  int Precision;
  size_t Indent; ///< Column of the outermost '['.

  void print(std::ostream &OS, size_t Dim, size_t Base) const {
    const size_t Rank = T.Dims.size();
    const int64_t N = T.Dims[Dim];
    OS << '[';
    const std::vector<int64_t> Indices = visibleIndices(N, Threshold);
    const bool Last = Dim + 1 == Rank;
    // Between sub-arrays: a newline aligned under the opening bracket, plus one blank line per
    // extra level (numpy's layout for rank >= 3).
    std::string Sep = ",";
    if (Last) {
      Sep += ' ';
    } else {
      Sep.append(Rank - Dim - 1, '\n');
      Sep.append(Indent + Dim + 1, ' ');
    }
    for (size_t K = 0; K < Indices.size(); ++K) {
      if (K)
        OS << Sep;
      if (Indices[K] < 0)
        OS << "...";
      else if (Last)
        OS << formatElement(T.Type, Data, Base + static_cast<size_t>(Indices[K]), Precision);
      else
        print(OS, Dim + 1, Base + static_cast<size_t>(Indices[K]) * Strides[Dim]);
    }
    OS << ']';
  }
};

template <typename T> std::string joinElided(const std::vector<T> &Items, int Threshold) {
  std::ostringstream OS;
  OS << '[';
  const std::vector<int64_t> Indices = visibleIndices(static_cast<int64_t>(Items.size()), Threshold);
  for (size_t K = 0; K < Indices.size(); ++K) {
    if (K)
      OS << ", ";
    if (Indices[K] < 0)
      OS << "...";
    else
      OS << Items[static_cast<size_t>(Indices[K])];
  }
  OS << ']';
  return OS.str();
}

std::string joinNames(const std::vector<std::string> &Names) {
  std::string S = "[";
  for (size_t I = 0; I < Names.size(); ++I)
    S += (I ? ", " : "") + Names[I];
  return S + "]";
}

} // namespace

std::string QuantScheme::toString() const {
  std::ostringstream OS;
  OS << "QuantScheme(" << runtime::toString(StorageType);
  if (!isPerChannel()) {
    const QuantParam P = Params.empty() ? QuantParam() : Params[0];
    OS << ", scale: " << P.Scale << ", zero_point: " << P.ZeroPoint << ')';
    return OS.str();
  }
  std::vector<float> Scales;
  std::vector<int64_t> ZeroPoints;
  for (const QuantParam &P : Params) {
    Scales.push_back(P.Scale);
    ZeroPoints.push_back(P.ZeroPoint);
  }
  const int Threshold = config::getPrintThreshold();
  OS << ", axis: " << Axis << ", channels: " << Params.size() << ", scale: " << joinElided(Scales, Threshold)
     << ", zero_point: " << joinElided(ZeroPoints, Threshold) << ')';
  return OS.str();
}

size_t TensorInfo::getTensorSize() const {
  size_t Count = 1;
  for (size_t I = 0; I < Shape.getRank(); ++I) {
    if (!Shape[I].isConst())
      detail::throwIfError(detail::makeError(detail::ErrorCode::Shape, "tensor '", Name, "' has symbolic shape ",
                                             shapeString(Shape), ": its size is not known until it is resolved"));
    const int64_t D = Shape[I].value();
    Count *= static_cast<size_t>(D < 0 ? 0 : D);
  }
  return Count * getElementSize(Type);
}

std::string TensorInfo::toString() const {
  std::ostringstream OS;
  OS << "TensorInfo(name: " << Name << ", shape: " << shapeString(Shape) << ", type: " << runtime::toString(Type)
     << ", alignment: " << Alignment << ", padding: " << Padding << ", resizable: " << (Resizable ? "true" : "false");
  if (Scheme)
    OS << ", scheme: " << Scheme->toString();
  OS << ')';
  return OS.str();
}

std::ostream &operator<<(std::ostream &OS, ElementType Type) { return OS << toString(Type); }
std::ostream &operator<<(std::ostream &OS, const Expr &E) { return OS << E.toString(); }
std::ostream &operator<<(std::ostream &OS, const TensorShape &Shape) { return OS << shapeString(Shape); }
std::ostream &operator<<(std::ostream &OS, const TensorInfo &Info) { return OS << Info.toString(); }
std::ostream &operator<<(std::ostream &OS, const QuantScheme &Scheme) { return OS << Scheme.toString(); }

std::ostream &operator<<(std::ostream &OS, const Tensor &T) {
  const std::shared_ptr<TensorImpl> &Impl = T.impl();
  if (!Impl)
    return OS << "Tensor(empty)";
  std::string Head = "Tensor(";
  if (!Impl->Dims.empty())
    Head += shapeString(Impl->Shape) + "x";
  Head += toString(Impl->Type);
  Head += ") ";
  const void *Data = Impl->data();
  if (!Data && Impl->bytes() != 0)
    return OS << Head << "<released>";
  std::ostringstream Body; // built apart so the caller's stream flags stay untouched
  Body << Head;
  const int Precision = config::getPrintPrecision();
  if (Impl->Dims.empty()) {
    Body << formatElement(Impl->Type, Data, 0, Precision);
  } else {
    TensorPrinter P{*Impl, Data, {}, config::getPrintThreshold(), Precision, Head.size()};
    P.Strides.assign(Impl->Dims.size(), 1);
    for (size_t I = Impl->Dims.size() - 1; I > 0; --I)
      P.Strides[I - 1] = P.Strides[I] * static_cast<size_t>(Impl->Dims[I]);
    P.print(Body, 0, 0);
  }
  return OS << Body.str();
}

std::ostream &operator<<(std::ostream &OS, const DeviceID &ID) { return OS << ID.toString(); }
std::ostream &operator<<(std::ostream &OS, const HostInfo &Info) { return OS << Info.toString(); }
std::ostream &operator<<(std::ostream &OS, PlatformKind Kind) { return OS << toString(Kind); }
std::ostream &operator<<(std::ostream &OS, DeviceKind Kind) { return OS << toString(Kind); }
std::ostream &operator<<(std::ostream &OS, OSKind Kind) { return OS << toString(Kind); }
std::ostream &operator<<(std::ostream &OS, InferStatus Status) { return OS << toString(Status); }
std::ostream &operator<<(std::ostream &OS, SchedulerType Type) { return OS << toString(Type); }
std::ostream &operator<<(std::ostream &OS, LogLevel Level) { return OS << toString(Level); }
std::ostream &operator<<(std::ostream &OS, const Attribute &Attr) { return OS << Attr.toString(); }

std::ostream &operator<<(std::ostream &OS, const Version &V) {
  std::ostringstream S;
  S << V.Major << '.' << V.Minor << '.' << V.Patch << (V.Tag ? V.Tag : "");
  if (V.CommitID && *V.CommitID)
    S << " (commit " << V.CommitID << (V.BuildInfo && *V.BuildInfo ? std::string(", ") + V.BuildInfo : "") << ')';
  return OS << S.str();
}

std::ostream &operator<<(std::ostream &OS, const OpInfo &Op) {
  std::ostringstream S;
  S << "OpInfo(name: " << Op.Name << ", type: " << Op.Type << ", device: " << Op.Device.toString()
    << ", inputs: " << joinNames(Op.Inputs) << ", outputs: " << joinNames(Op.Outputs) << ", attributes: {";
  bool First = true;
  for (const auto &KV : Op.Attributes) {
    S << (First ? "" : ", ") << KV.first << ": " << KV.second.toString();
    First = false;
  }
  S << "})";
  return OS << S.str();
}

} // namespace runtime
} // namespace optimium
