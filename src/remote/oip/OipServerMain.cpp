// optimium-oip-server: the OIP (KServe V2) HTTP endpoint alone, without the native remote
// protocol. A thin main over OipServer; optimium-remote-server offers the same with --http-port.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include "OipServer.h"

namespace oip = optimium::remote::oip;

namespace {

const char kUsage[] =
    "usage: optimium-oip-server --workspace DIR [options]\n"
    "Serves ONNX models over the Open Inference Protocol (KServe V2 REST, binary tensor extension).\n"
    "  --host HOST            address to listen on (default 127.0.0.1)\n"
    "  --http-port N          port (default 8000; 0 = ephemeral); prints 'oip listening on HOST:PORT'\n"
    "  --workspace DIR        folder the model paths resolve in (required)\n"
    "  --model NAME=PATH      serve PATH (relative to the workspace) as NAME; repeatable. Without it,\n"
    "                         every *.onnx file and folder holding model.onnx in DIR is served\n"
    "  --access-token TOKEN   require 'Authorization: Bearer TOKEN' (health endpoints stay open)\n"
    "  --workers N            request threads (default: hardware threads)\n"
    "  --model-threads N      threads of each model's pool (default: one per core)\n"
    "  --max-body-bytes N     largest request body (default 67108864)\n";

bool takeValue(int Argc, char **Argv, int &I, const char *Flag, std::string &Out) {
  const size_t Len = std::strlen(Flag);
  if (std::strncmp(Argv[I], Flag, Len) != 0)
    return false;
  if (Argv[I][Len] == '=') {
    Out = Argv[I] + Len + 1;
    return true;
  }
  if (Argv[I][Len] != '\0')
    return false;
  if (I + 1 >= Argc) {
    std::cerr << "optimium-oip-server: " << Flag << " needs a value\n";
    std::exit(2);
  }
  Out = Argv[++I];
  return true;
}

long number(const std::string &Flag, const std::string &V, long Min, long Max) {
  char *End = nullptr;
  long N = std::strtol(V.c_str(), &End, 10);
  if (V.empty() || *End || N < Min || N > Max) {
    std::cerr << "optimium-oip-server: " << Flag << " needs an integer in [" << Min << ", " << Max << "], got '" << V
              << "'\n";
    std::exit(2);
  }
  return N;
}

} // namespace

int main(int Argc, char **Argv) {
  oip::OipOptions Options;
  for (int I = 1; I < Argc; ++I) {
    std::string V;
    if (!std::strcmp(Argv[I], "--help") || !std::strcmp(Argv[I], "-h")) {
      std::cout << kUsage;
      return 0;
    } else if (takeValue(Argc, Argv, I, "--host", V)) {
      Options.Host = V;
    } else if (takeValue(Argc, Argv, I, "--http-port", V)) {
      Options.Port = static_cast<uint16_t>(number("--http-port", V, 0, 65535));
    } else if (takeValue(Argc, Argv, I, "--workspace", V)) {
      Options.Workspace = V;
    } else if (takeValue(Argc, Argv, I, "--model", V)) {
      const size_t Eq = V.find('=');
      if (Eq == std::string::npos || Eq == 0 || Eq + 1 == V.size()) {
        std::cerr << "optimium-oip-server: --model needs NAME=PATH, got '" << V << "'\n";
        return 2;
      }
      Options.Models.emplace_back(V.substr(0, Eq), V.substr(Eq + 1));
    } else if (takeValue(Argc, Argv, I, "--access-token", V)) {
      Options.AccessToken = V;
    } else if (takeValue(Argc, Argv, I, "--workers", V)) {
      Options.Workers = static_cast<int>(number("--workers", V, 0, 1024));
    } else if (takeValue(Argc, Argv, I, "--model-threads", V)) {
      Options.ModelThreads = static_cast<int>(number("--model-threads", V, 0, 1024));
    } else if (takeValue(Argc, Argv, I, "--max-body-bytes", V)) {
      Options.MaxBodyBytes = static_cast<size_t>(number("--max-body-bytes", V, 1, 1L << 40));
    } else {
      std::cerr << "optimium-oip-server: unknown argument '" << Argv[I] << "'\n" << kUsage;
      return 2;
    }
  }
  if (Options.Workspace.empty()) {
    std::cerr << "optimium-oip-server: --workspace is required\n" << kUsage;
    return 2;
  }
  // SIGTERM/SIGINT end the process gracefully; block them before any thread starts.
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
