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
# Only the remote sources are compiled with clang and instrumented; they link against the runtime
# library of the regular build (build/, made first): no sanitizer build of the whole runtime.
source scripts/lib/env.sh
optimium_configure
cmake --build "$OPTIMIUM_BUILD_DIR" --target OptimiumRuntime
LIB_DIR=$PWD/$OPTIMIUM_BUILD_DIR
mkdir -p build-fuzz/remote-corpus build-fuzz/remote-artifacts
clang++ -std=c++17 -O1 -g -fsanitize=fuzzer,address,undefined -fno-omit-frame-pointer -Iinclude -Isrc \
  fuzz/RemoteFrameFuzzer.cpp src/remote/protocol/Frame.cpp src/remote/protocol/Codec.cpp \
  src/remote/transport/Socket.cpp src/remote/server/Session.cpp src/remote/server/Server.cpp \
  src/remote/server/ServerFlags.cpp src/remote/server/Workspace.cpp \
  -L"$LIB_DIR" -loptimium-runtime -Wl,-rpath,"$LIB_DIR" -lssl -lcrypto -lzstd -lpthread \
  -o build-fuzz/optimium_remote_frame_fuzzer
OPTIMIUM_REMOTE_FUZZ_WORKSPACE="$PWD/models" exec build-fuzz/optimium_remote_frame_fuzzer \
  build-fuzz/remote-corpus fuzz/remote_corpus \
  -max_total_time="$SECONDS_TO_RUN" -timeout=30 -rss_limit_mb=4096 -max_len=65536 \
  -artifact_prefix=build-fuzz/remote-artifacts/ -print_final_stats=1 "$@"
