// The pass table (see Pipeline.h). Each row's Order says what it must come before or after.
#include "passes/Pipeline.h"

#include <atomic>

#include "core/Log.h"
#include "passes/Bf16Compute.h"
#include "passes/Bf16Weights.h"
#include "passes/FuseAttention.h"
#include "passes/FuseConvActivation.h"
#include "passes/FuseConvMaxPool.h"
#include "passes/FuseConvResidual.h"
#include "passes/FuseDynamicQuantMatMul.h"
#include "passes/FuseGelu.h"
#include "passes/FuseLayerNormChannels.h"
#include "passes/FuseMatMulBias.h"
#include "passes/FusePointwiseDepthwise.h"
#include "passes/FuseQdq.h"
#include "passes/FuseSilu.h"
#include "passes/FuseSkipLayerNorm.h"
#include "passes/FuseSqueezeExcitation.h"
#include "passes/FuseTransposeMatMul.h"
#include "passes/FuseTransposeScaleAdd.h"
#include "passes/RemoveFoldedNodes.h"

namespace optimium {
namespace runtime {
namespace detail {

namespace {
std::atomic<bool> IgnoreGatesGlobally{false};
} // namespace

const std::vector<PassInfo> &passPipeline() {
  static const std::vector<PassInfo> Table = {
      {"RemoveFoldedNodes", &removeFoldedNodes, PassGate::Always, false,
       "first: nodes whose outputs shape inference folded to constants go before anything matches on them"},
      {"FuseLayerNormChannels", &fuseLayerNormChannels, PassGate::Always, true,
       "independent of the others: Transpose -> LayerNormalization -> Transpose, no Conv or MatMul"},
      {"FuseLayerNormChannelsLast", &fuseLayerNormChannelsLast, PassGate::Avx2Fma, true,
       "after FuseLayerNormChannels, which takes the chains that transpose back; its fast kernel is AVX2"},
      {"FuseTransposeScaleAdd", &fuseTransposeScaleAdd, PassGate::Avx2Fma, true,
       "before FuseConvResidual, which would take an Add whose residual a Conv writes; its fast kernel is AVX2"},
      {"FuseConvResidual", &fuseConvResidual, PassGate::Always, true,
       "before FuseConvActivation: a Relu after the residual Add then folds in too"},
      {"FuseConvActivation", &fuseConvActivation, PassGate::Always, true, "after FuseConvResidual"},
      {"FuseSqueezeExcitation", &fuseSqueezeExcitation, PassGate::Avx2Fma, true,
       "after FuseConvActivation: the squeeze-excitation Convs carry their activations; its fast kernels are "
       "AVX-512 and AVX2 + FMA"},
      {"FuseSilu", &fuseSilu, PassGate::Avx2Fma, true,
       "after FuseConvActivation (which takes the SiLUs after Convs); Swish's fast kernels are AVX-512 and AVX2 + FMA"},
      {"FusePointwiseDepthwise", &fusePointwiseDepthwise, PassGate::NotAvx2Tier, true,
       "after FuseConvActivation: the fused node carries the 1x1 Conv's clamp"},
      {"FusePointwiseDepthwiseAvx2", &fusePointwiseDepthwiseAvx2, PassGate::Avx2Tier, true,
       "in FusePointwiseDepthwise's place on the AVX2 tier: small planes from 32+ channels stay unfused there"},
      {"FuseDepthwisePointwise", &fuseDepthwisePointwise, PassGate::Avx512Fma, true,
       "after FusePointwiseDepthwise (which takes the expand halves first)"},
      {"FuseConvMaxPool", &fuseConvMaxPool, PassGate::Avx512Fma, true,
       "after FuseConvActivation (the clamp rides along); its kernel is Conv's AVX-512 small one"},
      {"FuseQuantizedConv", &fuseQuantizedConv, PassGate::Int8Exact, true, "QDQ -> QLinearConv"},
      {"FuseQuantizedAdd", &fuseQuantizedAdd, PassGate::Int8Exact, true, "after FuseQuantizedConv"},
      {"FuseQuantizedMaxPool", &fuseQuantizedMaxPool, PassGate::Int8Exact, true, "after FuseQuantizedConv"},
      {"FuseDynamicQuantMatMul", &fuseDynamicQuantMatMul, PassGate::Int8Exact, true,
       "DynamicQuantizeLinear -> MatMulInteger -> scale into MatMulIntegerToFloat"},
      {"FoldConstantDequantize", &foldConstantDequantize, PassGate::Int8Exact, true,
       "after the QDQ fusions, which read the DequantizeLinear nodes it folds"},
      {"UseBf16Weights", &useBf16Weights, PassGate::Always, true,
       "before the MatMul fusions: they take its bf16-weight MatMuls too"},
      {"FuseMatMulBias", &fuseMatMulBias, PassGate::Always, true, "after UseBf16Weights"},
      {"FuseGelu", &fuseGelu, PassGate::Always, true, "before FuseMatMulGelu, which reads the Gelu it makes"},
      {"FuseMatMulGelu", &fuseMatMulGelu, PassGate::Always, true, "after FuseMatMulBias and FuseGelu"},
      {"FuseSiblingMatMuls", &fuseSiblingMatMuls, PassGate::Always, true,
       "after the bias / Gelu fusions, so merged MatMuls carry them"},
      {"FuseAttention", &fuseAttention, PassGate::Always, true, "after the MatMul fusions (Q/K/V projections)"},
      {"FuseSkipLayerNorm", &fuseSkipLayerNorm, PassGate::Always, true, "after FuseAttention"},
      {"FuseTransposeMatMul", &fuseTransposeMatMul, PassGate::Always, true,
       "the last fusion: a Transpose left before a MatMul after the other fusions folds into it"},
      {"UseBf16Compute", &useBf16Compute, PassGate::Avx512Bf16, false,
       "after every fusion (their patterns match nodes without internal attributes); not a fusion: "
       "the graph keeps its values",
       PassOptIn::Bf16Compute},
  };
  return Table;
}

bool passGateOpen(PassGate Gate, const CpuFeatures &Cpu) {
  switch (Gate) {
  case PassGate::Always: return true;
  case PassGate::Avx512Fma: return Cpu.avx512Fma();
  // The kernels' AVX2 variants need AVX2 and FMA; a CPU with AVX-512 F has both (hiding avx2 through
  // OPTIMIUM_RT_CPU_DISABLE hides avx512f too, so the gate closes there as well).
  case PassGate::Avx2Fma: return Cpu.avx2Fma();
  case PassGate::Avx2Tier: return Cpu.avx2Fma() && !Cpu.avx512Fma();
  case PassGate::NotAvx2Tier: return !(Cpu.avx2Fma() && !Cpu.avx512Fma());
  // VPDPBUSD on AVX-512 VNNI, else VPMADDWD on AVX2 (backends/native/ops/QLinearConv.cpp,
  // MatMulIntegerToFloat.cpp); both exact, unlike VPMADDUBSW's saturating int16 pair sums.
  case PassGate::Int8Exact: return Cpu.avx512Vnni() || Cpu.AVX2;
  case PassGate::Avx512Bf16: return Cpu.avx512Core() && Cpu.AVX512BF16 && Cpu.FMA;
  }
  return false;
}

std::vector<PassRun> runPassPipeline(Graph &G, const PipelineOptions &O) {
  const bool IgnoreGates = O.IgnoreGates || IgnoreGatesGlobally.load();
  std::vector<PassRun> Runs;
  for (const PassInfo &P : passPipeline()) {
    if (P.Fusion && O.KeepIntermediates)
      continue;
    if (P.OptIn == PassOptIn::Bf16Compute && !O.Bf16Compute)
      continue;
    if (!IgnoreGates && !passGateOpen(P.Gate, O.Cpu)) {
      if (P.OptIn == PassOptIn::Bf16Compute) {
        static std::atomic<bool> Logged{false};
        if (!Logged.exchange(true))
          OPT_LOG(Info, "bfloat16 compute requested, but this CPU has no AVX512_BF16: running float32");
      }
      continue;
    }
    const size_t N = P.Run(G);
    Runs.push_back({P.Name, N});
    if (N)
      OPT_LOG(Debug, "pass ", P.Name, ": ", N, " rewrite(s)");
  }
  return Runs;
}

ScopedIgnorePassGates::ScopedIgnorePassGates() : Prev(IgnoreGatesGlobally.exchange(true)) {}
ScopedIgnorePassGates::~ScopedIgnorePassGates() { IgnoreGatesGlobally.store(Prev); }

} // namespace detail
} // namespace runtime
} // namespace optimium
