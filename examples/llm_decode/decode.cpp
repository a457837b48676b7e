// Greedy decoding with the GPT-style decoder of ../shared/models/export_models.py, its KV cache
// kept inside the request (Preserved + Resizable past_* inputs, updated from present_* after every
// run: see gpt2_tiny_decoder.optimium.json). The prompt's cache (past length P) is written into the
// request once; every step then feeds only input_ids.
//
//   optimium-llm-decode <exported>/gpt2_tiny_decoder [--tokens N] [--past P] [--threads T] [--check]
//
// Prints the tokens, the median ms per step and the bytes the runtime copied per step (from the
// profiler's Copy events). --check also decodes with the plain model fed past/present from the
// host (the ONNX Runtime way) and fails unless the tokens are identical.
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <Optimium/Runtime.h>

namespace rt = optimium::runtime;

namespace {

constexpr int64_t kHeads = 8, kHeadDim = 64;

int64_t argmaxLast(const rt::Tensor &Logits) {
  const auto *P = static_cast<const float *>(Logits.data());
  const size_t N = static_cast<size_t>(Logits.getShape().getElementCount().value());
  return static_cast<int64_t>(std::max_element(P, P + N) - P);
}

/// A folder beside the export holding links to its files plus our manifest (the export itself
/// stays unmarked, as ONNX Runtime and the host-fed run see it).
std::string markedCopy(const std::string &RelDir, const std::string &Manifest) {
  char Abs[PATH_MAX];
  if (!::realpath(RelDir.c_str(), Abs))
    throw std::runtime_error("cannot resolve " + RelDir);
  const std::string Dir = Abs, Out = Dir + "-kvcache";
  ::mkdir(Out.c_str(), 0755);
  DIR *D = ::opendir(Dir.c_str());
  if (!D)
    throw std::runtime_error("cannot open " + Dir);
  while (dirent *E = ::readdir(D)) {
    const std::string N = E->d_name;
    if (N == "." || N == ".." || N == "optimium.json")
      continue;
    ::unlink((Out + "/" + N).c_str());
    if (::symlink((Dir + "/" + N).c_str(), (Out + "/" + N).c_str()) != 0)
      throw std::runtime_error("cannot link " + N + " into " + Out);
  }
  ::closedir(D);
  std::ifstream In(Manifest);
  if (!In)
    throw std::runtime_error("cannot read " + Manifest);
  std::ofstream(Out + "/optimium.json") << In.rdbuf();
  return Out;
}

double median(std::vector<double> V) {
  std::sort(V.begin(), V.end());
  return V.empty() ? 0.0 : V[V.size() / 2];
}

} // namespace

