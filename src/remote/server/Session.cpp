// One client session: handshake, request dispatch, and the session's models, requests and groups.
// The reader thread answers quick requests itself; an infer() completes through the request's
// callback (a RunDone notice), a profile() and a group member's run() on a thread of their own, so
// one blocked model never blocks the session's other models.
#include "remote/server/Server.h"

#include <openssl/crypto.h>

#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <unistd.h>

namespace optimium {
namespace remote {

namespace fs = std::filesystem;

/// The largest ProfileOptions::EventBufferSize a client may ask for (8 Mi events: 256 MB of
/// buffer, about what one reply message can carry back).
constexpr size_t kMaxRemoteProfileEvents = size_t(8) << 20;

namespace {

/// The input infos then the output infos of a Model or a GroupMember (ModelInfo and AddMember
/// replies).
template <typename ModelLike> void writeInputOutputInfos(Writer &W, const ModelLike &M) {
  std::vector<rt::TensorInfo> In, Out;
  for (rt::StringRef N : M.getInputNames())
    In.push_back(M.getTensorInfo(N));
  for (rt::StringRef N : M.getOutputNames())
    Out.push_back(M.getTensorInfo(N));
  writeTensorInfos(W, In);
  writeTensorInfos(W, Out);
}

/// The stream and its writer, shared with callbacks that may outlive the session's reader loop.
struct Connection {
  explicit Connection(std::unique_ptr<Stream> S) : S(std::move(S)), W(*this->S) {}
  std::unique_ptr<Stream> S;
  FrameWriter W;
  std::atomic<bool> Dead{false};
  void send(MsgType T, uint32_t Id, const std::vector<uint8_t> &P) {
    if (Dead)
      return;
    try {
      W.write(T, Id, P);
    } catch (const std::exception &) {
      Dead = true;
      S->shutdown();
    }
  }
};

enum class RunMode : uint8_t { Infer, Profile };

struct ModelSlot {
  uint32_t Id = 0;
  rt::Model Model;
  rt::InferRequest Request;
  std::atomic<bool> Running{false};
  std::atomic<uint32_t> RunId{0};
  std::atomic<RunMode> Mode{RunMode::Infer};
  std::vector<rt::Tensor> KeptInputs;           ///< alive until the run ends
  std::map<std::string, rt::Tensor> KeptNamed;
  std::map<std::string, rt::Tensor> Staged;     ///< inputs written by SetTensor
  std::thread ProfileThread;
  std::shared_ptr<std::atomic_bool> StopFlag;
  std::set<std::string> InputNames;

  /// Ends the run in progress (cancelled when Cancel) and joins the profile thread.
  void settle(bool Cancel) {
    if (Cancel && Running) {
      if (StopFlag)
        *StopFlag = true;
      try {
        Request.cancel();
      } catch (...) {
      }
    }
    if (ProfileThread.joinable())
      ProfileThread.join();
    try {
      Request.wait();
    } catch (...) {
    }
  }
};

void writeRunDone(Writer &W, uint32_t ModelId, std::exception_ptr E) {
  W.u32(ModelId);
  W.boolean(E == nullptr);
  if (E)
    writeError(W, errorCodeOf(E), errorMessageOf(E));
}

bool validUploadName(const std::string &N) {
  return !N.empty() && N != "." && N != ".." && N.find('/') == std::string::npos &&
         N.find('\0') == std::string::npos && N.size() < 256;
}

} // namespace

struct SessionState {
  SessionState(std::unique_ptr<Stream> S, const SessionConfig &C, std::string Peer)
      : Conn(std::make_shared<Connection>(std::move(S))), Config(C), Peer(std::move(Peer)) {}

  std::shared_ptr<Connection> Conn;
  const SessionConfig &Config;
  std::string Peer;
  uint32_t NextId = 1;
  std::map<uint32_t, std::shared_ptr<ModelSlot>> Models;
  std::map<uint32_t, rt::ModelGroup> Groups;
  std::map<uint32_t, rt::GroupMember> Members;
  std::string UploadDir;
  uint64_t Requests = 0;

