// Winograd F(2x2, 3x3) and F(4x4, 3x3) against a float64 direct convolution, for both tile sizes
// and every transform path (portable; AVX2 + FMA and AVX-512 where the CPU has them): odd and tiny planes, partial
// edge tiles, padding on any side (none, asymmetric), channel counts that are not multiples of 16,
// several 64-channel blocks, chunked tiles and channel groups under a pool, bias, residual and
// clamp; plus the error at ResNet-18 layer sizes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "backends/native/ops/common/Winograd.h"

using namespace optimium::runtime::detail;
using namespace optimium::runtime::detail::ops;

namespace {

std::vector<float> randomFloats(size_t N, unsigned Seed, float Scale = 1.0f) {
  std::mt19937 Gen(Seed);
  std::uniform_real_distribution<float> Dist(-Scale, Scale);
  std::vector<float> V(N);
  for (float &X : V)
    X = Dist(Gen);
  return V;
}

/// Runs chunks on this thread, last first, claiming Threads workers (the chunk and channel-group
/// splits of Winograd3x3::run depend on it).
Parallel reversedChunks(int Threads) {
  return Parallel(
      [](size_t N, size_t Grain, const std::function<void(size_t, size_t)> &Fn) {
        const size_t Chunk = std::max<size_t>(Grain, (N + 2) / 3);
        for (size_t End = N; End > 0;) {
          const size_t Begin = End > Chunk ? End - Chunk : 0;
          Fn(Begin, End);
          End = Begin;
        }
      },
      Threads);
}

struct Shape {
  int64_t C, K, H, W, PadT, PadL, PadB, PadR;
};

/// Max |winograd - reference| over max(1, max |reference|) for one configuration.
double relativeError(const Shape &S, int Tile, GemmIsa Isa, bool Bias, bool Residual, bool Clamp, int Threads,
                     unsigned Seed) {
  const int64_t OH = S.H + S.PadT + S.PadB - 2, OW = S.W + S.PadL + S.PadR - 2;
  const std::vector<float> X = randomFloats(static_cast<size_t>(S.C * S.H * S.W), Seed);
  const std::vector<float> Wt = randomFloats(static_cast<size_t>(S.K * S.C * 9), Seed + 1, 0.3f);
  const std::vector<float> B = randomFloats(static_cast<size_t>(S.K), Seed + 2);
  const std::vector<float> R = randomFloats(static_cast<size_t>(S.K * OH * OW), Seed + 3);
  WinogradEpilogue Ep;
  Ep.Bias = Bias ? B.data() : nullptr;
  Ep.Residual = Residual ? R.data() : nullptr;
  if (Clamp)
    Ep.Act = ops::FusedAct::clamp(-0.5f, 0.75f);
  WinogradGeometry G;
  G.H = S.H, G.W = S.W, G.OH = OH, G.OW = OW, G.PadTop = S.PadT, G.PadLeft = S.PadL;
  const Winograd3x3 Wino(gemmMicroKernel(Isa), Isa, Wt.data(), S.K, S.C, Tile);
  std::vector<float> Y(static_cast<size_t>(S.K * OH * OW), NAN);
  Wino.run(X.data(), G, Y.data(), Ep, reversedChunks(Threads));
  double MaxErr = 0, Scale = 1;
  for (int64_t K = 0; K < S.K; ++K)
    for (int64_t Oh = 0; Oh < OH; ++Oh)
      for (int64_t Ow = 0; Ow < OW; ++Ow) {
        double Acc = Bias ? B[static_cast<size_t>(K)] : 0.0;
        for (int64_t C = 0; C < S.C; ++C)
          for (int64_t Kh = 0; Kh < 3; ++Kh)
            for (int64_t Kw = 0; Kw < 3; ++Kw) {
              const int64_t Ih = Oh + Kh - S.PadT, Iw = Ow + Kw - S.PadL;
              if (Ih >= 0 && Ih < S.H && Iw >= 0 && Iw < S.W)
                Acc += static_cast<double>(X[static_cast<size_t>((C * S.H + Ih) * S.W + Iw)]) *
                       Wt[static_cast<size_t>(((K * S.C + C) * 3 + Kh) * 3 + Kw)];
            }
        const size_t I = static_cast<size_t>((K * OH + Oh) * OW + Ow);
        if (Residual)
          Acc += R[I];
        if (Clamp)
          Acc = std::min<double>(Ep.Act.Max, std::max<double>(Ep.Act.Min, Acc));
        Scale = std::max(Scale, std::fabs(Acc));
        const double Err = std::fabs(Acc - Y[I]);
        MaxErr = std::isnan(Y[I]) ? INFINITY : std::max(MaxErr, Err);
      }
  return MaxErr / Scale;
}

std::vector<GemmIsa> transformPaths() {
  std::vector<GemmIsa> Paths{GemmIsa::Portable};
  for (GemmIsa Isa : {GemmIsa::Avx2, GemmIsa::Avx512})
    if (gemmIsaAvailable(Isa))
      Paths.push_back(Isa);
  return Paths;
}

const char *isaName(GemmIsa Isa) {
  return Isa == GemmIsa::Avx512 ? "avx512" : Isa == GemmIsa::Avx2 ? "avx2" : "portable";
}

} // namespace

