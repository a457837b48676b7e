// The OIP HTTP/1.1 server over POSIX sockets. One thread polls the listener and the idle
// keep-alive connections; a readable connection goes to a worker thread, which reads one request,
// answers it through OipService and hands the connection back (or keeps it while pipelined bytes
// are waiting). Idle connections therefore cost no thread, and Workers bounds concurrent inference.
#include "OipServer.h"

#include <arpa/inet.h>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <deque>
#include <fcntl.h>
#include <mutex>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <set>
#include <stdexcept>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

#include "Http.h"
#include "OipService.h"

namespace optimium {
namespace remote {
namespace oip {

namespace {

constexpr int kIoTimeoutSeconds = 30;   // a request must arrive (and a response leave) within this
constexpr int kIdleTimeoutSeconds = 120; // idle keep-alive connections are closed after this
constexpr size_t kMaxConnections = 1024;
constexpr size_t kReadChunk = 64 << 10;

struct Connection {
  int Fd = -1;
  std::string Buffer; // bytes read but not consumed (the start of the next request)
  std::chrono::steady_clock::time_point LastActive;
};

bool sendAll(int Fd, const char *Data, size_t Size) {
  while (Size > 0) {
    ssize_t N = ::send(Fd, Data, Size, MSG_NOSIGNAL);
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0)
      return false;
    Data += N;
    Size -= static_cast<size_t>(N);
  }
  return true;
}

} // namespace

struct OipServer::Impl {
  OipOptions Options;
  std::unique_ptr<OipService> Service;
  HttpLimits Limits;
  int ListenFd = -1;
  int WakePipe[2] = {-1, -1};
  uint16_t Port = 0;
  std::atomic<bool> Stopping{false};
  std::thread Poller;
  std::vector<std::thread> Workers;

  std::mutex Mutex;
  std::condition_variable Ready;
  std::deque<std::unique_ptr<Connection>> Work;     // readable connections for the workers
  std::vector<std::unique_ptr<Connection>> Returned; // back from the workers, for the poller
  std::set<int> Busy;                                // fds a worker holds (shut down at stop)
  size_t ConnectionCount = 0;

  void wakePoller() {
    char C = 1;
    ssize_t R = ::write(WakePipe[1], &C, 1);
    (void)R;
  }

  void closeConnection(std::unique_ptr<Connection> C) {
    ::close(C->Fd);
    std::lock_guard<std::mutex> Lock(Mutex);
    --ConnectionCount;
  }

  void pollLoop() {
    std::vector<std::unique_ptr<Connection>> Idle;
    std::vector<pollfd> Fds;
    while (!Stopping) {
      {
        std::lock_guard<std::mutex> Lock(Mutex);
        for (auto &C : Returned)
          Idle.push_back(std::move(C));
        Returned.clear();
      }
      Fds.clear();
      Fds.push_back({ListenFd, POLLIN, 0});
      Fds.push_back({WakePipe[0], POLLIN, 0});
      for (const auto &C : Idle)
        Fds.push_back({C->Fd, POLLIN, 0});
      int N = ::poll(Fds.data(), Fds.size(), 1000);
      if (N < 0 && errno != EINTR)
        break;
      if (Stopping)
        break;
      if (Fds[1].revents & POLLIN) {
        char Buf[64];
        while (::read(WakePipe[0], Buf, sizeof(Buf)) > 0) {
        }
      }
      const auto Now = std::chrono::steady_clock::now();
      std::vector<std::unique_ptr<Connection>> Keep;
      for (size_t I = 0; I < Idle.size(); ++I) {
        auto &C = Idle[I];
        if (Fds[I + 2].revents & (POLLIN | POLLHUP | POLLERR)) {
          std::lock_guard<std::mutex> Lock(Mutex);
          Work.push_back(std::move(C));
          Ready.notify_one();
        } else if (Now - C->LastActive > std::chrono::seconds(kIdleTimeoutSeconds)) {
          closeConnection(std::move(C));
        } else {
          Keep.push_back(std::move(C));
        }
      }
      Idle.swap(Keep);
      if (Fds[0].revents & POLLIN)
        acceptAll(Idle);
    }
    for (auto &C : Idle)
      closeConnection(std::move(C));
  }

  void acceptAll(std::vector<std::unique_ptr<Connection>> &Idle) {
    for (;;) {
      int Fd = ::accept4(ListenFd, nullptr, nullptr, SOCK_CLOEXEC);
      if (Fd < 0)
        return; // EAGAIN (the listener is non-blocking) or a transient error
      {
        std::lock_guard<std::mutex> Lock(Mutex);
        if (ConnectionCount >= kMaxConnections) {
          ::close(Fd);
          continue;
        }
        ++ConnectionCount;
      }
      int One = 1;
      ::setsockopt(Fd, IPPROTO_TCP, TCP_NODELAY, &One, sizeof(One));
      timeval Tv{kIoTimeoutSeconds, 0};
      ::setsockopt(Fd, SOL_SOCKET, SO_RCVTIMEO, &Tv, sizeof(Tv));
      ::setsockopt(Fd, SOL_SOCKET, SO_SNDTIMEO, &Tv, sizeof(Tv));
      auto C = std::make_unique<Connection>();
      C->Fd = Fd;
      C->LastActive = std::chrono::steady_clock::now();
      Idle.push_back(std::move(C));
    }
  }

