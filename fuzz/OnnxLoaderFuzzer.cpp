// libFuzzer target for the ONNX loader: loadModel(data, size) on arbitrary bytes, then one
// inference on zero-filled inputs when a model loads. Any exception the API documents is fine;
// a crash, a sanitizer report, a leak or a hang is a bug. Built by scripts/fuzz.sh (clang +
// libFuzzer + ASan/UBSan); the test suite replays inputs through the same entry point
// (OPTIMIUM_FUZZ_REPLAY: a main() that feeds every file named on the command line).
#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "Optimium/Runtime.h"
#include "Optimium/Runtime/Logging/LogSettings.h"

namespace rt = optimium::runtime;

namespace {

struct Init {
  Init() {
    rt::logging::setLogLevel(rt::LogLevel::Error);
    rt::initialize();
  }
};

bool smallEnough(const rt::TensorShape &S) {
  if (S.isDynamic())
    return false;
  size_t N = 1;
  for (size_t I = 0; I < S.getRank(); ++I) {
    const int64_t D = S[I].value();
    if (D < 0 || D > (1 << 16))
      return false;
    N *= static_cast<size_t>(D == 0 ? 1 : D);
    if (N > (1u << 20))
      return false;
  }
  return true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  static Init Once;
  try {
    rt::ModelLoadOptions O;
    O.ThreadCount = 1;
    rt::Model M = rt::loadModel(Data, Size, O);
    std::vector<rt::Tensor> Inputs;
    for (size_t I = 0; I < M.getInputNames().size(); ++I) {
      const rt::TensorInfo &Info = M.getInputTensorInfo(I);
      if (!smallEnough(Info.Shape) || Info.Type == rt::ElementType::String)
        return 0;
      rt::Tensor T = rt::tensor(Info.Type, Info.Shape);
      if (T.getTensorSize())
        std::fill_n(static_cast<uint8_t *>(T.data()), T.getTensorSize(), 0);
      Inputs.push_back(T);
    }
    rt::InferRequest R = M.createRequest();
    R.infer(rt::make_array(Inputs));
    R.wait();
  } catch (const rt::Exception &) {
  }
  return 0;
}

#ifdef OPTIMIUM_FUZZ_REPLAY
#include "ReplayMain.h"

// Replays each file, then (with --mutate N) N deterministic mutations of it: truncations, byte
// flips and overwritten varints, the damage a fuzzer does first.
int main(int Argc, char **Argv) {
  return fuzz_replay::replayMain(Argc, Argv, fuzz_replay::truncateFlipOverwrite);
}
#endif
