// The AVX2 depthwise plane kernel (depthwisePlaneAvx2) on EfficientNet-B0 / MobileNetV2-shaped
// planes, one thread: ns per plane and output values per ns, with no activation and with SiLU, on
// planes that stay in L2 (one plane reused) and on a layer's worth of planes (streamed). Best of
// several repetitions. A benchmark, not a test.
//   build/tests/optimium_depthwise_bench   (x86-64 with AVX2 + FMA; prints a note elsewhere)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "TestUtil.h" // optimium_test::randomFloats: the same generator as the tests
#include "backends/native/ops/common/PlaneWindow.h"

using namespace optimium::runtime::detail::ops;
using optimium_test::randomFloats;

namespace {

double seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Shape {
  const char *Name;
  int64_t H, K, S, Channels; // square plane H x H, kernel K x K, stride S, pad K / 2
};

void run(const Shape &Sh, ActKind Act) {
  DepthwiseGeometry G{};
  G.H = G.W = Sh.H, G.KH = G.KW = Sh.K, G.SH = G.SW = Sh.S, G.DH = G.DW = 1, G.PH = G.PW = Sh.K / 2;
  G.OH = G.OW = (Sh.H + 2 * (Sh.K / 2) - Sh.K) / Sh.S + 1;
  G.Act.Kind = Act;
  if (!depthwiseAvx2Supported(G)) {
    std::printf("AVX2+FMA not available\n");
    return;
  }
  const DepthwisePlan P = planDepthwiseAvx2(G);
  const std::vector<float> In = randomFloats(static_cast<size_t>(Sh.Channels * G.H * G.W), 7),
                           K = randomFloats(static_cast<size_t>(Sh.Channels * Sh.K * Sh.K), 8);
  std::vector<float> Out(static_cast<size_t>(Sh.Channels * G.OH * G.OW));
  const int64_t InPlane = G.H * G.W, OutPlane = G.OH * G.OW;
  double Best = 1e30;
  for (int Rep = 0; Rep < 15; ++Rep) {
    const double T0 = seconds();
    for (int64_t C = 0; C < Sh.Channels; ++C)
      depthwisePlaneAvx2(P, In.data() + C * InPlane, K.data() + C * Sh.K * Sh.K, 0.1f, Out.data() + C * OutPlane);
    Best = std::min(Best, seconds() - T0);
  }
  std::printf("%-28s %-5s %8.1f us  %6.2f outputs/ns  %6.2f GFLOP/s\n", Sh.Name, Act == ActKind::Silu ? "silu" : "none",
              Best * 1e6, static_cast<double>(OutPlane * Sh.Channels) / (Best * 1e9),
              2.0 * static_cast<double>(OutPlane * Sh.Channels * Sh.K * Sh.K) / (Best * 1e9));
}

} // namespace

int main() {
  const Shape Shapes[] = {
      {"effnet 112x112 3x3 s1 x32", 112, 3, 1, 32}, {"effnet 112->56 3x3 s2 x96", 112, 3, 2, 96},
      {"effnet 56x56 3x3 s1 x144", 56, 3, 1, 144},  {"effnet 56->28 5x5 s2 x144", 56, 5, 2, 144},
      {"effnet 28->14 3x3 s2 x240", 28, 3, 2, 240}, {"effnet 28x28 3x3 s1 x480", 28, 3, 1, 192},
  };
  for (const Shape &S : Shapes)
    for (ActKind A : {ActKind::None, ActKind::Silu})
      run(S, A);
  return 0;
}