  void workerLoop() {
    for (;;) {
      std::unique_ptr<Connection> C;
      {
        std::unique_lock<std::mutex> Lock(Mutex);
        Ready.wait(Lock, [&] { return Stopping || !Work.empty(); });
        if (Stopping)
          return;
        C = std::move(Work.front());
        Work.pop_front();
        Busy.insert(C->Fd);
      }
      const bool KeepOpen = serve(*C);
      {
        std::lock_guard<std::mutex> Lock(Mutex);
        Busy.erase(C->Fd);
      }
      if (KeepOpen && !Stopping) {
        C->LastActive = std::chrono::steady_clock::now();
        std::lock_guard<std::mutex> Lock(Mutex);
        Returned.push_back(std::move(C));
        wakePoller();
      } else {
        closeConnection(std::move(C));
      }
    }
  }

  // Reads at least one more byte into C.Buffer; false on EOF, timeout or error.
  bool readMore(Connection &C) {
    char Buf[kReadChunk];
    for (;;) {
      ssize_t N = ::recv(C.Fd, Buf, sizeof(Buf), 0);
      if (N < 0 && errno == EINTR)
        continue;
      if (N <= 0)
        return false;
      C.Buffer.append(Buf, static_cast<size_t>(N));
      return true;
    }
  }

  bool sendResponse(Connection &C, const HttpResponse &R, bool Head) {
    std::string Out = serializeResponseHead(R);
    if (!Head && R.Body.size() < (16 << 10)) {
      Out += R.Body;
      return sendAll(C.Fd, Out.data(), Out.size());
    }
    return sendAll(C.Fd, Out.data(), Out.size()) && (Head || sendAll(C.Fd, R.Body.data(), R.Body.size()));
  }

  // Answers with an error and closes: first half-closes and drains what the client still sends
  // (briefly), so the close does not reset the connection before the client read the answer.
  bool sendError(Connection &C, int Status, const std::string &Message) {
    HttpResponse R = errorResponse(Status, Message);
    R.Close = true;
    if (sendResponse(C, R, false)) {
      ::shutdown(C.Fd, SHUT_WR);
      timeval Tv{0, 200 * 1000};
      ::setsockopt(C.Fd, SOL_SOCKET, SO_RCVTIMEO, &Tv, sizeof(Tv));
      char Buf[kReadChunk];
      size_t Drained = 0;
      const auto Until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
      while (Drained < (64u << 20) && std::chrono::steady_clock::now() < Until) {
        ssize_t N = ::recv(C.Fd, Buf, sizeof(Buf), 0);
        if (N <= 0)
          break;
        Drained += static_cast<size_t>(N);
      }
    }
    return false;
  }

