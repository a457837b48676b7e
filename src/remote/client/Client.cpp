// The remote client (include/Optimium/Remote.h): one connection per RemoteSession, a reader thread
// that routes replies by request id and RunDone notices to their model, and requests sent from any
// thread (one frame at a time). Protocol: docs/remote-protocol.md.
#include "Optimium/Remote.h"

#include <sys/stat.h>

#include <condition_variable>
#include <dirent.h>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "remote/protocol/Codec.h"
#include "remote/protocol/Frame.h"
#include "remote/transport/Socket.h"

namespace optimium {
namespace runtime {

using remote::DecodeError;
using remote::Frame;
using remote::FrameError;
using remote::MsgType;
using remote::Reader;
using remote::StreamError;
using remote::Writer;

namespace {

/// Replies can be larger than what the server accepts (outputs, profiles); cap at 16 GiB.
constexpr uint64_t kClientMaxMessageBytes = 16ull << 30;

struct RunState {
  uint32_t RunId = 0;
  bool Done = true;
  bool Failed = false;
  uint32_t Code = 0;
  std::string Message;
};

struct PendingReply {
  bool Done = false;
  Frame F;
};

bool isDir(const std::string &P) {
  struct stat St;
  return ::stat(P.c_str(), &St) == 0 && S_ISDIR(St.st_mode);
}

bool isFile(const std::string &P) {
  struct stat St;
  return ::stat(P.c_str(), &St) == 0 && S_ISREG(St.st_mode);
}

std::string readFile(const std::string &P) {
  std::ifstream F(P, std::ios::binary);
  std::stringstream S;
  S << F.rdbuf();
  if (!F)
    throw IOError("cannot read " + P);
  return S.str();
}

} // namespace

struct RemoteSessionImpl {
  std::string Endpoint; ///< "host:port" for messages
  ConnectOptions Options;
  std::unique_ptr<remote::Stream> S;
  std::unique_ptr<remote::FrameWriter> W;
  remote::HostDescription Host;
  std::vector<DeviceID> HostDevices;
  std::thread ReaderThread;

  std::mutex Mu;
  std::condition_variable Cv;
  std::map<uint32_t, std::shared_ptr<PendingReply>> Pending;
  std::map<uint32_t, RunState> Runs; ///< by model id
  bool Closed = false;
  std::string ClosedWhy;
  std::atomic<uint32_t> NextId{1};

  ~RemoteSessionImpl() {
    if (S)
      S->shutdown();
    if (ReaderThread.joinable())
      ReaderThread.join();
  }

  uint32_t newId() {
    uint32_t Id = NextId++;
    if (Id == 0)
      Id = NextId++;
    return Id;
  }

  [[noreturn]] void throwClosed() { throw NetworkError(Endpoint + ": " + ClosedWhy); }

  void markClosed(const std::string &Why) {
    std::lock_guard<std::mutex> Lock(Mu);
    if (!Closed) {
      Closed = true;
      ClosedWhy = Why;
    }
    Cv.notify_all();
  }

  void readerLoop() {
    std::string Why = "the connection was closed by the server";
    try {
      for (;;) {
        Frame F;
        if (!remote::readFrame(*S, kClientMaxMessageBytes, F))
          break;
        if (F.type() == MsgType::RunDone) {
          Reader R(F.Payload);
          const uint32_t Model = R.u32();
          const bool Ok = R.boolean();
          uint32_t Code = 0;
          std::string Msg;
          if (!Ok) {
            Code = R.u32();
            Msg = R.str();
          }
          std::lock_guard<std::mutex> Lock(Mu);
          auto It = Runs.find(Model);
          if (It != Runs.end() && It->second.RunId == F.Header.RequestId) {
            It->second.Done = true;
            It->second.Failed = !Ok;
            It->second.Code = Code;
            It->second.Message = Msg;
          }
          Cv.notify_all();
          continue;
        }
        std::lock_guard<std::mutex> Lock(Mu);
        auto It = Pending.find(F.Header.RequestId);
        if (It != Pending.end()) {
          It->second->F = std::move(F);
          It->second->Done = true;
          Cv.notify_all();
        }
      }
    } catch (const std::exception &E) {
      Why = std::string("connection error: ") + E.what();
    }
    markClosed(Why);
  }

