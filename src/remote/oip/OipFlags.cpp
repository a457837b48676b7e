// Parsing of the OIP endpoint's flags (see OipFlags.h).
#include "OipFlags.h"

#include <cstdlib>

namespace optimium {
namespace remote {
namespace oip {

namespace {

bool number(const std::string &Flag, const std::string &V, long long Min, long long Max, long long &Out,
            std::string &Error) {
  char *End = nullptr;
  long long N = std::strtoll(V.c_str(), &End, 10);
  if (V.empty() || *End || N < Min || N > Max) {
    Error = Flag + " needs an integer in [" + std::to_string(Min) + ", " + std::to_string(Max) + "], got '" + V + "'";
    return false;
  }
  Out = N;
  return true;
}

} // namespace

const char *oipFlagsUsage() {
  return "Open Inference Protocol (KServe V2 REST) endpoint:\n"
         "  --http-port N            serve OIP over HTTP on N (0 = ephemeral; prints 'oip listening on HOST:PORT')\n"
         "  --model NAME=PATH        serve PATH (an .onnx file or a folder with model.onnx, relative to the\n"
         "                           workspace; '.' = the workspace itself) as NAME; repeatable. Without it,\n"
         "                           every *.onnx file and folder holding model.onnx in the workspace\n"
         "  --http-workers N         threads serving HTTP requests (default: hardware threads)\n"
         "  --model-threads N        threads of each OIP model's pool (default: one per core)\n"
         "  --http-max-body-bytes N  largest request body (default 67108864; larger gets 413)\n";
}

bool extractOipFlags(std::vector<std::string> &Args, OipFlags &Out, std::string &Error) {
  static const char *const kFlags[] = {"--http-port", "--model", "--http-workers", "--model-threads",
                                       "--http-max-body-bytes"};
  std::vector<std::string> Rest;
  for (size_t I = 0; I < Args.size(); ++I) {
    const std::string &A = Args[I];
    std::string Flag, Value;
    bool Mine = false;
    for (const char *F : kFlags) {
      const std::string Name = F;
      if (A == Name) {
        if (I + 1 >= Args.size()) {
          Error = Name + " needs a value";
          return false;
        }
        Flag = Name;
        Value = Args[++I];
        Mine = true;
      } else if (A.compare(0, Name.size() + 1, Name + "=") == 0) {
        Flag = Name;
        Value = A.substr(Name.size() + 1);
        Mine = true;
      }
      if (Mine)
        break;
    }
    if (!Mine) {
      Rest.push_back(A);
      continue;
    }
    long long N = 0;
    if (Flag == "--http-port") {
      if (!number(Flag, Value, 0, 65535, N, Error))
        return false;
      Out.Enabled = true;
      Out.Options.Port = static_cast<uint16_t>(N);
    } else if (Flag == "--model") {
      const size_t Eq = Value.find('=');
      if (Eq == std::string::npos || Eq == 0 || Eq + 1 == Value.size()) {
        Error = "--model needs NAME=PATH, got '" + Value + "'";
        return false;
      }
      Out.Options.Models.emplace_back(Value.substr(0, Eq), Value.substr(Eq + 1));
    } else if (Flag == "--http-workers") {
      if (!number(Flag, Value, 0, 1024, N, Error))
        return false;
      Out.Options.Workers = static_cast<int>(N);
    } else if (Flag == "--model-threads") {
      if (!number(Flag, Value, 0, 1024, N, Error))
        return false;
      Out.Options.ModelThreads = static_cast<int>(N);
    } else {
      if (!number(Flag, Value, 1, 1LL << 40, N, Error))
        return false;
      Out.Options.MaxBodyBytes = static_cast<size_t>(N);
    }
  }
  Args.swap(Rest);
  return true;
}

} // namespace oip
} // namespace remote
} // namespace optimium
