// TCP and TLS streams. Sockets are non-blocking: every wait is a poll(), so shutdown() from another
// thread wakes a blocked reader and a TLS reader never holds the SSL lock while it waits.
#include "remote/transport/Socket.h"

#include <arpa/inet.h>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

namespace optimium {
namespace remote {

namespace {

// A peer that stops reading may not stall a writer forever.
constexpr int kSendTimeoutMs = 60000;

std::string errnoText(int E) { return std::strerror(E); }

void setNonBlocking(int F) {
  const int Flags = fcntl(F, F_GETFL, 0);
  fcntl(F, F_SETFL, Flags | O_NONBLOCK);
}

/// poll() one fd; false on timeout. EINTR retried with the remaining time.
bool pollFd(int F, short Events, int TimeoutMs) {
  const auto Deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(TimeoutMs);
  for (;;) {
    pollfd P{F, Events, 0};
    int Left = TimeoutMs;
    if (TimeoutMs >= 0) {
      Left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                  Deadline - std::chrono::steady_clock::now()).count());
      if (Left < 0)
        Left = 0;
    }
    const int R = ::poll(&P, 1, Left);
    if (R > 0)
      return true;
    if (R == 0)
      return false;
    if (errno != EINTR)
      throw StreamError("poll: " + errnoText(errno));
  }
}

/// Blocks SIGPIPE on this thread while OpenSSL writes to a socket the peer closed (it writes with
/// write(), not send(MSG_NOSIGNAL)), and swallows the signal it raised: a client library must not
/// change the application's signal dispositions.
class SigpipeGuard {
public:
  SigpipeGuard() {
    sigset_t Pipe;
    sigemptyset(&Pipe);
    sigaddset(&Pipe, SIGPIPE);
    sigset_t Pending;
    sigpending(&Pending);
    WasPending = sigismember(&Pending, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &Pipe, &Old);
  }
  ~SigpipeGuard() {
    if (!WasPending) {
      sigset_t Pipe;
      sigemptyset(&Pipe);
      sigaddset(&Pipe, SIGPIPE);
      timespec Zero{0, 0};
      while (sigtimedwait(&Pipe, nullptr, &Zero) > 0) {
      }
    }
    pthread_sigmask(SIG_SETMASK, &Old, nullptr);
  }

private:
  sigset_t Old;
  bool WasPending = false;
};

} // namespace

Fd &Fd::operator=(Fd &&O) noexcept {
  if (this != &O) {
    if (F >= 0)
      ::close(F);
    F = O.release();
  }
  return *this;
}

Fd::~Fd() {
  if (F >= 0)
    ::close(F);
}

Fd connectTcp(const std::string &Host, uint16_t Port, int TimeoutMs) {
  const std::string Where = Host + ":" + std::to_string(Port);
  addrinfo Hints{};
  Hints.ai_family = AF_UNSPEC;
  Hints.ai_socktype = SOCK_STREAM;
  addrinfo *Res = nullptr;
  const int G = getaddrinfo(Host.c_str(), std::to_string(Port).c_str(), &Hints, &Res);
  if (G != 0)
    throw StreamError("cannot resolve " + Where + ": " + gai_strerror(G));
  std::string LastError = "no address";
  for (addrinfo *A = Res; A; A = A->ai_next) {
    Fd S(::socket(A->ai_family, A->ai_socktype | SOCK_CLOEXEC, A->ai_protocol));
    if (!S) {
      LastError = errnoText(errno);
      continue;
    }
    setNonBlocking(S.get());
    int R = ::connect(S.get(), A->ai_addr, A->ai_addrlen);
    if (R != 0 && errno == EINPROGRESS) {
      if (!pollFd(S.get(), POLLOUT, TimeoutMs)) {
        LastError = "timed out after " + std::to_string(TimeoutMs) + " ms";
        continue;
      }
      int Err = 0;
      socklen_t Len = sizeof(Err);
      getsockopt(S.get(), SOL_SOCKET, SO_ERROR, &Err, &Len);
      R = Err == 0 ? 0 : -1;
      errno = Err;
    }
    if (R != 0) {
      LastError = errnoText(errno);
      continue;
    }
    int One = 1;
    setsockopt(S.get(), IPPROTO_TCP, TCP_NODELAY, &One, sizeof(One));
    freeaddrinfo(Res);
    return S;
  }
  freeaddrinfo(Res);
  throw StreamError("cannot connect to " + Where + ": " + LastError);
}

