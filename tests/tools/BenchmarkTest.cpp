// optimium-benchmark: the library functions (flags, statistics, Chrome trace) and the CLI on
// models/digits and tests/models/*, with its --json report and --trace file parsed back.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <tuple>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tools/Benchmark.h"
#include "tools/Npy.h"
#include "ToolTestUtil.h"

namespace rt = optimium::runtime;
using namespace optimium::tools;
using nlohmann::json;
using namespace optimium_test;

namespace {

std::string dataPath(const std::string &Rel) { return std::string(OPTIMIUM_TEST_DATA_DIR) + "/" + Rel; }

std::string tempDir() {
  static std::string Dir = [] {
    char T[] = "/tmp/optimium-bench-test-XXXXXX";
    const char *D = ::mkdtemp(T);
    return std::string(D ? D : "/tmp");
  }();
  return Dir;
}

RunResult runBench(const std::vector<std::string> &Args) {
  return runProcess(OPTIMIUM_BENCHMARK_BINARY, Args, tempDir() + "/stderr.txt");
}

size_t opCount(const std::string &Model) {
  rt::AutoInit Init;
  return rt::loadModel(Model).createRequest().getModelOperations().size();
}

/// Checks a --json report; returns it.
json checkReport(const std::string &Text, size_t Runs, size_t Ops) {
  json J = json::parse(Text);
  EXPECT_EQ(J.at("runs").get<size_t>(), Runs);
  EXPECT_GT(J.at("init_ms").get<double>(), 0.0);
  EXPECT_GT(J.at("first_inference_ms").get<double>(), 0.0);
  const json &L = J.at("latency_ms");
  for (const char *K : {"min", "median", "mean", "p90", "p99", "max"})
    EXPECT_GT(L.at(K).get<double>(), 0.0) << K;
  EXPECT_LE(L.at("min").get<double>(), L.at("median").get<double>());
  EXPECT_LE(L.at("median").get<double>(), L.at("p90").get<double>());
  EXPECT_LE(L.at("p90").get<double>(), L.at("p99").get<double>());
  EXPECT_LE(L.at("p99").get<double>(), L.at("max").get<double>());
  EXPECT_GT(J.at("peak_rss_kib").get<double>(), 0.0);
  EXPECT_GE(J.at("avg_cpu_percent").get<double>(), 0.0);
  EXPECT_EQ(J.at("dropped_events").get<int>(), 0);
  // The per-op table comes from a profiled pass of as many runs, whose latency is reported apart.
  EXPECT_EQ(J.at("profiled_runs").get<size_t>(), Runs);
  const json &PL = J.at("profiled_latency_ms");
  EXPECT_GT(PL.at("min").get<double>(), 0.0);
  EXPECT_LE(PL.at("min").get<double>(), PL.at("median").get<double>());
  const json &OpsJ = J.at("ops");
  EXPECT_EQ(OpsJ.size(), Ops);
  double Prev = 1e300, Percent = 0;
  for (const json &O : OpsJ) {
    EXPECT_EQ(O.at("count").get<size_t>(), Runs);
    EXPECT_LE(O.at("total_ms").get<double>(), Prev); // sorted by total time
    Prev = O.at("total_ms").get<double>();
    Percent += O.at("percent").get<double>();
    EXPECT_FALSE(O.at("name").get<std::string>().empty());
    EXPECT_FALSE(O.at("type").get<std::string>().empty());
  }
  if (Ops) {
    EXPECT_NEAR(Percent, 100.0, 0.5);
  }
  return J;
}

const std::string Digits = dataPath("models/digits");

} // namespace

