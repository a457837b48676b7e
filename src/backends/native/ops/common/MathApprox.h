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

} // namespace approx
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