  // Threads running group members' run(); each marks itself done so the next spawn joins it.
  struct Task {
    std::thread T;
    std::atomic<bool> Done{false};
  };
  std::list<std::unique_ptr<Task>> Tasks;

  void log(const std::string &Line) {
    if (Config.Log)
      Config.Log("session " + Peer + ": " + Line);
  }

  void reply(uint32_t Id, const std::vector<uint8_t> &P) { Conn->send(MsgType::Ok, Id, P); }
  void replyError(uint32_t Id, ErrorCode Code, const std::string &Msg) {
    Writer W;
    writeError(W, Code, Msg);
    Conn->send(MsgType::Error, Id, W.buffer());
  }

  void spawn(std::function<void()> Fn) {
    for (auto It = Tasks.begin(); It != Tasks.end();) {
      if ((*It)->Done) {
        (*It)->T.join();
        It = Tasks.erase(It);
      } else
        ++It;
    }
    auto T = std::make_unique<Task>();
    Task *P = T.get();
    T->T = std::thread([P, Fn = std::move(Fn)] {
      Fn();
      P->Done = true;
    });
    Tasks.push_back(std::move(T));
  }

  bool busy() const {
    for (const auto &KV : Models)
      if (KV.second->Running)
        return true;
    for (const auto &T : Tasks)
      if (!T->Done)
        return true;
    return false;
  }

  size_t modelCount() const { return Models.size() + Members.size(); }
  void checkModelLimit() const {
    if (modelCount() >= Config.Options.MaxModelsPerSession)
      throw rt::RemoteError("limit reached: at most " + std::to_string(Config.Options.MaxModelsPerSession) +
                            " models per session (--max-models-per-session)");
  }

  ModelSlot &slot(uint32_t Id) {
    auto It = Models.find(Id);
    if (It == Models.end())
      throw rt::RemoteError("no model " + std::to_string(Id) + " in this session");
    return *It->second;
  }
  std::shared_ptr<ModelSlot> slotPtr(uint32_t Id) {
    slot(Id);
    return Models[Id];
  }

  void checkIdle(ModelSlot &S) {
    if (S.Running)
      throw rt::InvalidStateError("a run is in progress on model '" + S.Model.getName() + "': wait() first");
  }

  // --- handshake -------------------------------------------------------------------------------
  bool handshake() {
    Stream &S = *Conn->S;
    if (!S.waitReadable(Config.Options.HandshakeTimeoutMs)) {
      log("no handshake within " + std::to_string(Config.Options.HandshakeTimeoutMs) + " ms; closed");
      return false;
    }
    Frame F;
    if (!readFrame(S, 1 << 16, F)) {
      log("closed before the handshake");
      return false;
    }
    ServerHello H;
    H.MaxMessageBytes = Config.Options.MaxMessageBytes;
    H.ServerVersion = Config.ServerVersion;
    H.Host = Config.Host;
    if (F.type() != MsgType::ClientHello) {
      log("refused: the first message is " + toString(F.type()) + ", not ClientHello");
      return false;
    }
    if (F.Header.Version != kProtocolVersion) {
      H.Reason = "protocol version " + std::to_string(F.Header.Version) + " is not supported (the server speaks " +
                 std::to_string(kProtocolVersion) + ")";
      Writer W;
      writeServerHello(W, H);
      Conn->send(MsgType::ServerHello, F.Header.RequestId, W.buffer());
      log("refused: " + H.Reason);
      return false;
    }
    ClientHello C;
    try {
      Reader R(F.Payload);
      C = readClientHello(R);
    } catch (const DecodeError &E) {
      log(std::string("refused: malformed ClientHello: ") + E.what());
      return false;
    }
    const std::string &Want = Config.Options.AccessToken;
    const bool TokenOk = Want.empty() || (C.AccessToken.size() == Want.size() &&
                                          CRYPTO_memcmp(C.AccessToken.data(), Want.data(), Want.size()) == 0);
    if (!TokenOk) {
      H.Reason = "access token rejected";
      Writer W;
      writeServerHello(W, H);
      Conn->send(MsgType::ServerHello, F.Header.RequestId, W.buffer());
      log(std::string("refused: access token rejected (") + (C.AccessToken.empty() ? "none given" : "wrong token") + ")");
      return false;
    }
    H.Accepted = true;
    H.Compression = C.WantsCompression && Config.Options.AllowCompression;
    Writer W;
    writeServerHello(W, H);
    Conn->send(MsgType::ServerHello, F.Header.RequestId, W.buffer());
    Conn->W.setCompression(H.Compression);
    log("opened (client '" + C.ClientName + "', compression " + (H.Compression ? "on" : "off") + ")");
    return true;
  }