Fd listenTcp(const std::string &Host, uint16_t Port, uint16_t &BoundPort) {
  const std::string Where = Host + ":" + std::to_string(Port);
  addrinfo Hints{};
  Hints.ai_family = AF_UNSPEC;
  Hints.ai_socktype = SOCK_STREAM;
  Hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo *Res = nullptr;
  const int G = getaddrinfo(Host.empty() ? nullptr : Host.c_str(), std::to_string(Port).c_str(), &Hints, &Res);
  if (G != 0)
    throw StreamError("cannot resolve " + Where + ": " + gai_strerror(G));
  std::string LastError = "no address";
  for (addrinfo *A = Res; A; A = A->ai_next) {
    Fd S(::socket(A->ai_family, A->ai_socktype | SOCK_CLOEXEC, A->ai_protocol));
    if (!S) {
      LastError = errnoText(errno);
      continue;
    }
    int One = 1;
    setsockopt(S.get(), SOL_SOCKET, SO_REUSEADDR, &One, sizeof(One));
    if (::bind(S.get(), A->ai_addr, A->ai_addrlen) != 0 || ::listen(S.get(), 128) != 0) {
      LastError = errnoText(errno);
      continue;
    }
    sockaddr_storage Addr{};
    socklen_t Len = sizeof(Addr);
    getsockname(S.get(), reinterpret_cast<sockaddr *>(&Addr), &Len);
    BoundPort = ntohs(Addr.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6 *>(&Addr)->sin6_port
                                                 : reinterpret_cast<sockaddr_in *>(&Addr)->sin_port);
    setNonBlocking(S.get());
    freeaddrinfo(Res);
    return S;
  }
  freeaddrinfo(Res);
  throw StreamError("cannot listen on " + Where + ": " + LastError);
}

std::string peerName(int F) {
  sockaddr_storage Addr{};
  socklen_t Len = sizeof(Addr);
  if (getpeername(F, reinterpret_cast<sockaddr *>(&Addr), &Len) != 0)
    return "?";
  char Buf[INET6_ADDRSTRLEN] = {};
  if (Addr.ss_family == AF_INET6) {
    auto *A = reinterpret_cast<sockaddr_in6 *>(&Addr);
    inet_ntop(AF_INET6, &A->sin6_addr, Buf, sizeof(Buf));
    return "[" + std::string(Buf) + "]:" + std::to_string(ntohs(A->sin6_port));
  }
  auto *A = reinterpret_cast<sockaddr_in *>(&Addr);
  inet_ntop(AF_INET, &A->sin_addr, Buf, sizeof(Buf));
  return std::string(Buf) + ":" + std::to_string(ntohs(A->sin_port));
}

// --- plain TCP -----------------------------------------------------------------------------------
size_t SocketStream::readSome(void *Data, size_t Size) {
  for (;;) {
    const ssize_t N = ::recv(Sock.get(), Data, Size, MSG_DONTWAIT);
    if (N >= 0)
      return static_cast<size_t>(N);
    if (errno == EINTR)
      continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (Down)
        return 0;
      pollFd(Sock.get(), POLLIN, -1);
      continue;
    }
    if (errno == ECONNRESET || Down)
      return 0; // reset by the peer: the stream ended
    throw StreamError("recv: " + errnoText(errno));
  }
}

bool SocketStream::waitReadable(int TimeoutMs) { return pollFd(Sock.get(), POLLIN, TimeoutMs); }

void SocketStream::writeAll(const void *Data, size_t Size) {
  const char *P = static_cast<const char *>(Data);
  while (Size) {
    const ssize_t N = ::send(Sock.get(), P, Size, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (N > 0) {
      P += N;
      Size -= static_cast<size_t>(N);
      continue;
    }
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!pollFd(Sock.get(), POLLOUT, kSendTimeoutMs))
        throw StreamError("send timed out (the peer stopped reading)");
      continue;
    }
    throw StreamError("send: " + errnoText(errno));
  }
}

