// The host CPU's instruction-set features, detected once (cpuid leaves 1 and 7 plus XCR0, so a
// feature the OS does not save registers for counts as absent). Every kernel variant check, pass
// gate and the x86 device capability read this one record; nothing else calls cpuid or
// __builtin_cpu_supports.
//
// OPTIMIUM_RT_CPU_DISABLE (comma-separated feature names as toString() prints them, e.g.
// "avx512f,amx-tile") hides features from the runtime, so the paths a smaller CPU takes can be
// run and tested on a bigger one. Hiding a feature hides the ones that need it (avx512f hides
// every avx512* and amx-*; avx2 hides avx512f; avx hides avx2, fma, f16c and avxvnni).
#pragma once

#include <string>

namespace optimium {
namespace runtime {
namespace detail {

struct CpuFeatures {
  bool SSE2 = false, SSE3 = false, SSSE3 = false, SSE41 = false, SSE42 = false;
  bool AVX = false, AVX2 = false, FMA = false, F16C = false;
  bool AVX512F = false, AVX512BW = false, AVX512DQ = false, AVX512VL = false;
  bool AVX512VNNI = false, AVX512BF16 = false, AVX512FP16 = false, AVXVNNI = false;
  bool AMXTile = false, AMXInt8 = false, AMXBF16 = false;

  /// AVX-512 F + FMA: the float32 convolution / GEMM / pooling kernels.
  bool avx512Fma() const { return AVX512F && FMA; }
  /// AVX-512 F, BW, DQ, VL: the element-wise and conversion kernels.
  bool avx512Core() const { return AVX512F && AVX512BW && AVX512DQ && AVX512VL; }
  /// AVX-512 F, BW, VL: the int8 kernels without dot products.
  bool avx512Int8() const { return AVX512F && AVX512BW && AVX512VL; }
  /// AVX-512 VNNI on top of avx512Int8: the int8 dot-product kernels.
  bool avx512Vnni() const { return avx512Int8() && AVX512VNNI; }
  /// AVX2 + FMA: the 256-bit GEMM.
  bool avx2Fma() const { return AVX2 && FMA; }

  /// "sse2 ... avx512f ... amx-tile": the features present, space-separated ("none" when none).
  std::string toString() const;
};

/// What the CPU and OS support, without the environment's mask.
CpuFeatures detectCpuFeatures();

/// Clears the features named in List (comma-separated, as toString() names them) and those that
/// need them. Returns the names it did not know ("" when all were known).
std::string disableCpuFeatures(CpuFeatures &F, const std::string &List);

/// The features the runtime uses: detected once, minus OPTIMIUM_RT_CPU_DISABLE.
const CpuFeatures &cpuFeatures();

} // namespace detail
} // namespace runtime
} // namespace optimium