  // --- requests --------------------------------------------------------------------------------
  /// false when the session ends (Close).
  bool dispatch(Frame &F) {
    const uint32_t Id = F.Header.RequestId;
    ++Requests;
    try {
      Reader R(F.Payload);
      switch (F.type()) {
      case MsgType::LoadModel: return loadModel(Id, R), true;
      case MsgType::ModelInfo: return modelInfo(Id, R), true;
      case MsgType::Infer: return infer(Id, R), true;
      case MsgType::Profile: return profile(Id, R), true;
      case MsgType::Cancel: {
        ModelSlot &S = slot(R.u32());
        R.expectEnd();
        if (S.Running) {
          if (S.StopFlag)
            *S.StopFlag = true;
          S.Request.cancel();
        }
        reply(Id, {});
        return true;
      }
      case MsgType::SetTensor: return setTensor(Id, R), true;
      case MsgType::GetTensor: return getTensor(Id, R), true;
      case MsgType::GetProfileEvents:
      case MsgType::GetProfileDurations: {
        ModelSlot &S = slot(R.u32());
        R.expectEnd();
        checkIdle(S);
        Writer W;
        if (F.type() == MsgType::GetProfileEvents)
          writeProfileEvents(W, S.Request.getProfileEvents());
        else
          writeProfileDurations(W, S.Request.getProfileDurations());
        reply(Id, W.buffer());
        return true;
      }
      case MsgType::InferShape: return inferShape(Id, R), true;
      case MsgType::IsSavedTensor: return isSavedTensor(Id, R), true;
      case MsgType::ReleaseModel: {
        const uint32_t M = R.u32();
        R.expectEnd();
        auto S = slotPtr(M);
        S->settle(/*Cancel=*/true);
        Models.erase(M);
        reply(Id, {});
        return true;
      }
      case MsgType::CreateGroup: {
        rt::ModelGroupOptions O;
        readPoolTuning(R, O);
        R.expectEnd();
        rt::ModelGroup G = rt::createModelGroup(O);
        const uint32_t GId = NextId++;
        Groups[GId] = G;
        Writer W;
        W.u32(GId);
        reply(Id, W.buffer());
        return true;
      }
      case MsgType::GroupAdd: return groupAdd(Id, R), true;
      case MsgType::MemberRun: return memberRun(Id, R), true;
      case MsgType::ReleaseGroup:
      case MsgType::ReleaseMember: {
        const uint32_t X = R.u32();
        R.expectEnd();
        if (F.type() == MsgType::ReleaseGroup ? Groups.erase(X) == 0 : Members.erase(X) == 0)
          throw rt::RemoteError("no " + std::string(F.type() == MsgType::ReleaseGroup ? "group " : "group member ") +
                                std::to_string(X) + " in this session");
        reply(Id, {});
        return true;
      }
      case MsgType::Close:
        reply(Id, {});
        return false;
      default:
        throw rt::RemoteError("unexpected message " + toString(F.type()));
      }
    } catch (const DecodeError &E) {
      replyError(Id, ErrorCode::Remote, "malformed " + toString(F.type()) + " request: " + E.what());
      log("malformed " + toString(F.type()) + " request: " + E.what());
    } catch (...) {
      const ErrorCode Code = errorCodeOf(nullptr);
      const std::string Msg = errorMessageOf(nullptr);
      replyError(Id, Code, Msg);
      if (Code == ErrorCode::Remote)
        log("refused " + toString(F.type()) + ": " + Msg);
    }
    return true;
  }

