#!/usr/bin/env bash
# Fuzzes the ONNX loader with libFuzzer (Debian clang) under ASan + UBSan.
#   scripts/fuzz.sh [SECONDS=300] [extra libFuzzer flags]
#   scripts/fuzz.sh compiled [SECONDS=300] [flags]   the compiled model reader (fuzz/CompiledFolderFuzzer.cpp),
#     seeded with bundles optimium-compile makes of the test models
# Seeds: the ONNX node-test models (scripts/onnx-node-tests.sh) plus fuzz/corpus/ (inputs that
# once found a bug). New findings land in build-fuzz/artifacts/; copy them into fuzz/corpus/
# with the fix so the test suite's replay (fuzz_replay_corpus) keeps them fixed.
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET=onnx
if [ "${1:-}" = compiled ]; then TARGET=compiled; shift; fi
SECONDS_TO_RUN=${1:-300}; shift || true
command -v clang++ >/dev/null 2>&1 || { apt-get update -qq; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang libclang-rt-14-dev; }
scripts/install-deps.sh
if [ ! -f build-fuzz/build.ninja ]; then
  CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOPTIMIUM_BUILD_TESTS=OFF \
    -DOPTIMIUM_FUZZ=ON -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache >/dev/null
fi
if [ "$TARGET" = compiled ]; then
  cmake --build build-fuzz --target optimium_compiled_folder_fuzzer optimium-compile
  SEEDS=build-fuzz/compiled-seeds
  mkdir -p "$SEEDS" build-fuzz/compiled-corpus build-fuzz/artifacts
  for M in tests/models/cnn tests/models/scripted_loop tests/models/resizable_cache tests/models/two_inputs; do
    [ -f "$SEEDS/$(basename $M).optb" ] || build-fuzz/optimium-compile "$M" -o "$SEEDS/$(basename $M).optb" --bundle >/dev/null
  done
  exec build-fuzz/optimium_compiled_folder_fuzzer build-fuzz/compiled-corpus "$SEEDS" \
    -max_total_time="$SECONDS_TO_RUN" -timeout=10 -rss_limit_mb=4096 -max_len=1048576 \
    -artifact_prefix=build-fuzz/artifacts/ -print_final_stats=1 "$@"
fi
cmake --build build-fuzz --target optimium_onnx_loader_fuzzer
SEEDS=build-fuzz/seeds
if [ ! -d "$SEEDS" ]; then
  mkdir -p "$SEEDS"
  if DATA=$(scripts/onnx-node-tests.sh); then
    for D in "$DATA"/test_*; do cp "$D/model.onnx" "$SEEDS/$(basename "$D").onnx" 2>/dev/null || true; done
  fi
fi
mkdir -p build-fuzz/corpus build-fuzz/artifacts
exec build-fuzz/optimium_onnx_loader_fuzzer build-fuzz/corpus "$SEEDS" fuzz/corpus \
  -max_total_time="$SECONDS_TO_RUN" -timeout=10 -rss_limit_mb=4096 -max_len=65536 \
  -artifact_prefix=build-fuzz/artifacts/ -print_final_stats=1 "$@"
