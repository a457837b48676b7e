// optimium-remote-server: serves models to Optimium remote clients (docs/remote.md). A thin main
// over the server library (src/remote/server/).
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <thread>
#include <unistd.h>

#include "Optimium/Runtime.h"
#include "remote/oip/OipFlags.h"
#include "remote/server/Server.h"

namespace {
optimium::remote::Server *TheServer = nullptr;
void onSignal(int) {
  if (TheServer)
    TheServer->stop();
}
} // namespace

int main(int argc, char **argv) {
  namespace remote = optimium::remote;
  remote::ServerOptions Options;
  std::string Error;
  bool Help = false;
  // The OIP (KServe V2 REST) endpoint's flags (--http-port, --model, ...; docs/serving.md).
  std::vector<std::string> Args(argv + 1, argv + argc);
  remote::oip::OipFlags Oip;
  if (!remote::oip::extractOipFlags(Args, Oip, Error) || !remote::parseServerFlags(Args, Options, Error, Help)) {
    std::cerr << "optimium-remote-server: " << Error << "\n" << remote::serverUsage() << remote::oip::oipFlagsUsage();
    return 2;
  }
  if (Help) {
    std::cout << remote::serverUsage() << remote::oip::oipFlagsUsage();
    return 0;
  }
  std::signal(SIGPIPE, SIG_IGN);
  try {
    optimium::runtime::AutoInit Init;
    remote::Server Server(Options);
    Server.start();
    TheServer = &Server;
    struct sigaction Sa {};
    Sa.sa_handler = onSignal;
    sigemptyset(&Sa.sa_mask);
    sigaction(SIGTERM, &Sa, nullptr);
    sigaction(SIGINT, &Sa, nullptr);
    std::cout << "listening on " << Server.host() << ":" << Server.port() << std::endl;
    std::unique_ptr<remote::oip::OipServer> Http; // shares --host, --workspace, --access-token
    if (Oip.Enabled) {
      remote::oip::OipOptions O = Oip.Options;
      O.Host = Options.Host;
      O.Workspace = Options.Workspace;
      O.AccessToken = Options.AccessToken;
      Http = remote::oip::OipServer::start(O);
      std::cout << "oip listening on " << O.Host << ":" << Http->port() << std::endl;
    }
    // Sessions end once their runs observe the cancel (between operations). A single operation can
    // run for long (a huge MatMul, a data-dependent Loop): after a grace period, exit anyway.
    std::thread([] {
      while (!remote::Server::stopRequested())
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      std::this_thread::sleep_for(std::chrono::seconds(10));
      remote::logLine("sessions did not end within 10 s of the stop signal; exiting");
      std::_Exit(0);
    }).detach();
    Server.run();
    TheServer = nullptr;
    if (Http)
      Http->stop();
  } catch (const std::exception &E) {
    std::cerr << "optimium-remote-server: " << E.what() << std::endl;
    return 1;
  }
  return 0;
}
