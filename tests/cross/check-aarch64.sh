#!/usr/bin/env bash
# AArch64 check (ctest "aarch64_neon"): every source with an architecture-specific path (x86
# intrinsics, AVX-512 dispatch, NEON), and every source including such a header, compiles for
# AArch64 with the project's warnings as errors; and the GEMM engine, whose baseline microkernel
# there is the NEON one, is built for AArch64 and run under qemu-user against a double reference
# (tests/cross/GemmNeonMain.cpp). Exit 77 (skipped) without the cross compiler or qemu.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CXX=${AARCH64_CXX:-aarch64-linux-gnu-g++}
QEMU=${AARCH64_QEMU:-qemu-aarch64}
for Tool in "$CXX" "$QEMU"; do
  if ! command -v "$Tool" >/dev/null 2>&1; then
    echo "SKIP: $Tool is not installed (scripts/install-deps.sh --test installs g++-aarch64-linux-gnu and qemu-user)"
    exit 77
  fi
done
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
cd "$ROOT"
MARKERS='__x86_64__|__i386__|OPT_SIMD_X86|OPT_GEMM_X86|OPT_TARGET_AVX512|immintrin|__aarch64__|__ARM_NEON|arm_neon'
HEADERS=$(grep -rlE "$MARKERS" src --include=*.h | xargs -n1 basename | sort -u)
PATTERN=$(printf '%s|' $HEADERS)
PATTERN="${MARKERS}|#include \"[^\"]*(${PATTERN%|})\""
FILES=$(grep -rlE "$PATTERN" src --include=*.cpp | sort)
echo "compiling $(echo "$FILES" | wc -l) sources for AArch64"
FLAGS="-std=c++17 -O1 -Wall -Wextra -Wno-unused-parameter -Werror -DONNX_ML=1 -DONNX_NAMESPACE=onnx -I include -I src"
export CXX FLAGS OUT
if ! echo "$FILES" | xargs -P "$(nproc)" -I{} sh -c '$CXX $FLAGS -c "{}" -o "$OUT/$(echo {} | tr / _).o" || { echo "FAILED: {}"; exit 1; }'; then
  echo "some sources do not compile for AArch64 (above)"
  exit 1
fi
echo "building the GEMM check for AArch64"
$CXX -std=c++17 -O2 -static -Wall -Wextra -Werror -I include -I src tests/cross/GemmNeonMain.cpp \
  src/backends/native/ops/common/Gemm.cpp src/backends/native/ops/common/GemmBf16.cpp \
  src/backends/native/ops/common/MathApprox.cpp src/backends/native/ops/common/ThreadScratch.cpp src/core/LargeAlloc.cpp src/core/HugeMap.cpp \
  -o "$OUT/gemm_neon"
"$QEMU" "$OUT/gemm_neon"