TEST(BenchmarkFlags, Forms) {
  const char *A[] = {"optimium-benchmark", "m.onnx", "--threads=2", "--cores", "0,1", "--scheduler=pipeline",
                     "--warmup", "3", "--runs=7", "--duration=1.5", "--json", "--trace", "t.json", "--seed=9",
                     "--input=2x2xf32=1"};
  BenchmarkOptions O = parseBenchmarkFlags(15, A);
  EXPECT_EQ(O.Module, "m.onnx");
  EXPECT_EQ(O.Threads, 2);
  EXPECT_EQ(O.Cores, (std::vector<int>{0, 1}));
  EXPECT_EQ(O.Scheduler, rt::SchedulerType::Pipeline);
  EXPECT_EQ(O.WarmUp, 3);
  EXPECT_EQ(O.Runs, 7);
  EXPECT_DOUBLE_EQ(O.Duration, 1.5);
  EXPECT_TRUE(O.Json);
  EXPECT_EQ(O.JsonFile, "");
  EXPECT_EQ(O.TraceFile, "t.json");
  EXPECT_EQ(O.Seed, 9u);
  EXPECT_EQ(O.Inputs, (std::vector<std::string>{"2x2xf32=1"}));
  EXPECT_EQ(O.SpinIterations, rt::kDefaultSpinIterations);
  EXPECT_EQ(O.ProfileRuns, -1); // the default: as many as measured
  const char *B[] = {"optimium-benchmark", "--module=x", "--json=r.json", "--event_buffer=1000", "--spin_iterations=-1",
                     "--profile_runs", "25"};
  O = parseBenchmarkFlags(7, B);
  EXPECT_EQ(O.ProfileRuns, 25);
  EXPECT_EQ(O.Module, "x");
  EXPECT_EQ(O.JsonFile, "r.json");
  EXPECT_EQ(O.EventBuffer, 1000u);
  EXPECT_EQ(O.SpinIterations, -1);
  for (std::vector<const char *> Bad :
       {std::vector<const char *>{"b"}, {"b", "m", "--runs=0"}, {"b", "m", "--threads=-1"}, {"b", "m", "--bogus"},
        {"b", "m", "--scheduler=fast"}, {"b", "m", "--duration=0"}, {"b", "m", "--warmup"}, {"b", "m", "n"},
        {"b", "m", "--cores=a"}, {"b", "m", "--runs=3x"}, {"b", "m", "--spin_iterations=lots"},
        {"b", "m", "--spin_iterations=99999999999"}})
    EXPECT_THROW(parseBenchmarkFlags(static_cast<int>(Bad.size()), Bad.data()), ToolError) << Bad.back();
}

// Element I of T as a double (the types the random-input rule names).
double elementAt(const rt::Tensor &T, size_t I) {
  const void *P = T.data();
  switch (T.getType()) {
  case rt::ElementType::F32: return static_cast<const float *>(P)[I];
  case rt::ElementType::F64: return static_cast<const double *>(P)[I];
  case rt::ElementType::F16: return static_cast<float>(static_cast<const rt::float16 *>(P)[I]);
  case rt::ElementType::BF16: return static_cast<float>(static_cast<const rt::bfloat16 *>(P)[I]);
  case rt::ElementType::I8: return static_cast<const int8_t *>(P)[I];
  case rt::ElementType::I16: return static_cast<const int16_t *>(P)[I];
  case rt::ElementType::I32: return static_cast<const int32_t *>(P)[I];
  case rt::ElementType::I64: return static_cast<double>(static_cast<const int64_t *>(P)[I]);
  case rt::ElementType::U8: return static_cast<const uint8_t *>(P)[I];
  case rt::ElementType::U16: return static_cast<const uint16_t *>(P)[I];
  case rt::ElementType::U32: return static_cast<const uint32_t *>(P)[I];
  case rt::ElementType::U64: return static_cast<double>(static_cast<const uint64_t *>(P)[I]);
  case rt::ElementType::Bool: return static_cast<const uint8_t *>(P)[I];
  default: ADD_FAILURE() << "no reader for " << rt::toString(T.getType()); return 0;
  }
}