  void loadModel(uint32_t Id, Reader &R) {
    const std::string Path = R.str();
    rt::ModelLoadOptions O = readLoadOptions(R);
    R.expectEnd();
    checkModelLimit();
    std::string Resolved = Config.Root->resolve(Path, /*MustExist=*/true);
    if (fs::is_directory(Resolved))
      Config.Root->resolve(Path + "/model.onnx", /*MustExist=*/false); // a model.onnx symlinked out
    if (!O.IntermediateSavePath.empty())
      O.IntermediateSavePath = Config.Root->resolve(O.IntermediateSavePath, /*MustExist=*/false);
    auto S = std::make_shared<ModelSlot>();
    S->Model = rt::loadModel(Resolved, O);
    S->Request = S->Model.createRequest();
    for (rt::StringRef N : S->Model.getInputNames())
      S->InputNames.insert(N.str());
    S->Id = NextId++;
    std::weak_ptr<ModelSlot> Weak = S;
    std::shared_ptr<Connection> C = Conn;
    S->Request.addCallback([Weak, C](rt::InferStatus, std::exception_ptr E) {
      std::shared_ptr<ModelSlot> P = Weak.lock();
      if (!P || P->Mode != RunMode::Infer)
        return;
      Writer W;
      writeRunDone(W, P->Id, E);
      P->Running = false;
      C->send(MsgType::RunDone, P->RunId, W.buffer());
    });
    Models[S->Id] = S;
    log("loaded model '" + Path + "' as " + std::to_string(S->Id));
    Writer W;
    W.u32(S->Id);
    reply(Id, W.buffer());
  }

  void modelInfo(uint32_t Id, Reader &R) {
    ModelSlot &S = slot(R.u32());
    R.expectEnd();
    const rt::Model &M = S.Model;
    Writer W;
    W.str(M.getName());
    W.boolean(M.isDynamic());
    writeInputOutputInfos(W, M);
    rt::ArrayRef<rt::TensorInfo> All = M.getTensors();
    writeTensorInfos(W, std::vector<rt::TensorInfo>(All.begin(), All.end()));
    rt::ArrayRef<rt::OpInfo> Ops = M.getOperations();
    W.u32(static_cast<uint32_t>(Ops.size()));
    for (const rt::OpInfo &O : Ops)
      writeOpInfo(W, O);
    rt::ArrayRef<rt::StringRef> Keys = M.getAttributeKeys();
    W.u32(static_cast<uint32_t>(Keys.size()));
    for (rt::StringRef K : Keys) {
      W.str(K.str());
      writeAttribute(W, M.getAttribute(K));
    }
    reply(Id, W.buffer());
  }

  /// Reads u8 by-name + the tensors; fills the slot's kept inputs (named: + staged inputs).
  bool readInputs(Reader &R, ModelSlot &S) {
    const bool ByName = R.boolean();
    auto Ts = readNamedTensors(R);
    S.KeptInputs.clear();
    S.KeptNamed.clear();
    if (ByName) {
      S.KeptNamed = S.Staged;
      for (auto &NT : Ts)
        S.KeptNamed[NT.first] = NT.second;
    } else {
      for (auto &NT : Ts)
        S.KeptInputs.push_back(NT.second);
    }
    return ByName;
  }

  void infer(uint32_t Id, Reader &R) {
    ModelSlot &S = slot(R.u32());
    if (S.Running)
      throw rt::InvalidOperationError("a run is in progress on model '" + S.Model.getName() + "'");
    S.settle(false);
    const bool ByName = readInputs(R, S);
    R.expectEnd();
    S.Mode = RunMode::Infer;
    S.RunId = Id;
    S.Running = true;
    try {
      if (ByName)
        S.Request.infer(S.KeptNamed);
      else
        S.Request.infer(rt::ArrayRef<rt::Tensor>(S.KeptInputs));
    } catch (...) {
      S.Running = false;
      throw;
    }
    reply(Id, {});
  }

