// Remote inference end to end: the real optimium-remote-server (a child process on 127.0.0.1, an
// ephemeral port, a temporary workspace) and the real client (Remote::Client). Results are
// compared bit for bit with the local runtime running the same model.
#include <gtest/gtest.h>

#include <sys/socket.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <thread>

#include "Optimium/Remote.h"
#include "Optimium/Runtime.h"
#include "RemoteServerProcess.h"
#include "remote/protocol/Codec.h"
#include "remote/protocol/Frame.h"
#include "remote/server/Server.h"
#include "remote/transport/Socket.h"

namespace rt = optimium::runtime;
namespace remote = optimium::remote;
using namespace remote_test;

namespace {

rt::AutoInit Init;

const std::string kSourceModels = std::string(OPTIMIUM_TEST_DATA_DIR) + "/tests/models";

rt::Tensor randomTensor(const rt::TensorShape &Shape, unsigned Seed) {
  rt::TypedTensor<float> T = rt::tensor<float>(Shape);
  std::mt19937 G(Seed);
  std::uniform_real_distribution<float> D(-1.f, 1.f);
  for (float &V : T)
    V = D(G);
  return T;
}

rt::Tensor readFloats(const std::string &Path, const std::vector<int64_t> &Dims) {
  rt::Tensor T = rt::tensor(rt::ElementType::F32, rt::TensorShape::fromDims(Dims));
  T.load(Path);
  return T;
}

::testing::AssertionResult sameTensor(const rt::Tensor &A, const rt::Tensor &B) {
  if (A.getType() != B.getType())
    return ::testing::AssertionFailure() << "types differ";
  if (A.getShape() != B.getShape())
    return ::testing::AssertionFailure() << "shapes differ: " << A.getShape().toString() << " vs "
                                         << B.getShape().toString();
  if (std::memcmp(A.data(), B.data(), A.getTensorSize()) != 0)
    return ::testing::AssertionFailure() << "bytes differ";
  return ::testing::AssertionSuccess();
}

rt::Tensor localRun(const std::string &Path, const std::vector<rt::Tensor> &Inputs, const std::string &Output,
                    rt::ModelLoadOptions O = rt::ModelLoadOptions()) {
  O.ThreadCount = 1;
  rt::Model M = rt::loadModel(Path, O);
  rt::InferRequest R = M.createRequest();
  R.infer(rt::make_array(Inputs));
  R.wait();
  return R.getTensor(Output).clone();
}

rt::ModelLoadOptions oneThread() {
  rt::ModelLoadOptions O;
  O.ThreadCount = 1;
  return O;
}

/// A raw TCP connection for sending hand-made frames.
struct RawClient {
  std::unique_ptr<remote::SocketStream> S;
  explicit RawClient(uint16_t Port) : S(new remote::SocketStream(remote::connectTcp("127.0.0.1", Port, 5000))) {}
  void send(const void *D, size_t N) { S->writeAll(D, N); }
  void hello() {
    remote::Writer W;
    remote::writeClientHello(W, remote::ClientHello());
    remote::FrameWriter(*S).write(remote::MsgType::ClientHello, 0, W.buffer());
    remote::Frame F;
    ASSERT_TRUE(remote::readFrame(*S, 1 << 20, F));
    ASSERT_EQ(F.type(), remote::MsgType::ServerHello);
  }
  /// true when the server closed the connection (within 5 s).
  bool closedByServer() {
    if (!S->waitReadable(5000))
      return false;
    char C;
    try {
      return S->readSome(&C, 1) == 0;
    } catch (const remote::StreamError &) {
      return true;
    }
  }
};

class Remote : public ::testing::Test {
protected:
  void startServer(std::vector<std::string> Extra = {}) { Server.reset(new ServerProcess(WS.Root, std::move(Extra))); }
  void SetUp() override { startServer(); }
  rt::RemoteSession connect(const rt::ConnectOptions &O = {}) { return rt::connect("127.0.0.1", Server->port(), O); }
  std::string ws(const std::string &Rel) const { return WS.Root + "/" + Rel; }

  TestWorkspace WS;
  std::unique_ptr<ServerProcess> Server;
};

} // namespace

TEST_F(Remote, InferMatchesLocalBitExact) {
  rt::RemoteSession S = connect();
  rt::RemoteModel M = S.loadModel(oneThread(), "digits");
  rt::Tensor In = readFloats(std::string(OPTIMIUM_TEST_DATA_DIR) + "/models/digits/sample_input.bin", {1, 1, 8, 8});
  const rt::Tensor Local = localRun(ws("digits"), {In}, "probabilities");

  std::vector<rt::Tensor> Inputs{In};
  M.infer(rt::make_array(Inputs));
  EXPECT_FALSE(M.wait()); // finished
  EXPECT_TRUE(sameTensor(M.getTensor("probabilities"), Local));
  EXPECT_TRUE(sameTensor(M.getOutput(0), Local));

  const std::string InName = M.getInputTensorInfos().at(0).Name;
  M.infer(std::map<std::string, rt::Tensor>{{InName, In}});
  M.wait();
  EXPECT_TRUE(sameTensor(M.getOutput(0), Local));

  // A CNN with random input, map and array infer.
  rt::RemoteModel Cnn = S.loadModel(oneThread(), "cnn/model.onnx");
  rt::Tensor X = randomTensor({1, 3, 16, 16}, 7);
  const rt::Tensor LocalY = localRun(ws("cnn/model.onnx"), {X}, "y");
  Cnn.infer(std::map<std::string, rt::Tensor>{{"x", X}});
  Cnn.wait();
  EXPECT_TRUE(sameTensor(Cnn.getTensor("y"), LocalY));
}

