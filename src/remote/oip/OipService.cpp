// OIP routing, auth, metadata and inference (see OipService.h).
#include "OipService.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <dirent.h>
#include <set>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>

#include "OipCodec.h"

namespace optimium {
namespace remote {
namespace oip {

namespace rt = optimium::runtime;

namespace {

std::string realPath(const std::string &P) {
  char Buf[PATH_MAX];
  if (!::realpath(P.c_str(), Buf))
    return "";
  return Buf;
}

bool isInside(const std::string &Root, const std::string &P) {
  return P == Root || (P.size() > Root.size() && P.compare(0, Root.size(), Root) == 0 &&
                       (Root.back() == '/' || P[Root.size()] == '/'));
}

bool isFile(const std::string &P) {
  struct stat St;
  return ::stat(P.c_str(), &St) == 0 && S_ISREG(St.st_mode);
}

bool isDir(const std::string &P) {
  struct stat St;
  return ::stat(P.c_str(), &St) == 0 && S_ISDIR(St.st_mode);
}

// A name usable in a URL path segment without escaping.
bool validModelName(const std::string &N) {
  if (N.empty() || N.size() > 200 || N == "." || N == "..")
    return false;
  for (char C : N)
    if (!(std::isalnum(static_cast<unsigned char>(C)) || C == '-' || C == '_' || C == '.'))
      return false;
  return true;
}

bool constantTimeEquals(const std::string &A, const std::string &B) {
  unsigned char Diff = A.size() == B.size() ? 0 : 1;
  for (size_t I = 0; I < A.size(); ++I)
    Diff |= static_cast<unsigned char>(A[I] ^ B[I % (B.empty() ? 1 : B.size())]);
  return Diff == 0 && !B.empty();
}

HttpResponse jsonResponse(int Status, std::string Body) {
  HttpResponse R;
  R.Status = Status;
  R.Headers.emplace_back("Content-Type", "application/json");
  R.Body = std::move(Body);
  return R;
}

HttpResponse methodNotAllowed(const char *Allow) {
  HttpResponse R = errorResponse(405, std::string("method not allowed (use ") + Allow + ")");
  R.Headers.emplace_back("Allow", Allow);
  return R;
}

std::vector<std::string> splitPath(const std::string &Path) {
  std::vector<std::string> Segs;
  size_t Pos = 1;
  while (Pos <= Path.size()) {
    size_t Slash = Path.find('/', Pos);
    if (Slash == std::string::npos)
      Slash = Path.size();
    Segs.push_back(Path.substr(Pos, Slash - Pos));
    Pos = Slash + 1;
  }
  if (!Segs.empty() && Segs.back().empty())
    Segs.pop_back(); // a trailing slash
  return Segs;
}

std::string joinNames(rt::ArrayRef<rt::StringRef> Names) {
  std::string S;
  for (size_t I = 0; I < Names.size(); ++I)
    S += (I ? ", " : "") + Names[I].str();
  return S;
}

} // namespace

std::vector<std::pair<std::string, std::string>> resolveModels(const OipOptions &Options) {
  if (Options.Workspace.empty())
    throw std::runtime_error("no workspace folder given");
  const std::string Root = realPath(Options.Workspace);
  if (Root.empty() || !isDir(Root))
    throw std::runtime_error("workspace '" + Options.Workspace + "' is not a folder");
  std::vector<std::pair<std::string, std::string>> Out;
  if (Options.Models.empty()) {
    DIR *D = ::opendir(Root.c_str());
    if (!D)
      throw std::runtime_error("cannot read workspace '" + Root + "'");
    std::vector<std::string> Entries;
    while (dirent *E = ::readdir(D))
      Entries.emplace_back(E->d_name);
    ::closedir(D);
    std::sort(Entries.begin(), Entries.end());
    for (const std::string &E : Entries) {
      if (E.empty() || E[0] == '.')
        continue;
      const std::string Full = realPath(Root + "/" + E);
      if (Full.empty() || !isInside(Root, Full))
        continue; // a dangling symlink or one leading out of the workspace
      if (E.size() > 5 && E.compare(E.size() - 5, 5, ".onnx") == 0 && isFile(Full))
        Out.emplace_back(E.substr(0, E.size() - 5), Full);
      else if (isDir(Full) && isFile(Full + "/model.onnx"))
        Out.emplace_back(E, Full);
    }
    if (Out.empty())
      throw std::runtime_error("no models in workspace '" + Root + "' (no *.onnx file or folder with model.onnx)");
  } else {
    for (const auto &M : Options.Models) {
      const std::string &Rel = M.second;
      if (Rel.empty() || Rel[0] == '/')
        throw std::runtime_error("model '" + M.first + "': path '" + Rel + "' must be relative to the workspace");
      for (size_t Pos = 0; Pos <= Rel.size();) {
        size_t Slash = Rel.find('/', Pos);
        if (Slash == std::string::npos)
          Slash = Rel.size();
        if (Rel.compare(Pos, Slash - Pos, "..") == 0)
          throw std::runtime_error("model '" + M.first + "': path '" + Rel + "' may not contain '..'");
        Pos = Slash + 1;
      }
      const std::string Full = realPath(Root + "/" + Rel);
      if (Full.empty())
        throw std::runtime_error("model '" + M.first + "': '" + Rel + "' does not exist in the workspace");
      if (!isInside(Root, Full))
        throw std::runtime_error("model '" + M.first + "': '" + Rel + "' leads out of the workspace");
      Out.emplace_back(M.first, Full);
    }
  }
  std::set<std::string> Seen;
  for (const auto &M : Out) {
    if (!validModelName(M.first))
      throw std::runtime_error("model name '" + M.first + "' is not valid (letters, digits, '-', '_', '.')");
    if (!Seen.insert(M.first).second)
      throw std::runtime_error("model name '" + M.first + "' given twice");
  }
  return Out;
}

struct OipService::ModelEntry {
  std::string Name;
  rt::Model Model;
  std::string Metadata;
  std::mutex Mutex;
  std::vector<rt::InferRequest> Idle; // reused: a request per concurrent HTTP request at most