  void profile(uint32_t Id, Reader &R) {
    std::shared_ptr<ModelSlot> S = slotPtr(R.u32());
    if (S->Running)
      throw rt::InvalidOperationError("a run is in progress on model '" + S->Model.getName() + "'");
    S->settle(false);
    const rt::ProfileOptions O = readProfileOptions(R);
    // A client must not make the server reserve unbounded memory (the buffer is allocated up
    // front) nor ask for events that cannot come back in one message.
    if (O.EventBufferSize > kMaxRemoteProfileEvents)
      throw rt::InvalidArgumentError("profile: an event buffer of " + std::to_string(O.EventBufferSize) +
                                     " events exceeds the server's limit of " +
                                     std::to_string(kMaxRemoteProfileEvents));
    const bool ByName = readInputs(R, *S);
    R.expectEnd();
    S->Mode = RunMode::Profile;
    S->RunId = Id;
    S->Running = true;
    S->StopFlag = std::make_shared<std::atomic_bool>(false);
    std::shared_ptr<Connection> C = Conn;
    ModelSlot *P = S.get(); // the slot outlives the thread: settle() joins it first
    S->ProfileThread = std::thread([P, C, O, ByName, Id] {
      std::exception_ptr E;
      try {
        if (ByName)
          P->Request.profile(P->KeptNamed, O, P->StopFlag);
        else
          P->Request.profile(rt::ArrayRef<rt::Tensor>(P->KeptInputs), O, P->StopFlag);
      } catch (...) {
        E = std::current_exception();
      }
      Writer W;
      writeRunDone(W, P->Id, E);
      P->Mode = RunMode::Infer;
      P->Running = false;
      C->send(MsgType::RunDone, Id, W.buffer());
    });
    reply(Id, {});
  }

  void setTensor(uint32_t Id, Reader &R) {
    ModelSlot &S = slot(R.u32());
    const std::string Name = R.str();
    rt::Tensor Value = readTensor(R);
    R.expectEnd();
    checkIdle(S);
    S.settle(false);
    if (S.InputNames.count(Name)) {
      const rt::TensorInfo &Info = S.Model.getTensorInfo(Name);
      if (Info.Type != Value.getType())
        throw rt::TypeError("setTensor: input '" + Name + "' is " + rt::toString(Info.Type) + ", got " +
                            rt::toString(Value.getType()));
      if (!Info.Shape.isCompatible(Value.getShape()))
        throw rt::ShapeError("setTensor: input '" + Name + "' has shape " + Info.Shape.toString() + ", got " +
                             Value.getShape().toString());
      S.Staged[Name] = Value;
    } else {
      rt::Tensor Dest = S.Request.getTensor(Name);
      if (Dest.getShape() != Value.getShape() && S.Model.getTensorInfo(Name).Resizable) {
        S.Request.setTensorShape(Name, Value.getShape());
        S.Request.applyShapeChanges();
        Dest = S.Request.getTensor(Name);
      }
      Value.copyTo(Dest);
    }
    reply(Id, {});
  }

  void getTensor(uint32_t Id, Reader &R) {
    ModelSlot &S = slot(R.u32());
    const uint8_t By = R.u8();
    rt::Tensor T;
    checkIdle(S);
    if (By == 0) {
      const std::string Name = R.str();
      R.expectEnd();
      S.settle(false);
      try {
        T = S.Request.getTensor(Name);
      } catch (const rt::Exception &) {
        auto Staged = S.Staged.find(Name); // an input set before the first run
        if (Staged == S.Staged.end())
          throw;
        T = Staged->second;
      }
    } else if (By == 1) {
      const uint32_t Index = R.u32();
      R.expectEnd();
      S.settle(false);
      T = S.Request.getOutput(Index);
    } else
      throw DecodeError("bad tensor selector " + std::to_string(By));
    Writer W;
    writeTensor(W, T);
    reply(Id, W.buffer());
  }