TEST_F(Remote, ComputePrecisionTravelsToTheServer) {
  // The load options' compute precision reaches the server (protocol version 2): a bfloat16 load
  // there gives the local bfloat16 result bit for bit, a float32 one the local float32 result.
  // Where the CPU has AVX512_BF16 the two differ (digits' Gemms run on bfloat16 operands).
  rt::RemoteSession S = connect();
  rt::Tensor In = readFloats(std::string(OPTIMIUM_TEST_DATA_DIR) + "/models/digits/sample_input.bin", {1, 1, 8, 8});
  rt::ModelLoadOptions Bf16 = oneThread();
  Bf16.Precision = rt::ComputePrecision::BFloat16;
  const rt::Tensor LocalF32 = localRun(ws("digits"), {In}, "probabilities");
  const rt::Tensor LocalBf16 = localRun(ws("digits"), {In}, "probabilities", Bf16);
  std::vector<rt::Tensor> Inputs{In};
  for (bool UseBf16 : {true, false}) {
    rt::RemoteModel M = S.loadModel(UseBf16 ? Bf16 : oneThread(), "digits");
    M.infer(rt::make_array(Inputs));
    M.wait();
    EXPECT_TRUE(sameTensor(M.getOutput(0), UseBf16 ? LocalBf16 : LocalF32)) << "bf16 " << UseBf16;
  }
  // The CPU's flags as the kernel reports them (the runtime's own detection is not exported).
  std::ifstream Info("/proc/cpuinfo");
  const std::string CpuInfo((std::istreambuf_iterator<char>(Info)), std::istreambuf_iterator<char>());
  if (CpuInfo.find(" avx512_bf16") != std::string::npos && !std::getenv("OPTIMIUM_RT_CPU_DISABLE")) {
    EXPECT_FALSE(sameTensor(LocalBf16, LocalF32)) << "bfloat16 compute changed nothing on a CPU with AVX512_BF16";
  }
}

TEST_F(Remote, HostInfoIsTheServersHost) {
  rt::RemoteSession S = connect();
  rt::HostInfo H = S.getHostInfo();
  rt::HostInfo L = rt::getLocalInfo();
  EXPECT_EQ(H.ID, 1);
  EXPECT_EQ(H.Name.str(), L.Name.str()); // same machine
  EXPECT_EQ(H.Architecture, L.Architecture);
  ASSERT_EQ(H.Devices.size(), L.Devices.size());
  for (const rt::DeviceID &D : H.Devices)
    EXPECT_EQ(D.getHostID(), 1u);
  EXPECT_NE(H.toString().find("id: 1"), std::string::npos) << H.toString();
}

