// Runtime ISA dispatch for plain elementwise loops. The library is built for the baseline ISA
// (x86-64: SSE2), so a loop the compiler vectorizes there moves 4 floats at a time; wrapping the
// same loop in a function compiled for AVX-512 (OPT_TARGET_AVX512, which inlines the default-ISA
// element math into it) lets it vectorize 16 wide, and the kernel picks that copy when the CPU has
// AVX-512 (simdAvx512()). OPT_TARGET_AVX2 / simdAvx2() are the AVX2 + FMA tier (8 wide, e.g. an
// AMD Zen 3). OPT_SIMD_X86 marks x86 builds (intrinsics included).
#pragma once

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define OPT_SIMD_X86 1
#define OPT_TARGET_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl")))
#define OPT_TARGET_AVX2 __attribute__((target("avx2,fma")))
#else
#define OPT_TARGET_AVX512
#define OPT_TARGET_AVX2
#endif

#include "core/CpuFeatures.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

/// Whether this CPU runs the OPT_TARGET_AVX512 copies (AVX-512 F, BW, DQ and VL).
inline bool simdAvx512() {
#ifdef OPT_SIMD_X86
  static const bool Has = cpuFeatures().avx512Core();
  return Has;
#else
  return false;
#endif
}

/// Whether this CPU runs the OPT_TARGET_AVX2 copies (AVX2 and FMA; true on AVX-512 CPUs too).
inline bool simdAvx2() {
#ifdef OPT_SIMD_X86
  static const bool Has = cpuFeatures().avx2Fma();
  return Has;
#else
  return false;
#endif
}

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