  void inferShape(uint32_t Id, Reader &R) {
    ModelSlot &S = slot(R.u32());
    const std::string Name = R.str();
    const bool ByName = R.boolean();
    const uint32_t N = R.count(4);
    rt::TensorShape Result;
    if (ByName) {
      std::map<std::string, rt::TensorShape> Shapes;
      for (uint32_t I = 0; I < N; ++I) {
        std::string K = R.str();
        Shapes[K] = readShape(R);
      }
      R.expectEnd();
      Result = S.Model.inferShape(Name, Shapes);
    } else {
      std::vector<rt::TensorShape> Shapes;
      for (uint32_t I = 0; I < N; ++I)
        Shapes.push_back(readShape(R));
      R.expectEnd();
      Result = S.Model.inferShape(Name, rt::ArrayRef<rt::TensorShape>(Shapes));
    }
    Writer W;
    writeShape(W, Result);
    reply(Id, W.buffer());
  }

  /// A saved tensor keeps its value in the request between runs: a Preserved input (a graph input
  /// that infer() does not take, produced by no operation, not a constant).
  void isSavedTensor(uint32_t Id, Reader &R) {
    ModelSlot &S = slot(R.u32());
    const std::string Name = R.str();
    R.expectEnd();
    const rt::TensorInfo &Info = S.Model.getTensorInfo(Name); // InvalidArgumentError when unknown
    bool Saved = !Info.Constant && !S.InputNames.count(Name);
    if (Saved)
      for (const rt::OpInfo &O : S.Model.getOperations())
        for (const std::string &Out : O.Outputs)
          if (Out == Name)
            Saved = false;
    Writer W;
    W.boolean(Saved);
    reply(Id, W.buffer());
  }

  void groupAdd(uint32_t Id, Reader &R) {
    const uint32_t GId = R.u32();
    rt::GroupMemberOptions O;
    readPerModelOptions(R, O);
    const bool IsFolder = R.boolean();
    const std::string Base = R.str();
    const uint32_t NFiles = R.count(12);
    auto It = Groups.find(GId);
    if (It == Groups.end())
      throw rt::RemoteError("no group " + std::to_string(GId) + " in this session");
    checkModelLimit();
    if (!validUploadName(Base))
      throw rt::RemoteError("bad uploaded model name '" + Base + "'");
    if (!O.IntermediateSavePath.empty())
      O.IntermediateSavePath = Config.Root->resolve(O.IntermediateSavePath, /*MustExist=*/false);
    if (UploadDir.empty()) {
      std::string Tmpl = Config.UploadRoot + "/optimium-remote-XXXXXX";
      if (!::mkdtemp(&Tmpl[0]))
        throw rt::IOError("cannot create an upload folder in " + Config.UploadRoot);
      UploadDir = Tmpl;
    }
    const std::string Dir = UploadDir + "/" + std::to_string(NextId);
    fs::create_directories(Dir);
    const std::string Target = Dir + "/" + Base;
    if (IsFolder)
      fs::create_directories(Target);
    for (uint32_t I = 0; I < NFiles; ++I) {
      const std::string Name = R.str();
      const uint64_t Size = R.u64();
      if (Size > R.remaining())
        throw DecodeError("uploaded file truncated");
      const uint8_t *Data = R.raw(static_cast<size_t>(Size));
      if (!validUploadName(Name))
        throw rt::RemoteError("bad uploaded file name '" + Name + "'");
      const std::string Path = IsFolder ? Target + "/" + Name : Dir + "/" + Name;
      std::ofstream F(Path, std::ios::binary);
      F.write(reinterpret_cast<const char *>(Data), static_cast<std::streamsize>(Size));
      if (!F)
        throw rt::IOError("cannot write the uploaded file " + Name);
    }
    R.expectEnd();
    rt::GroupMember M = It->second.add(Target, O);
    const uint32_t MId = NextId++;
    Members[MId] = M;
    Writer W;
    W.u32(MId);
    W.str(M.getName());
    writeInputOutputInfos(W, M);
    log("group " + std::to_string(GId) + ": added uploaded model '" + Base + "' as member " + std::to_string(MId));
    reply(Id, W.buffer());
  }