TEST_F(Remote, InfoGettersMatchLocal) {
  rt::RemoteSession S = connect();
  for (const char *Path : {"cnn", "dynamic_batch", "digits"}) {
    SCOPED_TRACE(Path);
    rt::RemoteModel R = S.loadModel(oneThread(), Path);
    rt::Model L = rt::loadModel(ws(Path), oneThread());
    EXPECT_EQ(R.getModelName(), L.getName());
    EXPECT_EQ(R.isDynamic(), L.isDynamic());
    auto Same = [](const rt::TensorInfo &A, const rt::TensorInfo &B) {
      EXPECT_EQ(A.Name, B.Name);
      EXPECT_EQ(A.Shape, B.Shape) << A.Shape.toString() << " vs " << B.Shape.toString();
      EXPECT_EQ(A.Type, B.Type);
      EXPECT_EQ(A.Resizable, B.Resizable);
      EXPECT_EQ(A.Constant, B.Constant);
      EXPECT_EQ(A.OptOut, B.OptOut);
      EXPECT_EQ(A.toString(), B.toString());
    };
    ASSERT_EQ(R.getInputTensorInfos().size(), L.getInputNames().size());
    for (size_t I = 0; I < L.getInputNames().size(); ++I)
      Same(R.getInputTensorInfos()[I], L.getInputTensorInfo(I));
    ASSERT_EQ(R.getOutputTensorInfos().size(), L.getOutputNames().size());
    for (size_t I = 0; I < L.getOutputNames().size(); ++I)
      Same(R.getOutputTensorInfos()[I], L.getOutputTensorInfo(I));
    ASSERT_EQ(R.getTensorInfos().size(), L.getTensors().size());
    for (size_t I = 0; I < L.getTensors().size(); ++I)
      Same(R.getTensorInfos()[I], L.getTensors()[I]);
    const std::vector<rt::OpInfo> Ops = R.getOperationList();
    ASSERT_EQ(Ops.size(), L.getOperations().size());
    for (size_t I = 0; I < Ops.size(); ++I) {
      const rt::OpInfo &A = Ops[I], &B = L.getOperations()[I];
      EXPECT_EQ(A.Name, B.Name);
      EXPECT_EQ(A.Type, B.Type);
      EXPECT_EQ(A.Inputs, B.Inputs);
      EXPECT_EQ(A.Outputs, B.Outputs);
      EXPECT_EQ(A.Device.getPlatform(), B.Device.getPlatform());
      ASSERT_EQ(A.getAttributeKeys(), B.getAttributeKeys());
      for (const std::string &K : A.getAttributeKeys())
        EXPECT_EQ(A.getAttribute(K).toString(), B.getAttribute(K).toString()) << K;
    }
    std::vector<std::string> LKeys;
    for (rt::StringRef K : L.getAttributeKeys())
      LKeys.push_back(K.str());
    EXPECT_EQ(R.getAttributeKeys(), LKeys);
    for (const std::string &K : LKeys) {
      EXPECT_TRUE(R.hasAttribute(K));
      EXPECT_EQ(R.getAttribute(K).toString(), L.getAttribute(K).toString());
    }
    EXPECT_FALSE(R.hasAttribute("no such key"));
    EXPECT_FALSE(static_cast<bool>(R.getAttribute("no such key")));
    const rt::TensorInfo Out0 = R.getOutputTensorInfos()[0];
    EXPECT_FALSE(R.isSavedTensor(Out0.Name));
    EXPECT_THROW(R.isSavedTensor("no such tensor"), rt::InvalidArgumentError);
  }
  // inferShape by name and by position, symbolic dims kept.
  rt::RemoteModel D = S.loadModel(oneThread(), "dynamic_batch");
  rt::Model L = rt::loadModel(ws("dynamic_batch"), oneThread());
  EXPECT_EQ(D.inferShape("y", std::map<std::string, rt::TensorShape>{{"x", {3, 16}}}),
            L.inferShape("y", std::map<std::string, rt::TensorShape>{{"x", {3, 16}}}));
  std::vector<rt::TensorShape> Pos{rt::TensorShape{rt::Expr("n") * 2, 16}};
  EXPECT_EQ(D.inferShape("y", rt::make_array(Pos)).toString(), L.inferShape("y", rt::make_array(Pos)).toString());
  EXPECT_TRUE(D.isDynamic());
}

TEST_F(Remote, WaitTimeoutAndCancel) {
  rt::RemoteSession S = connect();
  rt::RemoteModel M = S.loadModel(oneThread(), "slow.onnx");
  std::vector<rt::Tensor> In{randomTensor({192, 192}, 1)};
  M.infer(rt::make_array(In));
  EXPECT_TRUE(M.wait(std::chrono::microseconds(50000))); // timed out: still running
  EXPECT_THROW(M.infer(rt::make_array(In)), rt::InvalidOperationError);
  const auto T0 = std::chrono::steady_clock::now();
  M.cancel();
  EXPECT_THROW(M.wait(), rt::InferError);
  EXPECT_LT(std::chrono::steady_clock::now() - T0, std::chrono::seconds(10));
  // The model stays usable.
  rt::RemoteModel Loop = S.loadModel(oneThread(), "scripted_loop");
  rt::TypedTensor<int64_t> Steps = rt::tensor<int64_t>(rt::TensorShape{});
  Steps[0] = 3;
  std::vector<rt::Tensor> LoopIn{randomTensor({2, 4}, 1), Steps};
  Loop.infer(rt::make_array(LoopIn));
  EXPECT_FALSE(Loop.wait()); // finished
  EXPECT_TRUE(sameTensor(Loop.getTensor("y"), localRun(ws("scripted_loop"), LoopIn, "y")));
  M.cancel(); // nothing running: a no-op
}

