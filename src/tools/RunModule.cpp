// optimium-run's flow: parse specs, load, validate, run, print/write/compare; see RunModule.h.
#include "tools/RunModule.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <numeric>
#include <unistd.h>

#include "Optimium/Runtime.h"
#include "tools/DeviceAllocator.h"
#include "tools/Devices.h"
#include "tools/ElementText.h"
#include "tools/InputSpec.h"
#include "tools/OutputFormat.h"
#include "tools/Passphrase.h"
#include "tools/TextUtil.h"

namespace optimium {
namespace tools {

namespace rt = optimium::runtime;
using rt::ElementType;

// ---- one run -----------------------------------------------------------------------------------

namespace {

size_t peakRssKiB() {
  std::ifstream F("/proc/self/status");
  std::string Line;
  while (std::getline(F, Line))
    if (startsWith(Line, "VmHWM:"))
      return static_cast<size_t>(std::strtoull(Line.c_str() + 6, nullptr, 10));
  return 0;
}

double msSince(std::chrono::steady_clock::time_point T0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - T0).count();
}

std::string fmtMs(double Ms) {
  char Buf[64];
  std::snprintf(Buf, sizeof(Buf), "%.3f", Ms);
  return Buf;
}

int fail(std::ostream &Err, const std::string &Message) {
  Err << "optimium-run: error: " << oneLine(Message) << std::endl;
  return 1;
}

// The tool's end once its results are out: the output files are closed by now (writeOutput's
// streams are scoped), so what is left to flush is the two streams and C stdio. Skipping the
// teardown saves unmapping the model and arena, joining the pool and the libraries' static
// destructors; the exit code is the same.
[[noreturn]] void exitWithoutTeardown(std::ostream &Out, std::ostream &Err, int Code) {
  Out.flush();
  Err.flush();
  std::fflush(nullptr);
  // A failed flush (a closed pipe, a full disk) must not turn into a silent success.
  if (!Out || !Err || std::ferror(stdout) || std::ferror(stderr))
    Code = Code ? Code : 1;
  ::_exit(Code);
}

int runModuleImpl(const RunModuleOptions &O, std::ostream &Out, std::ostream &Err) {
  if (O.Help) {
    Out << usage();
    return 0;
  }
  if (O.NoArguments) {
    const std::string Dir = findBundledModelDir();
    if (Dir.empty())
      return fail(Err, "the bundled model (models/digits) was not found; pass --module=PATH (see --help)");
    return runBundledModel(Dir, Out, Err);
  }
  rt::AutoInit Init;
  if (O.DumpDevices) {
    dumpDevices(Out);
    return 0;
  }
  if (O.Module.empty())
    return fail(Err, "--module=PATH is required (see --help)");
  if (!fileExists(O.Module))
    return fail(Err, "--module=" + O.Module + ": no such file or folder");
  if (O.Function != "main")
    return fail(Err, "--function=" + O.Function + ": no such function in " + O.Module + "; available functions: main");

  rt::ModelLoadOptions LoadOptions;
  // --hw_type alone selects the npu driver (hardware types are its backends: docs/devices.md);
  // --device=xnnpack: the native CPU runs the ops XNNPACK lacks (Strict below still refuses a device
  // that is absent).
  LoadOptions.Devices = withCpuFallback(
      resolveDevice(O.DeviceGiven || O.HwType.empty() ? O.Device : std::string("npu"), O.HwType, O.DeviceAllocator));
  // Input buffers (--device_allocator); outlives the tensors and the request that use them.
  const std::unique_ptr<DeviceAllocator> Allocator = DeviceAllocator::create(O.DeviceAllocator);

  // Specs are parsed before the (possibly slow) model load, so a typo fails fast. Only a raw file
  // given without shape/type (`@file.bin`) needs the model's input metadata first.
  bool InputsNeedModel = false;
  for (const std::string &S : O.Inputs) {
    const std::string T = trim(S);
    InputsNeedModel |= !T.empty() && (T[0] == '@' || T[0] == '+') && !endsWith(T, ".npy");
  }
  std::vector<HostArray> Inputs;
  if (!InputsNeedModel)
    Inputs = parseInputSpecs(O.Inputs, {}, "--input");
  // Expected outputs, in order; "(ignored)" skips one output.
  std::vector<HostArray> Expected;
  std::vector<bool> Ignored;
  {
    InputStreams ExpectedStreams;
    for (const std::string &S : O.ExpectedOutputs) {
      if (trim(S) == "(ignored)" || trim(S) == "(null)") {
        Expected.emplace_back();
        Ignored.push_back(true);
        continue;
      }
      for (HostArray &A : parseInputSpec(S, ExpectedStreams, nullptr, "--expected_output")) {
        Expected.push_back(std::move(A));
        Ignored.push_back(false);
      }
    }
    ExpectedStreams.checkRawFilesConsumed("--expected_output");
  }

  for (const std::string &S : O.Outputs)
    if (!S.empty() && S != "-" && ((S[0] != '@' && S[0] != '+') || S.size() == 1))
      return fail(Err, "--output '" + S + "': expected '-', '' (skip), '@file' (write) or '+file' (append)");

  LoadOptions.Strict = O.DeviceGiven;
  LoadOptions.ThreadCount = O.Threads;
  LoadOptions.Precision = O.Precision;
  if (!O.PassphraseFile.empty() || std::getenv("OPTIMIUM_RT_PASSPHRASE")) {
    const std::string Why = readPassphraseFrom(O.PassphraseFile, LoadOptions.Passphrase);
    if (!Why.empty())
      return fail(Err, Why);
  }

  const auto LoadStart = std::chrono::steady_clock::now();
  rt::Model Model = rt::loadModel(O.Module, LoadOptions);
  const double LoadMs = msSince(LoadStart);

  const size_t NumInputs = Model.getInputNames().size();
  const size_t NumOutputs = Model.getOutputNames().size();
  std::vector<rt::TensorInfo> InputInfos, OutputInfos;
  for (size_t I = 0; I < NumInputs; ++I)
    InputInfos.push_back(Model.getInputTensorInfo(I));
  for (size_t I = 0; I < NumOutputs; ++I)
    OutputInfos.push_back(Model.getOutputTensorInfo(I));

  // Everything is checked before running.
  if (InputsNeedModel)
    Inputs = parseInputSpecs(O.Inputs, InputInfos, "--input");
  validateInputs(Inputs, InputInfos);
  if (!O.Outputs.empty() && O.Outputs.size() != NumOutputs)
    return fail(Err, std::to_string(O.Outputs.size()) + " --output flags given but the model has " +
                         std::to_string(NumOutputs) + " outputs (give one per output; an empty --output= skips one)");
  if (!O.ExpectedOutputs.empty() && Expected.size() != NumOutputs)
    return fail(Err, std::to_string(Expected.size()) + " expected outputs given but the model has " +
                         std::to_string(NumOutputs) + " outputs (use --expected_output=(ignored) to skip one)");

  std::vector<rt::Tensor> Tensors;
  for (const HostArray &A : Inputs) {
    if (A.Type == ElementType::String) {
      Tensors.push_back(toTensor(A));
      continue;
    }
    rt::Tensor T = Allocator->allocate(A.Type, A.Dims);
    if (!A.Bytes.empty())
      std::memcpy(T.data(), A.Bytes.data(), A.Bytes.size());
    Tensors.push_back(T);
  }

  rt::InferRequest Request = Model.createRequest();
  const auto InferStart = std::chrono::steady_clock::now();
  Request.infer(Tensors);
  Request.wait();
  const double InferMs = msSince(InferStart);

  std::vector<HostArray> Results;
  for (size_t I = 0; I < NumOutputs; ++I)
    Results.push_back(fromTensor(Request.getOutput(I)));

  // Like iree-run-module: results print by default, but not when checking expectations.
  std::vector<std::string> OutSpecs = O.Outputs;
  if (OutSpecs.empty())
    OutSpecs.assign(NumOutputs, O.ExpectedOutputs.empty() ? "-" : "");
  for (size_t I = 0; I < NumOutputs; ++I)
    writeOutput(OutSpecs[I], I, Results[I], Out, O.OutputMaxElementCount);

  int Code = 0;
  if (!O.ExpectedOutputs.empty()) {
    size_t Failed = 0;
    for (size_t I = 0; I < NumOutputs; ++I) {
      if (Ignored[I])
        continue;
      const std::string Why = compareArrays(Expected[I], Results[I], O.ExpectedTolerance);
      if (!Why.empty()) {
        ++Failed;
        Out << "[FAILED] result[" << I << "] '" << OutputInfos[I].Name << "': " << Why << "\n";
      }
    }
    if (Failed) {
      Out << "[FAILED] " << Failed << " of " << NumOutputs << " outputs did not match their expectations\n";
      Code = 1;
    } else {
      Out << "[SUCCESS] all function outputs matched their expectations\n";
    }
  }

  Out << "optimium-run: inference took " << fmtMs(InferMs) << " ms\n";
  if (O.PrintStatistics) {
    Out << "optimium-run: model load took " << fmtMs(LoadMs) << " ms\n";
    Out << "optimium-run: input buffers from " << Allocator->name() << "\n";
    Out << "optimium-run: peak resident memory " << peakRssKiB() << " KiB\n";
  }
  Out.flush();
  if (O.ExitWithoutTeardown)
    exitWithoutTeardown(Out, Err, Code);
  return Code;
}

} // namespace

int runModule(const RunModuleOptions &O, std::ostream &Out, std::ostream &Err) {
  try {
    return runModuleImpl(O, Out, Err);
  } catch (const rt::Exception &E) {
    return fail(Err, E.what());
  } catch (const ToolError &E) {
    return fail(Err, E.what());
  } catch (const std::bad_alloc &) {
    return fail(Err, "out of memory");
  } catch (const std::exception &E) {
    return fail(Err, E.what());
  } catch (...) {
    return fail(Err, "unknown error");
  }
}

// ---- bundled model -----------------------------------------------------------------------------

std::string findBundledModelDir() {
  std::vector<std::string> Candidates;
  char Exe[4096];
  const ssize_t N = ::readlink("/proc/self/exe", Exe, sizeof(Exe) - 1);
  if (N > 0) {
    Exe[N] = '\0';
    std::string Dir(Exe);
    Dir = Dir.substr(0, Dir.find_last_of('/'));
    Candidates.push_back(Dir + "/../share/optimium/models/digits");
  }
#ifdef OPTIMIUM_DEFAULT_MODEL_DIR
  Candidates.push_back(OPTIMIUM_DEFAULT_MODEL_DIR);
#endif
#ifdef OPTIMIUM_SOURCE_MODEL_DIR
  Candidates.push_back(OPTIMIUM_SOURCE_MODEL_DIR);
#endif
  for (const std::string &C : Candidates)
    if (isDirectory(C) && fileExists(C + "/model.onnx") && fileExists(C + "/test_images.npy") &&
        fileExists(C + "/test_labels.npy"))
      return C;
  return "";
}

int runBundledModel(const std::string &Dir, std::ostream &Out, std::ostream &Err) {
  try {
    rt::AutoInit Init;
    const HostArray Images = readNpyFile(Dir + "/test_images.npy");
    const HostArray Labels = readNpyFile(Dir + "/test_labels.npy");
    if (Images.Type != ElementType::F32 || Images.Dims.size() != 4 || Images.Dims[1] != 1 || Images.Dims[2] != 8 ||
        Images.Dims[3] != 8)
      return fail(Err, Dir + "/test_images.npy: expected Nx1x8x8xf32, got " + formatShapeAndType(Images.Dims, Images.Type));
    const size_t Count = static_cast<size_t>(Images.Dims[0]);
    if (Labels.Type != ElementType::I64 || dimsElementCount(Labels.Dims) != Count)
      return fail(Err, Dir + "/test_labels.npy: expected " + std::to_string(Count) + " i64 labels, got " +
                           formatShapeAndType(Labels.Dims, Labels.Type));

    rt::Model Model = rt::loadModel(Dir + "/model.onnx");
    rt::InferRequest Request = Model.createRequest();
    rt::Tensor Input = rt::tensor(ElementType::F32, rt::TensorShape::fromDims({1, 1, 8, 8}));
    const size_t ImageBytes = 64 * sizeof(float);
    std::vector<double> Latencies;
    Latencies.reserve(Count);
    size_t Correct = 0;
    for (size_t I = 0; I < Count; ++I) {
      std::memcpy(Input.data(), Images.Bytes.data() + I * ImageBytes, ImageBytes);
      const auto T0 = std::chrono::steady_clock::now();
      Request.infer(rt::ArrayRef<rt::Tensor>(Input));
      Request.wait();
      Latencies.push_back(msSince(T0));
      const HostArray Probs = fromTensor(Request.getOutput(0));
      const size_t N = dimsElementCount(Probs.Dims);
      size_t Best = 0;
      for (size_t K = 1; K < N; ++K)
        if (elementAsDouble(Probs, K) > elementAsDouble(Probs, Best))
          Best = K;
      int64_t Label;
      std::memcpy(&Label, Labels.Bytes.data() + I * 8, 8);
      Correct += static_cast<int64_t>(Best) == Label;
    }
    std::vector<double> Sorted = Latencies;
    std::sort(Sorted.begin(), Sorted.end());
    const double Total = std::accumulate(Latencies.begin(), Latencies.end(), 0.0);
    const double Median = Sorted.empty() ? 0
                          : Sorted.size() % 2 ? Sorted[Sorted.size() / 2]
                                              : (Sorted[Sorted.size() / 2 - 1] + Sorted[Sorted.size() / 2]) / 2;
    const double Mean = Count ? Total / Count : 0;
    char Acc[32];
    std::snprintf(Acc, sizeof(Acc), "%.2f", Count ? 100.0 * Correct / Count : 0.0);
    Out << "bundled model " << Dir << ": " << Count << " held-out digits, accuracy " << Acc << "% (" << Correct << "/"
        << Count << "), latency median " << fmtMs(Median) << " ms mean " << fmtMs(Mean) << " ms, total "
        << fmtMs(Total) << " ms\n";
    Out << "(run optimium-run --help to run your own model)\n";
    Out.flush();
    return 0;
  } catch (const std::exception &E) {
    return fail(Err, E.what());
  } catch (...) {
    return fail(Err, "unknown error");
  }
}

int runModuleMain(int Argc, char **Argv) {
  RunModuleOptions O;
  try {
    O = parseFlags(Argc, Argv);
  } catch (const std::exception &E) {
    return fail(std::cerr, E.what());
  }
  O.ExitWithoutTeardown = true;
  return runModule(O, std::cout, std::cerr);
}

} // namespace tools
} // namespace optimium
