// Per-request overhead of remote inference on loopback vs local: for models/digits and a small
// 224x224 CNN (built here: Conv 3->16 s2, Relu, Conv 16->32 s2, Relu, GlobalAveragePool, Gemm ->
// 1000; the 600 KB input is what travels), the median wall time of infer + wait + getOutput(0)
// locally and through optimium-remote-server started on 127.0.0.1 (plain / TLS, compression
// off / on). Build: target optimium_remote_bench (src/remote/CMakeLists.txt, with the tests);
// run: build/bench/optimium_remote_bench [iterations=300]. docs/remote.md has the figures.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>

#include "Optimium/Remote.h"
#include "Optimium/Runtime.h"
#include "RemoteServerProcess.h"

namespace rt = optimium::runtime;
using namespace remote_test;
using Clock = std::chrono::steady_clock;

namespace {

std::string cnn224() {
  optimium_test::OnnxBuilder B;
  B.input("x", onnx::TensorProto_DataType_FLOAT, {1, 3, 224, 224});
  std::mt19937 G(1);
  std::uniform_real_distribution<float> D(-0.1f, 0.1f);
  auto Rand = [&](size_t N) {
    std::vector<float> V(N);
    for (float &F : V)
      F = D(G);
    return V;
  };
  B.initializer("w1", {16, 3, 3, 3}, Rand(16 * 27));
  B.initializer("w2", {32, 16, 3, 3}, Rand(32 * 16 * 9));
  B.initializer("fc", {1000, 32}, Rand(32000));
  B.initializer("fcb", {1000}, Rand(1000));
  auto *C1 = B.node("Conv", {"x", "w1"}, {"c1"}, "conv1");
  optimium_test::OnnxBuilder::attrInts(C1, "strides", {2, 2});
  optimium_test::OnnxBuilder::attrInts(C1, "pads", {1, 1, 1, 1});
  B.node("Relu", {"c1"}, {"r1"}, "relu1");
  auto *C2 = B.node("Conv", {"r1", "w2"}, {"c2"}, "conv2");
  optimium_test::OnnxBuilder::attrInts(C2, "strides", {2, 2});
  optimium_test::OnnxBuilder::attrInts(C2, "pads", {1, 1, 1, 1});
  B.node("Relu", {"c2"}, {"r2"}, "relu2");
  B.node("GlobalAveragePool", {"r2"}, {"g"}, "gap");
  B.node("Flatten", {"g"}, {"f"}, "flatten");
  auto *Fc = B.node("Gemm", {"f", "fc", "fcb"}, {"y"}, "fc");
  optimium_test::OnnxBuilder::attrInt(Fc, "transB", 1);
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  return B.bytes();
}

rt::Tensor randomInput(const rt::TensorShape &S) {
  rt::TypedTensor<float> T = rt::tensor<float>(S);
  std::mt19937 G(7);
  std::uniform_real_distribution<float> D(-1.f, 1.f);
  for (float &V : T)
    V = D(G);
  return T;
}

double median(std::vector<double> V) {
  std::sort(V.begin(), V.end());
  return V[V.size() / 2];
}

template <typename Fn> double timeIt(int N, Fn &&F) {
  for (int I = 0; I < 10; ++I)
    F();
  std::vector<double> Us;
  for (int I = 0; I < N; ++I) {
    const auto T0 = Clock::now();
    F();
    Us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - T0).count());
  }
  return median(Us);
}

} // namespace

int main(int argc, char **argv) {
  rt::AutoInit Init;
  const int N = argc > 1 ? std::atoi(argv[1]) : 300;
  TestWorkspace WS;
  {
    std::ofstream F(WS.Root + "/cnn224.onnx", std::ios::binary);
    F << cnn224();
  }
  const std::string Certs = makeTempDir("bench-ca");
  if (std::system(("bash " + std::string(OPTIMIUM_TEST_DATA_DIR) + "/tests/remote/make-test-ca.sh " + Certs).c_str()))
    return 1;
  ServerProcess Plain(WS.Root), Tls(WS.Root, {"--tls-cert", Certs + "/server.pem", "--tls-key", Certs + "/server.key"});
  rt::ModelLoadOptions O;
  O.ThreadCount = 1;
  std::printf("median of %d runs, microseconds per infer + wait + getOutput(0); ThreadCount 1\n", N);
  std::printf("%-12s %10s %12s %14s %12s %14s\n", "model", "local", "plain", "plain+zstd", "TLS", "TLS+zstd");
  for (const char *Path : {"digits", "cnn224.onnx"}) {
    rt::Model L = rt::loadModel(WS.Root + "/" + Path, O);
    rt::InferRequest R = L.createRequest();
    std::vector<rt::Tensor> In{randomInput(L.getInputTensorInfo(0).Shape)};
    const double Local = timeIt(N, [&] {
      R.infer(rt::make_array(In));
      R.wait();
      rt::Tensor Out = R.getOutput(0).clone();
    });
    double Remote[4];
    int K = 0;
    for (bool UseTls : {false, true})
      for (bool Zstd : {false, true}) {
        rt::ConnectOptions C;
        C.EnableSecureConnection = UseTls;
        C.EnableCompression = Zstd;
        C.CAFile = Certs + "/ca.pem";
        rt::RemoteSession S = rt::connect("127.0.0.1", (UseTls ? Tls : Plain).port(), C);
        rt::RemoteModel M = S.loadModel(O, Path);
        Remote[K++] = timeIt(N, [&] {
          M.infer(rt::make_array(In));
          M.wait();
          rt::Tensor Out = M.getOutput(0);
        });
      }
    std::printf("%-12s %10.1f %12.1f %14.1f %12.1f %14.1f\n", Path, Local, Remote[0], Remote[1], Remote[2], Remote[3]);
  }
  std::error_code Ec;
  fs::remove_all(Certs, Ec);
  return 0;
}