TEST_F(Remote, PreservedStatePersistsAcrossInferAndSetTensor) {
  rt::RemoteSession S = connect();
  rt::RemoteModel M = S.loadModel(oneThread(), "group_decoder");
  rt::Model LM = rt::loadModel(ws("group_decoder"), oneThread());
  rt::InferRequest LR = LM.createRequest();
  EXPECT_TRUE(M.isSavedTensor("past"));
  EXPECT_FALSE(M.isSavedTensor("memory"));
  rt::Tensor Memory = randomTensor({1, 8}, 3);
  std::vector<rt::Tensor> In{Memory};
  for (int Step = 0; Step < 3; ++Step) {
    M.infer(rt::make_array(In));
    M.wait();
    LR.infer(rt::make_array(In));
    LR.wait();
    EXPECT_TRUE(sameTensor(M.getTensor("logits"), LR.getTensor("logits"))) << "step " << Step;
  }
  rt::Tensor Past = M.getTensor("past");
  EXPECT_EQ(Past.getShape(), rt::TensorShape({1, 3}));
  EXPECT_TRUE(sameTensor(Past, LR.getTensor("past")));

  // Seed the cache with other values (and another length), on both sides, and run again.
  rt::TypedTensor<float> Seed = rt::tensor<float>({1, 2});
  Seed[0] = 1.5f;
  Seed[1] = -4.f;
  M.setTensor("past", Seed);
  EXPECT_TRUE(sameTensor(M.getTensor("past"), Seed));
  LR.setTensorShape("past", {1, 2});
  LR.applyShapeChanges();
  Seed.copyTo(LR.getTensor("past"));
  M.infer(rt::make_array(In));
  M.wait();
  LR.infer(rt::make_array(In));
  LR.wait();
  EXPECT_TRUE(sameTensor(M.getTensor("logits"), LR.getTensor("logits")));
  EXPECT_TRUE(sameTensor(M.getTensor("past"), LR.getTensor("past")));
  EXPECT_EQ(M.getTensor("past").getShape(), rt::TensorShape({1, 3}));
  // Wrong type for the cache: the runtime's TypeError.
  EXPECT_THROW(M.setTensor("past", rt::tensor<int32_t>({1, 3})), rt::TypeError);
}

TEST_F(Remote, ProfileRecordsEventsAndDurations) {
  rt::RemoteSession S = connect();
  rt::RemoteModel M = S.loadModel(oneThread(), "digits");
  rt::Tensor In = randomTensor({1, 1, 8, 8}, 5);
  rt::ProfileOptions O;
  O.Repeat = 4;
  O.WarmUp = 1;
  std::vector<rt::Tensor> Inputs{In};
  M.profile(rt::make_array(Inputs), O);
  EXPECT_FALSE(M.wait()); // finished
  const std::vector<rt::ProfileEvent> Events = M.getProfileEvents();
  ASSERT_FALSE(Events.empty());
  size_t Begins = 0;
  for (const rt::ProfileEvent &E : Events)
    Begins += E.Kind == rt::ProfileEventKind::ModelExecuteBegin;
  EXPECT_EQ(Begins, 4u);
  const rt::ProfileDurations D = M.getProfileDurations();
  EXPECT_EQ(D.ModelDurations.size(), 4u);
  EXPECT_FALSE(D.LayerDurations.empty());
  for (int64_t Ns : D.ModelDurations)
    EXPECT_GT(Ns, 0);
  // Bad options surface from wait() with the runtime's type.
  O.Repeat = 0;
  M.profile(rt::make_array(Inputs), O);
  EXPECT_THROW(M.wait(), rt::InvalidArgumentError);
  // An event buffer beyond the server's limit is refused, not allocated (found by the fuzzer).
  O.Repeat = 1;
  O.EventBufferSize = size_t(1) << 56;
  try {
    M.profile(rt::make_array(Inputs), O);
    M.wait();
    ADD_FAILURE() << "a 2^56-event buffer was accepted";
  } catch (const rt::InvalidArgumentError &E) {
    EXPECT_NE(std::string(E.what()).find("exceeds the server's limit"), std::string::npos) << E.what();
  }
  // A plain infer after profiling works.
  M.infer(rt::make_array(Inputs));
  EXPECT_FALSE(M.wait()); // finished
}