// randomInput follows tests/random_input_rule.txt, the rule the Python package is tested against
// too (tests/python/test_random_inputs.py): value range per element type, symbolic dims' size.
TEST(BenchmarkRandomInputs, FollowTheSharedRule) {
  std::ifstream Rule(dataPath("tests/random_input_rule.txt"));
  ASSERT_TRUE(Rule.good());
  std::vector<rt::ElementType> Known;
  for (int T = 0; T < 64; ++T)
    Known.push_back(static_cast<rt::ElementType>(T));
  std::string Line;
  int64_t SymbolicDim = -1;
  std::vector<std::tuple<std::string, double, double>> Ranges;
  while (std::getline(Rule, Line)) {
    std::istringstream L(Line);
    std::string Name;
    if (!(L >> Name) || Name[0] == '#')
      continue;
    if (Name == "symbolic_dim") {
      L >> SymbolicDim;
      continue;
    }
    double Lo = 0, Hi = 0;
    ASSERT_TRUE(static_cast<bool>(L >> Lo >> Hi)) << Line;
    Ranges.emplace_back(Name, Lo, Hi);
  }
  ASSERT_EQ(SymbolicDim, 1);
  ASSERT_EQ(Ranges.size(), 13u);
  std::mt19937_64 Rng(7);
  for (const auto &R : Ranges) {
    const std::string &Name = std::get<0>(R);
    const double Lo = std::get<1>(R), Hi = std::get<2>(R);
    const auto It = std::find_if(Known.begin(), Known.end(), [&](rt::ElementType T) { return Name == rt::toString(T); });
    ASSERT_NE(It, Known.end()) << Name;
    rt::TensorInfo Info;
    Info.Name = "x";
    Info.Type = *It;
    Info.Shape = rt::TensorShape({rt::Expr("batch"), rt::Expr(4096)});
    const rt::Tensor T = randomInput(Info, Rng);
    ASSERT_EQ(T.getShape().getDims(), (std::vector<int64_t>{SymbolicDim, 4096})) << Name;
    double Min = 1e300, Max = -1e300;
    for (size_t I = 0; I < 4096; ++I) {
      Min = std::min(Min, elementAt(T, I));
      Max = std::max(Max, elementAt(T, I));
    }
    if (Lo == Hi) {
      EXPECT_EQ(Min, Lo) << Name;
      EXPECT_EQ(Max, Lo) << Name;
    } else { // inside [Lo, Hi] (16-bit floats may round up to Hi), and spread over it
      EXPECT_GE(Min, Lo) << Name;
      EXPECT_LE(Max, Hi) << Name;
      EXPECT_LT(Min, Lo + (Hi - Lo) * 0.01) << Name;
      EXPECT_GT(Max, Hi - (Hi - Lo) * 0.01) << Name;
    }
  }
  rt::TensorInfo Text;
  Text.Name = "s";
  Text.Type = rt::ElementType::String;
  EXPECT_THROW(randomInput(Text, Rng), ToolError);
}

TEST(BenchmarkStats, NearestRankPercentiles) {
  std::vector<double> V;
  for (int I = 100; I >= 1; --I)
    V.push_back(I);
  LatencyStats S = computeLatencyStats(V);
  EXPECT_EQ(S.Count, 100u);
  EXPECT_DOUBLE_EQ(S.Min, 1);
  EXPECT_DOUBLE_EQ(S.Max, 100);
  EXPECT_DOUBLE_EQ(S.Median, 50.5);
  EXPECT_DOUBLE_EQ(S.Mean, 50.5);
  EXPECT_DOUBLE_EQ(S.P90, 90);
  EXPECT_DOUBLE_EQ(S.P99, 99);
  EXPECT_EQ(computeLatencyStats({}).Count, 0u);
  EXPECT_DOUBLE_EQ(computeLatencyStats({3.0}).P99, 3.0);
}

