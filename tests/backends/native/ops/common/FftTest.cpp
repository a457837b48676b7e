// The mixed-radix FFT of Fft.h: the factor order, agreement with a long-double direct DFT for every
// supported length up to 130 and some larger ones (both directions, float and double), the
// inverse round trip, and bit-exact numpy.fft results (complex64 ifft, complex128 fft).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "backends/native/ops/common/Fft.h"

using optimium::runtime::detail::ops::FftComplex;
using optimium::runtime::detail::ops::FftPlan;

namespace {

/// sum_t X[t] exp(-+ 2*pi*i k t/N) in long double.
template <typename T> std::vector<FftComplex<long double>> directDft(const std::vector<FftComplex<T>> &X, bool Inverse) {
  const size_t N = X.size();
  const long double Pi = 3.141592653589793238462643383279502884L, Sign = Inverse ? 1 : -1;
  std::vector<long double> Cos(N), Sin(N); // of 2*pi*j/N
  for (size_t J = 0; J < N; ++J) {
    Cos[J] = std::cos(2 * Pi * static_cast<long double>(J) / static_cast<long double>(N));
    Sin[J] = std::sin(2 * Pi * static_cast<long double>(J) / static_cast<long double>(N));
  }
  std::vector<FftComplex<long double>> Y(N);
  for (size_t K = 0; K < N; ++K) {
    long double Re = 0, Im = 0;
    for (size_t T0 = 0; T0 < N; ++T0) {
      const long double C = Cos[(K * T0) % N], S = Sign * Sin[(K * T0) % N];
      Re += X[T0].Re * C - X[T0].Im * S;
      Im += X[T0].Re * S + X[T0].Im * C;
    }
    Y[K] = {Re, Im};
  }
  return Y;
}

template <typename T> std::vector<FftComplex<T>> signal(size_t N, unsigned Seed) {
  std::vector<FftComplex<T>> X(N);
  unsigned S = Seed;
  const auto next = [&] {
    S = S * 1103515245u + 12345u;
    return static_cast<T>(static_cast<int>((S >> 8) % 2001) - 1000) / T(250);
  };
  for (auto &V : X)
    V = {next(), next()};
  return X;
}

template <typename T> void expectMatchesDirect(int64_t N, double Tolerance) {
  SCOPED_TRACE("N = " + std::to_string(N));
  ASSERT_TRUE(FftPlan<T>::supports(N));
  const FftPlan<T> Plan(N);
  for (const bool Inverse : {false, true}) {
    SCOPED_TRACE(Inverse ? "inverse" : "forward");
    const std::vector<FftComplex<T>> X = signal<T>(static_cast<size_t>(N), static_cast<unsigned>(N) * 7 + Inverse);
    std::vector<FftComplex<T>> Y = X, Work(X.size());
    Plan.transform(Y.data(), Work.data(), Inverse, T(1));
    const std::vector<FftComplex<long double>> Ref = directDft(X, Inverse);
    long double Norm = 0, Err = 0;
    for (size_t K = 0; K < Y.size(); ++K) {
      Norm = std::max(Norm, std::hypot(Ref[K].Re, Ref[K].Im));
      Err = std::max(Err, std::hypot(Y[K].Re - Ref[K].Re, Y[K].Im - Ref[K].Im));
    }
    EXPECT_LE(static_cast<double>(Err / Norm), Tolerance);
  }
}

TEST(Fft, FactorOrderIsEightsFoursOneTwoFirstThenOddPrimes) {
  EXPECT_EQ(FftPlan<float>(1).radices(), std::vector<int64_t>{});
  EXPECT_EQ(FftPlan<float>(10).radices(), (std::vector<int64_t>{2, 5}));
  EXPECT_EQ(FftPlan<float>(12).radices(), (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(FftPlan<float>(16).radices(), (std::vector<int64_t>{2, 8}));
  EXPECT_EQ(FftPlan<float>(64).radices(), (std::vector<int64_t>{8, 8}));
  EXPECT_EQ(FftPlan<float>(96).radices(), (std::vector<int64_t>{8, 4, 3}));
  EXPECT_EQ(FftPlan<float>(2 * 64 * 9 * 7).radices(), (std::vector<int64_t>{2, 8, 8, 3, 3, 7}));
  EXPECT_EQ(FftPlan<double>(2310).radices(), (std::vector<int64_t>{2, 3, 5, 7, 11}));
}

TEST(Fft, SupportsLengthsWithPrimeFactorsUpToEleven) {
  for (const int64_t N : {1, 2, 3, 4, 5, 7, 8, 11, 12, 121, 1024, 2310})
    EXPECT_TRUE(FftPlan<float>::supports(N)) << N;
  for (const int64_t N : {0, -4, 13, 26, 17 * 16, 1009})
    EXPECT_FALSE(FftPlan<float>::supports(N)) << N;
}

TEST(Fft, MatchesDirectDftForEverySupportedLength) {
  for (int64_t N = 1; N <= 130; ++N) {
    if (!FftPlan<double>::supports(N))
      continue;
    expectMatchesDirect<double>(N, 1e-14);
    expectMatchesDirect<float>(N, 2e-6);
  }
  for (const int64_t N : {256, 448, 1000, 1024, 2310, 4096}) {
    expectMatchesDirect<double>(N, 1e-13);
    expectMatchesDirect<float>(N, 4e-6);
  }
}

TEST(Fft, InverseWithScaleUndoesForward) {
  for (const int64_t N : {6, 35, 64, 99, 160}) {
    const FftPlan<double> Plan(N);
    const std::vector<FftComplex<double>> X = signal<double>(static_cast<size_t>(N), 3);
    std::vector<FftComplex<double>> Y = X, Work(X.size());
    Plan.transform(Y.data(), Work.data(), false, 1.0);
    Plan.transform(Y.data(), Work.data(), true, 1.0 / static_cast<double>(N));
    for (size_t K = 0; K < X.size(); ++K) {
      EXPECT_NEAR(Y[K].Re, X[K].Re, 1e-13) << N << " " << K;
      EXPECT_NEAR(Y[K].Im, X[K].Im, 1e-13) << N << " " << K;
    }
  }
}

template <typename T>
void expectBitExact(const std::vector<FftComplex<T>> &X, bool Inverse, const std::vector<FftComplex<T>> &Expected) {
  const int64_t N = static_cast<int64_t>(X.size());
  std::vector<FftComplex<T>> Y = X, Work(X.size());
  FftPlan<T>(N).transform(Y.data(), Work.data(), Inverse, Inverse ? T(1) / static_cast<T>(N) : T(1));
  for (size_t K = 0; K < Y.size(); ++K) {
    EXPECT_EQ(Y[K].Re, Expected[K].Re) << K;
    EXPECT_EQ(Y[K].Im, Expected[K].Im) << K;
  }
}

// numpy 2.4 np.fft.ifft(np.arange(0, 100, 10).astype(np.complex64)): the column of ONNX's
// test_dft_inverse; bin 5 is exactly 0 but float32 rounding leaves 0x1.99999ap-23.
TEST(Fft, Complex64InverseIsBitExactWithNumpy) {
  std::vector<FftComplex<float>> X(10);
  for (int K = 0; K < 10; ++K)
    X[static_cast<size_t>(K)] = {10.0f * static_cast<float>(K), 0.0f};
  expectBitExact<float>(
      X, true,
      {{0x1.68p+5f, 0x0.0p+0f}, {-0x1.4p+2f, -0x1.ec6deep+3f}, {-0x1.4p+2f, -0x1.b87136p+2f},
       {-0x1.4p+2f, -0x1.d0fccp+1f}, {-0x1.400002p+2f, -0x1.9fe5aap+0f}, {-0x1.4p+2f, 0x1.99999ap-23f},
       {-0x1.400002p+2f, 0x1.9fe5aap+0f}, {-0x1.4p+2f, 0x1.d0fcbap+1f}, {-0x1.4p+2f, 0x1.b87136p+2f},
       {-0x1.4p+2f, 0x1.ec6deep+3f}});
  // np.fft.ifft((np.arange(12) * 0.5 + 1j * np.arange(12)[::-1]).astype(np.complex64))
  std::vector<FftComplex<float>> Z(12);
  for (int K = 0; K < 12; ++K)
    Z[static_cast<size_t>(K)] = {0.5f * static_cast<float>(K), static_cast<float>(11 - K)};
  expectBitExact<float>(
      Z, true,
      {{0x1.6p+1f, 0x1.6p+2f}, {-0x1.0ed9ecp+1f, -0x1.bb67bp-2f}, {-0x1.1db3d8p+0f, 0x1.126156p-4f},
       {-0x1.8p-1f, 0x1.0p-2f}, {-0x1.13cd3cp-1f, 0x1.6c32c6p-2f}, {-0x1.8930a6p-2f, 0x1.bb67aep-2f},
       {-0x1.0p-2f, 0x1.0p-1f}, {-0x1.db3d6cp-4f, 0x1.224c2ap-1f}, {0x1.3cd3ap-5f, 0x1.49e69ep-1f},
       {0x1.fffff4p-3f, 0x1.8p-1f}, {0x1.3b67aep-1f, 0x1.ddb3d6p-1f}, {0x1.9db3d6p+0f, 0x1.6ed9ecp+0f}});
}

// np.fft.fft((np.arange(12) * 0.5 + 1j * np.arange(12)[::-1]).astype(np.complex128))
TEST(Fft, Complex128ForwardIsBitExactWithNumpy) {
  std::vector<FftComplex<double>> Z(12);
  for (int K = 0; K < 12; ++K)
    Z[static_cast<size_t>(K)] = {0.5 * K, static_cast<double>(11 - K)};
  expectBitExact<double>(Z, false,
                         {{0x1.08p+5, 0x1.08p+6},
                          {0x1.3646e17211ccp+4, 0x1.132370b908e6p+4},
                          {0x1.d91b85c8473p+2, 0x1.6646e17211ccp+3},
                          {0x1.7fffffffffffcp+1, 0x1.2p+3},
                          {0x1.db3d742c2655p-2, 0x1.eed9eba16132ap+2},
                          {-0x1.646e17211cc02p+0, 0x1.b3723d1bdc68p+2},
                          {-0x1.8p+1, 0x1.8p+2},
                          {-0x1.26e47a37b8dp+2, 0x1.4c8dc2e42397ep+2},
                          {-0x1.9db3d742c2655p+2, 0x1.1126145e9ecd6p+2},
                          {-0x1.2p+3, 0x1.8p+1},
                          {-0x1.ac8dc2e42398p+3, 0x1.9b91e8dee34p-1},
                          {-0x1.9646e17211ccp+4, -0x1.4c8dc2e42397ep+2}});
}

} // namespace