  /// Sends a request with Id and returns the Ok reply's payload; the server's error is rethrown.
  std::vector<uint8_t> call(MsgType T, uint32_t Id, const std::vector<uint8_t> &Payload) {
    auto P = std::make_shared<PendingReply>();
    {
      std::lock_guard<std::mutex> Lock(Mu);
      if (Closed)
        throwClosed();
      Pending[Id] = P;
    }
    try {
      W->write(T, Id, Payload);
    } catch (const StreamError &E) {
      {
        std::lock_guard<std::mutex> Lock(Mu);
        Pending.erase(Id);
      }
      markClosed(std::string("connection error: ") + E.what());
      throw NetworkError(Endpoint + ": connection error: " + E.what());
    }
    std::unique_lock<std::mutex> Lock(Mu);
    auto Ready = [&] { return P->Done || Closed; };
    if (Options.ReplyTimeout.count() > 0) {
      if (!Cv.wait_for(Lock, Options.ReplyTimeout, Ready)) {
        Pending.erase(Id);
        throw NetworkError(Endpoint + ": no reply to " + remote::toString(T) + " within " +
                           std::to_string(Options.ReplyTimeout.count()) + " ms");
      }
    } else
      Cv.wait(Lock, Ready);
    Pending.erase(Id);
    if (!P->Done)
      throwClosed();
    Lock.unlock();
    if (P->F.type() == MsgType::Error) {
      Reader R(P->F.Payload);
      uint32_t Code;
      std::string Msg;
      try {
        Code = R.u32();
        Msg = R.str();
      } catch (const DecodeError &E) {
        throw RemoteError(Endpoint + ": malformed error reply: " + E.what());
      }
      remote::throwError(Code, Msg);
    }
    if (P->F.type() != MsgType::Ok)
      throw RemoteError(Endpoint + ": unexpected reply " + remote::toString(P->F.type()));
    return std::move(P->F.Payload);
  }

  std::vector<uint8_t> call(MsgType T, const std::vector<uint8_t> &Payload) { return call(T, newId(), Payload); }

  /// Fire and forget (releases from destructors): never throws, never waits.
  void post(MsgType T, const std::vector<uint8_t> &Payload) {
    {
      std::lock_guard<std::mutex> Lock(Mu);
      if (Closed)
        return;
    }
    try {
      W->write(T, newId(), Payload);
    } catch (...) {
    }
  }

  /// Decodes a reply, turning a malformed one into RemoteError.
  template <typename Fn> auto decode(const std::vector<uint8_t> &P, Fn &&F) -> decltype(F(std::declval<Reader &>())) {
    try {
      Reader R(P);
      return F(R);
    } catch (const DecodeError &E) {
      throw RemoteError(Endpoint + ": malformed reply: " + E.what());
    }
  }
};

struct RemoteModelImpl {
  std::shared_ptr<RemoteSessionImpl> S;
  uint32_t Id = 0;

  std::once_flag InfoOnce;
  std::string Name;
  bool Dynamic = false;
  std::vector<TensorInfo> Inputs, Outputs, Tensors;
  std::vector<OpInfo> Ops;
  std::vector<std::string> AttrKeys;
  std::map<std::string, Attribute> Attrs;

  ~RemoteModelImpl() {
    {
      std::lock_guard<std::mutex> Lock(S->Mu);
      S->Runs.erase(Id);
    }
    Writer W;
    W.u32(Id);
    S->post(MsgType::ReleaseModel, W.buffer());
  }

  void loadInfo() {
    std::call_once(InfoOnce, [this] {
      Writer W;
      W.u32(Id);
      const std::vector<uint8_t> P = S->call(MsgType::ModelInfo, W.buffer());
      S->decode(P, [this](Reader &R) {
        Name = R.str();
        Dynamic = R.boolean();
        Inputs = remote::readTensorInfos(R);
        Outputs = remote::readTensorInfos(R);
        Tensors = remote::readTensorInfos(R);
        Ops.resize(R.count(12));
        for (OpInfo &O : Ops)
          O = remote::readOpInfo(R);
        const uint32_t N = R.count(5);
        for (uint32_t I = 0; I < N; ++I) {
          std::string K = R.str();
          AttrKeys.push_back(K);
          Attrs[K] = remote::readAttribute(R);
        }
        R.expectEnd();
        return 0;
      });
    });
  }

