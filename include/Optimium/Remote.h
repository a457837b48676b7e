// Remote inference (package Optimium-Remote, target Remote::Client): a client of
// optimium-remote-server. A RemoteSession is one connection (TCP, optionally TLS and zstd
// compression); models and groups load on the server, tensors travel as raw bytes. Protocol:
// docs/remote-protocol.md. C++14.
//
// Errors: NetworkError when the connection fails or drops (connect refused, TLS handshake, a
// closed socket, a timeout); RemoteError when the server refuses a request for a protocol reason
// (wrong access token, a path outside its workspace, a limit reached, a version mismatch); an
// error the server's runtime raised (ModelError, ShapeError, InvalidArgumentError, ...) arrives
// as the same exception type with the server's message.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "Optimium/Runtime.h"

// The client library (liboptimium-remote.so) exports only what carries this.
#if defined(_WIN32)
#if defined(OPTIMIUM_REMOTE_BUILDING)
#define OPTIMIUM_REMOTE_API __declspec(dllexport)
#else
#define OPTIMIUM_REMOTE_API __declspec(dllimport)
#endif
#else
#define OPTIMIUM_REMOTE_API __attribute__((visibility("default")))
#endif

namespace optimium {
namespace runtime {

/// The port optimium-remote-server listens on by default.
constexpr uint16_t kDefaultRemotePort = 32264;

struct ConnectOptions {
  /// TLS (OpenSSL). The server's certificate is verified against CAFile (or the system's CA
  /// store when CAFile is empty) and against ServerName (or the host passed to connect()).
  bool EnableSecureConnection = false;
  /// zstd compression of tensor payloads, negotiated per connection (used only when the server
  /// allows it too).
  bool EnableCompression = false;
  // Extensions (not in the reference API):
  std::string CAFile;                             ///< PEM file of the CA(s) to trust.
  std::string ServerName;                         ///< Name to verify the certificate against.
  std::string AccessToken;                        ///< Shared secret the server may require.
  std::chrono::milliseconds ConnectTimeout{10000}; ///< TCP connect + handshake.
  /// Longest wait for any one reply (0 = none). A wait() with its own timeout is not affected.
  std::chrono::milliseconds ReplyTimeout{0};
};

struct RemoteSessionImpl;
struct RemoteModelImpl;
struct RemoteGroupImpl;
struct RemoteGroupMemberImpl;

/// A model loaded on the server. The server creates one request for it and reuses it for every
/// infer()/profile(), so Preserved / Resizable tensors (KV caches) keep their state between calls.
/// Copies share the model. infer() and profile() return once the server accepted the call;
/// wait() blocks until it ends and surfaces its error; the outputs then come back on demand.
class OPTIMIUM_REMOTE_API RemoteModel {
public:
  RemoteModel() {}

  void infer(ArrayRef<Tensor> Inputs);
  void infer(const std::map<std::string, Tensor> &Inputs);
  void profile(ArrayRef<Tensor> Inputs, const ProfileOptions &Options = {});
  void profile(const std::map<std::string, Tensor> &Inputs, const ProfileOptions &Options = {});
  /// Blocks until the running infer()/profile() ends (0 = wait indefinitely). As
  /// InferRequest::wait: returns false when the run finished, true when the timeout was reached
  /// first. Throws the run's error.
  bool wait(std::chrono::microseconds Timeout = std::chrono::microseconds(0));
  /// Cancels the run in progress (a no-op when none).
  void cancel();

  /// Writes a tensor of the server's request by name: an input, or a Preserved / intermediate
  /// tensor (seeds or updates a KV cache between runs).
  void setTensor(StringRef Name, const Tensor &Value);
  /// A copy of a tensor of the last run, fetched from the server.
  Tensor getTensor(StringRef Name) const;
  Tensor getOutput(size_t Index) const;

  std::vector<ProfileEvent> getProfileEvents() const;
  ProfileDurations getProfileDurations() const;

