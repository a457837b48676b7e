// libFuzzer target for the compiled model reader (import/compiled/CompiledModel.h): arbitrary
// bytes as a bundle (the single-file form of a compiled folder; the folder form reads the same
// files through the same decoder), with the CRC-32 checks skipped so mutations reach the decoder
// instead of stopping at the checksum. Any Status is fine; a crash, a sanitizer report, a leak or
// a hang is a bug. When the bytes decode, the model is also loaded through loadModel(bytes) (which
// checks the CRCs, so this runs only for inputs whose checksums still hold). Built by
// scripts/fuzz.sh compiled; the test suite replays seeds and mutations of them
// (OPTIMIUM_FUZZ_REPLAY).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "Optimium/Runtime.h"
#include "Optimium/Runtime/Logging/LogSettings.h"
#include "import/compiled/CompiledModel.h"

namespace rt = optimium::runtime;
namespace rtd = optimium::runtime::detail;

namespace {

struct Init {
  Init() {
    rt::logging::setLogLevel(rt::LogLevel::Error);
    rt::initialize();
  }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  static Init Once;
  // A copy of exactly Size bytes, so reading one byte past the end is an ASan report.
  std::vector<uint8_t> Bytes(Data, Data + Size);
  rtd::CompiledSource Src;
  Src.Bundle = Bytes.data();
  Src.BundleSize = Bytes.size();
  Src.Label = "fuzz input";
  Src.SkipChecksums = true;
  auto M = rtd::readCompiledModel(Src);
  if (!M.isOk())
    return 0;
  try {
    rt::ModelLoadOptions O;
    O.ThreadCount = 1;
    rt::Model Model = rt::loadModel(Bytes.data(), Bytes.size(), O);
    (void)Model;
  } catch (const rt::Exception &) {
  }
  return 0;
}

#ifdef OPTIMIUM_FUZZ_REPLAY
#include "ReplayMain.h"

// Replays each file, then (with --mutate N) N deterministic mutations of it: truncations, byte
// flips and bytes overwritten with large values (counts, sizes, offsets, kinds).
int main(int Argc, char **Argv) {
  return fuzz_replay::replayMain(Argc, Argv, fuzz_replay::truncateFlipOverwrite);
}
#endif
