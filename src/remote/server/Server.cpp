// The listening server: accepts connections, runs each session on its own thread, stops cleanly.
#include "remote/server/Server.h"

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <iostream>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "remote/transport/Socket.h"

namespace optimium {
namespace remote {

void logLine(const std::string &Line) {
  static std::mutex Mu;
  const auto Now = std::chrono::system_clock::now();
  const std::time_t T = std::chrono::system_clock::to_time_t(Now);
  const int Ms = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(Now.time_since_epoch()).count() % 1000);
  std::tm Tm;
  gmtime_r(&T, &Tm);
  char Buf[64];
  std::snprintf(Buf, sizeof(Buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", Tm.tm_year + 1900, Tm.tm_mon + 1, Tm.tm_mday,
                Tm.tm_hour, Tm.tm_min, Tm.tm_sec, Ms);
  std::lock_guard<std::mutex> Lock(Mu);
  std::cerr << Buf << " optimium-remote-server: " << Line << std::endl;
}

SessionConfig makeSessionConfig(const ServerOptions &O) {
  SessionConfig C;
  C.Options = O;
  C.Root = std::make_shared<Workspace>(O.Workspace);
  rt::HostInfo Local = rt::getLocalInfo();
  C.Host.Name = Local.Name.str();
  C.Host.Architecture = Local.Architecture;
  C.Host.OS = Local.OS;
  for (const rt::DeviceID &D : Local.Devices)
    C.Host.Devices.push_back(D);
  const rt::Version V = rt::getVersion();
  C.ServerVersion = std::to_string(V.Major) + "." + std::to_string(V.Minor) + "." + std::to_string(V.Patch) + V.Tag;
  const char *Tmp = std::getenv("TMPDIR");
  C.UploadRoot = Tmp && *Tmp ? Tmp : "/tmp";
  C.Log = logLine;
  return C;
}

struct Server::Conn {
  std::thread T;
  std::atomic<bool> Done{false};
  int Fd = -1; ///< a duplicate of the session's socket: shutdown() through it wakes the session
  ~Conn() {
    if (Fd >= 0)
      ::close(Fd);
  }
  void shutdown() { ::shutdown(Fd, SHUT_RDWR); }
};

Server::Server(ServerOptions O) { Config.Options = std::move(O); }

Server::~Server() {
  reap(true);
  if (ListenFd >= 0)
    ::close(ListenFd);
  for (int F : WakePipe)
    if (F >= 0)
      ::close(F);
}

void Server::start() {
  const ServerOptions O = Config.Options;
  Config = makeSessionConfig(O);
  if (O.TlsCert.empty() != O.TlsKey.empty())
    throw rt::RemoteError("--tls-cert and --tls-key go together");
  if (!O.TlsCert.empty()) {
    try {
      Tls = TlsContext::server(O.TlsCert, O.TlsKey);
    } catch (const StreamError &E) {
      throw rt::RemoteError(E.what());
    }
  }
  if (::pipe2(WakePipe, O_CLOEXEC | O_NONBLOCK) != 0)
    throw rt::OSError("pipe failed");
  try {
    ListenFd = listenTcp(O.Host, O.Port, BoundPort).release();
  } catch (const StreamError &E) {
    throw rt::NetworkError(E.what());
  }
}

namespace {
std::atomic<bool> StopRequested{false};
}

bool Server::stopRequested() { return StopRequested; }

void Server::stop() {
  StopRequested = true;
  const char B = 1;
  if (WakePipe[1] >= 0) {
    ssize_t R = ::write(WakePipe[1], &B, 1);
    (void)R;
  }
}

void Server::reap(bool All) {
  std::list<std::shared_ptr<Conn>> Finished;
  {
    std::lock_guard<std::mutex> Lock(Mu);
    for (auto It = Conns.begin(); It != Conns.end();) {
      if (All || (*It)->Done) {
        if (All)
          (*It)->shutdown();
        Finished.push_back(*It);
        It = Conns.erase(It);
      } else
        ++It;
    }
  }
  for (auto &C : Finished)
    if (C->T.joinable())
      C->T.join();
}

void Server::run() {
  logLine("listening on " + Config.Options.Host + ":" + std::to_string(BoundPort) + (Tls ? " (TLS)" : "") +
          ", workspace " + Config.Root->root());
  for (;;) {
    pollfd P[2] = {{ListenFd, POLLIN, 0}, {WakePipe[0], POLLIN, 0}};
    const int R = ::poll(P, 2, 1000);
    if (R < 0 && errno != EINTR)
      break;
    reap(false);
    if (P[1].revents)
      break;
    if (!(P[0].revents & POLLIN))
      continue;
    Fd Client(::accept4(ListenFd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
    if (!Client)
      continue;
    const std::string Peer = peerName(Client.get());
    size_t Active;
    {
      std::lock_guard<std::mutex> Lock(Mu);
      Active = Conns.size();
    }
    if (Active >= Config.Options.MaxSessions) {
      logLine("session " + Peer + ": refused: " + std::to_string(Active) + " sessions open (--max-sessions)");
      continue; // closing the socket is the refusal
    }
    int One = 1;
    ::setsockopt(Client.get(), IPPROTO_TCP, TCP_NODELAY, &One, sizeof(One));
    auto C = std::make_shared<Conn>();
    C->Fd = ::fcntl(Client.get(), F_DUPFD_CLOEXEC, 0);
    const uint64_t Number = NextSession++;
    (void)Number;
    std::shared_ptr<TlsContext> Ctx = Tls;
    const SessionConfig *Cfg = &Config;
    Conn *Raw = C.get();
    int RawFd = Client.release();
    C->T = std::thread([Raw, RawFd, Ctx, Cfg, Peer] {
      try {
        std::unique_ptr<Stream> S;
        if (Ctx)
          S.reset(new TlsStream(Fd(RawFd), Ctx, /*IsServer=*/true, "", Cfg->Options.HandshakeTimeoutMs));
        else
          S.reset(new SocketStream(Fd(RawFd)));
        Session Sess(std::move(S), *Cfg, Peer);
        Sess.run();
      } catch (const std::exception &E) {
        logLine("session " + Peer + ": " + E.what());
      }
      Raw->Done = true;
    });
    std::lock_guard<std::mutex> Lock(Mu);
    Conns.push_back(C);
  }
  ::close(ListenFd);
  ListenFd = -1;
  size_t Open;
  {
    std::lock_guard<std::mutex> Lock(Mu);
    Open = Conns.size();
  }
  logLine("stopping: closing " + std::to_string(Open) + " session(s)");
  reap(true);
  logLine("stopped");
}

} // namespace remote
} // namespace optimium
