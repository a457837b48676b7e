// The vector forms of the fused activations (Act256 through applyFusedActAvx2, Act512 through
// applyFusedAct) against double-precision formulas: relative error of sigmoid / SiLU within a few
// 1e-7 over exp's whole range and its clamp, exact clamps and hard activations, NaN through a
// clamp (and the smooth ones and HardSwish), masked tails of every length below two vectors
// (nothing past Count written); and the GEMM write-back applying each activation in registers, for
// every microkernel this CPU runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <iostream>
#include <random>
#include <vector>

#include "backends/native/ops/common/FusedActivation.h"
#include "backends/native/ops/common/Gemm.h"
#include "backends/native/ops/common/SimdDispatch.h"

using namespace optimium::runtime::detail;
using namespace optimium::runtime::detail::ops;

namespace {

FusedAct actOf(ActKind K, float Alpha, float Beta) {
  FusedAct A;
  A.Kind = K, A.Alpha = Alpha, A.Beta = Beta;
  return A;
}

/// The activations the kernels see: EfficientNet's SiLU, a GELU-like SiLU (alpha 1.702), sigmoid,
/// MobileNetV3's hard sigmoid / hard swish (ONNX defaults), ReLU6.
std::vector<FusedAct> allActs() {
  return {actOf(ActKind::Silu, 1.0f, 0.0f),        actOf(ActKind::Silu, 1.702f, 0.0f),
          actOf(ActKind::Sigmoid, 1.0f, 0.0f),     actOf(ActKind::HardSigmoid, 0.2f, 0.5f),
          actOf(ActKind::HardSwish, 1.0f / 6.0f, 0.5f), FusedAct::clamp(0.0f, 6.0f)};
}

/// The activation in double.
double exact(const FusedAct &A, double X) {
  switch (A.Kind) {
  case ActKind::None: return X;
  case ActKind::Clamp: return std::min<double>(A.Max, std::max<double>(A.Min, X));
  case ActKind::Sigmoid: return 1.0 / (1.0 + std::exp(-X));
  case ActKind::Silu: return X / (1.0 + std::exp(-static_cast<double>(A.Alpha) * X));
  case ActKind::HardSigmoid: return std::max(0.0, std::min(1.0, static_cast<double>(A.Alpha) * X + A.Beta));
  case ActKind::HardSwish: return X * std::max(0.0, std::min(1.0, static_cast<double>(A.Alpha) * X + A.Beta));
  }
  return X;
}

/// The applyFusedAct forms this CPU runs: the AVX2 loop explicitly and the dispatching one.
std::vector<std::pair<const char *, std::function<void(const FusedAct &, const float *, float *, size_t)>>> forms() {
  std::vector<std::pair<const char *, std::function<void(const FusedAct &, const float *, float *, size_t)>>> F;
  F.push_back({"scalar FusedAct", [](const FusedAct &A, const float *X, float *Y, size_t N) {
                 for (size_t I = 0; I < N; ++I)
                   Y[I] = A(X[I]);
               }});
  F.push_back({"applyFusedAct",
               [](const FusedAct &A, const float *X, float *Y, size_t N) { applyFusedAct(A, X, Y, N); }});
  if (simdAvx2())
    F.push_back({"applyFusedActAvx2",
                 [](const FusedAct &A, const float *X, float *Y, size_t N) { applyFusedActAvx2(A, X, Y, N); }});
  return F;
}

/// Tolerance for A at X: the smooth ones a few 1e-7 relative plus what rounding the exponent
/// alpha log2(e) x to float costs (about 6e-8 |alpha x| relative; std::exp on float has the same),
/// absolute below 1e-30 (where the exp's clamp replaces denormals); the piecewise-linear ones a
/// float rounding or two.
double tolerance(const FusedAct &A, double X, double Want) {
  const bool Smooth = A.Kind == ActKind::Sigmoid || A.Kind == ActKind::Silu;
  if (!Smooth)
    return 2.5e-7 * std::max(1.0, std::fabs(Want));
  const double Alpha = A.Kind == ActKind::Silu ? A.Alpha : 1.0;
  return std::max((4e-7 + 1e-7 * std::fabs(Alpha * X)) * std::fabs(Want), 1e-30);
}

} // namespace

TEST(FusedActivation, VectorFormsMatchDoubleOverExpRange) {
  // -200 .. 200 in steps that are not multiples of a lane count, so every lane position sees every
  // region: exp's clamp on both sides (|alpha x| log2(e) > 126), the transition, +-0.
  std::vector<float> X;
  for (double V = -200.0; V <= 200.0; V += 0.0137)
    X.push_back(static_cast<float>(V));
  for (float V : {0.0f, -0.0f, 1e-30f, -1e-30f, 87.3f, -87.3f, 88.8f, -88.8f, 126.5f, -126.5f})
    X.push_back(V);
  for (const auto &Form : forms())
    for (const FusedAct &A : allActs()) {
      SCOPED_TRACE(testing::Message() << Form.first << " kind " << static_cast<int>(A.Kind) << " alpha " << A.Alpha);
      const bool Smooth = A.Kind == ActKind::Sigmoid || A.Kind == ActKind::Silu;
      std::vector<float> Y(X.size());
      Form.second(A, X.data(), Y.data(), X.size());
      // Relative, for |x| <= 10: "a few 1e-7" (more with alpha > 1: the exponent's rounding grows).
      double Worst = 0;
      for (size_t I = 0; I < X.size(); ++I) {
        const double Want = exact(A, X[I]);
        ASSERT_NEAR(Y[I], Want, tolerance(A, X[I], Want)) << "x = " << X[I];
        if (Smooth && std::fabs(X[I]) <= 10.0f && std::fabs(Want) > 1e-6)
          Worst = std::max(Worst, std::fabs(Y[I] - Want) / std::fabs(Want));
      }
      EXPECT_LT(Worst, 6e-7 * std::max(1.0f, A.Alpha));
      std::cout << "[ info ] " << Form.first << " kind " << static_cast<int>(A.Kind) << " alpha " << A.Alpha
                << ": worst relative error for |x| <= 10: " << Worst << "\n";
    }
}

