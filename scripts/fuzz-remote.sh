#!/usr/bin/env bash
# Fuzzes optimium-remote-server's frame parser and request decoder (fuzz/RemoteFrameFuzzer.cpp: the
# client's byte stream into a real Session over memory) with libFuzzer under ASan + UBSan.
#   scripts/fuzz-remote.sh [SECONDS=300] [extra libFuzzer flags]
# Seeds: fuzz/remote_corpus/ (regenerate with optimium_remote_fuzz_replay --write-seeds DIR). Model
# paths resolve in models/ (LoadModel "digits" works). New findings land in
# build-fuzz/remote-artifacts/; copy them into fuzz/remote_corpus/ with the fix so the suite's
# replay (remote_fuzz_replay_corpus) keeps them fixed.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_TO_RUN=${1:-300}; shift || true
command -v clang++ >/dev/null 2>&1 || { apt-get update -qq; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang libclang-rt-14-dev; }
scripts/install-deps.sh
if [ ! -f build-fuzz/build.ninja ]; then
  CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOPTIMIUM_BUILD_TESTS=OFF \
    -DOPTIMIUM_FUZZ=ON -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache >/dev/null
fi
cmake --build build-fuzz --target optimium_remote_frame_fuzzer
mkdir -p build-fuzz/remote-corpus build-fuzz/remote-artifacts
OPTIMIUM_REMOTE_FUZZ_WORKSPACE="$PWD/models" exec build-fuzz/optimium_remote_frame_fuzzer \
  build-fuzz/remote-corpus fuzz/remote_corpus \
  -max_total_time="$SECONDS_TO_RUN" -timeout=10 -rss_limit_mb=4096 -max_len=65536 \
  -artifact_prefix=build-fuzz/remote-artifacts/ -print_final_stats=1 "$@"
