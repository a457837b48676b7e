// TCP sockets and TLS (OpenSSL) sessions as remote::Stream: what the client connects with and the
// server accepts. Errors are StreamError with the reason (strerror or OpenSSL's error queue).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "remote/protocol/Stream.h"

typedef struct ssl_ctx_st SSL_CTX;
typedef struct ssl_st SSL;

namespace optimium {
namespace remote {

/// An owned file descriptor.
class Fd {
public:
  Fd() {}
  explicit Fd(int F) : F(F) {}
  Fd(Fd &&O) noexcept : F(O.release()) {}
  Fd &operator=(Fd &&O) noexcept;
  ~Fd();
  int get() const { return F; }
  int release() { int R = F; F = -1; return R; }
  explicit operator bool() const { return F >= 0; }

private:
  int F = -1;
};

/// Connects to Host:Port within TimeoutMs (TCP_NODELAY set). StreamError naming host:port.
Fd connectTcp(const std::string &Host, uint16_t Port, int TimeoutMs);
/// Listens on Host:Port (Port 0 = an ephemeral port); BoundPort receives the port.
Fd listenTcp(const std::string &Host, uint16_t Port, uint16_t &BoundPort);
/// The peer's address as "ip:port".
std::string peerName(int Fd);

/// The last OpenSSL errors as text ("" when none), clearing the queue.
std::string takeTlsErrors();

/// An SSL_CTX: a server one (certificate + key) or a client one (verifies the server against
/// CAFile, or the system store when empty).
class TlsContext {
public:
  static std::shared_ptr<TlsContext> server(const std::string &CertFile, const std::string &KeyFile);
  static std::shared_ptr<TlsContext> client(const std::string &CAFile);
  ~TlsContext();
  SSL_CTX *get() const { return Ctx; }

private:
  SSL_CTX *Ctx = nullptr;
};

/// A plain TCP stream.
class SocketStream : public Stream {
public:
  explicit SocketStream(Fd F) : Sock(std::move(F)) {}
  size_t readSome(void *Data, size_t Size) override;
  bool waitReadable(int TimeoutMs) override;
  void writeAll(const void *Data, size_t Size) override;
  void shutdown() override;
  int fd() const { return Sock.get(); }

protected:
  Fd Sock;
  std::atomic<bool> Down{false};
};

/// A TLS session over a connected socket. The handshake runs in the constructor (client: verifies
/// the certificate against ServerName; server: accepts), within TimeoutMs.
class TlsStream : public SocketStream {
public:
  TlsStream(Fd F, std::shared_ptr<TlsContext> Ctx, bool IsServer, const std::string &ServerName, int TimeoutMs);
  ~TlsStream() override;
  size_t readSome(void *Data, size_t Size) override;
  bool waitReadable(int TimeoutMs) override;
  void writeAll(const void *Data, size_t Size) override;

private:
  std::shared_ptr<TlsContext> Ctx;
  SSL *Ssl = nullptr;
  // An SSL object is not safe for a concurrent read and write: the socket is non-blocking and
  // each SSL call runs under this lock; waiting for the socket happens outside it.
  std::mutex Mu;
};

} // namespace remote
} // namespace optimium