TEST_F(Remote, GroupUploadsLocalModelsAndRuns) {
  rt::RemoteSession S = connect();
  rt::ModelGroupOptions GO;
  GO.SpinIterations = 0;
  rt::RemoteModelGroup G = S.createModelGroup(GO);
  rt::GroupMemberOptions MO;
  MO.ThreadCount = 1;
  // LOCAL paths (the source tree), uploaded: a folder with its optimium.json manifest.
  rt::RemoteGroupMember Enc = G.add(MO, kSourceModels + "/group_encoder");
  rt::RemoteGroupMember Dec = G.add(MO, kSourceModels + "/group_decoder/");
  EXPECT_EQ(G.size(), 2u);
  ASSERT_EQ(Enc.getInputTensorInfos().size(), 1u);
  EXPECT_EQ(Dec.getOutputTensorInfos().at(0).Name, "logits");
  rt::Tensor EncIn = readFloats(kSourceModels + "/group_encoder/input_0.bin", {1, 4});
  rt::Tensor Memory = readFloats(kSourceModels + "/group_encoder/output_0.bin", {1, 8});
  rt::Tensor Logits0 = readFloats(kSourceModels + "/group_decoder/logits_0.bin", {1, 5});
  std::vector<rt::Tensor> In{EncIn};
  std::vector<rt::Tensor> Out = Enc.run(rt::make_array(In));
  ASSERT_EQ(Out.size(), 1u);
  const float *E = static_cast<const float *>(Out[0].data());
  const float *Mem = static_cast<const float *>(Memory.data());
  for (int I = 0; I < 8; ++I)
    EXPECT_NEAR(E[I], Mem[I], 1e-5f * (1 + std::fabs(Mem[I])));
  // The decoder's cache persists between runs on the server.
  std::vector<rt::Tensor> Logits;
  for (int Step = 0; Step < 4; ++Step)
    Logits = Dec.run(std::map<std::string, rt::Tensor>{{"memory", Memory}});
  ASSERT_EQ(Logits.size(), Dec.getOutputTensorInfos().size());
  float Mean = 0;
  for (int I = 0; I < 8; ++I)
    Mean += Mem[I] / 8;
  const float *L = static_cast<const float *>(Logits[0].data());
  const float *L0 = static_cast<const float *>(Logits0.data());
  for (int I = 0; I < 5; ++I)
    EXPECT_NEAR(L[I], L0[I] + 3 * Mean, 1e-5f * (1 + std::fabs(L0[I])));
  // Sealed after the first run: the server's InvalidStateError.
  EXPECT_THROW(G.add(MO, kSourceModels + "/group_encoder"), rt::InvalidStateError);
  EXPECT_THROW(G.add(MO, kSourceModels + "/no_such_model"), rt::IOError);
  // A single .onnx file uploads too; a bad input is the runtime's error.
  rt::RemoteModelGroup G2 = S.createModelGroup(GO);
  rt::RemoteGroupMember Mlp = G2.add(MO, kSourceModels + "/mlp/model.onnx");
  EXPECT_THROW(Mlp.run(std::map<std::string, rt::Tensor>{{"x", randomTensor({3, 16}, 1)}}), rt::ShapeError);
  EXPECT_EQ(Mlp.run(std::map<std::string, rt::Tensor>{{"x", randomTensor({2, 16}, 1)}}).at(0).getShape(),
            rt::TensorShape({2, 10}));
}

TEST_F(Remote, PathsStayInsideTheWorkspace) {
  rt::RemoteSession S = connect();
  EXPECT_THROW(S.loadModel(oneThread(), "no_such_model"), rt::IOError);
  auto refused = [&](const std::string &Path) {
    try {
      S.loadModel(oneThread(), Path);
      ADD_FAILURE() << Path << " was accepted";
    } catch (const rt::RemoteError &E) {
      EXPECT_NE(std::string(E.what()).find(Path), std::string::npos) << E.what();
      EXPECT_NE(std::string(E.what()).find("outside"), std::string::npos) << E.what();
    }
  };
  refused("../x");
  refused("digits/../../x");
  refused("/etc/passwd");
  refused(WS.Root + "/digits"); // absolute, even inside
  refused("escape/secret.onnx"); // a symlinked folder leading out
  refused("evil");               // model.onnx inside is a symlink out
  rt::ModelLoadOptions O = oneThread();
  O.IntermediateSavePath = "../dumps";
  EXPECT_THROW(S.loadModel(O, "digits"), rt::RemoteError);
  EXPECT_TRUE(Server->waitForLog("outside the server's workspace"));
  // The session is still good.
  EXPECT_TRUE(static_cast<bool>(S.loadModel(oneThread(), "digits")));
}

TEST_F(Remote, RuntimeErrorsKeepTheirTypeAndMessage) {
  rt::RemoteSession S = connect();
  rt::RemoteModel M = S.loadModel(oneThread(), "digits");
  rt::Model L = rt::loadModel(ws("digits"), oneThread());
  rt::InferRequest LR = L.createRequest();
  std::vector<rt::Tensor> Bad{randomTensor({1, 1, 4, 4}, 1)};
  std::string LocalMessage;
  try {
    LR.infer(rt::make_array(Bad));
  } catch (const rt::ShapeError &E) {
    LocalMessage = E.what();
  }
  ASSERT_FALSE(LocalMessage.empty());
  try {
    M.infer(rt::make_array(Bad));
    FAIL() << "accepted a bad shape";
  } catch (const rt::ShapeError &E) {
    EXPECT_EQ(std::string(E.what()), LocalMessage);
  }
  EXPECT_THROW(M.getTensor("no such tensor"), rt::InvalidArgumentError);
  std::vector<rt::Tensor> WrongType{rt::tensor<int32_t>({1, 1, 8, 8})};
  EXPECT_THROW(M.infer(rt::make_array(WrongType)), rt::TypeError);
  EXPECT_THROW(S.loadModel(oneThread(), "cnn/input_0.npy"), rt::Exception);
  // Still serving.
  std::vector<rt::Tensor> Good{randomTensor({1, 1, 8, 8}, 2)};
  M.infer(rt::make_array(Good));
  EXPECT_FALSE(M.wait()); // finished
}

