// Vectorizable float32 approximations of exp, tanh, sigmoid, erf and gelu (absolute error a few
// 1e-7, relative error a few 1e-7 on the outputs' scale) and the loops that apply them. The loops
// live in MathApprox.cpp, compiled for AVX-512 / AVX2 / baseline and picked by the CPU at load
// (GCC target_clones), since the build does not use -march=native.
#pragma once

#include <cstddef>

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace approx {

void sigmoidF32(const float *X, float *Y, size_t N);
void tanhF32(const float *X, float *Y, size_t N);
void erfF32(const float *X, float *Y, size_t N);
/// Gelu with approximate="none" (exact erf form) or "tanh".
void geluErfF32(const float *X, float *Y, size_t N);
void geluTanhF32(const float *X, float *Y, size_t N);
void expF32(const float *X, float *Y, size_t N);
/// The sum of N contiguous floats, kept in 16 independent partial sums (vectorized; float32
/// rounding in that order, not a sequential loop's).
float sumF32(const float *X, size_t N);

/// Y = softmax(X) over one contiguous line of N elements (max-subtracted; a NaN anywhere gives
/// NaN everywhere, like the reference). The reductions keep 16 partial results (vectorized),
/// so sums are in a different order than a sequential loop (float32 rounding only).
void softmaxF32(const float *X, float *Y, size_t N);
/// Y = (X - mean) * invstd * Scale + Bias over one contiguous row of N elements (Bias may be
/// nullptr; Scale and Bias have N elements). Writes the row's mean and invstd when asked.
void layerNormF32(const float *X, float *Y, size_t N, const float *Scale, const float *Bias, float Epsilon,
                  float *MeanOut, float *InvStdOut);
/// layerNormF32 of (X + Residual) + Bias2 (either may be nullptr; all N elements), the sum written
/// to Y first: the residual Add and the LayerNormalization of a transformer block in one pass.
void skipLayerNormF32(const float *X, const float *Residual, const float *Bias2, float *Y, size_t N,
                      const float *Scale, const float *Bias, float Epsilon, float *MeanOut, float *InvStdOut);

} // namespace approx
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
