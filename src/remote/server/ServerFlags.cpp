// Command-line flags of optimium-remote-server.
#include "remote/server/Server.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace optimium {
namespace remote {

const char *serverUsage() {
  return "usage: optimium-remote-server [flags]\n"
         "  --host ADDR               address to listen on (default 127.0.0.1; 0.0.0.0 = every interface)\n"
         "  --port N                  TCP port (default 32264; 0 = ephemeral, printed on stdout)\n"
         "  --workspace DIR           folder model paths resolve in (default: the current folder)\n"
         "  --tls-cert FILE           PEM certificate (chain) for TLS; needs --tls-key\n"
         "  --tls-key FILE            PEM private key for TLS\n"
         "  --access-token TOKEN      shared secret clients must present (also --access-token-file FILE\n"
         "                            or the environment variable OPTIMIUM_REMOTE_ACCESS_TOKEN)\n"
         "  --max-message-bytes N     largest message accepted (default 268435456)\n"
         "  --max-models-per-session N  models + group members one session may hold (default 64)\n"
         "  --max-sessions N          concurrent sessions (default 64)\n"
         "  --idle-timeout-s N        close a session idle this long (default 600; 0 = never)\n"
         "  --no-compression          refuse zstd compression even when a client asks\n"
         "  --help                    this text\n";
}

namespace {

bool parseUnsigned(const std::string &S, uint64_t Max, uint64_t &Out) {
  if (S.empty() || S.find_first_not_of("0123456789") != std::string::npos || S.size() > 19)
    return false;
  Out = std::strtoull(S.c_str(), nullptr, 10);
  return Out <= Max;
}

} // namespace

bool parseServerFlags(const std::vector<std::string> &Args, ServerOptions &O, std::string &Error, bool &Help) {
  Help = false;
  std::string TokenFile;
  bool TokenGiven = false;
  for (size_t I = 0; I < Args.size(); ++I) {
    std::string Flag = Args[I], Value;
    bool HasValue = false;
    const size_t Eq = Flag.find('=');
    if (Flag.rfind("--", 0) == 0 && Eq != std::string::npos) {
      Value = Flag.substr(Eq + 1);
      Flag = Flag.substr(0, Eq);
      HasValue = true;
    }
    auto value = [&](std::string &Out) {
      if (HasValue) {
        Out = Value;
        return true;
      }
      if (I + 1 >= Args.size()) {
        Error = Flag + " needs a value";
        return false;
      }
      Out = Args[++I];
      return true;
    };
    auto number = [&](uint64_t Max, uint64_t &Out) {
      std::string V;
      if (!value(V))
        return false;
      if (!parseUnsigned(V, Max, Out)) {
        Error = Flag + ": '" + V + "' is not a number in [0, " + std::to_string(Max) + "]";
        return false;
      }
      return true;
    };
    uint64_t N = 0;
    if (Flag == "--help" || Flag == "-h") {
      Help = true;
      return true;
    } else if (Flag == "--host") {
      if (!value(O.Host))
        return false;
    } else if (Flag == "--port") {
      if (!number(65535, N))
        return false;
      O.Port = static_cast<uint16_t>(N);
    } else if (Flag == "--workspace") {
      if (!value(O.Workspace))
        return false;
    } else if (Flag == "--tls-cert") {
      if (!value(O.TlsCert))
        return false;
    } else if (Flag == "--tls-key") {
      if (!value(O.TlsKey))
        return false;
    } else if (Flag == "--access-token") {
      if (!value(O.AccessToken))
        return false;
      TokenGiven = true;
    } else if (Flag == "--access-token-file") {
      if (!value(TokenFile))
        return false;
    } else if (Flag == "--max-message-bytes") {
      if (!number(uint64_t(1) << 40, N))
        return false;
      if (N < 4096) {
        Error = "--max-message-bytes must be at least 4096";
        return false;
      }
      O.MaxMessageBytes = N;
    } else if (Flag == "--max-models-per-session") {
      if (!number(1u << 20, N))
        return false;
      O.MaxModelsPerSession = static_cast<uint32_t>(N);
    } else if (Flag == "--max-sessions") {
      if (!number(1u << 16, N))
        return false;
      if (N == 0) {
        Error = "--max-sessions must be at least 1";
        return false;
      }
      O.MaxSessions = static_cast<uint32_t>(N);
    } else if (Flag == "--idle-timeout-s") {
      if (!number(1u << 30, N))
        return false;
      O.IdleTimeoutS = static_cast<int>(N);
    } else if (Flag == "--no-compression") {
      O.AllowCompression = false;
    } else {
      Error = "unknown flag '" + Args[I] + "' (see --help)";
      return false;
    }
  }
  if (!TokenFile.empty()) {
    std::ifstream F(TokenFile);
    std::stringstream S;
    S << F.rdbuf();
    if (!F) {
      Error = "--access-token-file: cannot read " + TokenFile;
      return false;
    }
    O.AccessToken = S.str();
    while (!O.AccessToken.empty() && (O.AccessToken.back() == '\n' || O.AccessToken.back() == '\r'))
      O.AccessToken.pop_back();
    TokenGiven = true;
  }
  if (!TokenGiven)
    if (const char *Env = std::getenv("OPTIMIUM_REMOTE_ACCESS_TOKEN"))
      O.AccessToken = Env;
  if (O.TlsCert.empty() != O.TlsKey.empty()) {
    Error = "--tls-cert and --tls-key go together";
    return false;
  }
  return true;
}

} // namespace remote
} // namespace optimium