TEST_F(Remote, AccessToken) {
  startServer({"--access-token", "s3cret"});
  for (const char *Token : {"", "wrong"}) {
    rt::ConnectOptions O;
    O.AccessToken = Token;
    try {
      connect(O);
      FAIL() << "connected with token '" << Token << "'";
    } catch (const rt::RemoteError &E) {
      EXPECT_NE(std::string(E.what()).find("access token rejected"), std::string::npos) << E.what();
    }
  }
  EXPECT_TRUE(Server->waitForLog("access token rejected (none given)"));
  EXPECT_TRUE(Server->waitForLog("access token rejected (wrong token)"));
  rt::ConnectOptions O;
  O.AccessToken = "s3cret";
  rt::RemoteSession S = connect(O);
  EXPECT_TRUE(static_cast<bool>(S.loadModel(oneThread(), "digits")));
}

TEST_F(Remote, CompressionGivesTheSameBytes) {
  rt::ConnectOptions On;
  On.EnableCompression = true;
  rt::RemoteSession A = connect(On), B = connect();
  EXPECT_TRUE(Server->waitForLog("compression on"));
  EXPECT_TRUE(Server->waitForLog("compression off"));
  rt::RemoteModel MA = A.loadModel(oneThread(), "resizable_cache"), MB = B.loadModel(oneThread(), "resizable_cache");
  // A compressible 4 KiB+ cache and an incompressible one, both ways.
  for (unsigned Seed : {0u, 9u}) {
    rt::TypedTensor<float> C = rt::tensor<float>({1024});
    if (Seed == 0)
      C.fill(0.25f);
    else
      C = rt::TypedTensor<float>(randomTensor({1024}, Seed));
    MA.setTensor("cache", C);
    MB.setTensor("cache", C);
    EXPECT_TRUE(sameTensor(MA.getTensor("cache"), C));
    EXPECT_TRUE(sameTensor(MB.getTensor("cache"), C));
  }
  rt::RemoteModel CA = A.loadModel(oneThread(), "cnn"), CB = B.loadModel(oneThread(), "cnn");
  std::vector<rt::Tensor> In{randomTensor({1, 3, 16, 16}, 4)};
  CA.infer(rt::make_array(In));
  CB.infer(rt::make_array(In));
  CA.wait();
  CB.wait();
  EXPECT_TRUE(sameTensor(CA.getOutput(0), CB.getOutput(0)));
}

TEST_F(Remote, CompressionRefusedByServerFlag) {
  startServer({"--no-compression"});
  rt::ConnectOptions On;
  On.EnableCompression = true;
  rt::RemoteSession S = connect(On);
  EXPECT_TRUE(Server->waitForLog("compression off"));
  rt::RemoteModel M = S.loadModel(oneThread(), "digits");
  std::vector<rt::Tensor> In{randomTensor({1, 1, 8, 8}, 4)};
  M.infer(rt::make_array(In));
  EXPECT_FALSE(M.wait()); // finished
}

TEST_F(Remote, GarbageCostsOnlyItsOwnSession) {
  rt::RemoteSession Good = connect();
  rt::RemoteModel M = Good.loadModel(oneThread(), "digits");
  {
    RawClient Bad(Server->port()); // bad magic before any handshake
    const char Junk[24] = "GET / HTTP/1.1\r\n\r\n";
    Bad.send(Junk, sizeof(Junk));
    EXPECT_TRUE(Bad.closedByServer());
  }
  {
    RawClient Truncated(Server->port()); // a header promising 1000 bytes, 10 sent, then gone
    Truncated.hello();
    remote::FrameHeader H;
    H.Type = static_cast<uint16_t>(remote::MsgType::LoadModel);
    H.PayloadBytes = 1000;
    uint8_t Head[remote::kFrameHeaderSize];
    remote::encodeFrameHeader(H, Head);
    Truncated.send(Head, sizeof(Head));
    Truncated.send("0123456789", 10);
  }
  {
    RawClient Oversized(Server->port());
    Oversized.hello();
    remote::FrameHeader H;
    H.Type = static_cast<uint16_t>(remote::MsgType::Infer);
    H.PayloadBytes = 1ull << 40;
    uint8_t Head[remote::kFrameHeaderSize];
    remote::encodeFrameHeader(H, Head);
    Oversized.send(Head, sizeof(Head));
    EXPECT_TRUE(Oversized.closedByServer());
  }
  {
    RawClient Malformed(Server->port()); // well framed, bad payloads: Error replies, session kept
    Malformed.hello();
    remote::FrameWriter W(*Malformed.S);
    for (uint16_t Type : {uint16_t(999), uint16_t(remote::MsgType::Infer), uint16_t(remote::MsgType::LoadModel)}) {
      W.write(static_cast<remote::MsgType>(Type), 7, {1, 2, 3});
      remote::Frame F;
      ASSERT_TRUE(remote::readFrame(*Malformed.S, 1 << 20, F));
      EXPECT_EQ(F.type(), remote::MsgType::Error);
      EXPECT_EQ(F.Header.RequestId, 7u);
      remote::Reader R(F.Payload);
      EXPECT_EQ(R.u32(), static_cast<uint32_t>(remote::ErrorCode::Remote));
    }
  }
  EXPECT_TRUE(Server->waitForLog("bad frame magic"));
  EXPECT_TRUE(Server->waitForLog("exceeds the limit"));
  EXPECT_TRUE(Server->waitForLog("in the middle of a frame"));
  std::vector<rt::Tensor> In{randomTensor({1, 1, 8, 8}, 4)};
  M.infer(rt::make_array(In));
  EXPECT_FALSE(M.wait()); // finished
  rt::RemoteSession Another = connect();
  EXPECT_TRUE(static_cast<bool>(Another.loadModel(oneThread(), "digits")));
  EXPECT_TRUE(Server->alive());
}

