#!/usr/bin/env bash
# XNNPack extension vs the native CPU backend, per model, at 1 and 2 threads (median latency of
# optimium-benchmark; docs/benchmarks.md). Usage: bench/xnnpack_vs_native.sh [BUILD_DIR] MODEL_DIR...
# (default models: the bundled digits and tests/models/cnn). Needs liboptimium-runtime-xnnpack.so
# in BUILD_DIR (built with libxnnpack-dev).
set -euo pipefail
BUILD=${1:-build}
shift || true
MODELS=("$@")
[ ${#MODELS[@]} -gt 0 ] || MODELS=(models/digits tests/models/cnn)
RUNS=${RUNS:-30}
printf '%-28s %8s %12s %12s %10s\n' model threads native_ms xnnpack_ms faster
for M in "${MODELS[@]}"; do
  for T in 1 2; do
    median() { "$BUILD/optimium-benchmark" "$M" --device="$1" --threads="$T" --runs="$RUNS" --warmup=5 |
               awk '/^latency/ {for (i = 1; i <= NF; ++i) if ($i == "median") print $(i + 1)}'; }
    N=$(median native)
    X=$(median xnnpack)
    W=$(awk -v n="$N" -v x="$X" 'BEGIN { print (x < n) ? "xnnpack" : "native" }')
    printf '%-28s %8s %12s %12s %10s\n' "$(basename "$M")" "$T" "$N" "$X" "$W"
  done
done
