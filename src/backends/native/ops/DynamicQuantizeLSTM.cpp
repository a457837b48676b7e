// DynamicQuantizeLSTM (com.microsoft, what onnxruntime's quantize_dynamic makes of an LSTM): an
// LSTM whose W [D, input, 4H] and R [D, H, 4H] are int8/uint8 with per-direction (or per-direction
// per-row) scales and zero points - note the transposed layout against ONNX LSTM's [D, 4H, input].
// The kernel dequantizes the weights (once, when they are constants) into LSTM's layout and runs
// the shared LSTM time loop (common/RnnCommon.h) in float32. ONNX Runtime also quantizes the
// activations (x and h) to uint8 per step, so its outputs carry that rounding; ours do not.
#include "backends/native/ops/common/RnnCommon.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

// Inputs: X W R B sequence_lens initial_h initial_c P W_scale W_zero_point R_scale R_zero_point.
constexpr size_t kW = 1, kR = 2, kWScale = 8, kWZp = 9, kRScale = 10, kRZp = 11;

bool isInt8Type(ElementType T) { return T == ElementType::I8 || T == ElementType::U8; }

/// The float ValueInfo an LSTM would see for a quantized weight [D, K, 4H]: [D, 4H, K].
ValueInfo floatWeightInfo(const ValueInfo &Q, ElementType Float) {
  ValueInfo F;
  F.Present = true;
  F.Type = Float;
  if (Q.Shape.getRank() == 3)
    F.Shape = TensorShape({Q.Shape[0], Q.Shape[2], Q.Shape[1]});
  else
    F.Shape = Q.Shape;
  return F;
}

Status inferDynamicQuantizeLstm(ShapeContext &Ctx) {
  if (Ctx.Inputs.size() < 12 || !Ctx.hasInput(kWScale) || !Ctx.hasInput(kWZp) || !Ctx.hasInput(kRScale) ||
      !Ctx.hasInput(kRZp))
    return Ctx.error(ErrorCode::Model, "needs W_scale, W_zero_point, R_scale and R_zero_point (inputs 8-11)");
  for (size_t I : {kW, kR, kWZp, kRZp})
    if (!isInt8Type(Ctx.Inputs[I].Type))
      return Ctx.error(ErrorCode::Type, "input ", I, " must be int8 or uint8, got ", toString(Ctx.Inputs[I].Type));
  if (Ctx.Inputs[kW].Type != Ctx.Inputs[kWZp].Type || Ctx.Inputs[kR].Type != Ctx.Inputs[kRZp].Type)
    return Ctx.error(ErrorCode::Type, "a weight and its zero point must have the same element type");
  for (size_t I : {kWScale, kRScale})
    if (Ctx.Inputs[I].Type != ElementType::F32)
      return Ctx.error(ErrorCode::Type, "input ", I, " (scale) must be float32, got ", toString(Ctx.Inputs[I].Type));
  // The LSTM this is: float weights in ONNX's layout, the first 8 inputs.
  ShapeContext L(Ctx.N);
  L.Inputs.assign(Ctx.Inputs.begin(), Ctx.Inputs.begin() + 8);
  L.Inputs[kW] = floatWeightInfo(Ctx.Inputs[kW], Ctx.Inputs[0].Type);
  L.Inputs[kR] = floatWeightInfo(Ctx.Inputs[kR], Ctx.Inputs[0].Type);
  L.Outputs = Ctx.Outputs;
  RETURN_IF_ERROR(inferRnn(L, RnnKind::Lstm));
  Ctx.Outputs = std::move(L.Outputs);
  return Status::ok();
}

