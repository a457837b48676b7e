// SiLU's arithmetic in an AVX-512 epilogue, two ways: exp512 (exp with clamping, 15 operations)
// against exp2Clamped512 (2^(a log2(e) x), 12), each with the rcp14 + Newton reciprocal. The data
// sits in L1 (16K floats), so this times the arithmetic a fused Conv epilogue pays per element,
// and prints the new form's largest relative error against double. A benchmark, not a test.
//   build/tests/optimium_activation_bench   (x86-64 with AVX-512F; prints a note elsewhere)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized" // GCC 12 on the intrinsics' pass-through operands
#endif
#include <algorithm>
#include "backends/native/ops/common/VecMath512.h"
#include "core/CpuFeatures.h"
#ifndef OPT_HAVE_VECMATH512
#include <cstdio>
int main() { std::puts("AVX-512 only: nothing to time on this target"); }
#else
#include <chrono>
#include <cstdio>
#include <vector>
#include <cmath>
#include "backends/native/ops/common/VecMath512.h"
using namespace optimium::runtime::detail::ops;
__attribute__((target("avx512f"))) inline __m512 recip(__m512 D) {
  const __m512 R = _mm512_rcp14_ps(D);
  return _mm512_mul_ps(R, _mm512_fnmadd_ps(D, R, _mm512_set1_ps(2.0f)));
}
__attribute__((target("avx512f"), noinline)) void oldSilu(const float *X, float *Y, size_t N) {
  const __m512 P = _mm512_set1_ps(-1.0f), One = _mm512_set1_ps(1.0f);
  for (size_t I = 0; I < N; I += 16) {
    __m512 V = _mm512_loadu_ps(X + I);
    _mm512_storeu_ps(Y + I, _mm512_mul_ps(V, recip(_mm512_add_ps(One, vec512::exp512(_mm512_mul_ps(P, V))))));
  }
}
__attribute__((target("avx512f"), noinline)) void newSilu(const float *X, float *Y, size_t N) {
  const __m512 P = _mm512_set1_ps(-1.44269504088896341f), One = _mm512_set1_ps(1.0f);
  for (size_t I = 0; I < N; I += 16) {
    __m512 V = _mm512_loadu_ps(X + I);
    _mm512_storeu_ps(Y + I, _mm512_mul_ps(V, recip(_mm512_add_ps(One, vec512::exp2Clamped512(_mm512_mul_ps(P, V))))));
  }
}
int main() {
  if (!optimium::runtime::detail::cpuFeatures().avx512Fma()) {
    std::puts("this CPU has no AVX-512F: nothing to time");
    return 0;
  }
  const size_t N = 16384; // L1/L2 resident: the arithmetic, as in a register epilogue
  std::vector<float> X(N), A(N), B(N);
  for (size_t I = 0; I < N; ++I) X[I] = (float)((int)(I * 7919 % 2001) - 1000) / 50.0f;
  double MaxRel = 0;
  oldSilu(X.data(), A.data(), N); newSilu(X.data(), B.data(), N);
  for (size_t I = 0; I < N; ++I) { double R = X[I] / (1 + std::exp(-(double)X[I])); MaxRel = std::max(MaxRel, std::fabs(B[I] - R) / (std::fabs(R) + 1e-30) * (std::fabs(R) > 1e-30)); }
  for (int Rep = 0; Rep < 3; ++Rep) for (int K = 0; K < 2; ++K) {
    auto T0 = std::chrono::steady_clock::now();
    for (int I = 0; I < 2000; ++I) (K ? newSilu : oldSilu)(X.data(), K ? B.data() : A.data(), N);
    double Ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - T0).count() / (2000.0 * N);
    printf("%s %.3f ns/element\n", K ? "new" : "old", Ns);
  }
  printf("new max rel err vs double %.2e\n", MaxRel);
}
#endif
