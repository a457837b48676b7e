// libFuzzer target for optimium-remote-server's frame parser and request decoder: the input is the
// byte stream a client sends, fed to a real server Session over an in-memory stream (replies are
// discarded). Unless the first byte is odd, a valid ClientHello frame goes first so the fuzzer
// reaches the requests; an odd first byte fuzzes the handshake itself (the selector byte is not
// part of the stream). Model paths resolve in
// $OPTIMIUM_REMOTE_FUZZ_WORKSPACE (default: an empty folder), so LoadModel "digits" with the
// models/ folder as workspace reaches infer/getTensor on a real model. Any documented refusal is
// fine; a crash, a sanitizer report, a leak or a hang is a bug. Built with -DOPTIMIUM_FUZZ=ON
// (scripts/fuzz.sh); the tests replay fuzz/remote_corpus/ through the same entry point
// (OPTIMIUM_FUZZ_REPLAY), which can also write that seed corpus (--write-seeds DIR).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "Optimium/Runtime.h"
#include "Optimium/Runtime/Logging/LogSettings.h"
#include "remote/protocol/Codec.h"
#include "remote/protocol/Frame.h"
#include "remote/server/Server.h"

namespace rt = optimium::runtime;
namespace remote = optimium::remote;

namespace {

/// Reads from a buffer, discards writes.
class MemoryStream : public remote::Stream {
public:
  MemoryStream(const uint8_t *D, size_t N) : D(D), N(N) {}
  size_t readSome(void *Out, size_t Size) override {
    const size_t K = std::min(Size, N - Pos);
    if (K != 0) // D is null for an empty input
      std::memcpy(Out, D + Pos, K);
    Pos += K;
    return K;
  }
  bool waitReadable(int) override { return true; }
  void writeAll(const void *, size_t) override {}
  void shutdown() override { Pos = N; }

private:
  const uint8_t *D;
  size_t N, Pos = 0;
};

struct Setup {
  remote::SessionConfig Config;
  Setup() {
    rt::logging::setLogLevel(rt::LogLevel::Error);
    rt::initialize();
    remote::ServerOptions O;
    const char *Ws = std::getenv("OPTIMIUM_REMOTE_FUZZ_WORKSPACE");
    if (Ws && *Ws)
      O.Workspace = Ws;
    else {
      std::string T = (std::filesystem::temp_directory_path() / "optimium-remote-fuzz-XXXXXX").string();
      O.Workspace = ::mkdtemp(&T[0]) ? T : ".";
    }
    O.MaxMessageBytes = 1 << 20;
    O.MaxModelsPerSession = 4;
    Config = remote::makeSessionConfig(O);
    if (!std::getenv("OPTIMIUM_REMOTE_FUZZ_LOG"))
      Config.Log = nullptr; // quiet unless asked
  }
};

std::vector<uint8_t> frame(remote::MsgType T, uint32_t Id, const std::vector<uint8_t> &P, bool Compress = false) {
  // FrameWriter over a stream that captures.
  struct Capture : remote::Stream {
    std::vector<uint8_t> Out;
    size_t readSome(void *, size_t) override { return 0; }
    bool waitReadable(int) override { return true; }
    void writeAll(const void *D, size_t N) override {
      Out.insert(Out.end(), static_cast<const uint8_t *>(D), static_cast<const uint8_t *>(D) + N);
    }
    void shutdown() override {}
  } C;
  remote::FrameWriter W(C);
  W.setCompression(Compress);
  W.write(T, Id, P);
  return C.Out;
}

std::vector<uint8_t> helloFrame() {
  remote::Writer W;
  remote::writeClientHello(W, remote::ClientHello());
  return frame(remote::MsgType::ClientHello, 0, W.buffer());
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  static Setup S;
  std::vector<uint8_t> In;
  if (Size == 0 || !(Data[0] & 1))
    In = helloFrame();
  if (Size > 0)
    In.insert(In.end(), Data + 1, Data + Size); // the first byte only selects the mode
  auto Stream = std::make_unique<MemoryStream>(In.data(), In.size());
  remote::Session Session(std::move(Stream), S.Config, "fuzz");
  Session.run();
  return 0;
}

#ifdef OPTIMIUM_FUZZ_REPLAY
#include "ReplayMain.h"

namespace {

void add(std::vector<uint8_t> &Out, const std::vector<uint8_t> &F) { Out.insert(Out.end(), F.begin(), F.end()); }

std::vector<uint8_t> u32(uint32_t V) {
  remote::Writer W;
  W.u32(V);
  return W.take();
}

/// The seed corpus: well-formed sessions touching every request type, plus the classic breakages.
void writeSeeds(const std::string &Dir) {
  using remote::MsgType;
  std::map<std::string, std::vector<uint8_t>> Seeds;
  {
    std::vector<uint8_t> B = {0}; // even: the hello is prepended
    remote::Writer L;
    L.str("digits");
    rt::ModelLoadOptions O;
    O.ThreadCount = 1;
    remote::writeLoadOptions(L, O);
    add(B, frame(MsgType::LoadModel, 1, L.buffer()));
    add(B, frame(MsgType::ModelInfo, 2, u32(1)));
    remote::Writer I;
    I.u32(1);
    I.boolean(false);
    rt::Tensor T = rt::tensor(rt::ElementType::F32, {1, 1, 8, 8});
    std::memset(T.data(), 0, T.getTensorSize());
    remote::writeNamedTensors(I, {{"", T}});
    add(B, frame(MsgType::Infer, 3, I.buffer()));
    remote::Writer G;
    G.u32(1);
    G.u8(1);
    G.u32(0);
    add(B, frame(MsgType::GetTensor, 4, G.buffer()));
    remote::Writer Sh;
    Sh.u32(1);
    Sh.str("probabilities");
    Sh.boolean(true);
    Sh.u32(1);
    Sh.str("input");
    remote::writeShape(Sh, rt::TensorShape{rt::Expr("n") * 2 + 1, 1, 8, 8});
    add(B, frame(MsgType::InferShape, 5, Sh.buffer()));
    remote::Writer P;
    P.u32(1);
    rt::ProfileOptions PO;
    PO.Repeat = 2;
    PO.WarmUp = 0;
    remote::writeProfileOptions(P, PO);
    P.boolean(false);
    remote::writeNamedTensors(P, {{"", T}});
    add(B, frame(MsgType::Profile, 6, P.buffer(), /*Compress=*/true));
    add(B, frame(MsgType::Cancel, 7, u32(1)));
    add(B, frame(MsgType::GetProfileDurations, 8, u32(1)));
    add(B, frame(MsgType::ReleaseModel, 9, u32(1)));
    add(B, frame(MsgType::Close, 10, {}));
    Seeds["session-digits"] = B;
  }
  {
    std::vector<uint8_t> B = {0};
    remote::Writer C;
    remote::writePoolTuning(C, rt::PoolTuning());
    add(B, frame(MsgType::CreateGroup, 1, C.buffer()));
    remote::Writer A;
    A.u32(1);
    remote::writePerModelOptions(A, rt::PerModelOptions());
    A.boolean(true);
    A.str("m");
    A.u32(1);
    A.str("model.onnx");
    A.u64(4);
    A.raw("junk", 4);
    add(B, frame(MsgType::GroupAdd, 2, A.buffer()));
    remote::Writer R;
    R.u32(2);
    R.boolean(true);
    R.u32(0);
    add(B, frame(MsgType::MemberRun, 3, R.buffer()));
    add(B, frame(MsgType::ReleaseGroup, 4, u32(1)));
    Seeds["session-group"] = B;
  }
  {
    std::vector<uint8_t> B = {0};
    for (uint16_t T = 16; T <= 48; ++T)
      add(B, frame(static_cast<MsgType>(T), T, {1, 0, 0, 0, 0}));
    Seeds["every-type"] = B;
  }
  Seeds["bad-magic"] = {0, 'G', 'E', 'T', ' ', '/', ' ', 'H', 'T', 'T', 'P', '/', '1', '.', '1'};
  {
    std::vector<uint8_t> B = {0};
    remote::FrameHeader H;
    H.Type = static_cast<uint16_t>(MsgType::Infer);
    H.PayloadBytes = 1ull << 40;
    uint8_t Head[remote::kFrameHeaderSize];
    remote::encodeFrameHeader(H, Head);
    B.insert(B.end(), Head, Head + sizeof(Head));
    Seeds["oversized"] = B;
  }
  {
    std::vector<uint8_t> B = {1}; // odd: no hello prepended; a hello of another version
    std::vector<uint8_t> Hello = helloFrame();
    Hello[4] = 9;
    add(B, Hello);
    Seeds["hello-version"] = B;
  }
  for (const auto &KV : Seeds) {
    std::ofstream F(Dir + "/" + KV.first, std::ios::binary);
    F.write(reinterpret_cast<const char *>(KV.second.data()), static_cast<std::streamsize>(KV.second.size()));
  }
  std::printf("wrote %zu seed(s) to %s\n", Seeds.size(), Dir.c_str());
}

} // namespace

int main(int Argc, char **Argv) {
  // The first byte selects the mode (hello prepended or not): mutations leave it alone.
  return fuzz_replay::replayMain(
      Argc, Argv,
      [](std::vector<uint8_t> &B, int K, fuzz_replay::Rng &Next) {
        switch (K % 3) {
        case 0: B.resize(1 + Next() % (B.size() - 1)); break;
        case 1:
          for (int J = 0; J < 1 + K % 8; ++J)
            B[1 + Next() % (B.size() - 1)] ^= static_cast<uint8_t>(1u << (Next() % 8));
          break;
        default:
          for (int J = 0; J < 4; ++J)
            B[1 + Next() % (B.size() - 1)] = static_cast<uint8_t>(Next() % 2 ? 0xFF : 0x7F);
          break;
        }
      },
      /*MinSize=*/2,
      [](int &I, int Argc, char **Argv, int &Exit) {
        if (std::string(Argv[I]) != "--write-seeds" || I + 1 >= Argc)
          return false;
        writeSeeds(Argv[++I]);
        Exit = 0;
        return true;
      });
}
#endif
