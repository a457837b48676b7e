// Bulk float16 <-> float32 conversion (see HalfConvert.h).
#include "core/HalfConvert.h"

#include <Optimium/Runtime/Types/Float16.h>

#include "core/CpuFeatures.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define OPT_HALF_X86 1
#endif

namespace optimium {
namespace runtime {
namespace detail {

void halfToFloatScalar(const uint16_t *Src, float *Dst, size_t N) {
  for (size_t I = 0; I < N; ++I)
    Dst[I] = float16::toFloat(Src[I]);
}

void floatToHalfScalar(const float *Src, uint16_t *Dst, size_t N) {
  for (size_t I = 0; I < N; ++I)
    Dst[I] = float16::fromFloat(Src[I]);
}

#ifdef OPT_HALF_X86
namespace {

bool hasF16c() {
  static const bool Has = cpuFeatures().F16C && cpuFeatures().AVX;
  return Has;
}

__attribute__((target("avx,f16c"))) void halfToFloatF16c(const uint16_t *Src, float *Dst, size_t N) {
  size_t I = 0;
  for (; I + 8 <= N; I += 8)
    _mm256_storeu_ps(Dst + I, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(Src + I))));
  halfToFloatScalar(Src + I, Dst + I, N - I);
}

__attribute__((target("avx,f16c"))) void floatToHalfF16c(const float *Src, uint16_t *Dst, size_t N) {
  size_t I = 0;
  for (; I + 8 <= N; I += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i *>(Dst + I),
                     _mm256_cvtps_ph(_mm256_loadu_ps(Src + I), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  floatToHalfScalar(Src + I, Dst + I, N - I);
}

} // namespace
#endif

void halfToFloat(const uint16_t *Src, float *Dst, size_t N) {
#ifdef OPT_HALF_X86
  if (hasF16c())
    return halfToFloatF16c(Src, Dst, N);
#endif
  halfToFloatScalar(Src, Dst, N);
}

void floatToHalf(const float *Src, uint16_t *Dst, size_t N) {
#ifdef OPT_HALF_X86
  if (hasF16c())
    return floatToHalfF16c(Src, Dst, N);
#endif
  floatToHalfScalar(Src, Dst, N);
}

} // namespace detail
} // namespace runtime
} // namespace optimium