void SocketStream::shutdown() {
  if (!Down.exchange(true))
    ::shutdown(Sock.get(), SHUT_RDWR);
}

// --- TLS -----------------------------------------------------------------------------------------
std::string takeTlsErrors() {
  std::string Out;
  while (unsigned long E = ERR_get_error()) {
    char Buf[256];
    ERR_error_string_n(E, Buf, sizeof(Buf));
    if (!Out.empty())
      Out += "; ";
    Out += Buf;
  }
  return Out;
}

TlsContext::~TlsContext() {
  if (Ctx)
    SSL_CTX_free(Ctx);
}

std::shared_ptr<TlsContext> TlsContext::server(const std::string &CertFile, const std::string &KeyFile) {
  auto C = std::shared_ptr<TlsContext>(new TlsContext());
  C->Ctx = SSL_CTX_new(TLS_server_method());
  if (!C->Ctx)
    throw StreamError("TLS: cannot create a context: " + takeTlsErrors());
  SSL_CTX_set_min_proto_version(C->Ctx, TLS1_2_VERSION);
  if (SSL_CTX_use_certificate_chain_file(C->Ctx, CertFile.c_str()) != 1)
    throw StreamError("TLS: cannot load the certificate " + CertFile + ": " + takeTlsErrors());
  if (SSL_CTX_use_PrivateKey_file(C->Ctx, KeyFile.c_str(), SSL_FILETYPE_PEM) != 1)
    throw StreamError("TLS: cannot load the key " + KeyFile + ": " + takeTlsErrors());
  if (SSL_CTX_check_private_key(C->Ctx) != 1)
    throw StreamError("TLS: the key " + KeyFile + " does not match the certificate: " + takeTlsErrors());
  return C;
}

std::shared_ptr<TlsContext> TlsContext::client(const std::string &CAFile) {
  auto C = std::shared_ptr<TlsContext>(new TlsContext());
  C->Ctx = SSL_CTX_new(TLS_client_method());
  if (!C->Ctx)
    throw StreamError("TLS: cannot create a context: " + takeTlsErrors());
  SSL_CTX_set_min_proto_version(C->Ctx, TLS1_2_VERSION);
  SSL_CTX_set_verify(C->Ctx, SSL_VERIFY_PEER, nullptr);
  const int Ok = CAFile.empty() ? SSL_CTX_set_default_verify_paths(C->Ctx)
                                : SSL_CTX_load_verify_locations(C->Ctx, CAFile.c_str(), nullptr);
  if (Ok != 1)
    throw StreamError("TLS: cannot load the CA file " + (CAFile.empty() ? std::string("(system)") : CAFile) +
                      ": " + takeTlsErrors());
  return C;
}