TEST_F(Remote, ClientKilledMidRun) {
  int Ready[2];
  ASSERT_EQ(::pipe(Ready), 0);
  const pid_t Child = ::fork();
  if (Child == 0) {
    try {
      rt::RemoteSession S = rt::connect("127.0.0.1", Server->port());
      rt::RemoteModel M = S.loadModel(oneThread(), "slow.onnx");
      std::vector<rt::Tensor> In{randomTensor({192, 192}, 1)};
      M.infer(rt::make_array(In));
      const char C = 1;
      if (::write(Ready[1], &C, 1) != 1)
        ::_exit(3);
      ::pause();
    } catch (...) {
      ::_exit(2);
    }
    ::_exit(0);
  }
  ::close(Ready[1]);
  char C = 0;
  ASSERT_EQ(::read(Ready[0], &C, 1), 1);
  ::close(Ready[0]);
  ::kill(Child, SIGKILL);
  ::waitpid(Child, nullptr, 0);
  EXPECT_TRUE(Server->waitForLog("after", 10000)); // the session's close line
  rt::RemoteSession S = connect();
  rt::RemoteModel M = S.loadModel(oneThread(), "digits");
  std::vector<rt::Tensor> In{randomTensor({1, 1, 8, 8}, 4)};
  M.infer(rt::make_array(In));
  EXPECT_FALSE(M.wait()); // finished
}

TEST_F(Remote, ModelsOfOneSessionFromSeveralThreads) {
  rt::RemoteSession S = connect();
  rt::RemoteModel A = S.loadModel(oneThread(), "digits"), B = S.loadModel(oneThread(), "cnn");
  rt::Tensor InA = randomTensor({1, 1, 8, 8}, 11), InB = randomTensor({1, 3, 16, 16}, 12);
  const rt::Tensor WantA = localRun(ws("digits"), {InA}, "probabilities");
  const rt::Tensor WantB = localRun(ws("cnn"), {InB}, "y");
  std::atomic<int> Bad{0};
  auto Loop = [&](rt::RemoteModel M, rt::Tensor In, rt::Tensor Want) {
    std::vector<rt::Tensor> Ins{In};
    for (int I = 0; I < 40; ++I) {
      M.infer(rt::make_array(Ins));
      M.wait();
      if (!sameTensor(M.getOutput(0), Want))
        ++Bad;
    }
  };
  std::thread T1(Loop, A, InA, WantA), T2(Loop, B, InB, WantB);
  T1.join();
  T2.join();
  EXPECT_EQ(Bad.load(), 0);
}

TEST_F(Remote, LimitsAndIdleTimeout) {
  startServer({"--max-models-per-session", "1", "--idle-timeout-s", "1"});
  rt::RemoteSession S = connect();
  rt::RemoteModel M = S.loadModel(oneThread(), "digits");
  try {
    S.loadModel(oneThread(), "cnn");
    FAIL() << "second model accepted";
  } catch (const rt::RemoteError &E) {
    EXPECT_NE(std::string(E.what()).find("limit"), std::string::npos) << E.what();
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1600));
  EXPECT_TRUE(Server->waitForLog("idle for 1 s"));
  EXPECT_THROW(M.getOutputTensorInfos(), rt::NetworkError);
}

TEST_F(Remote, CloseAndNetworkErrors) {
  rt::RemoteSession S = connect();
  rt::RemoteModel M = S.loadModel(oneThread(), "digits");
  S.close();
  EXPECT_THROW(M.getModelName(), rt::NetworkError);
  EXPECT_THROW(S.loadModel(oneThread(), "digits"), rt::NetworkError);
  // Nothing listens on this port any more once the server is gone.
  const uint16_t Port = Server->port();
  EXPECT_EQ(Server->terminate(), 0);
  try {
    rt::connect("127.0.0.1", Port);
    FAIL() << "connected to a stopped server";
  } catch (const rt::NetworkError &E) {
    EXPECT_NE(std::string(E.what()).find("127.0.0.1:" + std::to_string(Port)), std::string::npos) << E.what();
  }
}

TEST_F(Remote, SigtermStopsGracefully) {
  rt::RemoteSession S = connect();
  rt::RemoteModel M = S.loadModel(oneThread(), "slow.onnx");
  std::vector<rt::Tensor> In{randomTensor({192, 192}, 1)};
  M.infer(rt::make_array(In)); // a run in progress: cancelled by the shutdown
  EXPECT_EQ(Server->terminate(), 0);
  EXPECT_NE(Server->log().find("stopped"), std::string::npos) << Server->log();
  EXPECT_THROW(M.wait(), rt::Exception); // the run ended (cancelled) or the connection dropped
}

