// The ONNX nodes the XNNPACK extension runs: which ones it claims (planNode), the XNNPACK operators
// made for them once at load (weights packed, OIHW -> OHWI), and one run (NCHW <-> NHWC at the
// node's boundaries). Only the C ABI of Optimium/Runtime/Extension/Backend.h is seen from here.
#pragma once

#include <Optimium/Runtime/Extension/Backend.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <xnnpack.h>

namespace optimium {
namespace xnnpack_ext {

enum class OpKind { Conv, FullyConnected, MaxPool, AveragePool, GlobalAveragePool, Binary, Unary, Softmax, QConv, QFullyConnected };
/// XNNPACK's 8-bit operator families: qs8 (int8, weights symmetric, one scale), qc8 (int8 weights
/// with a scale per output channel), qu8 (uint8 with zero points, one scale).
enum class QuantKind { QS8, QC8, QU8 };
enum class BinaryOp { Add, Sub, Mul, Div, Max, Min };
enum class UnaryOp { Clamp, LeakyRelu, Sigmoid, HardSwish, Elu, Abs, Neg, Floor, Ceil, Sqrt, Round };

/// Everything a node's kernel needs, read from the node at load (shapes are static: the extension
/// claims only nodes whose shapes are known at load).
struct NodePlan {
  OpKind Kind = OpKind::Unary;
  std::string Label; ///< "Conv 'name'", for messages.
  std::vector<int64_t> InDims, OutDims; ///< input 0 / output 0, checked at every run
  // Conv and pools: NCHW geometry.
  size_t N = 0, C = 0, H = 0, W = 0, OC = 0, OH = 0, OW = 0;
  uint32_t KH = 1, KW = 1, SH = 1, SW = 1, DH = 1, DW = 1, PT = 0, PL = 0, PB = 0, PR = 0, Groups = 1;
  float OutMin = -std::numeric_limits<float>::infinity(), OutMax = std::numeric_limits<float>::infinity();
  /// The float nodes' element type: float16 (XNNPACK's f16 operators, weights handed over in
  /// float16) when true, else float32. Weights, Bias, ConstA and ConstB point to that type.
  bool Half = false;
  const void *Weights = nullptr; ///< Conv: OIHW; FullyConnected: [K, N] or [N, K]
  const void *Bias = nullptr;
  size_t BiasCount = 0;
  bool Residual = false; ///< Conv: input 3 is added before the activation (passes/FuseConvResidual)
  // FullyConnected (Gemm, MatMul): out[Batch, OutCh] = in[Batch, InCh] x W + bias.
  size_t Batch = 0, InCh = 0, OutCh = 0;
  bool WeightsKxN = false; ///< W stored [InCh, OutCh] (XNN_FLAG_TRANSPOSE_WEIGHTS), else [OutCh, InCh]
  float Alpha = 1.0f, Beta = 1.0f;
  // Binary: numpy broadcasting of A and B.
  BinaryOp Binary = BinaryOp::Add;
  std::vector<size_t> ShapeA, ShapeB;
  const void *ConstA = nullptr, *ConstB = nullptr;
  // Unary / Softmax.
  UnaryOp Unary = UnaryOp::Clamp;
  float P0 = 0.0f, P1 = 0.0f;
  size_t Count = 0, Rows = 0, Channels = 0;
  // QConv (QLinearConv), QFullyConnected (QLinearMatMul): 8-bit tensors, the geometry above.
  QuantKind Quant = QuantKind::QS8;
  float XScale = 1.0f, YScale = 1.0f;
  int32_t XZp = 0, WZp = 0, YZp = 0, QMin = -128, QMax = 127; ///< QMin/QMax: the (fused) clamp
  std::vector<float> WScales;                                 ///< one, or one per output channel (qc8)
  const void *QWeights = nullptr;                              ///< int8 or uint8, as Weights
  const int32_t *QBias = nullptr;
};

/// Whether the extension runs Node; when not, Why says why (logged at debug level).
bool planNode(const OptRtHostApi &Host, const OptRtNode &Node, NodePlan &Plan, std::string &Why);

/// Scratch buffers for the layout changes, reused across runs (one per concurrent run).
class ScratchPool {
public:
  struct Set {
    std::vector<float> In, Out, Res;
    std::vector<uint8_t> In8, Out8;   ///< the 8-bit layout changes
    std::vector<uint16_t> In16, Out16; ///< the float16 layout changes
  };
  std::unique_ptr<Set> take();
  void give(std::unique_ptr<Set> S);

private:
  std::mutex M;
  std::vector<std::unique_ptr<Set>> Free;
};

/// One node's XNNPACK operators. XNNPACK operators keep their setup state, so runs of one kernel
/// from concurrent requests take turns (Lock).
struct Kernel {
  NodePlan Plan;
  xnn_operator_t Op = nullptr;
  xnn_operator_t ResidualAdd = nullptr; ///< Conv with a fused residual: conv, then this add (+ clamp)
  std::vector<float> ConstA, ConstB;    ///< padded copies of constant binary operands
  std::vector<uint16_t> ConstAH, ConstBH; ///< the same for float16 operands
  std::mutex Lock;
  ~Kernel();
};

/// Creates the operators (packs the weights). Returns OPT_RT_OK or an OPT_RT_ERROR_* code with Error.
int32_t createKernel(const OptRtHostApi &Host, const OptRtNode &Node, std::unique_ptr<Kernel> &Out, std::string &Error);

/// Runs K on bound tensors. Returns OPT_RT_OK or an OPT_RT_ERROR_* code with Error.
int32_t runKernel(Kernel &K, const OptRtTensor *Inputs, uint32_t NumInputs, const OptRtTensor *Outputs,
                  uint32_t NumOutputs, const OptRtExecContext *Ctx, ScratchPool &Scratch, std::string &Error);

/// "invalid parameter", ... for an xnn_status.
const char *statusText(xnn_status S);

} // namespace xnnpack_ext
} // namespace optimium