  void memberRun(uint32_t Id, Reader &R) {
    auto It = Members.find(R.u32());
    if (It == Members.end())
      throw rt::RemoteError("no group member in this session with that id");
    const bool ByName = R.boolean();
    auto Ts = readNamedTensors(R);
    R.expectEnd();
    rt::GroupMember M = It->second;
    std::shared_ptr<Connection> C = Conn;
    spawn([M, C, ByName, Ts, Id]() mutable {
      try {
        if (ByName) {
          std::map<std::string, rt::Tensor> In;
          for (auto &NT : Ts)
            In[NT.first] = NT.second;
          M.run(In);
        } else {
          std::vector<rt::Tensor> In;
          for (auto &NT : Ts)
            In.push_back(NT.second);
          M.run(rt::ArrayRef<rt::Tensor>(In));
        }
        std::vector<std::pair<std::string, rt::Tensor>> Out;
        rt::ArrayRef<rt::StringRef> Names = M.getOutputNames();
        for (size_t I = 0; I < Names.size(); ++I)
          Out.emplace_back(Names[I].str(), M.getOutput(I));
        Writer W;
        writeNamedTensors(W, Out);
        C->send(MsgType::Ok, Id, W.buffer());
      } catch (...) {
        Writer W;
        writeError(W, errorCodeOf(nullptr), errorMessageOf(nullptr));
        C->send(MsgType::Error, Id, W.buffer());
      }
    });
  }

  void teardown() {
    for (auto &KV : Models)
      KV.second->settle(/*Cancel=*/true);
    for (auto &T : Tasks)
      T->T.join();
    Tasks.clear();
    Models.clear();
    Members.clear();
    Groups.clear();
    if (!UploadDir.empty()) {
      std::error_code Ec;
      fs::remove_all(UploadDir, Ec);
    }
  }
};

Session::Session(std::unique_ptr<Stream> S, const SessionConfig &Config, std::string Peer)
    : State(std::make_shared<SessionState>(std::move(S), Config, std::move(Peer))) {}

Session::~Session() = default;

void Session::run() {
  SessionState &St = *State;
  Stream &S = *St.Conn->S;
  std::string Why = "closed by the client";
  try {
    if (!St.handshake()) {
      St.Conn->Dead = true;
      return;
    }
    const int IdleMs = St.Config.Options.IdleTimeoutS > 0 ? St.Config.Options.IdleTimeoutS * 1000 : -1;
    for (;;) {
      if (!S.waitReadable(IdleMs)) {
        if (St.busy())
          continue;
        Why = "idle for " + std::to_string(St.Config.Options.IdleTimeoutS) + " s";
        break;
      }
      Frame F;
      if (!readFrame(S, St.Config.Options.MaxMessageBytes, F))
        break;
      if (F.Header.Version != kProtocolVersion) {
        Why = "protocol error: frame of version " + std::to_string(F.Header.Version);
        break;
      }
      if (!St.dispatch(F)) {
        Why = "closed (Close)";
        break;
      }
      if (St.Conn->Dead) {
        Why = "connection lost";
        break;
      }
    }
  } catch (const FrameError &E) {
    Why = std::string("protocol error: ") + E.what();
  } catch (const StreamError &E) {
    Why = std::string("connection error: ") + E.what();
  } catch (const std::exception &E) {
    Why = std::string("error: ") + E.what();
  }
  St.Conn->Dead = true;
  S.shutdown();
  St.teardown();
  St.log(Why + " after " + std::to_string(St.Requests) + " request(s)");
}

} // namespace remote
} // namespace optimium
