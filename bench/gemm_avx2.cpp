// The AVX2 GEMM's efficiency on this CPU, one thread: the FMA peak (12 independent ymm FMA chains),
// the avx2_6x16 tile alone on L1-resident panels, and whole convolution-shaped GEMMs (ResNet-50's
// 3x3 layers as C[M, pixels] = W[M, 9C] x im2col) with B read in place, as Conv's runPhased does:
// contiguous rows, and rows with two padding columns between output rows (ColOffsets); and
// MatMul-shaped GEMMs (BERT-mini, ConvNeXt-T) with A's rows read in place or packed. Prints
// GFLOP/s (2 per multiply-add), best of several repetitions. A benchmark, not a test.
//   build/tests/optimium_gemm_bench   (x86-64 with AVX2 + FMA; prints a note elsewhere)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "backends/native/ops/common/Gemm.h"
#include "core/CpuFeatures.h"
#include "TestUtil.h" // optimium_test::randomFloats: the same generator as the tests

#if defined(__x86_64__)
#include <immintrin.h>

using namespace optimium::runtime::detail;
using namespace optimium::runtime::detail::ops;
using optimium_test::randomFloats;

namespace {

double seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// Best time of Reps calls of Fn.
template <typename F> double bestOf(int Reps, F Fn) {
  double Best = 1e30;
  for (int R = 0; R < Reps; ++R) {
    const double T0 = seconds();
    Fn();
    Best = std::min(Best, seconds() - T0);
  }
  return Best;
}

/// 12 independent FMA chains of 8 lanes: enough to cover a 4-cycle latency on 2 (Zen 3) or 3 pipes.
__attribute__((target("avx2,fma"), noinline)) float fmaPeakLoop(int64_t Iters) {
  __m256 A[12];
  for (int I = 0; I < 12; ++I)
    A[I] = _mm256_set1_ps(0.001f * static_cast<float>(I));
  const __m256 X = _mm256_set1_ps(0.999f), Y = _mm256_set1_ps(0.0001f);
  for (int64_t N = 0; N < Iters; ++N) {
    _Pragma("GCC unroll 12") for (int I = 0; I < 12; ++I) A[I] = _mm256_fmadd_ps(A[I], X, Y);
  }
  __m256 S = A[0];
  for (int I = 1; I < 12; ++I)
    S = _mm256_add_ps(S, A[I]);
  return _mm256_cvtss_f32(S);
}

} // namespace