  // Serves requests on C while complete ones are buffered; true to keep the connection.
  bool serve(Connection &C) {
    for (;;) {
      // The head.
      size_t HeadEnd = findHeadEnd(C.Buffer.data(), C.Buffer.size());
      while (HeadEnd == 0) {
        if (C.Buffer.size() > Limits.MaxHeadBytes)
          return sendError(C, 431, "request head larger than " + std::to_string(Limits.MaxHeadBytes) + " bytes");
        const size_t From = C.Buffer.size() < 3 ? 0 : C.Buffer.size() - 3;
        if (!readMore(C)) {
          if (!C.Buffer.empty() && !Stopping)
            sendError(C, 400, "connection ended or timed out inside a request head");
          return false;
        }
        HeadEnd = findHeadEnd(C.Buffer.data(), C.Buffer.size(), From);
      }
      HttpRequest Req;
      HttpError Err;
      if (!parseRequestHead(C.Buffer.data(), HeadEnd, Limits, Req, Err))
        return sendError(C, Err.Status, Err.Message);
      C.Buffer.erase(0, HeadEnd);
      if (Req.ExpectContinue && C.Buffer.empty() && (Req.Chunked || Req.ContentLength > 0)) {
        static const char Continue[] = "HTTP/1.1 100 Continue\r\n\r\n";
        if (!sendAll(C.Fd, Continue, sizeof(Continue) - 1))
          return false;
      }
      // The body.
      if (Req.Chunked) {
        ChunkedDecoder Decoder(Limits.MaxBodyBytes);
        for (;;) {
          size_t Used = 0;
          auto Res = Decoder.feed(C.Buffer.data(), C.Buffer.size(), Req.Body, Used, Err);
          C.Buffer.erase(0, Used);
          if (Res == ChunkedDecoder::Result::Error)
            return sendError(C, Err.Status, Err.Message);
          if (Res == ChunkedDecoder::Result::Done)
            break;
          if (!readMore(C))
            return sendError(C, 400, "connection ended or timed out inside a chunked body");
        }
      } else if (Req.HasContentLength) {
        const size_t Length = static_cast<size_t>(Req.ContentLength);
        if (C.Buffer.size() >= Length) {
          Req.Body.assign(C.Buffer, 0, Length);
          C.Buffer.erase(0, Length);
        } else {
          Req.Body.reserve(Length);
          Req.Body.swap(C.Buffer);
          C.Buffer.clear();
          while (Req.Body.size() < Length) {
            const size_t Want = std::min(Length - Req.Body.size(), size_t(1) << 20);
            const size_t Old = Req.Body.size();
            Req.Body.resize(Old + Want);
            ssize_t N = ::recv(C.Fd, &Req.Body[Old], Want, 0);
            if (N < 0 && errno == EINTR) {
              Req.Body.resize(Old);
              continue;
            }
            if (N <= 0)
              return sendError(C, 400, "connection ended or timed out after " + std::to_string(Old) + " of " +
                                           std::to_string(Length) + " body bytes");
            Req.Body.resize(Old + static_cast<size_t>(N));
          }
        }
      }
      HttpResponse Resp = Service->handle(Req);
      Resp.Close = Resp.Close || !Req.KeepAlive;
      if (!sendResponse(C, Resp, Req.Method == "HEAD") || Resp.Close)
        return false;
      if (C.Buffer.empty())
        return true; // back to the poller until the next request
    }
  }
};

OipServer::OipServer(std::unique_ptr<Impl> I) : P(std::move(I)) {}

std::unique_ptr<OipServer> OipServer::start(const OipOptions &Options) {
  auto I = std::make_unique<Impl>();
  I->Options = Options;
  I->Limits.MaxBodyBytes = Options.MaxBodyBytes;
  I->Service = std::make_unique<OipService>(Options);

  addrinfo Hints{};
  Hints.ai_family = AF_UNSPEC;
  Hints.ai_socktype = SOCK_STREAM;
  Hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo *Res = nullptr;
  const std::string PortText = std::to_string(Options.Port);
  int Rc = ::getaddrinfo(Options.Host.empty() ? nullptr : Options.Host.c_str(), PortText.c_str(), &Hints, &Res);
  if (Rc != 0)
    throw std::runtime_error("oip: cannot resolve '" + Options.Host + "': " + gai_strerror(Rc));
  std::string LastError = "no address";
  for (addrinfo *A = Res; A; A = A->ai_next) {
    int Fd = ::socket(A->ai_family, A->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, A->ai_protocol);
    if (Fd < 0)
      continue;
    int One = 1;
    ::setsockopt(Fd, SOL_SOCKET, SO_REUSEADDR, &One, sizeof(One));
    if (::bind(Fd, A->ai_addr, A->ai_addrlen) == 0 && ::listen(Fd, 256) == 0) {
      I->ListenFd = Fd;
      break;
    }
    LastError = std::strerror(errno);
    ::close(Fd);
  }
  ::freeaddrinfo(Res);
  if (I->ListenFd < 0)
    throw std::runtime_error("oip: cannot listen on " + Options.Host + ":" + PortText + ": " + LastError);
  sockaddr_storage Addr{};
  socklen_t Len = sizeof(Addr);
  ::getsockname(I->ListenFd, reinterpret_cast<sockaddr *>(&Addr), &Len);
  I->Port = ntohs(Addr.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6 *>(&Addr)->sin6_port
                                             : reinterpret_cast<sockaddr_in *>(&Addr)->sin_port);
  if (::pipe2(I->WakePipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    ::close(I->ListenFd);
    throw std::runtime_error("oip: pipe2 failed");
  }
  int Workers = Options.Workers > 0 ? Options.Workers : static_cast<int>(std::thread::hardware_concurrency());
  if (Workers <= 0)
    Workers = 1;
  Impl *Raw = I.get();
  for (int W = 0; W < Workers; ++W)
    I->Workers.emplace_back([Raw] { Raw->workerLoop(); });
  I->Poller = std::thread([Raw] { Raw->pollLoop(); });
  return std::unique_ptr<OipServer>(new OipServer(std::move(I)));
}

uint16_t OipServer::port() const { return P->Port; }

void OipServer::stop() {
  if (!P || P->Stopping.exchange(true))
    return;
  P->wakePoller();
  {
    std::lock_guard<std::mutex> Lock(P->Mutex);
    for (int Fd : P->Busy)
      ::shutdown(Fd, SHUT_RDWR); // unblocks a worker waiting in recv/send
    P->Ready.notify_all();
  }
  if (P->Poller.joinable())
    P->Poller.join();
  for (auto &W : P->Workers)
    if (W.joinable())
      W.join();
  for (auto &C : P->Work)
    ::close(C->Fd);
  P->Work.clear();
  for (auto &C : P->Returned)
    ::close(C->Fd);
  P->Returned.clear();
  ::close(P->ListenFd);
  ::close(P->WakePipe[0]);
  ::close(P->WakePipe[1]);
  P->Service.reset();
}

OipServer::~OipServer() { stop(); }

} // namespace oip
} // namespace remote
} // namespace optimium
