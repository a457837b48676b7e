// Payload encodings of the runtime's types (docs/remote-protocol.md, "Values").
#include "remote/protocol/Codec.h"

#include <cctype>
#include <cstring>
#include <limits>

namespace optimium {
namespace remote {

namespace {

constexpr uint32_t kMaxRank = 64;
constexpr int kMaxAttributeDepth = 32;

template <typename E> E readEnum(Reader &R, unsigned Max, const char *What) {
  const uint8_t V = R.u8();
  if (V > Max)
    throw DecodeError(std::string("bad ") + What + " " + std::to_string(V));
  return static_cast<E>(V);
}

void writeStrings(Writer &W, const std::vector<std::string> &Ss) {
  W.u32(static_cast<uint32_t>(Ss.size()));
  for (const std::string &S : Ss)
    W.str(S);
}

std::vector<std::string> readStrings(Reader &R) {
  std::vector<std::string> Out(R.count(4));
  for (std::string &S : Out)
    S = R.str();
  return Out;
}

void writeI64s(Writer &W, const std::vector<int64_t> &Vs) {
  W.u32(static_cast<uint32_t>(Vs.size()));
  for (int64_t V : Vs)
    W.i64(V);
}

std::vector<int64_t> readI64s(Reader &R) {
  std::vector<int64_t> Out(R.count(8));
  for (int64_t &V : Out)
    V = R.i64();
  return Out;
}

// --- Expr text parser (the inverse of Expr::toString) -------------------------------------------
class ExprParser {
public:
  explicit ExprParser(const std::string &T) : T(T) {}
  rt::Expr parse() {
    rt::Expr E = sum();
    skip();
    if (Pos != T.size())
      fail("unexpected '" + T.substr(Pos, 1) + "'");
    return E;
  }

private:
  [[noreturn]] void fail(const std::string &Why) {
    throw DecodeError("bad shape expression '" + T + "': " + Why);
  }
  void skip() {
    while (Pos < T.size() && T[Pos] == ' ')
      ++Pos;
  }
  bool eat(char C) {
    skip();
    if (Pos < T.size() && T[Pos] == C) {
      ++Pos;
      return true;
    }
    return false;
  }
  rt::Expr sum() {
    rt::Expr E = product();
    for (;;) {
      if (eat('+'))
        E = E + product();
      else if (eat('-'))
        E = E - product();
      else
        return E;
    }
  }
  rt::Expr product() {
    rt::Expr E = atom();
    for (;;) {
      if (eat('*'))
        E = E * atom();
      else if (eat('/'))
        E = E / atom();
      else if (eat('%'))
        E = E % atom();
      else
        return E;
    }
  }
  rt::Expr atom() {
    if (++Depth > 64)
      fail("nested too deeply");
    struct Leave {
      int &D;
      ~Leave() { --D; }
    } L{Depth};
    skip();
    if (Pos >= T.size())
      fail("unexpected end");
    if (eat('(')) {
      rt::Expr E = sum();
      if (!eat(')'))
        fail("missing ')'");
      return E;
    }
    if (eat('-'))
      return rt::Expr(0) - atom();
    const char C = T[Pos];
    if (std::isdigit(static_cast<unsigned char>(C))) {
      int64_t V = 0;
      while (Pos < T.size() && std::isdigit(static_cast<unsigned char>(T[Pos]))) {
        if (V > (std::numeric_limits<int64_t>::max() - 9) / 10)
          fail("constant out of range");
        V = V * 10 + (T[Pos++] - '0');
      }
      return rt::Expr(static_cast<long long>(V));
    }
    const size_t Start = Pos;
    while (Pos < T.size() && T[Pos] != ' ' && T[Pos] != '(' && T[Pos] != ')' && T[Pos] != ',' &&
           !std::strchr("+-*/%", T[Pos]))
      ++Pos;
    if (Pos == Start)
      fail("unexpected '" + T.substr(Pos, 1) + "'");
    const std::string Name = T.substr(Start, Pos - Start);
    if ((Name == "min" || Name == "max") && eat('(')) {
      rt::Expr A = sum();
      if (!eat(','))
        fail("missing ','");
      rt::Expr B = sum();
      if (!eat(')'))
        fail("missing ')'");
      return Name == "min" ? min(A, B) : max(A, B); // friends of Expr (ADL)
    }
    return rt::Expr(Name);
  }
  const std::string &T;
  size_t Pos = 0;
  int Depth = 0;
};

} // namespace

// --- errors --------------------------------------------------------------------------------------
ErrorCode errorCodeOf(std::exception_ptr E) {
  if (!E)
    E = std::current_exception();
  try {
    std::rethrow_exception(E);
  } catch (const rt::InvalidArgumentError &) {
    return ErrorCode::InvalidArgument;
  } catch (const rt::InvalidStateError &) {
    return ErrorCode::InvalidState;
  } catch (const rt::InvalidOperationError &) {
    return ErrorCode::InvalidOperation;
  } catch (const rt::TypeError &) {
    return ErrorCode::Type;
  } catch (const rt::ShapeError &) {
    return ErrorCode::Shape;
  } catch (const rt::ExtensionError &) {
    return ErrorCode::Extension;
  } catch (const rt::DeviceError &) {
    return ErrorCode::Device;
  } catch (const rt::ModelError &) {
    return ErrorCode::Model;
  } catch (const rt::RequestError &) {
    return ErrorCode::Request;
  } catch (const rt::InferError &) {
    return ErrorCode::Infer;
  } catch (const rt::OutOfResourceError &) {
    return ErrorCode::OutOfResource;
  } catch (const rt::ContainerError &) {
    return ErrorCode::Container;
  } catch (const rt::RemoteError &) {
    return ErrorCode::Remote;
  } catch (const rt::IOError &) {
    return ErrorCode::IO;
  } catch (const rt::NetworkError &) {
    return ErrorCode::Network;
  } catch (const rt::OSError &) {
    return ErrorCode::OS;
  } catch (const rt::NotImplementedError &) {
    return ErrorCode::NotImplemented;
  } catch (const rt::Exception &) {
    return ErrorCode::Exception;
  } catch (const std::bad_alloc &) {
    return ErrorCode::OutOfResource;
  } catch (...) {
    return ErrorCode::Unknown;
  }
}

std::string errorMessageOf(std::exception_ptr E) {
  if (!E)
    E = std::current_exception();
  try {
    std::rethrow_exception(E);
  } catch (const std::exception &Ex) {
    return Ex.what();
  } catch (...) {
    return "unknown error";
  }
}

void throwError(uint32_t Code, const std::string &M) {
  switch (static_cast<ErrorCode>(Code)) {
  case ErrorCode::InvalidArgument: throw rt::InvalidArgumentError(M);
  case ErrorCode::InvalidState: throw rt::InvalidStateError(M);
  case ErrorCode::InvalidOperation: throw rt::InvalidOperationError(M);
  case ErrorCode::Type: throw rt::TypeError(M);
  case ErrorCode::Shape: throw rt::ShapeError(M);
  case ErrorCode::Extension: throw rt::ExtensionError(M);
  case ErrorCode::Device: throw rt::DeviceError(M);
  case ErrorCode::Model: throw rt::ModelError(M);
  case ErrorCode::Request: throw rt::RequestError(M);
  case ErrorCode::Infer: throw rt::InferError(M);
  case ErrorCode::OutOfResource: throw rt::OutOfResourceError(M);
  case ErrorCode::Container: throw rt::ContainerError(M);
  case ErrorCode::Remote: throw rt::RemoteError(M);
  case ErrorCode::IO: throw rt::IOError(M);
  case ErrorCode::Network: throw rt::NetworkError(M);
  case ErrorCode::OS: throw rt::OSError(M);
  case ErrorCode::NotImplemented: throw rt::NotImplementedError(M);
  case ErrorCode::Exception:
  case ErrorCode::Unknown: break;
  }
  throw rt::Exception(M);
}

void writeError(Writer &W, ErrorCode Code, const std::string &Message) {
  W.u32(static_cast<uint32_t>(Code));
  W.str(Message);
}

// --- shapes and tensors --------------------------------------------------------------------------
rt::Expr parseExpr(const std::string &Text) { return ExprParser(Text).parse(); }

void writeShape(Writer &W, const rt::TensorShape &S) {
  W.u32(static_cast<uint32_t>(S.getRank()));
  for (const rt::Expr &D : S) {
    if (D.isConst()) {
      W.u8(0);
      W.i64(D.value());
    } else if (D.isSymbol()) {
      W.u8(1);
      W.str(D.symbol());
    } else {
      W.u8(2);
      W.str(D.toString());
    }
  }
}

rt::TensorShape readShape(Reader &R) {
  const uint32_t Rank = R.count(5);
  if (Rank > kMaxRank)
    throw DecodeError("rank " + std::to_string(Rank) + " exceeds " + std::to_string(kMaxRank));
  std::vector<rt::Expr> Dims;
  Dims.reserve(Rank);
  for (uint32_t I = 0; I < Rank; ++I) {
    const uint8_t Kind = R.u8();
    if (Kind == 0)
      Dims.push_back(rt::Expr(static_cast<long long>(R.i64())));
    else if (Kind == 1 || Kind == 2) {
      const std::string Text = R.str();
      if (Text.empty())
        throw DecodeError("empty symbolic dimension");
      Dims.push_back(Kind == 1 ? rt::Expr(Text) : parseExpr(Text));
    } else
      throw DecodeError("bad dimension kind " + std::to_string(Kind));
  }
  return rt::TensorShape(std::move(Dims));
}

void writeTensor(Writer &W, const rt::Tensor &T) {
  if (!T.impl())
    throw rt::InvalidArgumentError("cannot send an empty tensor handle");
  W.u8(static_cast<uint8_t>(T.getType()));
  writeShape(W, T.getShape());
  if (T.getType() == rt::ElementType::String) {
    const std::string *S = static_cast<const std::string *>(T.data());
    const size_t N = T.getElementCount();
    uint64_t Bytes = 0;
    for (size_t I = 0; I < N; ++I)
      Bytes += 4 + S[I].size();
    W.u64(Bytes);
    for (size_t I = 0; I < N; ++I)
      W.str(S[I]);
    return;
  }
  const size_t Bytes = T.getTensorSize();
  W.u64(Bytes);
  if (Bytes)
    std::memcpy(W.grow(Bytes), T.data(), Bytes);
}

rt::Tensor readTensor(Reader &R) {
  const auto Type = readEnum<rt::ElementType>(R, static_cast<unsigned>(rt::ElementType::F8E8M0), "element type");
  if (Type == rt::ElementType::Undefined)
    throw DecodeError("tensor of undefined element type");
  rt::TensorShape Shape = readShape(R);
  uint64_t Count = 1;
  for (const rt::Expr &D : Shape) {
    if (!D.isConst() || D.value() < 0)
      throw DecodeError("tensor shape " + Shape.toString() + " is not concrete");
    const uint64_t V = static_cast<uint64_t>(D.value());
    if (V && Count > (std::numeric_limits<uint64_t>::max() >> 4) / V)
      throw DecodeError("tensor shape " + Shape.toString() + " is too large");
    Count *= V;
  }
  const uint64_t Bytes = R.u64();
  if (Bytes > R.remaining())
    throw DecodeError("tensor data truncated");
  if (Type == rt::ElementType::String) {
    if (Count > Bytes / 4)
      throw DecodeError("string tensor data truncated");
    rt::Tensor T = rt::tensor(Type, Shape);
    std::string *S = static_cast<std::string *>(T.data());
    Reader Sub(R.raw(static_cast<size_t>(Bytes)), static_cast<size_t>(Bytes));
    for (uint64_t I = 0; I < Count; ++I)
      S[I] = Sub.str();
    Sub.expectEnd();
    return T;
  }
  const uint64_t Want = Count * rt::getElementSize(Type);
  if (Bytes != Want)
    throw DecodeError("tensor " + Shape.toString() + " of " + rt::toString(Type) + " needs " +
                      std::to_string(Want) + " bytes, got " + std::to_string(Bytes));
  rt::Tensor T = rt::tensor(Type, Shape);
  if (Bytes)
    std::memcpy(T.data(), R.raw(static_cast<size_t>(Bytes)), static_cast<size_t>(Bytes));
  return T;
}

void writeNamedTensors(Writer &W, const std::vector<std::pair<std::string, rt::Tensor>> &Ts) {
  W.u32(static_cast<uint32_t>(Ts.size()));
  for (const auto &NT : Ts) {
    W.str(NT.first);
    writeTensor(W, NT.second);
  }
}

std::vector<std::pair<std::string, rt::Tensor>> readNamedTensors(Reader &R) {
  const uint32_t N = R.count(4 + 1 + 4 + 8);
  std::vector<std::pair<std::string, rt::Tensor>> Out;
  Out.reserve(N);
  for (uint32_t I = 0; I < N; ++I) {
    std::string Name = R.str();
    rt::Tensor T = readTensor(R);
    Out.emplace_back(std::move(Name), std::move(T));
  }
  return Out;
}

// --- devices, attributes, infos ------------------------------------------------------------------
void writeDevice(Writer &W, const rt::DeviceID &D) {
  W.u8(static_cast<uint8_t>(D.getPlatform()));
  W.u8(static_cast<uint8_t>(D.getDeviceKind()));
  W.u8(static_cast<uint8_t>(D.getIndex()));
  W.u8(static_cast<uint8_t>(D.getHostID()));
}

rt::DeviceID readDevice(Reader &R) {
  const auto P = readEnum<rt::PlatformKind>(R, static_cast<unsigned>(rt::PlatformKind::Hexagon), "platform");
  const auto K = readEnum<rt::DeviceKind>(R, static_cast<unsigned>(rt::DeviceKind::AnyNPU), "device kind");
  const uint8_t Index = R.u8();
  const uint8_t Host = R.u8();
  return rt::DeviceID::from(P, K, Index, Host);
}

namespace {

void writeAttributeAt(Writer &W, const rt::Attribute &A) {
  using K = rt::AttributeKind;
  const K Kind = A ? A.getKind() : K::None;
  W.u8(static_cast<uint8_t>(Kind));
  switch (Kind) {
  case K::None: return;
  case K::I8: W.i64(A.cast<rt::I8Attr>().value()); return;
  case K::I16: W.i64(A.cast<rt::I16Attr>().value()); return;
  case K::I32: W.i64(A.cast<rt::I32Attr>().value()); return;
  case K::I64: W.i64(A.cast<rt::I64Attr>().value()); return;
  case K::U8: W.u64(A.cast<rt::U8Attr>().value()); return;
  case K::U16: W.u64(A.cast<rt::U16Attr>().value()); return;
  case K::U32: W.u64(A.cast<rt::U32Attr>().value()); return;
  case K::U64: W.u64(A.cast<rt::U64Attr>().value()); return;
  case K::Bool: W.boolean(A.cast<rt::BoolAttr>().value()); return;
  case K::String: W.str(A.cast<rt::StringAttr>().value()); return;
  case K::F16:
  case K::F32:
  case K::F64:
  case K::BF16:
  case K::TF32: {
    double V = 0;
    if (Kind == K::F16)
      V = static_cast<float>(A.cast<rt::F16Attr>().value());
    else if (Kind == K::F32)
      V = A.cast<rt::F32Attr>().value();
    else if (Kind == K::F64)
      V = A.cast<rt::F64Attr>().value();
    else if (Kind == K::BF16)
      V = static_cast<float>(A.cast<rt::BF16Attr>().value());
    else
      V = A.cast<rt::TF32Attr>().value();
    uint64_t B;
    std::memcpy(&B, &V, 8);
    W.u64(B);
    return;
  }
  case K::QS8:
  case K::QS16:
  case K::QS32: {
    int64_t V = 0;
    float Scale = 1;
    int64_t Zp = 0;
    if (Kind == K::QS8) {
      auto Q = A.cast<rt::QS8Attr>();
      V = Q.value(), Scale = Q.scale(), Zp = Q.zeroPoint();
    } else if (Kind == K::QS16) {
      auto Q = A.cast<rt::QS16Attr>();
      V = Q.value(), Scale = Q.scale(), Zp = Q.zeroPoint();
    } else {
      auto Q = A.cast<rt::QS32Attr>();
      V = Q.value(), Scale = Q.scale(), Zp = Q.zeroPoint();
    }
    W.i64(V);
    W.f32(Scale);
    W.i64(Zp);
    return;
  }
  case K::List: {
    auto L = A.cast<rt::ListAttr>();
    W.u32(static_cast<uint32_t>(L.size()));
    for (const rt::Attribute &E : L)
      writeAttributeAt(W, E);
    return;
  }
  case K::Map: {
    auto M = A.cast<rt::MapAttr>();
    W.u32(static_cast<uint32_t>(M.size()));
    for (const auto &KV : M.value()) {
      W.str(KV.first);
      writeAttributeAt(W, KV.second);
    }
    return;
  }
  }
}

rt::Attribute readAttributeAt(Reader &R, int Depth) {
  using K = rt::AttributeKind;
  if (Depth > kMaxAttributeDepth)
    throw DecodeError("attribute nested too deeply");
  const K Kind = readEnum<K>(R, static_cast<unsigned>(K::Map), "attribute kind");
  switch (Kind) {
  case K::None: return rt::Attribute();
  case K::I8:
  case K::I16:
  case K::I32:
  case K::I64: return rt::Attribute::getInt(Kind, R.i64());
  case K::U8:
  case K::U16:
  case K::U32:
  case K::U64: return rt::Attribute::getUInt(Kind, R.u64());
  case K::Bool: return rt::Attribute::getBool(R.boolean());
  case K::String: return rt::Attribute::getString(R.str());
  case K::F16:
  case K::F32:
  case K::F64:
  case K::BF16:
  case K::TF32: {
    const uint64_t B = R.u64();
    double V;
    std::memcpy(&V, &B, 8);
    return rt::Attribute::getFloat(Kind, V);
  }
  case K::QS8:
  case K::QS16:
  case K::QS32: {
    const int64_t V = R.i64();
    const float Scale = R.f32();
    const int64_t Zp = R.i64();
    return rt::Attribute::getQuantized(Kind, V, Scale, Zp);
  }
  case K::List: {
    std::vector<rt::Attribute> L(R.count(1));
    for (rt::Attribute &E : L)
      E = readAttributeAt(R, Depth + 1);
    return rt::Attribute::getList(L);
  }
  case K::Map: {
    const uint32_t N = R.count(5);
    std::map<std::string, rt::Attribute> M;
    for (uint32_t I = 0; I < N; ++I) {
      std::string Key = R.str();
      M[Key] = readAttributeAt(R, Depth + 1);
    }
    return rt::Attribute::getMap(M);
  }
  }
  throw DecodeError("bad attribute kind");
}

} // namespace

void writeAttribute(Writer &W, const rt::Attribute &A) { writeAttributeAt(W, A); }
rt::Attribute readAttribute(Reader &R) { return readAttributeAt(R, 0); }

void writeTensorInfo(Writer &W, const rt::TensorInfo &I) {
  W.str(I.Name);
  writeShape(W, I.Shape);
  W.u8(static_cast<uint8_t>(I.Type));
  W.u32(I.Alignment);
  W.u32(I.Padding);
  W.u8(static_cast<uint8_t>((I.Resizable ? 1 : 0) | (I.OptOut ? 2 : 0) | (I.Constant ? 4 : 0)));
  W.boolean(static_cast<bool>(I.Scheme));
  if (I.Scheme) {
    W.u8(static_cast<uint8_t>(I.Scheme->getStorageType()));
    W.i32(I.Scheme->getAxis());
    W.u32(static_cast<uint32_t>(I.Scheme->size()));
    for (size_t P = 0; P < I.Scheme->size(); ++P) {
      W.f32(I.Scheme->getParam(P).Scale);
      W.i64(I.Scheme->getParam(P).ZeroPoint);
    }
  }
}

rt::TensorInfo readTensorInfo(Reader &R) {
  rt::TensorInfo I;
  I.Name = R.str();
  I.Shape = readShape(R);
  I.Type = readEnum<rt::ElementType>(R, static_cast<unsigned>(rt::ElementType::F8E8M0), "element type");
  I.Alignment = R.u32();
  I.Padding = R.u32();
  const uint8_t Flags = R.u8();
  if (Flags > 7)
    throw DecodeError("bad tensor info flags");
  I.Resizable = Flags & 1;
  I.OptOut = Flags & 2;
  I.Constant = Flags & 4;
  if (R.boolean()) {
    const auto Storage = readEnum<rt::ElementType>(R, static_cast<unsigned>(rt::ElementType::F8E8M0), "element type");
    const int Axis = R.i32();
    std::vector<rt::QuantParam> Params(R.count(12));
    for (rt::QuantParam &P : Params) {
      P.Scale = R.f32();
      P.ZeroPoint = R.i64();
    }
    I.Scheme = std::make_shared<rt::QuantScheme>(Storage, std::move(Params), Axis);
  }
  return I;
}

void writeTensorInfos(Writer &W, const std::vector<rt::TensorInfo> &Is) {
  W.u32(static_cast<uint32_t>(Is.size()));
  for (const rt::TensorInfo &I : Is)
    writeTensorInfo(W, I);
}

std::vector<rt::TensorInfo> readTensorInfos(Reader &R) {
  std::vector<rt::TensorInfo> Out(R.count(19));
  for (rt::TensorInfo &I : Out)
    I = readTensorInfo(R);
  return Out;
}

void writeOpInfo(Writer &W, const rt::OpInfo &O) {
  W.str(O.Name);
  W.str(O.Type);
  writeDevice(W, O.Device);
  writeStrings(W, O.Inputs);
  writeStrings(W, O.Outputs);
  W.u32(static_cast<uint32_t>(O.Attributes.size()));
  for (const auto &KV : O.Attributes) {
    W.str(KV.first);
    writeAttribute(W, KV.second);
  }
}

rt::OpInfo readOpInfo(Reader &R) {
  rt::OpInfo O;
  O.Name = R.str();
  O.Type = R.str();
  O.Device = readDevice(R);
  O.Inputs = readStrings(R);
  O.Outputs = readStrings(R);
  const uint32_t N = R.count(5);
  for (uint32_t I = 0; I < N; ++I) {
    std::string Key = R.str();
    O.Attributes[Key] = readAttribute(R);
  }
  return O;
}

// --- options -------------------------------------------------------------------------------------
void writePerModelOptions(Writer &W, const rt::PerModelOptions &O) {
  W.u32(static_cast<uint32_t>(O.Devices.size()));
  for (const rt::DeviceID &D : O.Devices)
    writeDevice(W, D);
  W.boolean(O.Strict);
  W.boolean(O.EnableMemoryOptimization);
  W.str(O.IntermediateSavePath);
  W.boolean(O.IndexedIntermediateSave);
  W.str(O.Passphrase);
  W.i32(O.ThreadCount);
  W.u32(static_cast<uint32_t>(O.ResizableCapacities.size()));
  for (const auto &KV : O.ResizableCapacities) {
    W.str(KV.first);
    writeShape(W, KV.second);
  }
  W.u8(static_cast<uint8_t>(O.Precision)); // since protocol version 2
}

void readPerModelOptions(Reader &R, rt::PerModelOptions &O) {
  const uint32_t ND = R.count(4);
  for (uint32_t I = 0; I < ND; ++I)
    O.Devices.push_back(readDevice(R));
  O.Strict = R.boolean();
  O.EnableMemoryOptimization = R.boolean();
  O.IntermediateSavePath = R.str();
  O.IndexedIntermediateSave = R.boolean();
  O.Passphrase = R.str();
  O.ThreadCount = R.i32();
  const uint32_t NC = R.count(8);
  for (uint32_t I = 0; I < NC; ++I) {
    std::string Name = R.str();
    O.ResizableCapacities[Name] = readShape(R);
  }
  O.Precision = readEnum<rt::ComputePrecision>(R, static_cast<unsigned>(rt::ComputePrecision::BFloat16), "compute precision");
}

void writePoolTuning(Writer &W, const rt::PoolTuning &O) {
  W.u32(static_cast<uint32_t>(O.Cores.size()));
  for (int C : O.Cores)
    W.i32(C);
  W.i32(O.SpinIterations);
  W.i32(O.SpinYieldIterations);
  W.boolean(O.DisableDenormals);
  W.boolean(O.EnableWorkStealing);
}

void readPoolTuning(Reader &R, rt::PoolTuning &O) {
  O.Cores.resize(R.count(4));
  for (int &C : O.Cores)
    C = R.i32();
  O.SpinIterations = R.i32();
  O.SpinYieldIterations = R.i32();
  O.DisableDenormals = R.boolean();
  O.EnableWorkStealing = R.boolean();
}

void writeLoadOptions(Writer &W, const rt::ModelLoadOptions &O) {
  writePerModelOptions(W, O);
  writePoolTuning(W, O);
  W.u8(static_cast<uint8_t>(O.Scheduler));
}

rt::ModelLoadOptions readLoadOptions(Reader &R) {
  rt::ModelLoadOptions O;
  readPerModelOptions(R, O);
  readPoolTuning(R, O);
  O.Scheduler = readEnum<rt::SchedulerType>(R, static_cast<unsigned>(rt::SchedulerType::Pipeline), "scheduler");
  return O;
}

void writeProfileOptions(Writer &W, const rt::ProfileOptions &O) {
  W.i32(O.Repeat);
  W.i32(O.WarmUp);
  W.i64(O.WarmUpTime.count());
  W.i64(O.StopThreshold.count());
  W.i32(O.CheckPeriod);
  W.u64(O.EventBufferSize);
}

rt::ProfileOptions readProfileOptions(Reader &R) {
  rt::ProfileOptions O;
  O.Repeat = R.i32();
  O.WarmUp = R.i32();
  O.WarmUpTime = std::chrono::microseconds(R.i64());
  O.StopThreshold = std::chrono::microseconds(R.i64());
  O.CheckPeriod = R.i32();
  O.EventBufferSize = static_cast<size_t>(R.u64());
  return O;
}

// --- profiling results ---------------------------------------------------------------------------
void writeProfileEvents(Writer &W, rt::ArrayRef<rt::ProfileEvent> Events) {
  W.u32(static_cast<uint32_t>(Events.size()));
  for (const rt::ProfileEvent &E : Events) {
    W.u8(static_cast<uint8_t>(E.Kind));
    W.i32(E.Operation);
    W.i64(std::chrono::duration_cast<std::chrono::nanoseconds>(E.TimeStamp.time_since_epoch()).count());
    W.u32(E.ThreadID);
    W.i32(E.TensorID);
    writeDevice(W, E.SourceDevice);
    writeDevice(W, E.DestDevice);
  }
}

std::vector<rt::ProfileEvent> readProfileEvents(Reader &R) {
  std::vector<rt::ProfileEvent> Out(R.count(29));
  for (rt::ProfileEvent &E : Out) {
    E.Kind = readEnum<rt::ProfileEventKind>(R, static_cast<unsigned>(rt::ProfileEventKind::WaitEnd), "event kind");
    E.Operation = R.i32();
    E.TimeStamp = std::chrono::high_resolution_clock::time_point(
        std::chrono::duration_cast<std::chrono::high_resolution_clock::duration>(std::chrono::nanoseconds(R.i64())));
    E.ThreadID = R.u32();
    E.TensorID = R.i32();
    E.SourceDevice = readDevice(R);
    E.DestDevice = readDevice(R);
  }
  return Out;
}

namespace {
void writeDurationMap(Writer &W, const std::map<std::string, std::vector<int64_t>> &M) {
  W.u32(static_cast<uint32_t>(M.size()));
  for (const auto &KV : M) {
    W.str(KV.first);
    writeI64s(W, KV.second);
  }
}
std::map<std::string, std::vector<int64_t>> readDurationMap(Reader &R) {
  std::map<std::string, std::vector<int64_t>> M;
  const uint32_t N = R.count(8);
  for (uint32_t I = 0; I < N; ++I) {
    std::string Key = R.str();
    M[Key] = readI64s(R);
  }
  return M;
}
} // namespace

void writeProfileDurations(Writer &W, const rt::ProfileDurations &D) {
  W.str(D.ModelName);
  writeI64s(W, D.ModelDurations);
  writeDurationMap(W, D.LayerDurations);
  writeDurationMap(W, D.CopyDurations);
}

rt::ProfileDurations readProfileDurations(Reader &R) {
  rt::ProfileDurations D;
  D.ModelName = R.str();
  D.ModelDurations = readI64s(R);
  D.LayerDurations = readDurationMap(R);
  D.CopyDurations = readDurationMap(R);
  return D;
}

// --- handshake -----------------------------------------------------------------------------------
void writeHost(Writer &W, const HostDescription &H) {
  W.str(H.Name);
  W.u8(static_cast<uint8_t>(H.Architecture));
  W.u8(static_cast<uint8_t>(H.OS));
  W.u32(static_cast<uint32_t>(H.Devices.size()));
  for (const rt::DeviceID &D : H.Devices)
    writeDevice(W, D);
}

HostDescription readHost(Reader &R) {
  HostDescription H;
  H.Name = R.str();
  H.Architecture = readEnum<rt::DeviceKind>(R, static_cast<unsigned>(rt::DeviceKind::AnyNPU), "device kind");
  H.OS = readEnum<rt::OSKind>(R, static_cast<unsigned>(rt::OSKind::IOS), "OS");
  const uint32_t N = R.count(4);
  for (uint32_t I = 0; I < N; ++I)
    H.Devices.push_back(readDevice(R));
  return H;
}

void writeClientHello(Writer &W, const ClientHello &H) {
  W.u32(H.WantsCompression ? 1u : 0u);
  W.str(H.AccessToken);
  W.str(H.ClientName);
}

ClientHello readClientHello(Reader &R) {
  ClientHello H;
  const uint32_t Flags = R.u32();
  H.WantsCompression = Flags & 1u;
  H.AccessToken = R.str();
  H.ClientName = R.str();
  return H;
}

void writeServerHello(Writer &W, const ServerHello &H) {
  W.boolean(H.Accepted);
  W.str(H.Reason);
  W.boolean(H.Compression);
  W.u64(H.MaxMessageBytes);
  W.str(H.ServerVersion);
  writeHost(W, H.Host);
}

ServerHello readServerHello(Reader &R) {
  ServerHello H;
  H.Accepted = R.boolean();
  H.Reason = R.str();
  H.Compression = R.boolean();
  H.MaxMessageBytes = R.u64();
  H.ServerVersion = R.str();
  H.Host = readHost(R);
  return H;
}

} // namespace remote
} // namespace optimium
