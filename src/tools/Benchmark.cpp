// optimium-benchmark library: flag parsing, random inputs, the profile run, statistics, the text /
// JSON reports and the Chrome trace. See Benchmark.h.
#include "tools/Benchmark.h"

#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <limits>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <set>
#include <sstream>
#include <unordered_map>

#include "tools/Devices.h"
#include "tools/Npy.h"
#include "tools/Flagfile.h"
#include "tools/TextUtil.h"
#include "tools/InputSpec.h"

namespace optimium {
namespace tools {

namespace rt = runtime;
using rt::ElementType;
using rt::ProfileEvent;
using Kind = rt::ProfileEventKind;
using TimePoint = std::chrono::high_resolution_clock::time_point;

namespace {

const char *const Tool = "optimium-benchmark";

int fail(std::ostream &Err, std::string Message) {
  for (char &C : Message)
    if (C == '\n' || C == '\r')
      C = ' ';
  Err << Tool << ": error: " << Message << std::endl;
  return 1;
}

int64_t parseInt(const std::string &Flag, const std::string &V, int64_t Min) {
  char *End = nullptr;
  errno = 0;
  const long long X = std::strtoll(V.c_str(), &End, 10);
  if (V.empty() || *End || errno || X < Min)
    throw ToolError(Flag + ": expected an integer >= " + std::to_string(Min) + ", got '" + V + "'");
  return X;
}

double parseSeconds(const std::string &Flag, const std::string &V) {
  char *End = nullptr;
  const double X = std::strtod(V.c_str(), &End);
  if (V.empty() || *End || !(X > 0) || !std::isfinite(X))
    throw ToolError(Flag + ": expected a positive number of seconds, got '" + V + "'");
  return X;
}

std::string jsonEscape(const std::string &S) {
  std::string O;
  for (char C : S) {
    switch (C) {
    case '"': O += "\\\""; break;
    case '\\': O += "\\\\"; break;
    case '\n': O += "\\n"; break;
    case '\t': O += "\\t"; break;
    default:
      if (static_cast<unsigned char>(C) < 0x20) {
        char B[8];
        std::snprintf(B, sizeof(B), "\\u%04x", C);
        O += B;
      } else {
        O += C;
      }
    }
  }
  return O;
}

std::string num(double V, int Digits = 3) {
  char B[64];
  std::snprintf(B, sizeof(B), "%.*f", Digits, std::isfinite(V) ? V : 0.0);
  return B;
}

double msSince(std::chrono::steady_clock::time_point T0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - T0).count();
}

size_t peakRssKiB() {
  std::ifstream F("/proc/self/status");
  std::string Line;
  while (std::getline(F, Line))
    if (Line.compare(0, 6, "VmHWM:") == 0)
      return static_cast<size_t>(std::strtoull(Line.c_str() + 6, nullptr, 10));
  return 0;
}

double cpuSeconds() {
  rusage U;
  getrusage(RUSAGE_SELF, &U);
  return static_cast<double>(U.ru_utime.tv_sec + U.ru_stime.tv_sec) +
         static_cast<double>(U.ru_utime.tv_usec + U.ru_stime.tv_usec) * 1e-6;
}

} // namespace

// The rule is documented in Benchmark.h; python/optimium/runtime/_random_inputs.py follows it too.
rt::Tensor randomInput(const rt::TensorInfo &Info, std::mt19937_64 &Rng) {
  std::vector<int64_t> Dims;
  for (const rt::Expr &D : Info.Shape)
    Dims.push_back(D.isConst() ? D.value() : 1);
  if (Info.Type == ElementType::String || Info.Type == ElementType::Undefined)
    throw ToolError("input '" + Info.Name + "' has element type " + rt::toString(Info.Type) +
                    ", which random inputs do not support; give --input");
  rt::Tensor T = rt::tensor(Info.Type, rt::TensorShape::fromDims(Dims));
  const size_t N = dimsElementCount(Dims);
  std::uniform_real_distribution<float> U(-1.0f, 1.0f);
  if (N && T.data())
    std::memset(T.data(), 0, N * elementByteSize(Info.Type));
  switch (Info.Type) {
  case ElementType::F32: {
    float *P = static_cast<float *>(T.data());
    for (size_t I = 0; I < N; ++I)
      P[I] = U(Rng);
    break;
  }
  case ElementType::F64: {
    double *P = static_cast<double *>(T.data());
    for (size_t I = 0; I < N; ++I)
      P[I] = U(Rng);
    break;
  }
  case ElementType::F16: {
    rt::float16 *P = static_cast<rt::float16 *>(T.data());
    for (size_t I = 0; I < N; ++I)
      P[I] = rt::float16(U(Rng));
    break;
  }
  case ElementType::BF16: {
    rt::bfloat16 *P = static_cast<rt::bfloat16 *>(T.data());
    for (size_t I = 0; I < N; ++I)
      P[I] = rt::bfloat16(U(Rng));
    break;
  }
  default:
    break; // integers and booleans: zeros (valid as indices, sizes and masks)
  }
  return T;
}

namespace {

struct Interval {
  Kind Begin;
  int32_t Operation, TensorID;
  uint32_t ThreadID;
  TimePoint Start, End;
};

} // namespace

// ---- flags ---------------------------------------------------------------------------------------

std::string benchmarkUsage() {
  return "usage: optimium-benchmark MODEL [flags]\n"
         "  MODEL                  .onnx file or model folder (or --module=MODEL)\n"
         "  --threads=N            worker threads (0 = the runtime's default)\n"
         "  --device=NAME          place the model on this device (optimium-run's names: native, xnnpack, ...);\n"
         "                         the native CPU runs what a CPU-platform device lacks\n"
         "  --cores=0,1,...        pin workers to these cores\n"
         "  --compute_precision=P  float32 (default) or bf16 (bfloat16 matrix products, float32 accumulation)\n"
         "  --scheduler=NAME       auto | exclusive | sequential | pipeline\n"
         "  --spin_iterations=N    idle workers' spin before parking: N rounds (default 1000), 0 park at once,\n"
         "                         < 0 spin while a request runs\n"
         "  --input=SPEC           an input in optimium-run's syntax (repeat per input); default: random\n"
         "  --warmup=N             warm-up runs (default 5)\n"
         "  --runs=N               measured runs (default 50, or unlimited with --duration)\n"
         "  --duration=SECONDS     measure for this long (stops at --runs if also given)\n"
         "  --profile_runs=N       runs of the profiled pass behind the per-op table and the trace (default: as many\n"
         "                         as measured, at most 1000; 0: none). The latency figures come from the measured\n"
         "                         runs, which are not profiled\n"
         "  --json[=FILE]          JSON report to FILE, or to stdout instead of the text\n"
         "  --trace=FILE           Chrome trace-event JSON of the profiled runs (chrome://tracing, Perfetto)\n"
         "  --seed=N               seed of the random inputs (default 1)\n"
         "  --event_buffer=N       profile event capacity (default 4194304; raise it for very many runs)\n"
         "  --help                 this text\n";
}

BenchmarkOptions parseBenchmarkFlags(int Argc, const char *const *Argv) {
  BenchmarkOptions O;
  std::vector<std::string> Args(Argv + (Argc > 0 ? 1 : 0), Argv + std::max(Argc, 0));
  Args = expandFlagfiles(Args);
  for (size_t I = 0; I < Args.size(); ++I) {
    const std::string &A = Args[I];
    if (A.size() < 2 || A.compare(0, 2, "--") != 0) {
      if (!O.Module.empty())
        throw ToolError("unexpected argument '" + A + "' (the model is already '" + O.Module + "')");
      O.Module = A;
      continue;
    }
    const size_t Eq = A.find('=');
    const std::string Name = A.substr(0, Eq);
    const bool HasValue = Eq != std::string::npos;
    auto Value = [&]() -> std::string {
      if (HasValue)
        return A.substr(Eq + 1);
      if (I + 1 >= Args.size())
        throw ToolError(Name + ": missing value");
      return Args[++I];
    };
    if (Name == "--help" || Name == "-h") {
      O.Help = true;
    } else if (Name == "--module") {
      O.Module = Value();
    } else if (Name == "--device") {
      O.Device = Value();
    } else if (Name == "--threads") {
      O.Threads = static_cast<int>(parseInt(Name, Value(), 0));
    } else if (Name == "--compute_precision") {
      const std::string V = Value();
      if (!parseComputePrecision(V, O.Precision))
        throw ToolError("--compute_precision=" + V + ": expected float32 or bf16");
    } else if (Name == "--cores") {
      O.Cores.clear();
      std::stringstream SS(Value());
      std::string Tok;
      while (std::getline(SS, Tok, ','))
        O.Cores.push_back(static_cast<int>(parseInt(Name, Tok, 0)));
      if (O.Cores.empty())
        throw ToolError("--cores: expected a comma-separated list of core numbers");
    } else if (Name == "--scheduler") {
      const std::string V = Value();
      if (V == "auto")
        O.Scheduler = rt::SchedulerType::Auto;
      else if (V == "exclusive")
        O.Scheduler = rt::SchedulerType::Exclusive;
      else if (V == "sequential")
        O.Scheduler = rt::SchedulerType::Sequential;
      else if (V == "pipeline")
        O.Scheduler = rt::SchedulerType::Pipeline;
      else
        throw ToolError("--scheduler: expected auto, exclusive, sequential or pipeline, got '" + V + "'");
    } else if (Name == "--spin_iterations") {
      const int64_t Spin = parseInt(Name, Value(), std::numeric_limits<int>::min());
      if (Spin > std::numeric_limits<int>::max())
        throw ToolError(Name + ": " + std::to_string(Spin) + " is out of range");
      O.SpinIterations = static_cast<int>(Spin);
    } else if (Name == "--input") {
      O.Inputs.push_back(Value());
    } else if (Name == "--warmup") {
      O.WarmUp = static_cast<int>(parseInt(Name, Value(), 0));
    } else if (Name == "--runs") {
      O.Runs = static_cast<int>(parseInt(Name, Value(), 1));
    } else if (Name == "--duration") {
      O.Duration = parseSeconds(Name, Value());
    } else if (Name == "--json") {
      O.Json = true;
      O.JsonFile = HasValue ? A.substr(Eq + 1) : "";
      if (O.JsonFile == "-")
        O.JsonFile.clear();
    } else if (Name == "--trace") {
      O.TraceFile = Value();
      if (O.TraceFile.empty())
        throw ToolError("--trace: missing file name");
    } else if (Name == "--profile_runs") {
      O.ProfileRuns = static_cast<int>(parseInt(Name, Value(), 0));
    } else if (Name == "--event_buffer") {
      O.EventBuffer = static_cast<size_t>(parseInt(Name, Value(), 1));
    } else if (Name == "--seed") {
      O.Seed = static_cast<uint64_t>(parseInt(Name, Value(), 0));
    } else {
      throw ToolError("unknown flag '" + Name + "' (see --help)");
    }
  }
  if (O.Module.empty() && !O.Help)
    throw ToolError("no model given (usage: optimium-benchmark MODEL [flags]; see --help)");
  if (O.ProfileRuns == 0 && !O.TraceFile.empty())
    throw ToolError("--trace needs a profiled pass (--profile_runs=0 turns it off)");
  return O;
}

// ---- statistics and trace ---------------------------------------------------------------------------

LatencyStats computeLatencyStats(std::vector<double> Ms) {
  LatencyStats S;
  S.Count = Ms.size();
  if (Ms.empty())
    return S;
  std::sort(Ms.begin(), Ms.end());
  auto Pct = [&](double P) {
    // Nearest rank.
    const size_t Rank = static_cast<size_t>(std::ceil(P / 100.0 * static_cast<double>(Ms.size())));
    return Ms[std::min(Ms.size() - 1, Rank ? Rank - 1 : 0)];
  };
  S.Min = Ms.front();
  S.Max = Ms.back();
  S.Median = Ms.size() % 2 ? Ms[Ms.size() / 2] : (Ms[Ms.size() / 2 - 1] + Ms[Ms.size() / 2]) / 2;
  S.Mean = std::accumulate(Ms.begin(), Ms.end(), 0.0) / static_cast<double>(Ms.size());
  S.P90 = Pct(90);
  S.P99 = Pct(99);
  return S;
}

namespace {
/// S as a JSON object of milliseconds (min, median, mean, p90, p99, max).
std::string latencyJson(const LatencyStats &S) {
  return "{\"min\": " + num(S.Min, 4) + ", \"median\": " + num(S.Median, 4) + ", \"mean\": " + num(S.Mean, 4) +
         ", \"p90\": " + num(S.P90, 4) + ", \"p99\": " + num(S.P99, 4) + ", \"max\": " + num(S.Max, 4) + "}";
}

/// Begin/end pairs: same-thread kinds by nesting, Model/Queue in order.
std::vector<Interval> pairEvents(rt::ArrayRef<ProfileEvent> Events) {
  std::vector<Interval> Out;
  std::unordered_map<uint32_t, std::vector<const ProfileEvent *>> Open;
  std::vector<const ProfileEvent *> Models, Queues;
  size_t NextModel = 0, NextQueue = 0;
  for (const ProfileEvent &E : Events) {
    const bool Begin = static_cast<int>(E.Kind) % 2 == 0;
    const Kind BeginKind = Begin ? E.Kind : static_cast<Kind>(static_cast<int>(E.Kind) - 1);
    if (BeginKind == Kind::ModelExecuteBegin || BeginKind == Kind::QueueBegin) {
      auto &List = BeginKind == Kind::ModelExecuteBegin ? Models : Queues;
      size_t &Next = BeginKind == Kind::ModelExecuteBegin ? NextModel : NextQueue;
      if (Begin)
        List.push_back(&E);
      else if (Next < List.size()) {
        const ProfileEvent &B = *List[Next++];
        Out.push_back({BeginKind, static_cast<int32_t>(Next - 1), -1, B.ThreadID, B.TimeStamp, E.TimeStamp});
      }
      continue;
    }
    auto &Stack = Open[E.ThreadID];
    if (Begin) {
      Stack.push_back(&E);
      continue;
    }
    for (size_t I = Stack.size(); I-- > 0;) {
      const ProfileEvent &B = *Stack[I];
      if (B.Kind == BeginKind && B.Operation == E.Operation && B.TensorID == E.TensorID) {
        Out.push_back({BeginKind, B.Operation, B.TensorID, B.ThreadID, B.TimeStamp, E.TimeStamp});
        Stack.erase(Stack.begin() + static_cast<std::ptrdiff_t>(I));
        break;
      }
    }
  }
  return Out;
}

std::string opLabel(rt::ArrayRef<rt::OpInfo> Ops, int32_t Op) {
  if (Op < 0 || static_cast<size_t>(Op) >= Ops.size())
    return "#" + std::to_string(Op);
  const rt::OpInfo &I = Ops[static_cast<size_t>(Op)];
  return I.Name.empty() ? I.Type + "#" + std::to_string(Op) : I.Name;
}

} // namespace

std::string chromeTraceJson(rt::ArrayRef<ProfileEvent> Events, rt::ArrayRef<rt::OpInfo> Ops,
                            rt::ArrayRef<rt::TensorInfo> Tensors) {
  std::vector<Interval> Pairs = pairEvents(Events);
  std::sort(Pairs.begin(), Pairs.end(), [](const Interval &A, const Interval &B) { return A.Start < B.Start; });
  TimePoint Origin;
  if (!Events.empty()) {
    Origin = Events[0].TimeStamp;
    for (const ProfileEvent &E : Events)
      Origin = std::min(Origin, E.TimeStamp);
  }
  auto Us = [&](TimePoint T) {
    return std::chrono::duration<double, std::micro>(T - Origin).count();
  };
  std::ostringstream OS;
  OS << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  OS << "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,\"args\":{\"name\":\"optimium-runtime\"}}";
  std::set<uint32_t> Threads;
  for (const ProfileEvent &E : Events)
    Threads.insert(E.ThreadID);
  for (uint32_t T : Threads)
    OS << ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":" << T
       << ",\"args\":{\"name\":\"runtime thread " << T << "\"}}";
  for (const Interval &P : Pairs) {
    std::string Name, Cat, Args;
    switch (P.Begin) {
    case Kind::ModelExecuteBegin: Name = "run " + std::to_string(P.Operation); Cat = "model"; break;
    case Kind::QueueBegin: Name = "queue " + std::to_string(P.Operation); Cat = "queue"; break;
    case Kind::WaitBegin: Name = "wait"; Cat = "wait"; break;
    case Kind::LayerExecuteBegin: Name = opLabel(Ops, P.Operation); Cat = "layer"; break;
    case Kind::LaunchBegin: Name = "launch " + opLabel(Ops, P.Operation); Cat = "launch"; break;
    case Kind::DeviceExecuteBegin: Name = "range " + opLabel(Ops, P.Operation); Cat = "device"; break;
    case Kind::CopyBegin:
      Name = "copy " + (P.TensorID >= 0 && static_cast<size_t>(P.TensorID) < Tensors.size()
                            ? Tensors[static_cast<size_t>(P.TensorID)].Name
                            : "#" + std::to_string(P.TensorID));
      Cat = "copy";
      break;
    default: continue;
    }
    if (P.Begin != Kind::ModelExecuteBegin && P.Begin != Kind::QueueBegin && P.Operation >= 0) {
      Args = "\"op\":" + std::to_string(P.Operation);
      if (static_cast<size_t>(P.Operation) < Ops.size())
        Args += ",\"type\":\"" + jsonEscape(Ops[static_cast<size_t>(P.Operation)].Type) + "\"";
    }
    if (P.Begin == Kind::ModelExecuteBegin || P.Begin == Kind::QueueBegin) {
      // Runs and queue waits may end on another thread and overlap other slices of their thread:
      // async slices (b/e with an id), which trace viewers draw on their own tracks.
      const std::string Common = "{\"name\":\"" + jsonEscape(Name) + "\",\"cat\":\"" + Cat + "\",\"id\":" +
                                 std::to_string(P.Operation) + ",\"pid\":1,\"tid\":" + std::to_string(P.ThreadID);
      OS << ",\n" << Common << ",\"ph\":\"b\",\"ts\":" << num(Us(P.Start)) << "}";
      OS << ",\n" << Common << ",\"ph\":\"e\",\"ts\":" << num(std::max(Us(P.Start), Us(P.End))) << "}";
      continue;
    }
    // Same-thread kinds nest on their thread: complete slices.
    OS << ",\n{\"name\":\"" << jsonEscape(Name) << "\",\"cat\":\"" << Cat << "\",\"ph\":\"X\",\"ts\":"
       << num(Us(P.Start)) << ",\"dur\":" << num(std::max(0.0, Us(P.End) - Us(P.Start))) << ",\"pid\":1,\"tid\":"
       << P.ThreadID << ",\"args\":{" << Args << "}}";
  }
  OS << "\n]}\n";
  return OS.str();
}

// ---- the run --------------------------------------------------------------------------------------

namespace {

int runBenchmarkImpl(const BenchmarkOptions &O, std::ostream &Out, std::ostream &Err) {
  if (O.Help) {
    Out << benchmarkUsage();
    return 0;
  }
  std::vector<HostArray> Parsed; // --input specs, parsed against the model's inputs once it is loaded
  rt::AutoInit Init;
  rt::ModelLoadOptions LoadOptions;
  LoadOptions.ThreadCount = O.Threads;
  if (!O.Device.empty()) {
    LoadOptions.Devices = withCpuFallback(resolveDevice(O.Device, "", "auto"));
    LoadOptions.Strict = true;
  }
  LoadOptions.Precision = O.Precision;
  LoadOptions.Cores = O.Cores;
  LoadOptions.Scheduler = O.Scheduler;
  LoadOptions.SpinIterations = O.SpinIterations;
  const auto LoadStart = std::chrono::steady_clock::now();
  rt::Model Model = rt::loadModel(O.Module, LoadOptions);
  const double LoadMs = msSince(LoadStart);

  std::vector<rt::TensorInfo> InputInfos;
  for (size_t I = 0; I < Model.getInputNames().size(); ++I)
    InputInfos.push_back(Model.getInputTensorInfo(I));
  std::vector<rt::Tensor> Inputs;
  if (!O.Inputs.empty()) {
    Parsed = parseInputSpecs(O.Inputs, InputInfos, "--input");
    validateInputs(Parsed, InputInfos);
    for (const HostArray &A : Parsed)
      Inputs.push_back(toTensor(A));
  } else {
    std::mt19937_64 Rng(O.Seed);
    for (const rt::TensorInfo &Info : InputInfos)
      Inputs.push_back(randomInput(Info, Rng));
  }

  rt::InferRequest Request = Model.createRequest();
  const auto FirstStart = std::chrono::steady_clock::now();
  Request.infer(Inputs);
  Request.wait();
  const double FirstMs = msSince(FirstStart);

  // Warm-up, then the measured runs: unprofiled, run() timed on this thread (infer() to wait()
  // returning, as one call). The latency statistics and the CPU use come from these runs alone.
  for (int I = 0; I < O.WarmUp; ++I)
    Request.run(Inputs);
  const int MaxRuns = O.Runs > 0 ? O.Runs : (O.Duration > 0 ? std::numeric_limits<int>::max() : 50);
  std::vector<double> Latencies;
  const double Cpu0 = cpuSeconds();
  const auto Wall0 = std::chrono::steady_clock::now();
  for (int I = 0; I < MaxRuns; ++I) {
    if (I > 0 && O.Duration > 0 && msSince(Wall0) >= O.Duration * 1e3) // at least one run
      break;
    const auto T0 = std::chrono::steady_clock::now();
    Request.run(Inputs);
    Latencies.push_back(msSince(T0));
  }
  const double WallS = msSince(Wall0) / 1e3;
  const double CpuPercent = WallS > 0 ? 100.0 * (cpuSeconds() - Cpu0) / WallS : 0.0;
  const LatencyStats S = computeLatencyStats(Latencies);

  // The per-op table and the trace: a separate profiled pass (its events cost the runs a little:
  // per op four events, per parallel-for one span per thread).
  const int ProfileRuns = O.ProfileRuns >= 0 ? O.ProfileRuns : static_cast<int>(std::min<size_t>(S.Count, 1000));
  std::vector<double> ProfiledLatencies;
  std::vector<rt::LayerDuration> Layers;
  uint64_t Dropped = 0;
  if (ProfileRuns > 0) {
    rt::ProfileOptions P;
    P.WarmUp = 0; // warm from the runs above
    P.WarmUpTime = std::chrono::microseconds(0);
    P.Repeat = ProfileRuns;
    P.EventBufferSize = O.EventBuffer ? O.EventBuffer : rt::kDefaultEventBufferSize;
    Request.profile(Inputs, P);
    // Latency of a profiled run: infer() (QueueBegin) to wait() returning (WaitEnd).
    std::vector<TimePoint> Q, W;
    for (const ProfileEvent &E : Request.getProfileEvents()) {
      if (E.Kind == Kind::QueueBegin)
        Q.push_back(E.TimeStamp);
      else if (E.Kind == Kind::WaitEnd)
        W.push_back(E.TimeStamp);
    }
    for (size_t I = 0; I < std::min(Q.size(), W.size()); ++I)
      ProfiledLatencies.push_back(std::chrono::duration<double, std::milli>(W[I] - Q[I]).count());
    Layers = Request.getLayerDurations();
    Dropped = Request.getDroppedProfileEvents();
  }
  const LatencyStats PS = computeLatencyStats(ProfiledLatencies);
  rt::ArrayRef<ProfileEvent> Events = Request.getProfileEvents();
  int64_t LayerTotal = 0;
  for (const rt::LayerDuration &L : Layers)
    LayerTotal += L.TotalNs;
  const size_t Rss = peakRssKiB();

  if (!O.TraceFile.empty()) {
    std::ofstream F(O.TraceFile, std::ios::binary | std::ios::trunc);
    if (!F)
      throw ToolError(O.TraceFile + ": cannot open file for writing");
    F << chromeTraceJson(Events, Request.getModelOperations(), Request.getModelTensors());
    if (!F)
      throw ToolError(O.TraceFile + ": write failed");
  }

  std::ostringstream J;
  if (O.Json) {
    J << "{\n  \"model\": \"" << jsonEscape(O.Module) << "\",\n  \"model_name\": \"" << jsonEscape(Model.getName())
      << "\",\n  \"threads\": " << O.Threads << ",\n  \"compute_precision\": \"" << rt::toString(O.Precision)
      << "\",\n  \"scheduler\": \"" << rt::toString(O.Scheduler)
      << "\",\n  \"inputs\": \"" << (O.Inputs.empty() ? "random" : "given") << "\",\n  \"init_ms\": " << num(LoadMs)
      << ",\n  \"first_inference_ms\": " << num(FirstMs) << ",\n  \"warmup_runs\": " << O.WarmUp
      << ",\n  \"runs\": " << S.Count << ",\n  \"latency_ms\": " << latencyJson(S) << ",\n  \"peak_rss_kib\": " << Rss
      << ",\n  \"avg_cpu_percent\": " << num(CpuPercent, 1) << ",\n  \"profiled_runs\": " << PS.Count
      << ",\n  \"profiled_latency_ms\": " << latencyJson(PS) << ",\n  \"dropped_events\": " << Dropped
      << ",\n  \"ops\": [";
    for (size_t I = 0; I < Layers.size(); ++I) {
      const rt::LayerDuration &L = Layers[I];
      J << (I ? "," : "") << "\n    {\"name\": \"" << jsonEscape(L.Name) << "\", \"type\": \"" << jsonEscape(L.Type)
        << "\", \"index\": " << L.Operation << ", \"count\": " << L.Count << ", \"total_ms\": "
        << num(L.TotalNs / 1e6, 4) << ", \"mean_us\": " << num(L.MeanNs / 1e3) << ", \"min_us\": "
        << num(L.MinNs / 1e3) << ", \"max_us\": " << num(L.MaxNs / 1e3) << ", \"percent\": "
        << num(LayerTotal ? 100.0 * L.TotalNs / LayerTotal : 0.0, 2) << "}";
    }
    J << "\n  ]\n}\n";
    if (!O.JsonFile.empty()) {
      std::ofstream F(O.JsonFile, std::ios::binary | std::ios::trunc);
      if (!F || !(F << J.str()))
        throw ToolError(O.JsonFile + ": cannot write the JSON report");
    } else {
      Out << J.str();
      Out.flush();
      return 0;
    }
  }

  Out << Tool << ": " << O.Module << " (" << Model.getName() << "), " << Request.getModelOperations().size()
      << " ops, scheduler " << rt::toString(O.Scheduler) << ", threads " << (O.Threads ? std::to_string(O.Threads) : "default")
      << ", inputs " << (O.Inputs.empty() ? "random" : "given")
      << (O.Precision == rt::ComputePrecision::Float32 ? "" : ", compute bfloat16") << "\n";
  Out << "init (model load):  " << num(LoadMs) << " ms\n";
  Out << "first inference:    " << num(FirstMs) << " ms\n";
  Out << "runs:               " << S.Count << " (after " << O.WarmUp << " warm-up), not profiled\n";
  Out << "latency (ms):       min " << num(S.Min) << "  median " << num(S.Median) << "  mean " << num(S.Mean)
      << "  p90 " << num(S.P90) << "  p99 " << num(S.P99) << "  max " << num(S.Max) << "\n";
  Out << "peak RSS:           " << Rss << " KiB\n";
  Out << "average CPU:        " << num(CpuPercent, 1) << "% (of one core)\n";
  if (ProfileRuns > 0) {
    Out << "profiled runs:      " << PS.Count << ", latency (ms) min " << num(PS.Min) << "  median " << num(PS.Median)
        << "  mean " << num(PS.Mean) << "; ops " << num(PS.Count ? LayerTotal / 1e6 / static_cast<double>(PS.Count) : 0.0)
        << " ms a run\n";
    if (Dropped)
      Out << "dropped events:     " << Dropped << " (the per-op table covers the recorded runs; raise --event_buffer)\n";
    Out << "per-op time of the profiled runs (sorted by total):\n";
    char Line[512];
    std::snprintf(Line, sizeof(Line), "  %-40s %-18s %7s %11s %10s %10s %10s %6s\n", "op", "type", "count", "total ms",
                  "mean us", "min us", "max us", "%");
    Out << Line;
    for (const rt::LayerDuration &L : Layers) {
      std::string Name = L.Name.size() > 40 ? "..." + L.Name.substr(L.Name.size() - 37) : L.Name;
      std::snprintf(Line, sizeof(Line), "  %-40s %-18s %7llu %11.3f %10.2f %10.2f %10.2f %6.2f\n", Name.c_str(),
                    L.Type.substr(0, 18).c_str(), static_cast<unsigned long long>(L.Count), L.TotalNs / 1e6,
                    L.MeanNs / 1e3, L.MinNs / 1e3, L.MaxNs / 1e3, LayerTotal ? 100.0 * L.TotalNs / LayerTotal : 0.0);
      Out << Line;
    }
  }
  if (!O.TraceFile.empty())
    Out << "trace: " << O.TraceFile << "\n";
  if (O.Json)
    Out << "json: " << O.JsonFile << "\n";
  Out.flush();
  return 0;
}

} // namespace

int runBenchmark(const BenchmarkOptions &O, std::ostream &Out, std::ostream &Err) {
  try {
    return runBenchmarkImpl(O, Out, Err);
  } catch (const std::bad_alloc &) {
    return fail(Err, "out of memory");
  } catch (const std::exception &E) {
    return fail(Err, E.what());
  } catch (...) {
    return fail(Err, "unknown error");
  }
}

int benchmarkMain(int Argc, char **Argv) {
  BenchmarkOptions O;
  try {
    O = parseBenchmarkFlags(Argc, Argv);
  } catch (const std::exception &E) {
    return fail(std::cerr, E.what());
  }
  return runBenchmark(O, std::cout, std::cerr);
}

} // namespace tools
} // namespace optimium
