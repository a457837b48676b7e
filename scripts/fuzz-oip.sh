#!/usr/bin/env bash
# Fuzzes the OIP endpoint's request parsing (fuzz/OipRequestFuzzer.cpp: HTTP head, chunked body,
# the JSON inference header with binary tensors, tensor conversion, output writers) with libFuzzer
# (Debian clang) under ASan + UBSan, seeded with fuzz/oip-corpus/.
#   scripts/fuzz-oip.sh [SECONDS=300] [extra libFuzzer flags]
# Only the OIP sources are compiled with clang and instrumented; they link against the runtime
# library of the regular build (build/, made first), so no sanitizer build of the whole runtime is
# needed. Findings land in build-fuzz-oip/artifacts/; copy them into fuzz/oip-corpus/ with the fix
# so the test suite's replay (ctest oip_fuzz_replay_corpus) keeps them fixed.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_TO_RUN=${1:-300}; shift || true
command -v clang++ >/dev/null 2>&1 || { apt-get update -qq; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang libclang-rt-14-dev; }
scripts/install-deps.sh
source scripts/lib/env.sh
optimium_configure
cmake --build "$OPTIMIUM_BUILD_DIR" --target OptimiumRuntime
LIB_DIR=$(dirname "$(find "$PWD/$OPTIMIUM_BUILD_DIR" -maxdepth 1 -name 'liboptimium-runtime.so' | head -1)")
OUT=build-fuzz-oip
mkdir -p "$OUT/corpus" "$OUT/artifacts"
clang++ -std=c++17 -O1 -g -fsanitize=fuzzer,address,undefined -fno-omit-frame-pointer \
  -Isrc/remote/oip -Iinclude fuzz/OipRequestFuzzer.cpp src/remote/oip/Http.cpp src/remote/oip/OipCodec.cpp \
  -L"$LIB_DIR" -loptimium-runtime -Wl,-rpath,"$LIB_DIR" -o "$OUT/optimium_oip_request_fuzzer"
exec "$OUT/optimium_oip_request_fuzzer" "$OUT/corpus" fuzz/oip-corpus \
  -max_total_time="$SECONDS_TO_RUN" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
  -artifact_prefix="$OUT/artifacts/" -print_final_stats=1 "$@"