int main(int Argc, char **Argv) {
  if (Argc < 2) {
    std::cerr << "usage: optimium-llm-decode <exported>/gpt2_tiny_decoder [--tokens N] [--past P] [--threads T] "
                 "[--manifest FILE] [--check]\n";
    return 1;
  }
  std::string Dir = Argv[1], Manifest = std::string(OPTIMIUM_EXAMPLE_DIR) + "/gpt2_tiny_decoder.optimium.json";
  int Tokens = 16, Threads = 0;
  int64_t Past = 128;
  bool Check = false;
  for (int I = 2; I < Argc; ++I) {
    const std::string A = Argv[I];
    auto Next = [&]() -> std::string {
      if (I + 1 >= Argc)
        throw std::runtime_error(A + " needs a value");
      return Argv[++I];
    };
    if (A == "--tokens") Tokens = std::atoi(Next().c_str());
    else if (A == "--past") Past = std::atoll(Next().c_str());
    else if (A == "--threads") Threads = std::atoi(Next().c_str());
    else if (A == "--manifest") Manifest = Next();
    else if (A == "--check") Check = true;
    else { std::cerr << "unknown argument " << A << "\n"; return 1; }
  }
  struct stat St;
  if (::stat((Dir + "/model.onnx").c_str(), &St) != 0) {
    std::cerr << Dir << "/model.onnx not found (export it with scripts/export-models.sh)\n";
    return 77; // the test suite's "skipped"
  }
  try {
    rt::AutoInit Init;
    const int64_t Capacity = Past + Tokens + 1; // + the profiled step
    rt::ModelLoadOptions O;
    O.ThreadCount = Threads;
    rt::Model Plain = rt::loadModel(Dir + "/model.onnx", O);
    std::vector<std::string> CacheNames;
    for (rt::StringRef N : Plain.getInputNames())
      if (N.str() != "input_ids")
        CacheNames.push_back(N.str());
    // Declared capacities keep every step allocation-free (growth within capacity is metadata only).
    for (const std::string &N : CacheNames)
      O.ResizableCapacities.emplace(N, rt::TensorShape({1, kHeads, Capacity, kHeadDim}));
    rt::Model Cached = rt::loadModel(markedCopy(Dir, Manifest), O);
    rt::InferRequest R = Cached.createRequest();

    // The prompt's cache: P positions of random keys/values, the same for both runs.
    std::mt19937 Rng(1234);
    std::normal_distribution<float> Normal(0.0f, 1.0f);
    std::map<std::string, rt::Tensor> Host;
    for (const std::string &N : CacheNames) {
      rt::Tensor T = rt::tensor(rt::ElementType::F32, rt::TensorShape({1, kHeads, Past, kHeadDim}));
      float *P = static_cast<float *>(T.data());
      for (size_t I = 0, E = static_cast<size_t>(T.getShape().getElementCount().value()); I < E; ++I)
        P[I] = Normal(Rng);
      Host[N] = T;
      R.setTensorShape(N, T.getShape());
    }
    R.applyShapeChanges();
    for (const std::string &N : CacheNames) {
      rt::Tensor C = R.getTensor(N);
      std::memcpy(C.data(), Host[N].data(), Host[N].getTensorSize());
    }

    std::vector<int64_t> Out;
    std::vector<double> StepMs;
    int64_t Token = 1;
    for (int S = 0; S < Tokens; ++S) {
      rt::TypedTensor<int64_t> Ids = rt::tensor<int64_t>({1, 1});
      Ids.fill(Token);
      const auto T0 = std::chrono::steady_clock::now();
      R.infer({Ids});
      R.wait();
      StepMs.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - T0).count());
      Token = argmaxLast(R.getOutput("logits"));
      Out.push_back(Token);
    }
    // One more step under the profiler: every data copy the runtime makes is a Copy event.
    rt::TypedTensor<int64_t> Ids = rt::tensor<int64_t>({1, 1});
    Ids.fill(Token);
    rt::ProfileOptions PO;
    PO.Repeat = 1;
    PO.WarmUp = 0;
    std::vector<rt::Tensor> PIn = {Ids};
    R.profile(rt::make_array(PIn), PO);
    size_t CopyEvents = 0, CopiedBytes = 0;
    for (const rt::ProfileEvent &E : R.getProfileEvents())
      if (E.Kind == rt::ProfileEventKind::CopyBegin) {
        ++CopyEvents;
        if (E.TensorID >= 0)
          CopiedBytes += R.getModelTensors()[E.TensorID].Shape.isDynamic()
                             ? 0
                             : R.getModelTensors()[E.TensorID].getTensorSize();
      }

    std::cout << "tokens:";
    for (int64_t T : Out)
      std::cout << " " << T;
    std::cout << "\npast " << Past << ", " << Tokens << " steps, cache in the request: median "
              << median(StepMs) << " ms/step, " << CopyEvents << " copy events, " << CopiedBytes
              << " bytes copied per step\ncache now " << R.getTensor(CacheNames[0]).getShape().toString() << "\n";

    if (Check) {
      rt::InferRequest RP = Plain.createRequest();
      std::vector<int64_t> HostOut;
      std::vector<double> HostMs;
      size_t Moved = 0;
      Token = 1;
      for (int S = 0; S < Tokens; ++S) {
        rt::TypedTensor<int64_t> I1 = rt::tensor<int64_t>({1, 1});
        I1.fill(Token);
        Host["input_ids"] = I1;
        const auto T0 = std::chrono::steady_clock::now();
        RP.infer(Host);
        RP.wait();
        Moved = 0;
        for (const std::string &N : CacheNames) {
          // The host keeps the presents as the next step's past (the request reuses its outputs).
          rt::Tensor P = RP.getOutput("present_" + N.substr(5));
          rt::Tensor Copy = rt::tensor(P.getType(), P.getShape());
          std::memcpy(Copy.data(), P.data(), P.getTensorSize());
          Moved += P.getTensorSize();
          Host[N] = Copy;
        }
        HostMs.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - T0).count());
        Token = argmaxLast(RP.getOutput("logits"));
        HostOut.push_back(Token);
      }
      std::cout << "host-fed past/present: median " << median(HostMs) << " ms/step, " << Moved
                << " bytes copied in the last step\n";
      if (HostOut != Out) {
        std::cerr << "tokens differ between the in-request cache and the host-fed run\n";
        return 1;
      }
      std::cout << "tokens identical\n";
    }
  } catch (const std::exception &E) {
    std::cerr << "error: " << E.what() << "\n";
    return 1;
  }
  return 0;
}