  rt::InferRequest acquire() {
    {
      std::lock_guard<std::mutex> Lock(Mutex);
      if (!Idle.empty()) {
        rt::InferRequest R = std::move(Idle.back());
        Idle.pop_back();
        return R;
      }
    }
    return Model.createRequest();
  }
  void release(rt::InferRequest R) {
    std::lock_guard<std::mutex> Lock(Mutex);
    Idle.push_back(std::move(R));
  }
};

OipService::OipService(const OipOptions &O) : Options(O) {
  rt::initialize();
  try {
    for (const auto &M : resolveModels(Options)) {
      auto Entry = std::make_unique<ModelEntry>();
      Entry->Name = M.first;
      rt::ModelLoadOptions LoadOptions;
      LoadOptions.ThreadCount = Options.ModelThreads;
      try {
        Entry->Model = rt::loadModel(M.second, LoadOptions);
      } catch (const std::exception &E) {
        throw std::runtime_error("model '" + M.first + "' (" + M.second + "): " + E.what());
      }
      Entry->Metadata = modelMetadataJson(M.first, Entry->Model);
      Models.emplace(M.first, std::move(Entry));
    }
  } catch (...) {
    Models.clear();
    rt::finalize();
    throw;
  }
}

OipService::~OipService() {
  Models.clear();
  rt::finalize();
}

std::vector<std::string> OipService::modelNames() const {
  std::vector<std::string> N;
  for (const auto &M : Models)
    N.push_back(M.first);
  return N;
}

HttpResponse OipService::handle(const HttpRequest &Request) {
  try {
    return route(Request);
  } catch (const std::exception &E) {
    return errorResponse(500, std::string("internal error: ") + E.what());
  }
}

HttpResponse OipService::route(const HttpRequest &Request) {
  const std::vector<std::string> S = splitPath(Request.Path);
  if (S.empty() || S[0] != "v2")
    return errorResponse(404, "no such endpoint '" + Request.Path + "' (the OIP endpoints are under /v2)");
  const bool Get = Request.Method == "GET" || Request.Method == "HEAD";

  // Health stays open without the token: orchestrators probe it.
  if (S.size() == 3 && S[1] == "health" && (S[2] == "live" || S[2] == "ready")) {
    if (!Get)
      return methodNotAllowed("GET");
    return jsonResponse(200, S[2] == "live" ? "{\"live\":true}" : "{\"ready\":true}");
  }
  if (!Options.AccessToken.empty()) {
    const std::string *Auth = Request.header("authorization");
    const std::string Prefix = "Bearer ";
    if (!Auth || Auth->compare(0, Prefix.size(), Prefix) != 0 ||
        !constantTimeEquals(Auth->substr(Prefix.size()), Options.AccessToken)) {
      HttpResponse R = errorResponse(401, Auth ? "wrong access token" : "an access token is required (Authorization: Bearer <token>)");
      R.Headers.emplace_back("WWW-Authenticate", "Bearer");
      return R;
    }
  }
  if (S.size() == 1) {
    if (!Get)
      return methodNotAllowed("GET");
    rt::Version V = rt::getVersion();
    return jsonResponse(200, "{\"name\":\"optimium-remote-server\",\"version\":\"" + std::to_string(V.Major) + "." +
                                 std::to_string(V.Minor) + "." + std::to_string(V.Patch) +
                                 "\",\"extensions\":[\"binary_tensor_data\"]}");
  }
  if (S.size() >= 3 && S[1] == "models") {
    auto It = Models.find(S[2]);
    if (It == Models.end())
      return errorResponse(404, "model '" + S[2] + "' not found");
    size_t Next = 3;
    if (S.size() >= 5 && S[3] == "versions") {
      if (S[4] != "1")
        return errorResponse(404, "model '" + S[2] + "' has no version '" + S[4] + "' (only 1)");
      Next = 5;
    }
    ModelEntry &Entry = *It->second;
    if (S.size() == Next) {
      if (!Get)
        return methodNotAllowed("GET");
      return jsonResponse(200, Entry.Metadata);
    }
    if (S.size() == Next + 1 && S[Next] == "ready") {
      if (!Get)
        return methodNotAllowed("GET");
      return jsonResponse(200, "{\"name\":" + jsonString(Entry.Name) + ",\"ready\":true}");
    }
    if (S.size() == Next + 1 && S[Next] == "infer") {
      if (Request.Method != "POST")
        return methodNotAllowed("POST");
      return infer(Entry, Request);
    }
  }
  return errorResponse(404, "no such endpoint '" + Request.Path + "'");
}

HttpResponse OipService::infer(ModelEntry &Entry, const HttpRequest &Request) {
  const std::string &Body = Request.Body;
  size_t HeaderSize = Body.size();
  if (const std::string *H = Request.header("inference-header-content-length")) {
    char *End = nullptr;
    errno = 0;
    unsigned long long V = H->empty() || !std::isdigit(static_cast<unsigned char>((*H)[0])) ? ULLONG_MAX
                                                                                           : std::strtoull(H->c_str(), &End, 10);
    if (V == ULLONG_MAX || errno || (End && *End) || V > Body.size())
      return errorResponse(400, "Inference-Header-Content-Length '" + *H + "' is not a length within the body (" +
                                    std::to_string(Body.size()) + " bytes)");
    HeaderSize = static_cast<size_t>(V);
  }
  OipInferRequest Req;
  std::string Error;
  if (!parseInferRequest(Body.data(), HeaderSize, Body.size() - HeaderSize, Req, Error))
    return errorResponse(400, Error);

  const rt::Model &M = Entry.Model;
  const auto InputNames = M.getInputNames();
  std::map<std::string, rt::Tensor> Inputs;
  for (const OipInput &In : Req.Inputs) {
    size_t Index = InputNames.size();
    for (size_t I = 0; I < InputNames.size(); ++I)
      if (InputNames[I].str() == In.Name)
        Index = I;
    if (Index == InputNames.size())
      return errorResponse(400, "model '" + Entry.Name + "' has no input '" + In.Name + "' (inputs: " +
                                    joinNames(InputNames) + ")");
    rt::Tensor T;
    if (!makeInputTensor(In, M.getInputTensorInfo(Index), Body.data() + HeaderSize, T, Error))
      return errorResponse(400, Error);
    Inputs.emplace(In.Name, std::move(T));
  }
  for (size_t I = 0; I < InputNames.size(); ++I)
    if (!Inputs.count(InputNames[I].str()))
      return errorResponse(400, "input '" + InputNames[I].str() + "' of model '" + Entry.Name + "' is missing (inputs: " +
                                    joinNames(InputNames) + ")");

  // Which outputs, each binary or JSON.
  const auto OutputNames = M.getOutputNames();
  std::vector<std::pair<std::string, bool>> Wanted;
  if (Req.HasOutputs) {
    for (const OipRequestedOutput &O : Req.Outputs) {
      bool Known = false;
      for (size_t I = 0; I < OutputNames.size(); ++I)
        Known = Known || OutputNames[I].str() == O.Name;
      if (!Known)
        return errorResponse(400, "model '" + Entry.Name + "' has no output '" + O.Name + "' (outputs: " +
                                      joinNames(OutputNames) + ")");
      Wanted.emplace_back(O.Name, O.Binary < 0 ? Req.BinaryOutputDefault : O.Binary == 1);
    }
  } else {
    for (size_t I = 0; I < OutputNames.size(); ++I)
      Wanted.emplace_back(OutputNames[I].str(), Req.BinaryOutputDefault);
  }

  rt::InferRequest R = Entry.acquire();
  std::string Header = "{\"model_name\":" + jsonString(Entry.Name) + ",\"model_version\":\"1\"";
  if (Req.HasId)
    Header += ",\"id\":" + jsonString(Req.Id);
  Header += ",\"outputs\":[";
  std::string Binary;
  try {
    R.infer(Inputs);
    R.wait();
    for (size_t I = 0; I < Wanted.size(); ++I) {
      rt::Tensor T = R.getOutput(rt::StringRef(Wanted[I].first));
      std::string Datatype = datatypeName(T.getType());
      if (Datatype.empty()) {
        Entry.release(std::move(R));
        return errorResponse(500, "output '" + Wanted[I].first + "' has element type " + rt::toString(T.getType()) +
                                      ", which the protocol cannot carry");
      }
      Header += (I ? ",{" : "{");
      Header += "\"name\":" + jsonString(Wanted[I].first) + ",\"datatype\":\"" + Datatype + "\",\"shape\":[";
      const rt::TensorShape &Shape = T.getShape();
      for (size_t D = 0; D < Shape.getRank(); ++D)
        Header += (D ? "," : "") + std::to_string(Shape[D].value());
      Header += "]";
      if (Wanted[I].second) {
        const size_t Before = Binary.size();
        if (!appendBinaryData(T, Binary, Error))
          throw std::runtime_error(Error);
        Header += ",\"parameters\":{\"binary_data_size\":" + std::to_string(Binary.size() - Before) + "}}";
      } else {
        Header += ",\"data\":";
        if (!appendJsonData(T, Header, Error))
          throw std::runtime_error(Error);
        Header += "}";
      }
    }
  } catch (const rt::InvalidArgumentError &E) {
    Entry.release(std::move(R));
    return errorResponse(400, E.what());
  } catch (const rt::ShapeError &E) {
    Entry.release(std::move(R));
    return errorResponse(400, E.what());
  } catch (const rt::TypeError &E) {
    Entry.release(std::move(R));
    return errorResponse(400, E.what());
  } catch (const std::exception &E) {
    Entry.release(std::move(R));
    return errorResponse(500, "inference failed: " + std::string(E.what()));
  }
  Entry.release(std::move(R));
  Header += "]}";

  HttpResponse Out;
  if (Binary.empty() && std::none_of(Wanted.begin(), Wanted.end(), [](const auto &W) { return W.second; })) {
    Out.Headers.emplace_back("Content-Type", "application/json");
    Out.Body = std::move(Header);
  } else {
    Out.Headers.emplace_back("Content-Type", "application/octet-stream");
    Out.Headers.emplace_back("Inference-Header-Content-Length", std::to_string(Header.size()));
    Out.Body = std::move(Header);
    Out.Body += Binary;
  }
  return Out;
}

} // namespace oip
} // namespace remote
} // namespace optimium
