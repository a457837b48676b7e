// Shared by DFT and STFT: a direct discrete Fourier transform over one complex line, with the
// twiddle factors of a length tabulated once per run (index k * t mod N keeps them exact).
// O(N^2) per line: the reference, and what DFT runs for lengths the mixed-radix FFT (Fft.h) lacks.
#pragma once

#include <cmath>
#include <vector>

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

struct TwiddleTable {
  int64_t N = 0;
  std::vector<double> Cos, Sin; ///< cos / sin of 2*pi*j/N, j < N
};

inline TwiddleTable makeTwiddles(int64_t N) {
  TwiddleTable T;
  T.N = N;
  T.Cos.resize(static_cast<size_t>(N));
  T.Sin.resize(static_cast<size_t>(N));
  for (int64_t J = 0; J < N; ++J) {
    const double A = 2.0 * M_PI * static_cast<double>(J) / static_cast<double>(N);
    T.Cos[static_cast<size_t>(J)] = std::cos(A);
    T.Sin[static_cast<size_t>(J)] = std::sin(A);
  }
  return T;
}

/// Out[k] = sum_{t < Count} In[t] * exp(-+ 2*pi*i * k * t / N) for k < OutCount (+ when Inverse;
/// no 1/N scaling). In has Count <= N entries (missing ones are zero padding).
inline void directDft(const TwiddleTable &T, const double *Re, const double *Im, int64_t Count, int64_t OutCount,
                      bool Inverse, double *OutRe, double *OutIm) {
  const double S = Inverse ? 1.0 : -1.0;
  for (int64_t K = 0; K < OutCount; ++K) {
    double R = 0, I = 0;
    int64_t J = 0; // k * t mod N
    for (int64_t Tt = 0; Tt < Count; ++Tt) {
      const double C = T.Cos[static_cast<size_t>(J)], Sn = S * T.Sin[static_cast<size_t>(J)];
      R += Re[Tt] * C - Im[Tt] * Sn;
      I += Re[Tt] * Sn + Im[Tt] * C;
      J += K;
      if (J >= T.N)
        J %= T.N;
    }
    OutRe[K] = R;
    OutIm[K] = I;
  }
}

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
