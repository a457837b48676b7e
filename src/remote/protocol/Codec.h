// Encoding of the runtime's types in remote-protocol payloads (docs/remote-protocol.md, "Values"):
// tensors as raw bytes, shapes, tensor/op infos, attributes, options, profile results, host info,
// and errors as the runtime's error code + message. Shared by the client and the server.
#pragma once

#include <exception>
#include <map>
#include <string>
#include <vector>

#include "Optimium/Runtime.h"
#include "remote/protocol/Wire.h"

namespace optimium {
namespace remote {

namespace rt = optimium::runtime;

/// The runtime's exception types on the wire (stable numbers).
enum class ErrorCode : uint32_t {
  Unknown = 0, ///< a std::exception that is not an rt::Exception
  InvalidArgument = 1,
  InvalidState = 2,
  InvalidOperation = 3,
  Type = 4,
  Shape = 5,
  Extension = 6,
  Device = 7,
  Model = 8,
  Request = 9,
  Infer = 10,
  OutOfResource = 11,
  Container = 12,
  Remote = 13,
  IO = 14,
  Network = 15,
  OS = 16,
  NotImplemented = 17,
  Exception = 18, ///< rt::Exception itself
};

/// Classifies an exception (the current one when E is null).
ErrorCode errorCodeOf(std::exception_ptr E);
std::string errorMessageOf(std::exception_ptr E);
/// Throws the exception type of Code with Message.
[[noreturn]] void throwError(uint32_t Code, const std::string &Message);

// Shapes: each dimension a constant, a symbol, or an expression in Expr::toString() form.
void writeShape(Writer &W, const rt::TensorShape &S);
rt::TensorShape readShape(Reader &R);
/// Parses Expr::toString() text ("batch*2+1", "min(a, b)") back into an Expr.
rt::Expr parseExpr(const std::string &Text);

/// type, shape, u64 byte count, bytes (String tensors: u32 length + bytes per element).
void writeTensor(Writer &W, const rt::Tensor &T);
rt::Tensor readTensor(Reader &R);
/// A list of tensors, each with a name ("" in positional lists).
void writeNamedTensors(Writer &W, const std::vector<std::pair<std::string, rt::Tensor>> &Ts);
std::vector<std::pair<std::string, rt::Tensor>> readNamedTensors(Reader &R);

void writeDevice(Writer &W, const rt::DeviceID &D);
rt::DeviceID readDevice(Reader &R);
void writeAttribute(Writer &W, const rt::Attribute &A);
rt::Attribute readAttribute(Reader &R);
void writeTensorInfo(Writer &W, const rt::TensorInfo &I);
rt::TensorInfo readTensorInfo(Reader &R);
void writeTensorInfos(Writer &W, const std::vector<rt::TensorInfo> &Is);
std::vector<rt::TensorInfo> readTensorInfos(Reader &R);
void writeOpInfo(Writer &W, const rt::OpInfo &O);
rt::OpInfo readOpInfo(Reader &R);

void writePerModelOptions(Writer &W, const rt::PerModelOptions &O);
void readPerModelOptions(Reader &R, rt::PerModelOptions &O);
void writePoolTuning(Writer &W, const rt::PoolTuning &O);
void readPoolTuning(Reader &R, rt::PoolTuning &O);
void writeLoadOptions(Writer &W, const rt::ModelLoadOptions &O);
rt::ModelLoadOptions readLoadOptions(Reader &R);
void writeProfileOptions(Writer &W, const rt::ProfileOptions &O);
rt::ProfileOptions readProfileOptions(Reader &R);

void writeProfileEvents(Writer &W, rt::ArrayRef<rt::ProfileEvent> Events);
std::vector<rt::ProfileEvent> readProfileEvents(Reader &R);
void writeProfileDurations(Writer &W, const rt::ProfileDurations &D);
rt::ProfileDurations readProfileDurations(Reader &R);

/// Host info with its strings and devices owned (rt::HostInfo only refers to them).
struct HostDescription {
  std::string Name;
  rt::DeviceKind Architecture = rt::DeviceKind::Unspecified;
  rt::OSKind OS = rt::OSKind::Linux;
  std::vector<rt::DeviceID> Devices;
};
void writeHost(Writer &W, const HostDescription &H);
HostDescription readHost(Reader &R);

/// ClientHello payload.
struct ClientHello {
  bool WantsCompression = false;
  std::string AccessToken;
  std::string ClientName;
};
void writeClientHello(Writer &W, const ClientHello &H);
ClientHello readClientHello(Reader &R);

/// ServerHello payload.
struct ServerHello {
  bool Accepted = false;
  std::string Reason; ///< why the session was refused
  bool Compression = false;
  uint64_t MaxMessageBytes = 0;
  std::string ServerVersion;
  HostDescription Host;
};
void writeServerHello(Writer &W, const ServerHello &H);
ServerHello readServerHello(Reader &R);

/// Error payload: u32 code, message.
void writeError(Writer &W, ErrorCode Code, const std::string &Message);

} // namespace remote
} // namespace optimium
