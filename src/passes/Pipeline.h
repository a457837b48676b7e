// The load-time pass pipeline as one table: every graph rewrite the loader runs, in order, with
// when it runs. exec/ModelLoader calls runPassPipeline after shape inference; tests and tools read
// passPipeline() to run or list the passes. To add a pass: write it in its own file here (the
// contract it shares with a kernel goes in ir/FusedOps.h), add a row below in Pipeline.cpp at the
// place its ordering notes say, and give it a unit test in tests/passes/ that runs it on a graph.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/CpuFeatures.h"
#include "ir/Graph.h"

namespace optimium {
namespace runtime {
namespace detail {

/// When a pass pays off. A gated pass makes a fused op whose fast kernel needs these CPU features;
/// elsewhere only the fused op's reference kernel would run it, slower than the unfused ops.
enum class PassGate {
  Always,
  Avx512Fma,  ///< the AVX-512 strip / small direct convolution kernels
  Avx2Fma,    ///< a kernel with AVX-512 and AVX2 + FMA variants: AVX2 + FMA or better
  Avx2Tier,   ///< AVX2 + FMA without AVX-512 F + FMA: where the AVX2 kernels run
  NotAvx2Tier, ///< every other CPU (AVX-512, or no AVX2 + FMA)
  Int8Exact,  ///< an exact int8 kernel (QLinearConv, MatMulIntegerToFloat): AVX-512 VNNI or AVX2
  Avx512Bf16, ///< the bf16 dot-product GEMM (AVX512_BF16 with AVX-512 F/BW/DQ/VL)
};

/// A load option a pass needs on top of its gate (an opt-in mode changes results, so it never
/// runs by default).
enum class PassOptIn {
  None,
  Bf16Compute, ///< PipelineOptions::Bf16Compute (ComputePrecision::BFloat16)
};

struct PassInfo {
  const char *Name;
  size_t (*Run)(Graph &G); ///< returns the number of rewrites
  PassGate Gate;
  /// Fuses ops, hiding the values between them: skipped when every intermediate must stay
  /// readable (EnableMemoryOptimization off, IntermediateSavePath set).
  bool Fusion;
  const char *Order; ///< why it sits where it sits
  PassOptIn OptIn = PassOptIn::None;
};

/// The pipeline, in the order the passes run.
const std::vector<PassInfo> &passPipeline();

/// Whether a gated pass runs on a CPU with these features.
bool passGateOpen(PassGate Gate, const CpuFeatures &Cpu);

struct PipelineOptions {
  /// Every intermediate must stay readable: no fusion runs.
  bool KeepIntermediates = false;
  /// The CPU the fused ops will run on (cpuFeatures() at load).
  CpuFeatures Cpu;
  /// Run gated passes on any CPU (tests: the fused op's reference kernel runs where the fast one
  /// does not, so the rewrite can be checked on every host).
  bool IgnoreGates = false;
  /// ComputePrecision::BFloat16: the matrix products may round their operands to bfloat16.
  bool Bf16Compute = false;
};

/// One pass's effect, as runPassPipeline reports it.
struct PassRun {
  const char *Name;
  size_t Rewrites;
};

/// Runs the table on G; returns what each pass that ran did (in order).
std::vector<PassRun> runPassPipeline(Graph &G, const PipelineOptions &O);

/// While alive, every runPassPipeline in the process ignores the CPU gates (a test hook: loading
/// a model through the public API then gives the fused graph on any host). Not thread-safe
/// against concurrent loads that expect the gates; meant for single-threaded test setup.
class ScopedIgnorePassGates {
public:
  ScopedIgnorePassGates();
  ~ScopedIgnorePassGates();
  ScopedIgnorePassGates(const ScopedIgnorePassGates &) = delete;
  ScopedIgnorePassGates &operator=(const ScopedIgnorePassGates &) = delete;

private:
  bool Prev;
};

} // namespace detail
} // namespace runtime
} // namespace optimium
