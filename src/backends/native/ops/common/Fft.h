// Mixed-radix complex FFT computed in the element precision (float or double), for lengths whose
// prime factors are at most 11; DFT uses it and falls back to the direct O(N^2) sum (Spectral.h)
// for other lengths.
//
// It is the FFTPACK decomposition as numpy >= 2 (pocketfft, complex transform) runs it: factors 8,
// then 4, then one 2 swapped to the front, then the odd primes ascending; a pass of radix p with
// stride l1 applies its butterfly and then the twiddles exp(+-2*pi*i * j*l1*i / N) to its outputs.
// Same factors, same butterfly operation order, twiddles rounded from higher precision: float
// results round the way numpy.fft's complex64 ones do (ONNX's expected DFT outputs are such).
// The file is compiled with -ffp-contract=off: a fused multiply-add would round differently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

template <typename T> struct FftComplex {
  T Re, Im;
};

template <typename T> class FftPlan {
public:
  /// True when N >= 1 and every prime factor of N is at most 11.
  static bool supports(int64_t N);

  /// N must satisfy supports(N).
  explicit FftPlan(int64_t N);

  int64_t size() const { return N; }
  /// The radices in the order the passes run (empty for N == 1).
  std::vector<int64_t> radices() const;

  /// Data[k] <- Scale * sum_t Data[t] * exp(-+ 2*pi*i * k*t / N) (+ when Inverse), in place. Work
  /// is scratch of N values.
  void transform(FftComplex<T> *Data, FftComplex<T> *Work, bool Inverse, T Scale) const;

private:
  struct Pass {
    int64_t Radix = 0, L1 = 0, Ido = 0;
    std::size_t TwiddleOffset = 0; ///< (Radix - 1) * (Ido - 1) twiddles, [j - 1][i - 1]
  };
  int64_t N = 0;
  std::vector<Pass> Passes;
  std::vector<FftComplex<T>> Twiddles;
};

extern template class FftPlan<float>;
extern template class FftPlan<double>;

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
