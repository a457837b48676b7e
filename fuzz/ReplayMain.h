// The replay main() the fuzz targets share when built with OPTIMIUM_FUZZ_REPLAY (the test suite's
// corpus replays): feeds every file named on the command line to LLVMFuzzerTestOneInput, then, with
// `--mutate N`, N deterministic mutations of each (the target chooses how it damages a seed).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size);

namespace fuzz_replay {

/// xorshift64 from a fixed seed: every run replays the same mutations.
class Rng {
public:
  uint64_t operator()() {
    S ^= S << 13;
    S ^= S >> 7;
    S ^= S << 17;
    return S;
  }

private:
  uint64_t S = 0x9E3779B97F4A7C15ull;
};

/// Damages B (a copy of a seed) for the K-th mutation of that seed.
using Mutator = std::function<void(std::vector<uint8_t> &B, int K, Rng &Next)>;
/// The generic damage a fuzzer does first, for binary formats: truncations, bit flips, and bytes
/// overwritten with large values (counts, sizes, offsets, varints, kinds).
inline void truncateFlipOverwrite(std::vector<uint8_t> &B, int K, Rng &Next) {
  switch (K % 3) {
  case 0: B.resize(Next() % B.size()); break;
  case 1:
    for (int J = 0; J < 1 + K % 8; ++J)
      B[Next() % B.size()] ^= static_cast<uint8_t>(1u << (Next() % 8));
    break;
  default:
    for (int J = 0; J < 4; ++J)
      B[Next() % B.size()] = static_cast<uint8_t>(Next() % 2 ? 0xFF : 0x7F);
    break;
  }
}
/// A target's own flag: returns true when it handled Argv[I] (it may consume Argv[I + 1] by
/// advancing I); sets Exit to stop with that status.
using FlagHandler = std::function<bool(int &I, int Argc, char **Argv, int &Exit)>;

/// Seeds shorter than MinSize are replayed but not mutated.
inline int replayMain(int Argc, char **Argv, const Mutator &Mutate, size_t MinSize = 1,
                      const FlagHandler &Flag = nullptr) {
  int Mutations = 0, Count = 0, Exit = -1;
  Rng Next;
  for (int I = 1; I < Argc; ++I) {
    const std::string Arg = Argv[I];
    if (Flag && Flag(I, Argc, Argv, Exit)) {
      if (Exit >= 0)
        return Exit;
      continue;
    }
    if (Arg == "--mutate" && I + 1 < Argc) {
      Mutations = std::atoi(Argv[++I]);
      continue;
    }
    std::ifstream F(Arg, std::ios::binary);
    if (!F) {
      std::fprintf(stderr, "cannot read %s\n", Arg.c_str());
      return 1;
    }
    const std::vector<uint8_t> Bytes((std::istreambuf_iterator<char>(F)), std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(Bytes.data(), Bytes.size());
    ++Count;
    for (int K = 0; K < Mutations && Bytes.size() >= MinSize; ++K) {
      std::vector<uint8_t> B = Bytes;
      Mutate(B, K, Next);
      LLVMFuzzerTestOneInput(B.data(), B.size());
      ++Count;
    }
  }
  std::printf("replayed %d input(s)\n", Count);
  return 0;
}

} // namespace fuzz_replay