TEST(Winograd, MatchesFloat64ConvolutionOnEdgeShapes) {
  const std::vector<Shape> Shapes = {
      {1, 1, 3, 3, 1, 1, 1, 1},      // one partial tile
      {3, 5, 7, 9, 0, 0, 0, 0},      // no padding, odd plane
      {16, 16, 12, 12, 1, 1, 1, 1},  // whole 4x4 tiles
      {17, 33, 13, 11, 1, 1, 1, 1},  // channel tails on both sides, partial tiles
      {20, 70, 9, 23, 2, 0, 1, 1},   // asymmetric padding, 2 channel blocks
      {19, 21, 26, 25, 1, 1, 1, 1},  // F(4x4) chunks of whole tile rows
      {40, 150, 10, 10, 1, 1, 1, 1}, // 3 channel blocks, the last partial
      {200, 24, 8, 8, 1, 1, 1, 1},   // two GEMM K blocks
      {57, 49, 46, 45, 1, 1, 1, 1},  // AVX2 F(4x4): U (576 KiB) past a 512 KiB L2, 2 chunks of 6 tile rows
      {48, 192, 13, 13, 1, 1, 1, 1}, // 3 channel blocks over 2 threads: a group per block, 2 tile-row chunks
  };
  unsigned Seed = 1;
  for (const Shape &S : Shapes)
    for (int Tile : {2, 4})
      for (GemmIsa Isa : transformPaths())
        for (int Threads : {1, 2, 4}) {
          const bool Bias = Seed % 2 == 0, Residual = Seed % 3 != 0, Clamp = Seed % 4 == 1;
          const double Err = relativeError(S, Tile, Isa, Bias, Residual, Clamp, Threads, Seed++);
          // F(4x4)'s transforms scale terms by up to 8 x 4 and back: uniform random data loses
          // about 3 more bits than F(2x2) (C=200 without residual: 9e-5 vs 6e-6).
          EXPECT_LT(Err, Tile == 4 ? 2e-4 : 2e-5) << "C " << S.C << " K " << S.K << " " << S.H << "x" << S.W
                                                  << " tile " << Tile << " " << isaName(Isa)
                                                  << " threads " << Threads;
        }
}

// ResNet-18 layer sizes, both tiles (no residual, which would inflate the output scale): uniform
// random data, error relative to the output scale; F(2x2) ~4e-7, F(4x4) ~5e-6..9e-6 here. (The
// trained ResNet-18 itself: max abs diff 6.7e-6 at output scale 2.07 against PyTorch.)
TEST(Winograd, ErrorAtResNetLayerSizes) {
  const std::vector<Shape> Shapes = {{64, 64, 56, 56, 1, 1, 1, 1},
                                     {128, 128, 28, 28, 1, 1, 1, 1},
                                     {256, 64, 14, 14, 1, 1, 1, 1},
                                     {512, 32, 7, 7, 1, 1, 1, 1}};
  for (const Shape &S : Shapes)
    for (int Tile : {2, 4})
      for (GemmIsa Isa : transformPaths()) {
        if (Isa == GemmIsa::Portable)
          continue; // the vector paths: what the variants that run these layers use
        const double Err = relativeError(S, Tile, Isa, true, false, false, 2, 7);
        EXPECT_LT(Err, Tile == 4 ? 5e-5 : 5e-6)
            << "C " << S.C << " " << S.H << "x" << S.W << " tile " << Tile << " " << isaName(Isa);
        std::printf("[ info ] C %lld %lldx%lld F(%dx%d) %s: max error / output scale %.2e\n",
                    static_cast<long long>(S.C), static_cast<long long>(S.H), static_cast<long long>(S.W), Tile, Tile,
                    isaName(Isa), Err);
      }
}

