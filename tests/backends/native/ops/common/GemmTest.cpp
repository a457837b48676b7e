// The SGEMM engine against a naive triple loop, for every microkernel this CPU runs: edge tiles
// (M, N not multiples of the tile, K across the K-block boundary), A packed or read in place
// (strided rows, transposed), B packed or read as rows in place, Alpha/Beta, and the write-back
// epilogue (row bias, column bias, clamp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "backends/native/ops/common/Gemm.h"
#include "TestUtil.h"

using namespace optimium::runtime::detail;
using namespace optimium::runtime::detail::ops;
using optimium_test::randomFloats;

namespace {

/// A pool stand-in: runs the chunks on this thread, last chunk first, so a result that depends on
/// chunk order shows up.
Parallel reversedChunks() {
  return Parallel(
      [](size_t N, size_t Grain, const std::function<void(size_t, size_t)> &Fn) {
        const size_t Chunk = std::max<size_t>(Grain, (N + 2) / 3);
        for (size_t End = N; End > 0;) {
          const size_t Begin = End > Chunk ? End - Chunk : 0;
          Fn(Begin, End);
          End = Begin;
        }
      },
      3);
}

/// How A and B reach the engine: A packed, read in place or transposed (B packed); or A packed and B
/// read in place as rows (contiguous columns, columns with small gaps, output rows of 13 pixels
/// with the 2 padding columns of a padded 3x3 conv between them, or far-apart columns).
enum class ASource { Packed, Rows, Transposed, PackedRowsB, PackedRowsBGaps, PackedRowsBRowGaps, PackedRowsBSparse };

void checkGemm(GemmIsa Isa, int64_t M, int64_t N, int64_t K, ASource Src, float Alpha, float Beta, bool WithEp) {
  SCOPED_TRACE(testing::Message() << gemmMicroKernel(Isa).Name << " M=" << M << " N=" << N << " K=" << K
                                  << " src=" << static_cast<int>(Src) << " alpha=" << Alpha << " beta=" << Beta
                                  << " ep=" << WithEp);
  const GemmMicroKernel &MK = gemmMicroKernel(Isa);
  const int64_t Lda = K + 3, Ldc = N + 5;
  // Transposed: A^T is stored K x M (row stride M + 2).
  const int64_t Ldt = M + 2;
  std::vector<float> A = randomFloats(static_cast<size_t>(std::max(M * Lda, K * Ldt)), 1);
  const std::vector<float> B = randomFloats(static_cast<size_t>(K * N), 2);
  const std::vector<float> C0 = randomFloats(static_cast<size_t>(M * Ldc), 3);
  const std::vector<float> RowBias = randomFloats(static_cast<size_t>(M), 4);
  const std::vector<float> ColBias = randomFloats(static_cast<size_t>(N), 5);
  const auto aAt = [&](int64_t I, int64_t Kk) {
    return Src == ASource::Transposed ? A[static_cast<size_t>(Kk * Ldt + I)] : A[static_cast<size_t>(I * Lda + Kk)];
  };
  GemmEpilogue Ep;
  Ep.RowBias = RowBias.data(), Ep.ColBias = ColBias.data(), Ep.Act = ops::FusedAct::clamp(-2.0f, 2.5f);
  std::vector<float> Want = C0;
  for (int64_t I = 0; I < M; ++I)
    for (int64_t J = 0; J < N; ++J) {
      double S = 0;
      for (int64_t Kk = 0; Kk < K; ++Kk)
        S += static_cast<double>(aAt(I, Kk)) * B[static_cast<size_t>(Kk * N + J)];
      double V = Alpha * S + (Beta == 0.0f ? 0.0 : Beta * static_cast<double>(C0[static_cast<size_t>(I * Ldc + J)]));
      if (WithEp)
        V = std::min<double>(Ep.Act.Max, std::max<double>(Ep.Act.Min, V + RowBias[static_cast<size_t>(I)] +
                                                                     ColBias[static_cast<size_t>(J)]));
      Want[static_cast<size_t>(I * Ldc + J)] = static_cast<float>(V);
    }
  const Parallel Par = reversedChunks();
  PackedB PB;
  packB(MK, K, N, MatrixRef{B.data(), N, 1}, PB, Par);
  std::vector<float> Got = C0;
  const GemmEpilogue *EpP = WithEp ? &Ep : nullptr;
  if (Src == ASource::Packed) {
    PackedA PA;
    packA(MK, M, K, MatrixRef{A.data(), Lda, 1}, PA);
    gemmPacked(MK, PA, PB, Alpha, Beta, Got.data(), Ldc, Par, EpP);
  } else if (Src == ASource::PackedRowsB || Src == ASource::PackedRowsBGaps || Src == ASource::PackedRowsBRowGaps ||
             Src == ASource::PackedRowsBSparse) {
    // B's rows scattered in reverse order through a buffer, each ending at its last column and the
    // last one ending the allocation (a read past a row's columns would show up under a
    // sanitizer); the gaps between columns are NaN, which must not leak into the product.
    const auto colPos = [Src](int64_t J) {
      return Src == ASource::PackedRowsBGaps      ? J + J / 5 * 3
             : Src == ASource::PackedRowsBRowGaps ? J + J / 13 * 2
             : Src == ASource::PackedRowsBSparse  ? J * 40
                                                  : J;
    };
    const int64_t RowLen = N ? colPos(N - 1) + 1 : 0;
    std::vector<float> Scattered(static_cast<size_t>(K * (RowLen + 7)), std::nanf(""));
    std::vector<int64_t> Offsets(static_cast<size_t>(K)), ColOffsets(static_cast<size_t>(N));
    for (int64_t J = 0; J < N; ++J)
      ColOffsets[static_cast<size_t>(J)] = colPos(J);
    for (int64_t Kk = 0; Kk < K; ++Kk) {
      Offsets[static_cast<size_t>(Kk)] = (K - 1 - Kk) * (RowLen + 7) + 7;
      for (int64_t J = 0; J < N; ++J)
        Scattered[static_cast<size_t>(Offsets[static_cast<size_t>(Kk)] + colPos(J))] =
            B[static_cast<size_t>(Kk * N + J)];
    }
    PackedA PA;
    packA(MK, M, K, MatrixRef{A.data(), Lda, 1}, PA);
    const GemmRowsB Rows{Scattered.data(), Offsets.data(), N,
                         Src == ASource::PackedRowsB ? nullptr : ColOffsets.data()};
    gemmPackedRowsB(MK, PA, Rows, Alpha, Beta, Got.data(), Ldc, Par, EpP);
  } else if (Src == ASource::Rows) {
    gemmRowsA(MK, M, K, A.data(), Lda, PB, Alpha, Beta, Got.data(), Ldc, Par, EpP);
  } else {
    gemmA(MK, M, K, MatrixRef{A.data(), 1, Ldt}, PB, Alpha, Beta, Got.data(), Ldc, Par, EpP);
  }
  for (size_t I = 0; I < Got.size(); ++I)
    ASSERT_NEAR(Got[I], Want[I], 1e-4f * (1.0f + static_cast<float>(K))) << "at row " << I / Ldc << " col " << I % Ldc;
}

TEST(GemmEngine, EveryKernelMatchesNaiveProduct) {
  for (GemmIsa Isa : {GemmIsa::Portable, GemmIsa::Avx2, GemmIsa::Avx512}) {
    if (!gemmIsaAvailable(Isa))
      continue;
    for (int64_t M : {1, 5, 12, 13, 31, 100})
      for (int64_t N : {1, 17, 32, 48, 70})
        for (int64_t K : {int64_t{1}, int64_t{9}, GemmKC, GemmKC + 37})
          for (ASource Src : {ASource::Packed, ASource::Rows, ASource::Transposed, ASource::PackedRowsB,
                              ASource::PackedRowsBGaps, ASource::PackedRowsBRowGaps, ASource::PackedRowsBSparse}) {
            checkGemm(Isa, M, N, K, Src, 1.0f, 0.0f, false);
            if (HasFatalFailure())
              return;
          }
    for (ASource Src : {ASource::Packed, ASource::Rows, ASource::PackedRowsB, ASource::PackedRowsBGaps,
                        ASource::PackedRowsBRowGaps}) {
      checkGemm(Isa, 29, 45, 2 * GemmKC + 5, Src, 0.5f, -1.5f, false);
      checkGemm(Isa, 29, 45, 2 * GemmKC + 5, Src, 1.0f, 0.0f, true);
      checkGemm(Isa, 7, 33, 40, Src, 2.0f, 1.0f, true);
    }
  }
}

/// copyRowsBPanel (the panel copy of B read in place, also used by the bf16 GEMM) for the panel
/// widths of every kernel: each column layout, panels that end partway (zeros past Cols), rows
/// whose gap columns are NaN (never read into the panel).
TEST(GemmEngine, RowsBPanelCopyMatchesElementwise) {
  const int64_t K = 37, Cols = 80;
  for (int64_t NR : {int64_t{16}, int64_t{32}})
    for (int Layout = 0; Layout < 4; ++Layout) {
      const auto colPos = [Layout](int64_t J) {
        return Layout == 0 ? J : Layout == 1 ? J + J / 13 * 2 : Layout == 2 ? J + J / 5 * 3 : J * 3;
      };
      const int64_t RowLen = colPos(Cols - 1) + 1;
      std::vector<float> Data(static_cast<size_t>(K * RowLen + 8), std::nanf(""));
      std::vector<int64_t> Off(static_cast<size_t>(K)), ColOff(static_cast<size_t>(Cols));
      for (int64_t J = 0; J < Cols; ++J)
        ColOff[static_cast<size_t>(J)] = colPos(J);
      for (int64_t Kk = 0; Kk < K; ++Kk) {
        Off[static_cast<size_t>(Kk)] = (K - 1 - Kk) * RowLen;
        for (int64_t J = 0; J < Cols; ++J)
          Data[static_cast<size_t>(Off[static_cast<size_t>(Kk)] + colPos(J))] = static_cast<float>(Kk * 1000 + J);
      }
      const GemmRowsB B{Data.data(), Off.data(), Cols, Layout == 0 ? nullptr : ColOff.data()};
      for (int64_t Col0 : {int64_t{0}, NR, Cols - 7})
        for (int64_t K0 : {int64_t{0}, int64_t{5}}) {
          const int64_t Width = std::min(NR, Cols - Col0), Kc = K - K0;
          SCOPED_TRACE(testing::Message() << "NR=" << NR << " layout=" << Layout << " Col0=" << Col0 << " K0=" << K0);
          std::vector<float> Panel(static_cast<size_t>(Kc * NR), -1.0f);
          copyRowsBPanel(B, K0, Kc, Col0, Width, NR, Panel.data());
          for (int64_t Kk = 0; Kk < Kc; ++Kk)
            for (int64_t J = 0; J < NR; ++J)
              ASSERT_EQ(Panel[static_cast<size_t>(Kk * NR + J)],
                        J < Width ? static_cast<float>((K0 + Kk) * 1000 + Col0 + J) : 0.0f)
                  << "k " << Kk << " column " << J;
        }
    }
}

/// gemvPacked (one row of A times a packed B), over several panel groups and K blocks, split into
/// chunks by the pool stand-in (items of several panels, out of order).
TEST(GemmEngine, GemvMatchesNaiveProduct) {
  for (GemmIsa Isa : {GemmIsa::Portable, GemmIsa::Avx2, GemmIsa::Avx512}) {
    if (!gemmIsaAvailable(Isa))
      continue;
    const GemmMicroKernel &MK = gemmMicroKernel(Isa);
    for (int64_t N : {int64_t{1}, int64_t{31}, MK.NR * 70 + 5, MK.NR * 300})
      for (int64_t K : {int64_t{1}, int64_t{7}, GemmKC, 2 * GemmKC + 13}) {
        SCOPED_TRACE(testing::Message() << MK.Name << " N=" << N << " K=" << K);
        const std::vector<float> A = randomFloats(static_cast<size_t>(K), 6);
        const std::vector<float> B = randomFloats(static_cast<size_t>(K * N), 7);
        PackedB PB;
        packB(MK, K, N, MatrixRef{B.data(), N, 1}, PB, Parallel());
        std::vector<float> Y(static_cast<size_t>(N) + 1, 42.0f);
        gemvPacked(MK, A.data(), PB, Y.data(), reversedChunks());
        for (int64_t J = 0; J < N; ++J) {
          double S = 0;
          for (int64_t Kk = 0; Kk < K; ++Kk)
            S += static_cast<double>(A[static_cast<size_t>(Kk)]) * B[static_cast<size_t>(Kk * N + J)];
          ASSERT_NEAR(Y[static_cast<size_t>(J)], S, 1e-4 * (1.0 + static_cast<double>(K))) << "column " << J;
        }
        EXPECT_EQ(Y[static_cast<size_t>(N)], 42.0f) << "wrote past the row";
      }
  }
}

TEST(GemmEngine, RowsInPlaceWithZeroStrideRepeatTheRow) {
  const GemmMicroKernel &MK = gemmMicroKernel(GemmIsa::Portable);
  const std::vector<float> A = {1, 2}, B = {1, 10, 100, 1000};
  PackedB PB;
  packB(MK, 2, 2, MatrixRef{B.data(), 2, 1}, PB, Parallel());
  std::vector<float> C(6);
  gemmRowsA(MK, 3, 2, A.data(), 0, PB, 1.0f, 0.0f, C.data(), 2, Parallel());
  EXPECT_EQ(C, (std::vector<float>{201, 2010, 201, 2010, 201, 2010}));
}

TEST(GemmEngine, EmptyKIsBetaTimesC) {
  const GemmMicroKernel &MK = gemmMicroKernel(GemmIsa::Portable);
  PackedB PB;
  packB(MK, 0, 3, MatrixRef{nullptr, 3, 1}, PB, Parallel());
  std::vector<float> C = {1, 2, 3, 4, 5, 6};
  const float A = 0;
  gemmRowsA(MK, 2, 0, &A, 0, PB, 1.0f, 2.0f, C.data(), 3, Parallel());
  EXPECT_EQ(C, (std::vector<float>{2, 4, 6, 8, 10, 12}));
}

} // namespace
