// optimium-remote-server as a library: options, one Session per connection (the protocol of
// docs/remote-protocol.md over any Stream, so tests and the fuzzer can drive it from memory), and
// the Server (listening socket, a thread per session, graceful stop).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "remote/protocol/Codec.h"
#include "remote/protocol/Frame.h"
#include "remote/server/Workspace.h"

namespace optimium {
namespace remote {

class TlsContext;

struct ServerOptions {
  std::string Host = "127.0.0.1"; ///< loopback by default: listening on a network is a choice
  uint16_t Port = 32264;          ///< 0 = an ephemeral port
  std::string Workspace = ".";
  std::string TlsCert, TlsKey;    ///< both or neither
  std::string AccessToken;        ///< empty = no token required
  uint64_t MaxMessageBytes = kDefaultMaxMessageBytes;
  uint32_t MaxModelsPerSession = 64; ///< models + group members
  uint32_t MaxSessions = 64;
  int IdleTimeoutS = 600;            ///< 0 = never; a session with a run in progress is not idle
  bool AllowCompression = true;
  int HandshakeTimeoutMs = 10000;
};

/// What every session of a server shares.
struct SessionConfig {
  ServerOptions Options;
  std::shared_ptr<Workspace> Root;
  HostDescription Host;
  std::string ServerVersion;
  /// Folder for models uploaded into groups (a per-session folder is made in it).
  std::string UploadRoot;
  std::function<void(const std::string &)> Log;
};

SessionConfig makeSessionConfig(const ServerOptions &O);
/// One line on stderr, prefixed with the time and "optimium-remote-server:" (thread-safe).
void logLine(const std::string &Line);

struct SessionState;

/// One client connection: the handshake, then requests until Close, the end of the stream, a
/// framing error or the idle timeout. Everything the session made is freed when run() returns.
class Session {
public:
  Session(std::unique_ptr<Stream> S, const SessionConfig &Config, std::string Peer);
  ~Session();
  void run();

private:
  std::shared_ptr<SessionState> State;
};

/// Parses the command line (argv without argv[0]); false with Error set on a bad flag. Help is
/// set for --help. The access token may also come from --access-token-file or the environment
/// variable OPTIMIUM_REMOTE_ACCESS_TOKEN.
bool parseServerFlags(const std::vector<std::string> &Args, ServerOptions &O, std::string &Error, bool &Help);
const char *serverUsage();

class Server {
public:
  explicit Server(ServerOptions O);
  ~Server();
  /// Binds and listens (StreamError / RemoteError on a bad address, workspace or TLS file).
  void start();
  uint16_t port() const { return BoundPort; }
  const std::string &host() const { return Config.Options.Host; }
  /// Accepts clients until stop(); then ends every session and returns.
  void run();
  /// Async-signal-safe: wakes run(), which stops.
  void stop();
  /// Whether stop() was called on any server of this process.
  static bool stopRequested();

private:
  struct Conn;
  void reap(bool All);
  SessionConfig Config;
  std::shared_ptr<TlsContext> Tls;
  int ListenFd = -1;
  int WakePipe[2] = {-1, -1};
  uint16_t BoundPort = 0;
  std::mutex Mu;
  std::list<std::shared_ptr<Conn>> Conns;
  uint64_t NextSession = 1;
};

} // namespace remote
} // namespace optimium