TEST(FusedActivation, NanPassesAndTailsStayInBounds) {
  for (const auto &Form : forms())
    for (const FusedAct &A : allActs())
      for (size_t Count = 0; Count <= 40; ++Count) {
        SCOPED_TRACE(testing::Message() << Form.first << " kind " << static_cast<int>(A.Kind) << " count " << Count);
        // In place, inside a buffer with guards after Count; a NaN at the last position.
        std::vector<float> Buf(Count + 9, 12345.0f);
        for (size_t I = 0; I < Count; ++I)
          Buf[I] = -5.0f + 0.37f * static_cast<float>(I);
        if (Count)
          Buf[Count - 1] = NAN;
        Form.second(A, Buf.data(), Buf.data(), Count);
        for (size_t I = 0; I + 1 < Count; ++I) {
          const float In = -5.0f + 0.37f * static_cast<float>(I);
          const double Want = exact(A, In);
          ASSERT_NEAR(Buf[I], Want, tolerance(A, In, Want)) << I;
        }
        if (Count) {
          EXPECT_TRUE(std::isnan(Buf[Count - 1])) << "NaN passes through";
        }
        for (size_t I = Count; I < Buf.size(); ++I)
          ASSERT_EQ(Buf[I], 12345.0f) << "written past Count at " << I;
      }
}

TEST(FusedActivation, ClampKeepsBoundsAndInfinities) {
  const FusedAct Relu6 = FusedAct::clamp(0.0f, 6.0f), Open = FusedAct::clamp(-INFINITY, INFINITY);
  const std::vector<float> X = {-INFINITY, -7.0f, -0.0f, 0.5f, 6.0f, 6.5f, INFINITY, 3.0f, NAN};
  for (const auto &Form : forms()) {
    std::vector<float> Y(X.size());
    Form.second(Relu6, X.data(), Y.data(), X.size());
    EXPECT_EQ(Y[0], 0.0f);
    EXPECT_EQ(Y[1], 0.0f);
    EXPECT_EQ(Y[3], 0.5f);
    EXPECT_EQ(Y[4], 6.0f);
    EXPECT_EQ(Y[5], 6.0f);
    EXPECT_EQ(Y[6], 6.0f);
    EXPECT_EQ(Y[7], 3.0f);
    EXPECT_TRUE(std::isnan(Y[8])) << Form.first;
    Form.second(Open, X.data(), Y.data(), X.size());
    for (size_t I = 0; I + 1 < X.size(); ++I)
      EXPECT_EQ(Y[I], X[I]) << Form.first << " " << I;
  }
}

TEST(FusedActivation, GemmWriteBackAppliesEachActivation) {
  // Edge tiles in both directions (M 13, N 37), K across the K block (the activation only after the
  // last one), a row bias.
  const int64_t M = 13, N = 37, K = GemmKC + 21, Ldc = N + 3;
  std::mt19937 Gen(7);
  std::uniform_real_distribution<float> Dist(-1.0f, 1.0f);
  const auto randoms = [&](size_t Count) {
    std::vector<float> V(Count);
    for (float &F : V)
      F = Dist(Gen);
    return V;
  };
  const std::vector<float> A = randoms(static_cast<size_t>(M * K)), B = randoms(static_cast<size_t>(K * N));
  const std::vector<float> Bias = randoms(static_cast<size_t>(M));
  for (GemmIsa Isa : {GemmIsa::Portable, GemmIsa::Avx2, GemmIsa::Avx512}) {
    if (!gemmIsaAvailable(Isa))
      continue;
    const GemmMicroKernel &MK = gemmMicroKernel(Isa);
    PackedB PB;
    packB(MK, K, N, MatrixRef{B.data(), N, 1}, PB, Parallel());
    PackedA PA;
    packA(MK, M, K, MatrixRef{A.data(), K, 1}, PA);
    for (const FusedAct &Act : allActs()) {
      SCOPED_TRACE(testing::Message() << MK.Name << " kind " << static_cast<int>(Act.Kind));
      GemmEpilogue Ep;
      Ep.RowBias = Bias.data(), Ep.Act = Act;
      std::vector<float> C(static_cast<size_t>(M * Ldc), -777.0f);
      gemmPacked(MK, PA, PB, 1.0f, 0.0f, C.data(), Ldc, Parallel(), &Ep);
      for (int64_t I = 0; I < M; ++I) {
        for (int64_t J = 0; J < N; ++J) {
          double S = Bias[static_cast<size_t>(I)];
          for (int64_t Kk = 0; Kk < K; ++Kk)
            S += static_cast<double>(A[static_cast<size_t>(I * K + Kk)]) * B[static_cast<size_t>(Kk * N + J)];
          // The sum's float rounding (K terms) moves the input; the activation's slope is at most ~1.1.
          ASSERT_NEAR(C[static_cast<size_t>(I * Ldc + J)], exact(Act, S), 2e-5 * (1.0 + std::fabs(S)))
              << "row " << I << " col " << J;
        }
        for (int64_t J = N; J < Ldc; ++J)
          ASSERT_EQ(C[static_cast<size_t>(I * Ldc + J)], -777.0f) << "written past N in row " << I;
      }
    }
  }
}
