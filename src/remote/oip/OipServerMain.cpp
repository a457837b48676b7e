// optimium-oip-server: the OIP (KServe V2) HTTP endpoint alone, without the native remote
// protocol. A thin main over OipServer; optimium-remote-server offers the same with --http-port.
#include <csignal>
#include <iostream>
#include <string>
#include <vector>

#include "OipFlags.h"
#include "OipServer.h"

namespace oip = optimium::remote::oip;

namespace {

void usage(std::ostream &Out) {
  Out << "usage: optimium-oip-server --workspace DIR [flags]\n"
         "Serves ONNX models over the Open Inference Protocol only (see optimium-remote-server).\n"
         "  --host HOST            address to listen on (default 127.0.0.1)\n"
         "  --workspace DIR        folder the model paths resolve in (required)\n"
         "  --access-token TOKEN   require 'Authorization: Bearer TOKEN' (health endpoints stay open)\n"
      << oip::oipFlagsUsage();
}

} // namespace

int main(int Argc, char **Argv) {
  std::vector<std::string> Args(Argv + 1, Argv + Argc);
  oip::OipFlags Flags;
  Flags.Options.Port = 8000; // the port is this binary's purpose: on by default
  std::string Error;
  if (!oip::extractOipFlags(Args, Flags, Error)) {
    std::cerr << "optimium-oip-server: " << Error << "\n";
    return 2;
  }
  oip::OipOptions Options = Flags.Options;
  for (size_t I = 0; I < Args.size(); ++I) {
    const std::string &A = Args[I];
    auto value = [&](const std::string &Name, std::string &Out) {
      if (A.compare(0, Name.size() + 1, Name + "=") == 0) {
        Out = A.substr(Name.size() + 1);
        return true;
      }
      if (A != Name)
        return false;
      if (I + 1 >= Args.size()) {
        std::cerr << "optimium-oip-server: " << Name << " needs a value\n";
        std::exit(2);
      }
      Out = Args[++I];
      return true;
    };
    if (A == "--help" || A == "-h") {
      usage(std::cout);
      return 0;
    } else if (value("--host", Options.Host) || value("--workspace", Options.Workspace) ||
               value("--access-token", Options.AccessToken)) {
      continue;
    } else {
      std::cerr << "optimium-oip-server: unknown argument '" << A << "'\n";
      usage(std::cerr);
      return 2;
    }
  }
  if (Options.Workspace.empty()) {
    std::cerr << "optimium-oip-server: --workspace is required\n";
    usage(std::cerr);
    return 2;
  }
  // SIGTERM/SIGINT end the process gracefully; blocked before any thread starts, taken by sigwait.
  sigset_t Signals;
  sigemptyset(&Signals);
  sigaddset(&Signals, SIGTERM);
  sigaddset(&Signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &Signals, nullptr);
  std::unique_ptr<oip::OipServer> Server;
  try {
    Server = oip::OipServer::start(Options);
  } catch (const std::exception &E) {
    std::cerr << "optimium-oip-server: " << E.what() << "\n";
    return 1;
  }
  std::cout << "oip listening on " << Options.Host << ":" << Server->port() << std::endl;
  int Sig = 0;
  sigwait(&Signals, &Sig);
  std::cerr << "optimium-oip-server: signal " << Sig << ", shutting down\n";
  Server->stop();
  return 0;
}
