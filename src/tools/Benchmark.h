// optimium-benchmark: times a model and reports load time, first inference, latency percentiles,
// peak RSS, CPU use and a per-operation table; optionally as JSON and as a Chrome trace
// (chrome://tracing, Perfetto). Written only against the public C++ API; main() (BenchmarkMain.cpp)
// only calls benchmarkMain().
//
//   optimium-benchmark MODEL [--threads=N] [--cores=0,1,..] [--scheduler=auto|exclusive|sequential|pipeline]
//                      [--input=SPEC ...] [--warmup=N] [--runs=N] [--duration=SECONDS] [--profile_runs=N]
//                      [--json[=FILE]] [--trace=FILE] [--seed=N] [--event_buffer=N]
// Flags take "--flag=value" or "--flag value" (except --json, whose file needs "="). --input uses
// optimium-run's syntax; without it, inputs are random: floats uniform in [-1, 1), integers and
// booleans 0, symbolic dims 1. Latency and CPU use come from the measured runs, which are not
// profiled: InferRequest::run() (infer() to wait() returning) timed on the calling thread. Average
// CPU is process CPU time / wall time over them, in percent of one core (so up to threads x 100%).
// The per-op table and the trace come from a second, profiled pass (InferRequest::profile(), whose
// latency is reported beside): when its event buffer fills, later runs are not recorded and the
// report says how many events dropped.
#pragma once

#include <cstdint>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "Optimium/Runtime.h"

namespace optimium {
namespace tools {

struct BenchmarkOptions {
  std::string Module;
  int Threads = 0;
  std::string Device; ///< --device (optimium-run's names); empty = every local device
  runtime::ComputePrecision Precision = runtime::ComputePrecision::Float32;
  std::vector<int> Cores;
  runtime::SchedulerType Scheduler = runtime::SchedulerType::Auto;
  int SpinIterations = runtime::kDefaultSpinIterations;
  std::vector<std::string> Inputs;
  int WarmUp = 5;
  int Runs = 0;          ///< 0: 50 unless --duration is given.
  double Duration = 0;   ///< Seconds of measured runs (0 = no limit); stops at Runs if also given.
  bool Json = false;     ///< JSON report: to JsonFile, or instead of the text on stdout when empty.
  std::string JsonFile;
  std::string TraceFile; ///< Chrome trace-event JSON of the measured runs.
  uint64_t Seed = 1;
  size_t EventBuffer = 0; ///< Event capacity of the profile (0 = kDefaultEventBufferSize).
  int ProfileRuns = -1;   ///< Runs of the profiled pass; -1: as many as measured, at most 1000; 0: none.
  bool Help = false;
};

/// Parses the command line (argv[0] is the program name). ToolError with a one-line message.
BenchmarkOptions parseBenchmarkFlags(int Argc, const char *const *Argv);
std::string benchmarkUsage();

/// A random tensor for a model input, by the one rule the tools and the Python package
/// (optimium.runtime._random_inputs) share: floats (f32, f64, f16, bf16) uniform in [-1, 1);
/// integers and booleans 0 (valid as indices, sizes and masks); symbolic dims 1. ToolError for
/// String and Undefined inputs. tests/random_input_rule.txt holds the rule both are tested against.
runtime::Tensor randomInput(const runtime::TensorInfo &Info, std::mt19937_64 &Rng);

/// Per-run latency and its statistics (milliseconds).
struct LatencyStats {
  size_t Count = 0;
  double Min = 0, Median = 0, Mean = 0, P90 = 0, P99 = 0, Max = 0;
};
LatencyStats computeLatencyStats(std::vector<double> Ms);

/// Chrome trace-event JSON ("traceEvents"; ts/dur in microseconds from the first event; pid 1,
/// tid = the event's ThreadID). Layer/Launch/DeviceExecute/Copy/Wait are complete "X" slices on
/// their thread; runs (cat "model") and queue waits (cat "queue") are async "b"/"e" pairs with the
/// run index as id, since they may cross threads. Begin/end pairs as computeProfileDurations().
std::string chromeTraceJson(runtime::ArrayRef<runtime::ProfileEvent> Events,
                            runtime::ArrayRef<runtime::OpInfo> Ops,
                            runtime::ArrayRef<runtime::TensorInfo> Tensors);

/// Runs the benchmark; returns the exit code (0 ok, 1 error). Never throws: errors print as one
/// line "optimium-benchmark: error: <message>" on Err.
int runBenchmark(const BenchmarkOptions &Options, std::ostream &Out, std::ostream &Err);
/// parseBenchmarkFlags + runBenchmark with std::cout / std::cerr.
int benchmarkMain(int Argc, char **Argv);

} // namespace tools
} // namespace optimium