/// Q [D, K, Rows] -> float [D, Rows, K] with (q - zp) * scale; scale/zp hold D or D * Rows values.
Result<std::vector<float>> dequantizeWeights(const TensorView &Q, const TensorView &Scale, const TensorView &Zp,
                                             const char *Name) {
  if (Q.rank() != 3)
    return runError("dynamicquantizelstm", Name, " must be 3-D, got ", joinInts(Q.Dims));
  const int64_t D = Q.Dims[0], K = Q.Dims[1], Rows = Q.Dims[2];
  const int64_t NScale = static_cast<int64_t>(Scale.elementCount()), NZp = static_cast<int64_t>(Zp.elementCount());
  const bool PerRow = NScale == D * Rows && Rows != 1;
  if ((NScale != D && NScale != D * Rows) || NZp != NScale)
    return runError("dynamicquantizelstm", Name, " scale / zero point must have ", D, " or ", D * Rows,
                    " values, got ", NScale, " / ", NZp);
  const bool Signed = Q.Type == ElementType::I8;
  const auto qAt = [&](const TensorView &V, int64_t I) -> int32_t {
    return Signed ? V.data<const int8_t>()[I] : V.data<const uint8_t>()[I];
  };
  std::vector<float> Out(static_cast<size_t>(D * K * Rows));
  const float *S = Scale.data<const float>();
  for (int64_t Dir = 0; Dir < D; ++Dir)
    for (int64_t Row = 0; Row < Rows; ++Row) {
      const int64_t P = PerRow ? Dir * Rows + Row : Dir;
      const float Sc = S[P];
      const int32_t Z = qAt(Zp, P);
      float *Dst = Out.data() + (Dir * Rows + Row) * K;
      for (int64_t Kk = 0; Kk < K; ++Kk)
        Dst[Kk] = static_cast<float>(qAt(Q, (Dir * K + Kk) * Rows + Row) - Z) * Sc;
    }
  return Out;
}

/// A read-only float view of dequantized weights in LSTM's layout (runRnn only reads inputs).
TensorView floatView(const std::vector<float> &Data, const TensorView &Q) {
  TensorView V;
  V.Type = ElementType::F32;
  V.Dims = {Q.Dims[0], Q.Dims[2], Q.Dims[1]};
  V.Data = const_cast<float *>(Data.data());
  return V;
}

class DynamicQuantizeLstmKernel : public Kernel {
public:
  DynamicQuantizeLstmKernel(RnnAttrs A, bool Par, std::vector<float> W, std::vector<float> R)
      : A(std::move(A)), Par(Par), ConstW(std::move(W)), ConstR(std::move(R)) {}

  Status run(const KernelContext &Ctx) const override {
    if (Ctx.Inputs.size() < 12)
      return runError("dynamicquantizelstm", "expected 12 inputs, got ", Ctx.Inputs.size());
    std::vector<float> W, R; // dequantized per run only when the weights are not constants
    if (ConstW.empty()) {
      ASSIGN_OR_RETURN(W, dequantizeWeights(Ctx.Inputs[kW], Ctx.Inputs[kWScale], Ctx.Inputs[kWZp], "W"));
      ASSIGN_OR_RETURN(R, dequantizeWeights(Ctx.Inputs[kR], Ctx.Inputs[kRScale], Ctx.Inputs[kRZp], "R"));
    }
    std::vector<TensorView> In(Ctx.Inputs.begin(), Ctx.Inputs.begin() + 8);
    In[kW] = floatView(ConstW.empty() ? W : ConstW, Ctx.Inputs[kW]);
    In[kR] = floatView(ConstR.empty() ? R : ConstR, Ctx.Inputs[kR]);
    return runRnn(A, KernelContext{In, Ctx.Outputs, Ctx.Par}, Par);
  }

private:
  RnnAttrs A;
  bool Par;
  std::vector<float> ConstW, ConstR; ///< dequantized at creation when all weight inputs are constant
};

TensorView constTensorView(const ConstData &C) {
  TensorView V;
  V.Type = C.Type;
  V.Dims = C.Dims;
  V.Data = const_cast<void *>(C.Data);
  return V;
}

OpSchema dynamicQuantizeLstmSchema() {
  OpSchema S;
  S.Domain = "com.microsoft";
  S.OpType = "DynamicQuantizeLSTM";
  S.MinInputs = 3; // X W R; the scales and zero points (8-11) are checked by inference
  S.MaxInputs = 12;
  S.MinOutputs = 0;
  S.MaxOutputs = 3;
  S.Infer = inferDynamicQuantizeLstm;
  return S;
}