  /// Starts an infer/profile: the run state is armed before the request goes out, since the
  /// server may report the end before the reply that accepted it.
  void start(MsgType T, const std::vector<uint8_t> &Payload) {
    const uint32_t RunId = S->newId();
    RunState Before;
    {
      std::lock_guard<std::mutex> Lock(S->Mu);
      RunState &St = S->Runs[Id];
      Before = St;
      St = RunState();
      St.RunId = RunId;
      St.Done = false;
    }
    try {
      S->call(T, RunId, Payload);
    } catch (...) {
      std::lock_guard<std::mutex> Lock(S->Mu);
      RunState &St = S->Runs[Id];
      if (St.RunId == RunId)
        St = Before; // refused: the previous run's state stands
      throw;
    }
  }

  std::vector<uint8_t> inputsPayload(MsgType T, const ProfileOptions *PO, bool ByName,
                                     const std::vector<std::pair<std::string, Tensor>> &Ts) {
    Writer W;
    W.u32(Id);
    if (PO)
      remote::writeProfileOptions(W, *PO);
    W.boolean(ByName);
    remote::writeNamedTensors(W, Ts);
    (void)T;
    return W.take();
  }
};

struct RemoteGroupImpl {
  std::shared_ptr<RemoteSessionImpl> S;
  uint32_t Id = 0;
  std::atomic<size_t> Count{0};
  ~RemoteGroupImpl() {
    Writer W;
    W.u32(Id);
    S->post(MsgType::ReleaseGroup, W.buffer());
  }
};

struct RemoteGroupMemberImpl {
  std::shared_ptr<RemoteSessionImpl> S;
  uint32_t Id = 0;
  std::string Name;
  std::vector<TensorInfo> Inputs, Outputs;
  ~RemoteGroupMemberImpl() {
    Writer W;
    W.u32(Id);
    S->post(MsgType::ReleaseMember, W.buffer());
  }
  std::vector<Tensor> run(bool ByName, const std::vector<std::pair<std::string, Tensor>> &Ts) {
    Writer W;
    W.u32(Id);
    W.boolean(ByName);
    remote::writeNamedTensors(W, Ts);
    const std::vector<uint8_t> P = S->call(MsgType::MemberRun, W.buffer());
    return S->decode(P, [](Reader &R) {
      std::vector<Tensor> Out;
      for (auto &NT : remote::readNamedTensors(R))
        Out.push_back(NT.second);
      R.expectEnd();
      return Out;
    });
  }
};

namespace {

template <typename T> T &checked(const std::shared_ptr<T> &P, const char *What) {
  if (!P)
    throw InvalidStateError(std::string(What) + " is empty (default-constructed)");
  return *P;
}

std::vector<std::pair<std::string, Tensor>> positional(ArrayRef<Tensor> Ts) {
  std::vector<std::pair<std::string, Tensor>> Out;
  for (const Tensor &T : Ts)
    Out.emplace_back(std::string(), T);
  return Out;
}

std::vector<std::pair<std::string, Tensor>> named(const std::map<std::string, Tensor> &Ts) {
  return std::vector<std::pair<std::string, Tensor>>(Ts.begin(), Ts.end());
}

} // namespace

// --- RemoteModel ---------------------------------------------------------------------------------
void RemoteModel::infer(ArrayRef<Tensor> Inputs) {
  RemoteModelImpl &M = checked(Impl, "RemoteModel");
  M.start(MsgType::Infer, M.inputsPayload(MsgType::Infer, nullptr, false, positional(Inputs)));
}

void RemoteModel::infer(const std::map<std::string, Tensor> &Inputs) {
  RemoteModelImpl &M = checked(Impl, "RemoteModel");
  M.start(MsgType::Infer, M.inputsPayload(MsgType::Infer, nullptr, true, named(Inputs)));
}

void RemoteModel::profile(ArrayRef<Tensor> Inputs, const ProfileOptions &Options) {
  RemoteModelImpl &M = checked(Impl, "RemoteModel");
  M.start(MsgType::Profile, M.inputsPayload(MsgType::Profile, &Options, false, positional(Inputs)));
}

void RemoteModel::profile(const std::map<std::string, Tensor> &Inputs, const ProfileOptions &Options) {
  RemoteModelImpl &M = checked(Impl, "RemoteModel");
  M.start(MsgType::Profile, M.inputsPayload(MsgType::Profile, &Options, true, named(Inputs)));
}

bool RemoteModel::wait(std::chrono::microseconds Timeout) {
  RemoteModelImpl &M = checked(Impl, "RemoteModel");
  RemoteSessionImpl &S = *M.S;
  std::unique_lock<std::mutex> Lock(S.Mu);
  auto Done = [&] {
    auto It = S.Runs.find(M.Id);
    return It == S.Runs.end() || It->second.Done || S.Closed;
  };
  if (Timeout.count() > 0) {
    if (!S.Cv.wait_for(Lock, Timeout, Done))
      return true; // timed out (InferRequest::wait's contract)
  } else
    S.Cv.wait(Lock, Done);
  auto It = S.Runs.find(M.Id);
  if (It == S.Runs.end())
    return false;
  if (!It->second.Done)
    S.throwClosed();
  if (It->second.Failed) {
    const uint32_t Code = It->second.Code;
    const std::string Msg = It->second.Message;
    Lock.unlock();
    remote::throwError(Code, Msg);
  }
  return false;
}

void RemoteModel::cancel() {
  RemoteModelImpl &M = checked(Impl, "RemoteModel");
  Writer W;
  W.u32(M.Id);
  M.S->call(MsgType::Cancel, W.buffer());
}

void RemoteModel::setTensor(StringRef Name, const Tensor &Value) {
  RemoteModelImpl &M = checked(Impl, "RemoteModel");
  Writer W;
  W.u32(M.Id);
  W.str(Name.str());
  remote::writeTensor(W, Value);
  M.S->call(MsgType::SetTensor, W.buffer());
}

static Tensor fetchTensor(RemoteModelImpl &M, const Writer &Request) {
  const std::vector<uint8_t> P = M.S->call(MsgType::GetTensor, const_cast<Writer &>(Request).buffer());
  return M.S->decode(P, [](Reader &R) {
    Tensor T = remote::readTensor(R);
    R.expectEnd();
    return T;
  });
}

Tensor RemoteModel::getTensor(StringRef Name) const {
  RemoteModelImpl &M = checked(Impl, "RemoteModel");
  Writer W;
  W.u32(M.Id);
  W.u8(0);
  W.str(Name.str());
  return fetchTensor(M, W);
}

Tensor RemoteModel::getOutput(size_t Index) const {
  RemoteModelImpl &M = checked(Impl, "RemoteModel");
  Writer W;
  W.u32(M.Id);
  W.u8(1);
  W.u32(static_cast<uint32_t>(Index));
  return fetchTensor(M, W);
}

std::vector<ProfileEvent> RemoteModel::getProfileEvents() const {
  RemoteModelImpl &M = checked(Impl, "RemoteModel");
  Writer W;
  W.u32(M.Id);
  const std::vector<uint8_t> P = M.S->call(MsgType::GetProfileEvents, W.buffer());
  return M.S->decode(P, [](Reader &R) {
    auto E = remote::readProfileEvents(R);
    R.expectEnd();
    return E;
  });
}

ProfileDurations RemoteModel::getProfileDurations() const {
  RemoteModelImpl &M = checked(Impl, "RemoteModel");
  Writer W;
  W.u32(M.Id);
  const std::vector<uint8_t> P = M.S->call(MsgType::GetProfileDurations, W.buffer());
  return M.S->decode(P, [](Reader &R) {
    auto D = remote::readProfileDurations(R);
    R.expectEnd();
    return D;
  });
}

static TensorShape callInferShape(RemoteModelImpl &M, Writer &W) {
  const std::vector<uint8_t> P = M.S->call(MsgType::InferShape, W.buffer());
  return M.S->decode(P, [](Reader &R) {
    TensorShape S = remote::readShape(R);
    R.expectEnd();
    return S;
  });
}

TensorShape RemoteModel::inferShape(StringRef Name, const std::map<std::string, TensorShape> &InputShapes) const {
  RemoteModelImpl &M = checked(Impl, "RemoteModel");
  Writer W;
  W.u32(M.Id);
  W.str(Name.str());
  W.boolean(true);
  W.u32(static_cast<uint32_t>(InputShapes.size()));
  for (const auto &KV : InputShapes) {
    W.str(KV.first);
    remote::writeShape(W, KV.second);
  }
  return callInferShape(M, W);
}

TensorShape RemoteModel::inferShape(StringRef Name, ArrayRef<TensorShape> InputShapes) const {
  RemoteModelImpl &M = checked(Impl, "RemoteModel");
  Writer W;
  W.u32(M.Id);
  W.str(Name.str());
  W.boolean(false);
  W.u32(static_cast<uint32_t>(InputShapes.size()));
  for (const TensorShape &S : InputShapes)
    remote::writeShape(W, S);
  return callInferShape(M, W);
}

std::vector<TensorInfo> RemoteModel::getInputTensorInfos() const {
  RemoteModelImpl &M = checked(Impl, "RemoteModel");
  M.loadInfo();
  return M.Inputs;
}

std::vector<TensorInfo> RemoteModel::getOutputTensorInfos() const {
  RemoteModelImpl &M = checked(Impl, "RemoteModel");
  M.loadInfo();
  return M.Outputs;
}

std::vector<TensorInfo> RemoteModel::getTensorInfos() const {
  RemoteModelImpl &M = checked(Impl, "RemoteModel");
  M.loadInfo();
  return M.Tensors;
}

std::vector<OpInfo> RemoteModel::getOperationList() const {
  RemoteModelImpl &M = checked(Impl, "RemoteModel");
  M.loadInfo();
  return M.Ops;
}

std::string RemoteModel::getModelName() const {
  RemoteModelImpl &M = checked(Impl, "RemoteModel");
  M.loadInfo();
  return M.Name;
}

bool RemoteModel::isDynamic() const {
  RemoteModelImpl &M = checked(Impl, "RemoteModel");
  M.loadInfo();
  return M.Dynamic;
}

bool RemoteModel::isSavedTensor(StringRef Name) const {
  RemoteModelImpl &M = checked(Impl, "RemoteModel");
  Writer W;
  W.u32(M.Id);
  W.str(Name.str());
  const std::vector<uint8_t> P = M.S->call(MsgType::IsSavedTensor, W.buffer());
  return M.S->decode(P, [](Reader &R) {
    const bool B = R.boolean();
    R.expectEnd();
    return B;
  });
}

Attribute RemoteModel::getAttribute(StringRef Key) const {
  RemoteModelImpl &M = checked(Impl, "RemoteModel");
  M.loadInfo();
  auto It = M.Attrs.find(Key.str());
  return It == M.Attrs.end() ? Attribute() : It->second;
}

std::vector<std::string> RemoteModel::getAttributeKeys() const {
  RemoteModelImpl &M = checked(Impl, "RemoteModel");
  M.loadInfo();
  return M.AttrKeys;
}

bool RemoteModel::hasAttribute(StringRef Key) const {
  RemoteModelImpl &M = checked(Impl, "RemoteModel");
  M.loadInfo();
  return M.Attrs.count(Key.str()) != 0;
}

// --- groups --------------------------------------------------------------------------------------
std::vector<Tensor> RemoteGroupMember::run(ArrayRef<Tensor> Inputs) {
  return checked(Impl, "RemoteGroupMember").run(false, positional(Inputs));
}

std::vector<Tensor> RemoteGroupMember::run(const std::map<std::string, Tensor> &Inputs) {
  return checked(Impl, "RemoteGroupMember").run(true, named(Inputs));
}

std::string RemoteGroupMember::getName() const { return checked(Impl, "RemoteGroupMember").Name; }
std::vector<TensorInfo> RemoteGroupMember::getInputTensorInfos() const {
  return checked(Impl, "RemoteGroupMember").Inputs;
}
std::vector<TensorInfo> RemoteGroupMember::getOutputTensorInfos() const {
  return checked(Impl, "RemoteGroupMember").Outputs;
}

RemoteGroupMember RemoteModelGroup::add(const GroupMemberOptions &Options, const std::string &Path) {
  RemoteGroupImpl &G = checked(Impl, "RemoteModelGroup");
  std::string P = Path;
  while (P.size() > 1 && P.back() == '/')
    P.pop_back();
  const bool Folder = isDir(P);
  if (!Folder && !isFile(P))
    throw IOError("model path '" + Path + "' does not exist");
  const size_t Slash = P.find_last_of('/');
  const std::string Base = Slash == std::string::npos ? P : P.substr(Slash + 1);
  // What travels: a folder's regular files (model.onnx, optimium.json, external weights), or the
  // file and its X.optimium.json manifest.
  std::vector<std::pair<std::string, std::string>> Files;
  if (Folder) {
    DIR *D = ::opendir(P.c_str());
    if (!D)
      throw IOError("cannot list " + P);
    while (dirent *E = ::readdir(D)) {
      const std::string Name = E->d_name;
      if (Name != "." && Name != ".." && isFile(P + "/" + Name))
        Files.emplace_back(Name, std::string());
    }
    ::closedir(D);
    for (auto &F : Files)
      F.second = readFile(P + "/" + F.first);
  } else {
    Files.emplace_back(Base, readFile(P));
    const size_t Dot = P.rfind(".onnx");
    if (Dot != std::string::npos && Dot + 5 == P.size() && isFile(P.substr(0, Dot) + ".optimium.json"))
      Files.emplace_back(Base.substr(0, Base.size() - 5) + ".optimium.json", readFile(P.substr(0, Dot) + ".optimium.json"));
  }
  Writer W;
  W.u32(G.Id);
  remote::writePerModelOptions(W, Options);
  W.boolean(Folder);
  W.str(Base);
  W.u32(static_cast<uint32_t>(Files.size()));
  for (const auto &F : Files) {
    W.str(F.first);
    W.u64(F.second.size());
    W.raw(F.second.data(), F.second.size());
  }
  const std::vector<uint8_t> Reply = G.S->call(MsgType::GroupAdd, W.buffer());
  auto M = std::make_shared<RemoteGroupMemberImpl>();
  M->S = G.S;
  G.S->decode(Reply, [&](Reader &R) {
    M->Id = R.u32();
    M->Name = R.str();
    M->Inputs = remote::readTensorInfos(R);
    M->Outputs = remote::readTensorInfos(R);
    R.expectEnd();
    return 0;
  });
  ++G.Count;
  return RemoteGroupMember(M);
}

size_t RemoteModelGroup::size() const { return checked(Impl, "RemoteModelGroup").Count; }

// --- RemoteSession -------------------------------------------------------------------------------
HostInfo RemoteSession::getHostInfo() const {
  RemoteSessionImpl &S = checked(Impl, "RemoteSession");
  HostInfo H;
  H.ID = 1;
  H.Name = StringRef(S.Host.Name);
  H.Architecture = S.Host.Architecture;
  H.OS = S.Host.OS;
  H.Devices = ArrayRef<DeviceID>(S.HostDevices);
  return H;
}

RemoteModel RemoteSession::loadModel(const ModelLoadOptions &Options, const std::string &Path) {
  RemoteSessionImpl &S = checked(Impl, "RemoteSession");
  Writer W;
  W.str(Path);
  remote::writeLoadOptions(W, Options);
  const std::vector<uint8_t> P = S.call(MsgType::LoadModel, W.buffer());
  auto M = std::make_shared<RemoteModelImpl>();
  M->S = Impl;
  M->Id = S.decode(P, [](Reader &R) {
    const uint32_t Id = R.u32();
    R.expectEnd();
    return Id;
  });
  return RemoteModel(M);
}

RemoteModelGroup RemoteSession::createModelGroup(const ModelGroupOptions &Options) {
  RemoteSessionImpl &S = checked(Impl, "RemoteSession");
  Writer W;
  remote::writePoolTuning(W, Options);
  const std::vector<uint8_t> P = S.call(MsgType::CreateGroup, W.buffer());
  auto G = std::make_shared<RemoteGroupImpl>();
  G->S = Impl;
  G->Id = S.decode(P, [](Reader &R) {
    const uint32_t Id = R.u32();
    R.expectEnd();
    return Id;
  });
  return RemoteModelGroup(G);
}

void RemoteSession::close() {
  RemoteSessionImpl &S = checked(Impl, "RemoteSession");
  {
    std::lock_guard<std::mutex> Lock(S.Mu);
    if (S.Closed)
      return;
  }
  try {
    S.call(MsgType::Close, {});
  } catch (...) {
  }
  S.markClosed("the session was closed");
  S.S->shutdown();
  if (S.ReaderThread.joinable() && S.ReaderThread.get_id() != std::this_thread::get_id())
    S.ReaderThread.join();
}

RemoteSession connect(const std::string &Host, uint16_t Port, const ConnectOptions &Options) {
  auto S = std::make_shared<RemoteSessionImpl>();
  S->Options = Options;
  S->Endpoint = Host + ":" + std::to_string(Port);
  const int TimeoutMs = Options.ConnectTimeout.count() > 0 ? static_cast<int>(Options.ConnectTimeout.count()) : -1;
  try {
    remote::Fd F = remote::connectTcp(Host, Port, TimeoutMs);
    if (Options.EnableSecureConnection) {
      auto Ctx = remote::TlsContext::client(Options.CAFile);
      S->S.reset(new remote::TlsStream(std::move(F), Ctx, /*IsServer=*/false,
                                       Options.ServerName.empty() ? Host : Options.ServerName, TimeoutMs));
    } else
      S->S.reset(new remote::SocketStream(std::move(F)));
  } catch (const StreamError &E) {
    const std::string What = E.what();
    throw NetworkError(What.find(S->Endpoint) != std::string::npos ? What : S->Endpoint + ": " + What);
  }
  S->W.reset(new remote::FrameWriter(*S->S));

  remote::ClientHello Hello;
  Hello.WantsCompression = Options.EnableCompression;
  Hello.AccessToken = Options.AccessToken;
  Hello.ClientName = "optimium-remote-client " + std::to_string(OPTIMIUM_RT_VERSION_MAJOR) + "." +
                     std::to_string(OPTIMIUM_RT_VERSION_MINOR);
  remote::ServerHello Reply;
  try {
    Writer W;
    remote::writeClientHello(W, Hello);
    S->W->write(MsgType::ClientHello, 0, W.buffer());
    if (!S->S->waitReadable(TimeoutMs))
      throw NetworkError(S->Endpoint + ": no handshake reply within " + std::to_string(TimeoutMs) + " ms");
    Frame F;
    if (!remote::readFrame(*S->S, 1 << 20, F) || F.type() != MsgType::ServerHello)
      throw NetworkError(S->Endpoint + ": the server closed the connection during the handshake" +
                         (Options.EnableSecureConnection ? "" : " (does it expect TLS? set EnableSecureConnection)"));
    Reader R(F.Payload);
    Reply = remote::readServerHello(R);
  } catch (const StreamError &E) {
    throw NetworkError(S->Endpoint + ": handshake failed: " + E.what() +
                       (Options.EnableSecureConnection ? "" : " (does the server expect TLS?)"));
  } catch (const FrameError &E) {
    throw NetworkError(S->Endpoint + ": not an Optimium remote server: " + E.what());
  } catch (const DecodeError &E) {
    throw RemoteError(S->Endpoint + ": malformed handshake reply: " + E.what());
  }
  if (!Reply.Accepted)
    throw RemoteError(S->Endpoint + " refused the session: " + Reply.Reason);
  S->W->setCompression(Reply.Compression);
  S->Host = Reply.Host;
  for (const DeviceID &D : Reply.Host.Devices)
    S->HostDevices.push_back(DeviceID::from(D.getPlatform(), D.getDeviceKind(), static_cast<uint8_t>(D.getIndex()), 1));
  RemoteSessionImpl *Raw = S.get();
  S->ReaderThread = std::thread([Raw] { Raw->readerLoop(); });
  return RemoteSession(S);
}

} // namespace runtime
} // namespace optimium
