// The GEMM engine (ops/common/Gemm.cpp) built for AArch64, where its baseline microkernel is the
// NEON one, checked against a double-precision reference: packed and in-place A, column edges,
// alpha / beta / accumulate, every epilogue (row bias, column bias, clamp, GELU), the GEMV, and B
// packed as bfloat16 weights (GemmBf16.h) in the GEMM and the GEMV.
// Built and run by tests/cross/check-aarch64.sh (cross compiler + qemu-user); no gtest, no pool.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "backends/native/ops/common/Gemm.h"
#include "backends/native/ops/common/GemmBf16.h"
#include "backends/native/ops/common/MathApprox.h"

using namespace optimium::runtime::detail;
using namespace optimium::runtime::detail::ops;

namespace {

int Failures = 0;

void expectNear(float Got, double Want, double Tol, const char *What, int64_t M, int64_t N, int64_t K, int64_t I) {
  if (std::fabs(Got - Want) <= Tol * (1.0 + std::fabs(Want)))
    return;
  if (++Failures <= 20)
    std::printf("FAIL %s M=%lld N=%lld K=%lld at %lld: got %g want %g\n", What, static_cast<long long>(M),
                static_cast<long long>(N), static_cast<long long>(K), static_cast<long long>(I), Got, Want);
}

std::vector<float> randoms(size_t N, std::mt19937 &G) {
  std::uniform_real_distribution<float> U(-1.0f, 1.0f);
  std::vector<float> V(N);
  for (float &X : V)
    X = U(G);
  return V;
}

double gelu(double X) { return 0.5 * X * (1.0 + std::erf(X / std::sqrt(2.0))); }

} // namespace

int main() {
  const GemmMicroKernel &MK = gemmMicroKernel(GemmIsa::Portable);
  std::printf("microkernel %s (%lld x %lld)\n", MK.Name, static_cast<long long>(MK.MR), static_cast<long long>(MK.NR));
  const Parallel Serial;
  std::mt19937 G(5);
  int Cases = 0;
  const int64_t Ms[] = {1, 2, 5, 6, 7, 13, 40}, Ns[] = {1, 3, 16, 17, 33, 100}, Ks[] = {1, 4, 31, 200, 450};
  for (int64_t M : Ms)
    for (int64_t N : Ns)
      for (int64_t K : Ks) {
        const std::vector<float> A = randoms(static_cast<size_t>(M * K), G), B = randoms(static_cast<size_t>(K * N), G),
                                 C0 = randoms(static_cast<size_t>(M * N), G), RowBias = randoms(static_cast<size_t>(M), G),
                                 ColBias = randoms(static_cast<size_t>(N), G);
        std::vector<double> AB(static_cast<size_t>(M * N), 0.0);
        for (int64_t I = 0; I < M; ++I)
          for (int64_t J = 0; J < N; ++J)
            for (int64_t Kk = 0; Kk < K; ++Kk)
              AB[static_cast<size_t>(I * N + J)] += static_cast<double>(A[static_cast<size_t>(I * K + Kk)]) * B[static_cast<size_t>(Kk * N + J)];
        const double Tol = 1e-5 * std::sqrt(static_cast<double>(K)) + 1e-6;
        // sgemm: C = 0.5 A B + 0.25 C.
        std::vector<float> C = C0;
        sgemm(MK, M, N, K, 0.5f, MatrixRef{A.data(), K, 1}, MatrixRef{B.data(), N, 1}, 0.25f, C.data(), N, Serial);
        for (int64_t I = 0; I < M * N; ++I)
          expectNear(C[static_cast<size_t>(I)], 0.5 * AB[static_cast<size_t>(I)] + 0.25 * C0[static_cast<size_t>(I)], Tol,
                     "sgemm", M, N, K, I);
        // Packed operands with every epilogue: bias per row and column, clamp, GELU.
        PackedA PA;
        PackedB PB;
        packA(MK, M, K, MatrixRef{A.data(), K, 1}, PA);
        packB(MK, K, N, MatrixRef{B.data(), N, 1}, PB, Serial);
        for (int Mode = 0; Mode < 2; ++Mode) {
          GemmEpilogue Ep;
          Ep.RowBias = RowBias.data();
          Ep.ColBias = ColBias.data();
          if (Mode == 0)
            Ep.Act = FusedAct::clamp(-0.5f, 0.75f);
          Ep.Gelu = Mode == 1;
          C = C0;
          gemmPacked(MK, PA, PB, 1.0f, 0.0f, C.data(), N, Serial, &Ep);
          for (int64_t I = 0; I < M; ++I)
            for (int64_t J = 0; J < N; ++J) {
              double V = AB[static_cast<size_t>(I * N + J)] + RowBias[static_cast<size_t>(I)] + ColBias[static_cast<size_t>(J)];
              V = Mode == 0 ? std::min(0.75, std::max(-0.5, V)) : gelu(V);
              expectNear(C[static_cast<size_t>(I * N + J)], V, Mode == 1 ? Tol + 1e-5 : Tol, Mode ? "packed+gelu" : "packed+clamp",
                         M, N, K, I * N + J);
            }
        }
        // A read in place (rows of the caller's matrix) against the packed B.
        C = C0;
        gemmRowsA(MK, M, K, A.data(), K, PB, 1.0f, 0.0f, C.data(), N, Serial);
        for (int64_t I = 0; I < M * N; ++I)
          expectNear(C[static_cast<size_t>(I)], AB[static_cast<size_t>(I)], Tol, "rowsA", M, N, K, I);
        // The GEMV of row 0.
        std::vector<float> Y(static_cast<size_t>(N));
        gemvPacked(MK, A.data(), PB, Y.data(), Serial);
        for (int64_t J = 0; J < N; ++J)
          expectNear(Y[static_cast<size_t>(J)], AB[static_cast<size_t>(J)], Tol, "gemv", 1, N, K, J);
        // bfloat16 weights: B rounded to bf16, products of their exact float values.
        std::vector<uint16_t> Bits(static_cast<size_t>(K * N));
        for (size_t I = 0; I < Bits.size(); ++I)
          Bits[I] = optimium::runtime::bfloat16::fromFloat(B[I]);
        std::vector<double> AB16(static_cast<size_t>(M * N), 0.0);
        for (int64_t I = 0; I < M; ++I)
          for (int64_t J = 0; J < N; ++J)
            for (int64_t Kk = 0; Kk < K; ++Kk)
              AB16[static_cast<size_t>(I * N + J)] += static_cast<double>(A[static_cast<size_t>(I * K + Kk)]) *
                                                      optimium::runtime::bfloat16::toFloat(Bits[static_cast<size_t>(Kk * N + J)]);
        PackedB PB16;
        packBBf16(MK, K, N, Bits.data(), N, 1, PB16, nullptr, GemmKC);
        C = C0;
        gemmRowsA(MK, M, K, A.data(), K, PB16, 1.0f, 0.0f, C.data(), N, Serial);
        for (int64_t I = 0; I < M * N; ++I)
          expectNear(C[static_cast<size_t>(I)], AB16[static_cast<size_t>(I)], Tol, "bf16 rowsA", M, N, K, I);
        gemvPacked(MK, A.data(), PB16, Y.data(), Serial);
        for (int64_t J = 0; J < N; ++J)
          expectNear(Y[static_cast<size_t>(J)], AB16[static_cast<size_t>(J)], Tol, "bf16 gemv", 1, N, K, J);
        ++Cases;
      }
  std::printf("%d shapes, %d failure(s)\n", Cases, Failures);
  return Failures ? 1 : 0;
}