int main() {
  if (!gemmIsaAvailable(GemmIsa::Avx2)) {
    std::puts("no AVX2 + FMA on this CPU: nothing to time");
    return 0;
  }
  const GemmMicroKernel &MK = gemmMicroKernel(GemmIsa::Avx2);
  const Parallel Serial;
  // FMA peak.
  {
    const int64_t Iters = 500000; // about 1 ms: short enough to fit between preemptions on a shared host
    volatile float Sink = 0;
    const double T = bestOf(200, [&] { Sink = Sink + fmaPeakLoop(Iters); });
    std::printf("FMA peak (12 chains x 8 lanes):        %7.1f GFLOP/s\n", 12.0 * 8 * 2 * Iters / T * 1e-9);
  }
  // The tile alone: a 6 x Kc packed A panel times a Kc x 16 B panel, both in L1, accumulating.
  {
    const int64_t Kc = GemmKC;
    std::vector<float> A = randomFloats(static_cast<size_t>(MK.MR * Kc), 1), B = randomFloats(static_cast<size_t>(Kc * MK.NR), 2);
    std::vector<float> C(static_cast<size_t>(MK.MR * MK.NR));
    GemmTile Tile;
    Tile.Kc = Kc, Tile.A = A.data(), Tile.Lda = 0, Tile.B = B.data(), Tile.C = C.data(), Tile.Ldc = MK.NR;
    Tile.Mr = MK.MR, Tile.Nr = MK.NR, Tile.Accumulate = true;
    const int Calls = 2000;
    const double T = bestOf(200, [&] {
      for (int I = 0; I < Calls; ++I)
        MK.Fn(Tile);
    });
    std::printf("tile %s alone (Kc %lld, L1):      %7.1f GFLOP/s\n", MK.Name, static_cast<long long>(Kc),
                2.0 * MK.MR * MK.NR * Kc * Calls / T * 1e-9);
  }
  // ResNet-50's 3x3 convolutions as GEMMs: M output channels, K = 9 C, N output pixels (W x W).
  struct Shape {
    const char *Name;
    int64_t M, C, W;
  };
  const Shape Shapes[] = {{"layer1 3x3 (64, 56x56)", 64, 64, 56},
                          {"layer2 3x3 (128, 28x28)", 128, 128, 28},
                          {"layer3 3x3 (256, 14x14)", 256, 256, 14}};
  for (const Shape &S : Shapes) {
    const int64_t M = S.M, K = 9 * S.C, N = S.W * S.W, Wq = S.W + 2;
    const std::vector<float> W = randomFloats(static_cast<size_t>(M * K), 3);
    // B's rows: K rows of a padded plane each (as phase planes are), pixel (oh, ow) at oh * Wq + ow.
    const std::vector<float> X = randomFloats(static_cast<size_t>(K * (S.W + 2) * Wq), 4);
    std::vector<int64_t> RowOff(static_cast<size_t>(K)), ColOff(static_cast<size_t>(N));
    for (int64_t R = 0; R < K; ++R)
      RowOff[static_cast<size_t>(R)] = R * (S.W + 2) * Wq;
    for (int64_t P = 0; P < N; ++P)
      ColOff[static_cast<size_t>(P)] = P / S.W * Wq + P % S.W;
    PackedA PA;
    packA(MK, M, K, MatrixRef{W.data(), K, 1}, PA);
    std::vector<float> Y(static_cast<size_t>(M * N));
    const double Flop = 2.0 * M * K * N;
    GemmEpilogue Ep;
    // Gaps between output rows: the im2col of a padded 3x3 convolution.
    const GemmRowsB Gaps{X.data(), RowOff.data(), N, ColOff.data()};
    const double TG = bestOf(30, [&] { gemmPackedRowsB(MK, PA, Gaps, 1.0f, 0.0f, Y.data(), N, Serial, &Ep); });
    // Contiguous rows (a 1x1 stride-1 convolution's input read in place).
    const GemmRowsB Rows{X.data(), RowOff.data(), N, nullptr};
    const double TR = bestOf(30, [&] { gemmPackedRowsB(MK, PA, Rows, 1.0f, 0.0f, Y.data(), N, Serial, &Ep); });
    // B packed beforehand: the tiles alone (plus the driver).
    std::vector<float> Dense(static_cast<size_t>(K * N));
    for (int64_t R = 0; R < K; ++R)
      for (int64_t P = 0; P < N; ++P)
        Dense[static_cast<size_t>(R * N + P)] = X[static_cast<size_t>(RowOff[static_cast<size_t>(R)] + ColOff[static_cast<size_t>(P)])];
    PackedB PB;
    packB(MK, K, N, MatrixRef{Dense.data(), N, 1}, PB, Serial);
    const double TP = bestOf(30, [&] { gemmPacked(MK, PA, PB, 1.0f, 0.0f, Y.data(), N, Serial, &Ep); });
    std::printf("%-26s M %4lld K %5lld N %5lld: in place with gaps %6.1f, contiguous rows %6.1f, B packed %6.1f "
                "GFLOP/s\n",
                S.Name, static_cast<long long>(M), static_cast<long long>(K), static_cast<long long>(N),
                Flop / TG * 1e-9, Flop / TR * 1e-9, Flop / TP * 1e-9);
  }
  // Activations times constant weights (MatMul / Gemm): A's rows read in place (gemmRowsA, the
  // avx2Rows<false> tiles) against A packed first (gemmPacked), B packed once as at kernel creation.
  struct MatMulShape {
    const char *Name;
    int64_t M, K, N;
  };
  const MatMulShape MatMuls[] = {{"BERT-mini FFN up", 128, 256, 1024},
                                 {"BERT-mini FFN down", 128, 1024, 256},
                                 {"ConvNeXt-T stage1 MLP", 3136, 96, 384},
                                 {"ConvNeXt-T stage3 MLP", 196, 384, 1536}};
  for (const MatMulShape &S : MatMuls) {
    const std::vector<float> A = randomFloats(static_cast<size_t>(S.M * S.K), 5), B = randomFloats(static_cast<size_t>(S.K * S.N), 6);
    std::vector<float> Y(static_cast<size_t>(S.M * S.N));
    PackedB PB;
    packB(MK, S.K, S.N, MatrixRef{B.data(), S.N, 1}, PB, Serial, nullptr, gemmKcForWeights(S.K, MK.Isa));
    const double Flop = 2.0 * S.M * S.K * S.N;
    const double TRows = bestOf(30, [&] { gemmRowsA(MK, S.M, S.K, A.data(), S.K, PB, 1.0f, 0.0f, Y.data(), S.N, Serial); });
    PackedA PA;
    packA(MK, S.M, S.K, MatrixRef{A.data(), S.K, 1}, PA, PB.Kc);
    const double TPacked = bestOf(30, [&] { gemmPacked(MK, PA, PB, 1.0f, 0.0f, Y.data(), S.N, Serial); });
    std::printf("%-26s M %4lld K %5lld N %5lld: A rows in place %6.1f, A packed beforehand %6.1f GFLOP/s\n", S.Name,
                static_cast<long long>(S.M), static_cast<long long>(S.K), static_cast<long long>(S.N), Flop / TRows * 1e-9,
                Flop / TPacked * 1e-9);
  }
  return 0;
}
#else
int main() { std::puts("x86-64 only: nothing to time on this target"); }
#endif