  TensorShape inferShape(StringRef Name, const std::map<std::string, TensorShape> &InputShapes) const;
  TensorShape inferShape(StringRef Name, ArrayRef<TensorShape> InputShapes) const;

  std::vector<TensorInfo> getInputTensorInfos() const;
  std::vector<TensorInfo> getOutputTensorInfos() const;
  std::vector<TensorInfo> getTensorInfos() const;
  std::vector<OpInfo> getOperationList() const;
  std::string getModelName() const;
  bool isDynamic() const;
  bool isSavedTensor(StringRef Name) const;
  Attribute getAttribute(StringRef Key) const;
  std::vector<std::string> getAttributeKeys() const;
  bool hasAttribute(StringRef Key) const;

  explicit operator bool() const { return static_cast<bool>(Impl); }

  // Internal.
  explicit RemoteModel(std::shared_ptr<RemoteModelImpl> I) : Impl(std::move(I)) {}
  const std::shared_ptr<RemoteModelImpl> &impl() const { return Impl; }

private:
  std::shared_ptr<RemoteModelImpl> Impl;
};

/// A member of a group on the server: run() is a blocking round trip (the server's GroupMember::run
/// contract: one member of the group runs at a time). Outputs come back with the reply.
class OPTIMIUM_REMOTE_API RemoteGroupMember {
public:
  RemoteGroupMember() {}

  /// Outputs in the model's output order.
  std::vector<Tensor> run(ArrayRef<Tensor> Inputs);
  std::vector<Tensor> run(const std::map<std::string, Tensor> &Inputs);

  std::string getName() const;
  std::vector<TensorInfo> getInputTensorInfos() const;
  std::vector<TensorInfo> getOutputTensorInfos() const;

  explicit operator bool() const { return static_cast<bool>(Impl); }

  // Internal.
  explicit RemoteGroupMember(std::shared_ptr<RemoteGroupMemberImpl> I) : Impl(std::move(I)) {}

private:
  std::shared_ptr<RemoteGroupMemberImpl> Impl;
};

/// A ModelGroup owned by the server (members share one server-side pool).
class OPTIMIUM_REMOTE_API RemoteModelGroup {
public:
  RemoteModelGroup() {}

  /// Uploads the LOCAL model at Path (an .onnx file or a model folder) and adds it to the group.
  RemoteGroupMember add(const GroupMemberOptions &Options, const std::string &Path);
  size_t size() const;

  explicit operator bool() const { return static_cast<bool>(Impl); }

  // Internal.
  explicit RemoteModelGroup(std::shared_ptr<RemoteGroupImpl> I) : Impl(std::move(I)) {}

private:
  std::shared_ptr<RemoteGroupImpl> Impl;
};

/// One connection to a server. Copies share it; the connection closes (and the server frees the
/// session's models) when the last copy and every model/group made from it are gone.
class OPTIMIUM_REMOTE_API RemoteSession {
public:
  RemoteSession() {}

  /// The server's host (ID 1: remote). Valid while the session lives.
  HostInfo getHostInfo() const;
  /// Loads the model at Path on the server, resolved inside the server's workspace folder.
  RemoteModel loadModel(const ModelLoadOptions &Options, const std::string &Path);
  RemoteModelGroup createModelGroup(const ModelGroupOptions &Options = {});
  /// Closes the connection now; later calls on anything of this session throw NetworkError.
  void close();

  explicit operator bool() const { return static_cast<bool>(Impl); }

  // Internal.
  explicit RemoteSession(std::shared_ptr<RemoteSessionImpl> I) : Impl(std::move(I)) {}

private:
  std::shared_ptr<RemoteSessionImpl> Impl;
};

/// Connects to optimium-remote-server at Host:Port. NetworkError when it cannot connect (or the
/// TLS handshake fails); RemoteError when the server refuses the session (access token, version).
OPTIMIUM_REMOTE_API RemoteSession connect(const std::string &Host, uint16_t Port = kDefaultRemotePort,
                      const ConnectOptions &Options = {});

} // namespace runtime
} // namespace optimium