TEST(BenchmarkTrace, SyntheticEvents) {
  using K = rt::ProfileEventKind;
  auto T0 = std::chrono::high_resolution_clock::now();
  auto Ev = [&](K Kind, int Us, uint32_t Thread, int32_t Op = -1) {
    rt::ProfileEvent E;
    E.Kind = Kind;
    E.TimeStamp = T0 + std::chrono::microseconds(Us);
    E.ThreadID = Thread;
    E.Operation = Op;
    return E;
  };
  std::vector<rt::ProfileEvent> E{Ev(K::QueueBegin, 0, 1),        Ev(K::QueueEnd, 2, 2),
                                  Ev(K::ModelExecuteBegin, 3, 2), Ev(K::LayerExecuteBegin, 4, 2, 0),
                                  Ev(K::LaunchBegin, 5, 2, 0),    Ev(K::DeviceExecuteBegin, 6, 3, 0),
                                  Ev(K::DeviceExecuteEnd, 9, 3, 0), Ev(K::LaunchEnd, 10, 2, 0),
                                  Ev(K::LayerExecuteEnd, 11, 2, 0), Ev(K::ModelExecuteEnd, 12, 4),
                                  Ev(K::LayerExecuteEnd, 13, 5, 7)}; // unmatched: ignored
  std::vector<rt::OpInfo> Ops(1);
  Ops[0].Name = "conv \"1\"";
  Ops[0].Type = "Conv";
  json J = json::parse(chromeTraceJson(E, Ops, {}));
  std::map<std::string, json> ByCat, AsyncBegin, AsyncEnd;
  for (const json &X : J.at("traceEvents")) {
    if (X.at("ph") == "X")
      ByCat[X.at("cat").get<std::string>()] = X;
    else if (X.at("ph") == "b")
      AsyncBegin[X.at("cat").get<std::string>()] = X;
    else if (X.at("ph") == "e")
      AsyncEnd[X.at("cat").get<std::string>()] = X;
  }
  ASSERT_EQ(ByCat.size(), 3u); // layer, launch, device
  ASSERT_EQ(AsyncBegin.size(), 2u); // model, queue (async: they cross threads)
  ASSERT_EQ(AsyncEnd.size(), 2u);
  EXPECT_EQ(AsyncBegin["model"].at("id"), AsyncEnd["model"].at("id"));
  EXPECT_DOUBLE_EQ(AsyncBegin["model"].at("ts").get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(AsyncEnd["model"].at("ts").get<double>(), 12.0);
  EXPECT_EQ(AsyncBegin["model"].at("pid").get<int>(), 1);
  EXPECT_EQ(ByCat["layer"].at("name"), "conv \"1\"");
  EXPECT_DOUBLE_EQ(ByCat["layer"].at("ts").get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(ByCat["layer"].at("dur").get<double>(), 7.0);
  EXPECT_EQ(ByCat["layer"].at("tid").get<int>(), 2);
  EXPECT_EQ(ByCat["device"].at("tid").get<int>(), 3);
  EXPECT_EQ(ByCat["layer"].at("args").at("type"), "Conv");
}

TEST(BenchmarkCli, DigitsTextReport) {
  RunResult R = runBench({Digits, "--runs=5", "--warmup=1", "--threads=2"});
  ASSERT_EQ(R.Code, 0) << R.Err;
  for (const char *S : {"init (model load):", "first inference:", "runs:               5 (after 1 warm-up), not profiled",
                        "latency (ms):", "p90", "p99", "peak RSS:", "average CPU:", "profiled runs:      5,",
                        "per-op time of the profiled runs (sorted by total):", "Conv", "Gemm"})
    EXPECT_NE(R.Out.find(S), std::string::npos) << S << "\n" << R.Out;
}

TEST(BenchmarkCli, DigitsJsonAndTraceFiles) {
  const std::string JsonFile = tempDir() + "/report.json", TraceFile = tempDir() + "/trace.json";
  const size_t Ops = opCount(Digits);
  for (const char *Sched : {"sequential", "exclusive", "pipeline"}) {
    RunResult R = runBench({Digits, "--runs=4", "--warmup=2", std::string("--scheduler=") + Sched, "--threads=2",
                            "--json=" + JsonFile, "--trace", TraceFile, "--input=@" + Digits + "/sample_input.npy"});
    ASSERT_EQ(R.Code, 0) << R.Err;
    EXPECT_NE(R.Out.find("latency (ms):"), std::string::npos); // the text report still prints
    json J = checkReport(readFile(JsonFile), 4, Ops);
    EXPECT_EQ(J.at("inputs"), "given");
    json T = json::parse(readFile(TraceFile));
    ASSERT_TRUE(T.at("traceEvents").is_array());
    size_t Layers = 0, Models = 0;
    for (const json &X : T.at("traceEvents")) {
      ASSERT_TRUE(X.contains("ph") && X.contains("pid") && X.contains("tid") && X.contains("name"));
      if (X.at("ph") == "b")
        Models += X.at("cat") == "model";
      if (X.at("ph") != "X")
        continue;
      EXPECT_GE(X.at("ts").get<double>(), 0.0);
      EXPECT_GE(X.at("dur").get<double>(), 0.0);
      Layers += X.at("cat") == "layer";
    }
    EXPECT_EQ(Layers, Ops * 4) << Sched;
    // Complete slices of one thread nest (what trace viewers require).
    std::map<int, std::vector<std::pair<double, double>>> PerThread;
    for (const json &X : T.at("traceEvents"))
      if (X.at("ph") == "X")
        PerThread[X.at("tid").get<int>()].push_back({X.at("ts").get<double>(), X.at("dur").get<double>()});
    for (auto &KV : PerThread) {
      std::stable_sort(KV.second.begin(), KV.second.end(), [](const std::pair<double, double> &A,
                                                              const std::pair<double, double> &B) {
        return A.first < B.first || (A.first == B.first && A.second > B.second);
      });
      std::vector<double> Ends;
      for (const auto &S : KV.second) {
        while (!Ends.empty() && Ends.back() <= S.first)
          Ends.pop_back();
        if (!Ends.empty()) {
          EXPECT_LE(S.first + S.second, Ends.back() + 1e-3) << Sched << " thread " << KV.first;
        }
        Ends.push_back(S.first + S.second);
      }
    }
    EXPECT_EQ(Models, 4u) << Sched;
  }
}

TEST(BenchmarkCli, JsonToStdoutAndTestModels) {
  for (const char *M : {"mlp", "cnn", "dynamic_batch", "two_inputs", "int64_input", "external_data"}) {
    const std::string Path = dataPath(std::string("tests/models/") + M + "/model.onnx");
    RunResult R = runBench({Path, "--runs=3", "--warmup=1", "--json"});
    ASSERT_EQ(R.Code, 0) << M << ": " << R.Err;
    json J = checkReport(R.Out, 3, opCount(Path)); // stdout is the JSON report alone
    EXPECT_EQ(J.at("inputs"), "random");
  }
}

TEST(BenchmarkCli, SmallEventBufferReportsDrops) {
  RunResult R = runBench({Digits, "--runs=20", "--event_buffer=200", "--json"});
  ASSERT_EQ(R.Code, 0) << R.Err;
  json J = json::parse(R.Out);
  EXPECT_GT(J.at("dropped_events").get<int>(), 0);
  EXPECT_EQ(J.at("runs").get<int>(), 20); // the measured runs record nothing
  EXPECT_GE(J.at("profiled_runs").get<int>(), 1);
  EXPECT_LT(J.at("profiled_runs").get<int>(), 20);
  R = runBench({Digits, "--runs=20", "--event_buffer=200"});
  ASSERT_EQ(R.Code, 0) << R.Err;
  EXPECT_NE(R.Out.find("dropped events:"), std::string::npos);
}

TEST(BenchmarkCli, DurationBoundsTheMeasuredRuns) {
  const auto T0 = std::chrono::steady_clock::now();
  RunResult R = runBench({Digits, "--duration=0.3", "--warmup=2", "--json"});
  ASSERT_EQ(R.Code, 0) << R.Err;
  const double S = std::chrono::duration<double>(std::chrono::steady_clock::now() - T0).count();
  EXPECT_LT(S, 20.0);
  json J = json::parse(R.Out);
  EXPECT_GE(J.at("runs").get<int>(), 1);
  // --runs caps a duration.
  R = runBench({Digits, "--duration=30", "--runs=3", "--json"});
  ASSERT_EQ(R.Code, 0) << R.Err;
  EXPECT_EQ(json::parse(R.Out).at("runs").get<int>(), 3);
}

TEST(BenchmarkCli, ProfileRunsSetTheProfiledPass) {
  // Latency comes from the unprofiled runs; --profile_runs sizes the pass behind the per-op table.
  RunResult R = runBench({Digits, "--runs=6", "--warmup=1", "--profile_runs=3", "--threads=2", "--json"});
  ASSERT_EQ(R.Code, 0) << R.Err;
  json J = json::parse(R.Out);
  EXPECT_EQ(J.at("runs").get<int>(), 6);
  EXPECT_EQ(J.at("profiled_runs").get<int>(), 3);
  EXPECT_GT(J.at("latency_ms").at("min").get<double>(), 0.0);
  ASSERT_EQ(J.at("ops").size(), opCount(Digits));
  for (const json &O : J.at("ops"))
    EXPECT_EQ(O.at("count").get<int>(), 3);
  // 0: no profiled pass, no per-op table; the latency is still reported.
  R = runBench({Digits, "--runs=4", "--profile_runs=0", "--json"});
  ASSERT_EQ(R.Code, 0) << R.Err;
  J = json::parse(R.Out);
  EXPECT_EQ(J.at("runs").get<int>(), 4);
  EXPECT_EQ(J.at("profiled_runs").get<int>(), 0);
  EXPECT_TRUE(J.at("ops").empty());
  EXPECT_GT(J.at("latency_ms").at("median").get<double>(), 0.0);
  R = runBench({Digits, "--runs=4", "--profile_runs=0"});
  ASSERT_EQ(R.Code, 0) << R.Err;
  EXPECT_NE(R.Out.find("latency (ms):"), std::string::npos);
  EXPECT_EQ(R.Out.find("per-op time"), std::string::npos) << R.Out;
}

TEST(BenchmarkCli, BadArgumentsGiveOneLineAndExitCode1) {
  const std::vector<std::vector<std::string>> Cases{
      {},
      {Digits, "--runs=0"},
      {Digits, "--bogus"},
      {Digits, "--scheduler=turbo"},
      {Digits, "--threads=x"},
      {dataPath("no/such/model.onnx")},
      {Digits, "--input=1x1x8x8xf32=@/no/such/file.bin"},
      {Digits, "--input=2x2xf32=1"},
      {dataPath("tests/models/unsupported_op/model.onnx")},
      {Digits, "--trace=/no/such/dir/trace.json", "--runs=1"},
      {Digits, "--profile_runs=-1"},
      {Digits, "--profile_runs=0", "--trace=t.json"},
  };
  for (const auto &Args : Cases) {
    RunResult R = runBench(Args);
    std::string Joined;
    for (const auto &A : Args)
      Joined += A + " ";
    EXPECT_EQ(R.Code, 1) << Joined;
    ASSERT_FALSE(R.Err.empty()) << Joined;
    EXPECT_EQ(R.Err.rfind("optimium-benchmark: error: ", 0), 0u) << R.Err;
    EXPECT_EQ(std::count(R.Err.begin(), R.Err.end(), '\n'), 1) << R.Err;
  }
  RunResult H = runBench({"--help"});
  EXPECT_EQ(H.Code, 0);
  EXPECT_NE(H.Out.find("--trace=FILE"), std::string::npos);
}