TlsStream::TlsStream(Fd F, std::shared_ptr<TlsContext> C, bool IsServer, const std::string &ServerName, int TimeoutMs)
    : SocketStream(std::move(F)), Ctx(std::move(C)) {
  ERR_clear_error();
  Ssl = SSL_new(Ctx->get());
  if (!Ssl)
    throw StreamError("TLS: " + takeTlsErrors());
  SSL_set_fd(Ssl, Sock.get());
  SSL_set_mode(Ssl, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  if (!IsServer) {
    SSL_set_tlsext_host_name(Ssl, ServerName.c_str());
    // An IP address is checked against the certificate's IP SANs, a name against its DNS names.
    X509_VERIFY_PARAM *Param = SSL_get0_param(Ssl);
    in6_addr Tmp6;
    in_addr Tmp4;
    if (inet_pton(AF_INET, ServerName.c_str(), &Tmp4) == 1 || inet_pton(AF_INET6, ServerName.c_str(), &Tmp6) == 1)
      X509_VERIFY_PARAM_set1_ip_asc(Param, ServerName.c_str());
    else
      X509_VERIFY_PARAM_set1_host(Param, ServerName.c_str(), 0);
  }
  const auto Deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(TimeoutMs);
  for (;;) {
    SigpipeGuard Guard;
    const int R = IsServer ? SSL_accept(Ssl) : SSL_connect(Ssl);
    if (R == 1)
      break;
    const int E = SSL_get_error(Ssl, R);
    const int Left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                          Deadline - std::chrono::steady_clock::now()).count());
    if ((E == SSL_ERROR_WANT_READ || E == SSL_ERROR_WANT_WRITE) && Left > 0) {
      if (!pollFd(Sock.get(), E == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, Left))
        throw StreamError("TLS handshake timed out");
      continue;
    }
    std::string Why = takeTlsErrors();
    if (!IsServer && SSL_get_verify_result(Ssl) != X509_V_OK)
      Why = std::string("certificate verify failed: ") + X509_verify_cert_error_string(SSL_get_verify_result(Ssl));
    if (Why.empty())
      Why = (E == SSL_ERROR_SYSCALL || E == SSL_ERROR_ZERO_RETURN)
                ? "the peer closed the connection (does it speak TLS?)"
                : "error " + std::to_string(E);
    if (Left <= 0 && (E == SSL_ERROR_WANT_READ || E == SSL_ERROR_WANT_WRITE))
      Why = "timed out";
    SSL_free(Ssl);
    Ssl = nullptr;
    throw StreamError("TLS handshake failed: " + Why);
  }
}

TlsStream::~TlsStream() {
  if (Ssl)
    SSL_free(Ssl);
}

size_t TlsStream::readSome(void *Data, size_t Size) {
  for (;;) {
    int R, E;
    {
      SigpipeGuard Guard; // SSL_read may write (alerts, key updates)
      std::lock_guard<std::mutex> Lock(Mu);
      ERR_clear_error();
      R = SSL_read(Ssl, Data, static_cast<int>(Size > (1u << 30) ? (1u << 30) : Size));
      E = R > 0 ? SSL_ERROR_NONE : SSL_get_error(Ssl, R);
    }
    if (R > 0)
      return static_cast<size_t>(R);
    if (E == SSL_ERROR_ZERO_RETURN || Down)
      return 0;
    if (E == SSL_ERROR_WANT_READ) {
      pollFd(Sock.get(), POLLIN, -1);
      continue;
    }
    if (E == SSL_ERROR_WANT_WRITE) {
      pollFd(Sock.get(), POLLOUT, kSendTimeoutMs);
      continue;
    }
    if (E == SSL_ERROR_SYSCALL) {
      takeTlsErrors();
      return 0; // the peer went away without close_notify
    }
    throw StreamError("TLS read: " + takeTlsErrors());
  }
}

bool TlsStream::waitReadable(int TimeoutMs) {
  {
    std::lock_guard<std::mutex> Lock(Mu);
    if (SSL_pending(Ssl) > 0)
      return true;
  }
  return SocketStream::waitReadable(TimeoutMs);
}

void TlsStream::writeAll(const void *Data, size_t Size) {
  const char *P = static_cast<const char *>(Data);
  while (Size) {
    int R, E;
    {
      SigpipeGuard Guard;
      std::lock_guard<std::mutex> Lock(Mu);
      ERR_clear_error();
      R = SSL_write(Ssl, P, static_cast<int>(Size > (1u << 30) ? (1u << 30) : Size));
      E = R > 0 ? SSL_ERROR_NONE : SSL_get_error(Ssl, R);
    }
    if (R > 0) {
      P += R;
      Size -= static_cast<size_t>(R);
      continue;
    }
    if (E == SSL_ERROR_WANT_WRITE || E == SSL_ERROR_WANT_READ) {
      if (!pollFd(Sock.get(), E == SSL_ERROR_WANT_WRITE ? POLLOUT : POLLIN, kSendTimeoutMs))
        throw StreamError("send timed out (the peer stopped reading)");
      continue;
    }
    const std::string Why = takeTlsErrors();
    throw StreamError("TLS write: " + (Why.empty() ? std::string("connection closed") : Why));
  }
}

} // namespace remote
} // namespace optimium
