// The Open Inference Protocol (KServe V2) over HTTP/REST, with Triton's binary tensor data
// extension: a small HTTP/1.1 server over POSIX sockets in front of the public runtime API.
// optimium-remote-server starts one beside its native listener when given --http-port.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace optimium {
namespace remote {
namespace oip {

struct OipOptions {
  std::string Host = "127.0.0.1";
  uint16_t Port = 8000; ///< 0 = an ephemeral port (see OipServer::port())
  /// Folder the model paths resolve in; paths may not leave it (.., absolute, symlinks out).
  std::string Workspace;
  /// Model name -> path relative to Workspace (an .onnx file, or a folder holding model.onnx; "."
  /// is the workspace itself). Empty: every *.onnx file and every folder holding model.onnx
  /// directly in the workspace, under its stem.
  std::vector<std::pair<std::string, std::string>> Models;
  size_t MaxBodyBytes = 64 << 20; ///< larger request bodies get 413
  int Workers = 0;                ///< threads serving requests; 0 = hardware threads
  /// When set, every endpoint but /v2/health/* requires `Authorization: Bearer <token>` (401).
  std::string AccessToken;
  int ModelThreads = 0; ///< ModelLoadOptions::ThreadCount of each model (0 = one per core)
};

class OipServer {
public:
  /// Loads every model, binds and starts serving. Throws std::runtime_error (a message naming the
  /// model or the address) when a model does not load or the address cannot be bound.
  static std::unique_ptr<OipServer> start(const OipOptions &Options);
  /// The bound port (the ephemeral one when Options.Port was 0).
  uint16_t port() const;
  /// Stops accepting, closes every connection and joins the threads; idempotent.
  void stop();
  ~OipServer();

  struct Impl;

private:
  explicit OipServer(std::unique_ptr<Impl> I);
  std::unique_ptr<Impl> P;
};

} // namespace oip
} // namespace remote
} // namespace optimium