// A NaN input reaches every output whose 3x3 window covers it, also through a clamp (the vector
// clamps keep NaN), on every transform path. (Outputs sharing its tile may turn NaN too: Winograd
// mixes the whole tile.)
TEST(Winograd, NanInputPropagates) {
  const int64_t C = 24, K = 20, H = 13, W = 11;
  for (int Tile : {2, 4})
    for (GemmIsa Isa : transformPaths()) {
      std::vector<float> X = randomFloats(static_cast<size_t>(C * H * W), 5);
      const int64_t NanC = 13, NanH = 6, NanW = 9;
      X[static_cast<size_t>((NanC * H + NanH) * W + NanW)] = NAN;
      const std::vector<float> Wt = randomFloats(static_cast<size_t>(K * C * 9), 6, 0.3f);
      const Winograd3x3 Wino(gemmMicroKernel(Isa), Isa, Wt.data(), K, C, Tile);
      WinogradGeometry G;
      G.H = H, G.W = W, G.OH = H, G.OW = W, G.PadTop = 1, G.PadLeft = 1;
      WinogradEpilogue Ep;
      Ep.Act = FusedAct::clamp(0.0f, 0.5f);
      std::vector<float> Y(static_cast<size_t>(K * H * W), 0.0f);
      Wino.run(X.data(), G, Y.data(), Ep, reversedChunks(1));
      for (int64_t Ko = 0; Ko < K; ++Ko)
        for (int64_t Oh = NanH - 1; Oh <= NanH + 1; ++Oh)
          for (int64_t Ow = NanW - 1; Ow <= NanW + 1; ++Ow)
            EXPECT_TRUE(std::isnan(Y[static_cast<size_t>((Ko * H + Oh) * W + Ow)]))
                << "channel " << Ko << " at " << Oh << "," << Ow << " tile " << Tile << " " << isaName(Isa);
    }
}

TEST(Winograd, TileChoice) {
  EXPECT_EQ(Winograd3x3::tileFor(64, 64, 56, 56), 4);
  EXPECT_EQ(Winograd3x3::tileFor(128, 128, 28, 28), 4);
  EXPECT_EQ(Winograd3x3::tileFor(256, 256, 14, 14), 2);
  EXPECT_EQ(Winograd3x3::tileFor(512, 512, 7, 7), 2);
  EXPECT_EQ(Winograd3x3::tileFor(512, 512, 6, 6), 0); // unmeasured below 7x7: the GEMM
  EXPECT_EQ(Winograd3x3::tileFor(3, 64, 56, 56), 0);  // too few channels for the transforms to pay
  EXPECT_EQ(Winograd3x3::tileFor(16, 16, 20, 20), 0); // under 2M multiply-adds
  EXPECT_EQ(Winograd3x3::tileFor(24, 24, 28, 28), 4); // 4.1M multiply-adds, 49 4x4 tiles
  // AVX2: F(4x4) on small planes while its U fits the L3, F(2x2) beyond; the same work floor.
  EXPECT_EQ(Winograd3x3::tileFor(64, 64, 56, 56, GemmIsa::Avx2), 4);
  EXPECT_EQ(Winograd3x3::tileFor(256, 256, 14, 14, GemmIsa::Avx2), 4);
  EXPECT_EQ(Winograd3x3::tileFor(256, 256, 7, 7, GemmIsa::Avx2), 4);
  EXPECT_EQ(Winograd3x3::tileFor(48, 192, 13, 13, GemmIsa::Avx2), 4);
  EXPECT_EQ(Winograd3x3::tileFor(512, 512, 7, 7, GemmIsa::Avx2), 2);
  EXPECT_EQ(Winograd3x3::tileFor(512, 512, 6, 6, GemmIsa::Avx2), 0);
  EXPECT_EQ(Winograd3x3::tileFor(16, 16, 20, 20, GemmIsa::Avx2), 0);

}