OpKernels dynamicQuantizeLstmKernels() {
  OpKernels K;
  K.Domain = "com.microsoft";
  K.OpType = "DynamicQuantizeLSTM";
  for (bool Par : {false, true}) {
    const std::string Name = std::string("f32_dynamicquantizelstm") + (Par ? "__parallel" : "__ref");
    K.Variants.push_back(
        {Name, Par ? 10 : 0, [](const KernelCreateInfo &I) { return inputIs(I, 0, ElementType::F32); },
         [Par](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
           ASSIGN_OR_RETURN(RnnAttrs A, parseRnnAttrs(I.N, RnnKind::Lstm));
           std::vector<float> W, R;
           bool AllConst = true;
           for (size_t In : {kW, kR, kWScale, kWZp, kRScale, kRZp})
             AllConst &= In < I.Inputs.size() && I.Inputs[In].Const && I.Inputs[In].Const->Data;
           if (AllConst) {
             ASSIGN_OR_RETURN(W, dequantizeWeights(constTensorView(*I.Inputs[kW].Const),
                                                   constTensorView(*I.Inputs[kWScale].Const),
                                                   constTensorView(*I.Inputs[kWZp].Const), "W"));
             ASSIGN_OR_RETURN(R, dequantizeWeights(constTensorView(*I.Inputs[kR].Const),
                                                   constTensorView(*I.Inputs[kRScale].Const),
                                                   constTensorView(*I.Inputs[kRZp].Const), "R"));
           }
           return makeKernel<DynamicQuantizeLstmKernel>(std::move(A), Par, std::move(W), std::move(R));
         }});
  }
  K.TestCases = [] {
    const auto X = [](std::vector<int64_t> D) { return tensorInput(std::move(D)); };
    const auto Q = [](std::vector<int64_t> D, ElementType T, bool Const) {
      TestInput I = Const ? constInput(std::move(D), T) : tensorInput(std::move(D), T);
      I.Low = T == ElementType::U8 ? 0 : -128, I.High = T == ElementType::U8 ? 255 : 127;
      return I;
    };
    const auto F = [](std::vector<int64_t> D, std::vector<double> V) { return valuesInput(D, V, ElementType::F32, true); };
    const auto Z = [](std::vector<int64_t> D, std::vector<double> V, ElementType T) { return valuesInput(D, V, T, true); };
    const ElementType I8 = ElementType::I8, U8 = ElementType::U8;
    const int64_t H = 3, In = 4;
    std::vector<double> RowScales, RowZps;
    for (int64_t R = 0; R < 2 * 4 * H; ++R) {
      RowScales.push_back(0.002 + 0.001 * static_cast<double>(R % 5));
      RowZps.push_back(static_cast<double>(R % 3) - 1);
    }
    return std::vector<OpTestCase>{
        // quantize_dynamic's shape: bidirectional, int8 weights, per-direction scale/zero point.
        testCase("bidirectional_s8", {X({5, 2, In}), Q({2, In, 4 * H}, I8, true), Q({2, H, 4 * H}, I8, true),
                                      X({2, 8 * H}), omittedInput(), X({2, 2, H}), X({2, 2, H}), omittedInput(),
                                      F({2}, {0.01, 0.02}), Z({2}, {0, 3}, I8), F({2}, {0.015, 0.005}),
                                      Z({2}, {-2, 0}, I8)},
                 {{"direction", attrString("bidirectional")}, {"hidden_size", attrInt(H)}}, 1e-4),
        // uint8 weights with per-row scales and zero points, weights not constant.
        testCase("forward_u8_per_row", {X({3, 1, In}), Q({1, In, 4 * H}, U8, false), Q({1, H, 4 * H}, U8, false),
                                        omittedInput(), omittedInput(), omittedInput(), omittedInput(),
                                        omittedInput(),
                                        F({1, 4 * H}, std::vector<double>(RowScales.begin(), RowScales.begin() + 4 * H)),
                                        Z({1, 4 * H}, {128, 127, 129, 128, 130, 126, 128, 128, 131, 125, 128, 128}, U8),
                                        F({1, 4 * H}, std::vector<double>(RowScales.begin() + 4 * H, RowScales.end())),
                                        Z({1, 4 * H}, {128, 128, 127, 129, 128, 128, 126, 130, 128, 128, 128, 128}, U8)},
                 {{"hidden_size", attrInt(H)}}, 1e-4),
    };
  };
  return K;
}

OPT_REGISTER_HEAVY_SCHEMA(DynamicQuantizeLSTM, dynamicQuantizeLstmSchema());
OPT_REGISTER_KERNELS(DynamicQuantizeLSTM, dynamicQuantizeLstmKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
