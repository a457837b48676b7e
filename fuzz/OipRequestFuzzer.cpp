// libFuzzer target for the OIP endpoint's request parsing (src/remote/oip): an input is one HTTP
// request (head and body). It goes through the head parser, the chunked decoder, the JSON
// inference header parser with the binary layout, tensor conversion against a model-like input
// description, and the output writers, as the server would take it. Built by scripts/fuzz-oip.sh
// (clang, OPTIMIUM_FUZZ); OPTIMIUM_FUZZ_REPLAY gives a main() that replays files, with
// deterministic mutations, for the test suite (ctest oip_fuzz_replay_corpus).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "Http.h"
#include "OipCodec.h"

namespace rt = optimium::runtime;
namespace oip = optimium::remote::oip;

namespace {

struct Init {
  Init() { rt::initialize(); }
};

void exerciseBody(const std::string &Body, size_t HeaderSize) {
  oip::OipInferRequest Req;
  std::string Error;
  if (!oip::parseInferRequest(Body.data(), HeaderSize, Body.size() - HeaderSize, Req, Error))
    return;
  for (const oip::OipInput &In : Req.Inputs) {
    // The model's input as the request describes it, with its first dimension symbolic.
    rt::TensorInfo Info;
    Info.Name = In.Name;
    Info.Type = oip::elementTypeOf(In.Datatype);
    std::vector<rt::Expr> Dims;
    uint64_t Count = 1;
    for (size_t D = 0; D < In.Shape.size(); ++D) {
      Dims.push_back(D == 0 ? rt::Expr("n") : rt::Expr(static_cast<long long>(In.Shape[D])));
      Count *= static_cast<uint64_t>(In.Shape[D] == 0 ? 1 : In.Shape[D]);
      if (Count > (1u << 20))
        break;
    }
    if (Count > (1u << 20))
      continue; // a real model's fixed shape bounds this; the fuzzer should not allocate gigabytes
    Info.Shape = rt::TensorShape(Dims);
    rt::Tensor T;
    if (!oip::makeInputTensor(In, Info, Body.data() + HeaderSize, T, Error))
      continue;
    std::string Out;
    oip::appendJsonData(T, Out, Error);
    Out.clear();
    oip::appendBinaryData(T, Out, Error);
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  static Init Once;
  const char *P = reinterpret_cast<const char *>(Data);
  oip::HttpLimits Limits;
  Limits.MaxBodyBytes = 1 << 20;
  const size_t HeadEnd = oip::findHeadEnd(P, Size);
  if (HeadEnd == 0) {
    // No HTTP head: the whole input is an inference request body.
    exerciseBody(std::string(P, Size), Size);
    return 0;
  }
  oip::HttpRequest Req;
  oip::HttpError Err;
  if (!oip::parseRequestHead(P, HeadEnd, Limits, Req, Err))
    return 0;
  std::string Body;
  if (Req.Chunked) {
    // In two pieces, split where the first byte of the body says, as bytes arrive from a socket.
    oip::ChunkedDecoder Decoder(Limits.MaxBodyBytes);
    const size_t Rest = Size - HeadEnd;
    const size_t Split = Rest ? Data[HeadEnd] % (Rest + 1) : 0;
    size_t Used = 0;
    auto R = Decoder.feed(P + HeadEnd, Split, Body, Used, Err);
    if (R == oip::ChunkedDecoder::Result::NeedMore) {
      size_t Used2 = 0;
      R = Decoder.feed(P + HeadEnd + Used, Rest - Used, Body, Used2, Err);
    }
    if (R != oip::ChunkedDecoder::Result::Done)
      return 0;
  } else {
    Body.assign(P + HeadEnd, std::min<uint64_t>(Req.ContentLength, Size - HeadEnd));
  }
  size_t HeaderSize = Body.size();
  if (const std::string *H = Req.header("inference-header-content-length")) {
    char *End = nullptr;
    const unsigned long long V = std::strtoull(H->c_str(), &End, 10);
    if (End && !*End && V <= Body.size())
      HeaderSize = static_cast<size_t>(V);
  }
  exerciseBody(Body, HeaderSize);
  return 0;
}

#ifdef OPTIMIUM_FUZZ_REPLAY
#include "ReplayMain.h"

// Replays each file, then (with --mutate N) N deterministic mutations of it: truncations, byte
// flips and inserted JSON punctuation.
int main(int Argc, char **Argv) {
  return fuzz_replay::replayMain(Argc, Argv, [](std::vector<uint8_t> &B, int, fuzz_replay::Rng &Next) {
    static const char Punct[] = "{}[]\":,-0123456789.e\r\n\\ ";
    switch (Next() % 3) {
    case 0:
      B.resize(Next() % B.size());
      break;
    case 1:
      for (int J = 0; J < 4; ++J)
        B[Next() % B.size()] ^= static_cast<uint8_t>(1u << (Next() % 8));
      break;
    default:
      B.insert(B.begin() + static_cast<std::ptrdiff_t>(Next() % B.size()),
               static_cast<uint8_t>(Punct[Next() % (sizeof(Punct) - 1)]));
      break;
    }
  });
}
#endif