// --- TLS -----------------------------------------------------------------------------------------
class RemoteTls : public Remote {
protected:
  void SetUp() override {
    Certs = makeTempDir("remote-ca");
    const std::string Cmd = "bash " + std::string(OPTIMIUM_TEST_DATA_DIR) + "/tests/remote/make-test-ca.sh " + Certs;
    ASSERT_EQ(std::system(Cmd.c_str()), 0);
    startServer({"--tls-cert", Certs + "/server.pem", "--tls-key", Certs + "/server.key"});
  }
  void TearDown() override {
    std::error_code Ec;
    fs::remove_all(Certs, Ec);
  }
  rt::ConnectOptions tls(const std::string &CA) {
    rt::ConnectOptions O;
    O.EnableSecureConnection = true;
    O.CAFile = Certs + "/" + CA;
    return O;
  }
  std::string Certs;
};

TEST_F(RemoteTls, VerifiedSessionWorksAndMismatchesFail) {
  rt::RemoteSession S = connect(tls("ca.pem"));
  rt::RemoteModel M = S.loadModel(oneThread(), "digits");
  rt::Tensor In = randomTensor({1, 1, 8, 8}, 2);
  std::vector<rt::Tensor> Ins{In};
  M.infer(rt::make_array(Ins));
  M.wait();
  EXPECT_TRUE(sameTensor(M.getOutput(0), localRun(ws("digits"), Ins, "probabilities")));
  // "localhost" is in the certificate too.
  rt::RemoteSession ByName = rt::connect("localhost", Server->port(), tls("ca.pem"));
  EXPECT_EQ(ByName.getHostInfo().ID, 1);

  try {
    connect(tls("other-ca.pem"));
    FAIL() << "an unverified server was accepted";
  } catch (const rt::NetworkError &E) {
    EXPECT_NE(std::string(E.what()).find("certificate verify failed"), std::string::npos) << E.what();
    EXPECT_NE(std::string(E.what()).find("127.0.0.1:" + std::to_string(Server->port())), std::string::npos);
  }
  rt::ConnectOptions WrongName = tls("ca.pem");
  WrongName.ServerName = "example.com";
  EXPECT_THROW(connect(WrongName), rt::NetworkError);
  EXPECT_THROW(connect(), rt::NetworkError); // plain client, TLS server
  // The server keeps serving, the established session too.
  M.infer(rt::make_array(Ins));
  EXPECT_FALSE(M.wait()); // finished
  rt::RemoteSession Again = connect(tls("ca.pem"));
  EXPECT_TRUE(static_cast<bool>(Again.loadModel(oneThread(), "digits")));
  EXPECT_TRUE(Server->waitForLog("TLS handshake failed"));
}

TEST_F(Remote, TlsClientOnPlainServerFails) {
  const std::string Certs = makeTempDir("remote-ca");
  ASSERT_EQ(std::system(("bash " + std::string(OPTIMIUM_TEST_DATA_DIR) + "/tests/remote/make-test-ca.sh " + Certs).c_str()), 0);
  rt::ConnectOptions O;
  O.EnableSecureConnection = true;
  O.CAFile = Certs + "/ca.pem";
  O.ConnectTimeout = std::chrono::milliseconds(5000);
  EXPECT_THROW(connect(O), rt::NetworkError);
  EXPECT_TRUE(Server->waitForLog("speaks TLS"));
  rt::RemoteSession S = connect();
  EXPECT_TRUE(static_cast<bool>(S.loadModel(oneThread(), "digits")));
  std::error_code Ec;
  fs::remove_all(Certs, Ec);
}

// --- flags ---------------------------------------------------------------------------------------
TEST(RemoteServerFlags, ParsesAndRejects) {
  remote::ServerOptions O;
  std::string Error;
  bool Help = false;
  ASSERT_TRUE(remote::parseServerFlags({"--port", "0", "--workspace=/tmp", "--max-message-bytes", "65536",
                                        "--no-compression", "--idle-timeout-s", "5"},
                                       O, Error, Help))
      << Error;
  EXPECT_EQ(O.Port, 0);
  EXPECT_EQ(O.Workspace, "/tmp");
  EXPECT_EQ(O.MaxMessageBytes, 65536u);
  EXPECT_FALSE(O.AllowCompression);
  EXPECT_EQ(O.Host, "127.0.0.1");
  remote::ServerOptions D;
  EXPECT_EQ(D.Port, rt::kDefaultRemotePort);
  for (std::vector<std::string> Bad : std::vector<std::vector<std::string>>{
           {"--port", "70000"}, {"--port"}, {"--bogus"}, {"--tls-cert", "x"}, {"--max-message-bytes", "10"}}) {
    remote::ServerOptions B;
    EXPECT_FALSE(remote::parseServerFlags(Bad, B, Error, Help)) << Bad[0];
  }
}
