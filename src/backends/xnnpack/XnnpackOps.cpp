// The ONNX nodes the XNNPACK extension claims and how each runs on XNNPACK's operator API
// (see XnnpackOps.h). Float32, float16 (XNNPACK's f16 operators) and 8-bit; shapes static (known at load).
#include "XnnpackOps.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

#include <Optimium/Runtime/Types/Float16.h>

#include "PoolBridge.h"

namespace optimium {
namespace xnnpack_ext {

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
/// XNNPACK reads up to XNN_EXTRA_BYTES past an input; its scratch copies carry that much more.
constexpr size_t kExtraFloats = XNN_EXTRA_BYTES / sizeof(float) + 1;

const OptRtTensorDesc *input(const OptRtNode &N, uint32_t I) {
  if (I >= N.num_inputs)
    return nullptr;
  const OptRtTensorDesc *D = OPT_RT_TENSOR_DESC_AT(N.inputs, I);
  return D->present ? D : nullptr;
}
const OptRtTensorDesc *output(const OptRtNode &N, uint32_t I) {
  if (I >= N.num_outputs)
    return nullptr;
  const OptRtTensorDesc *D = OPT_RT_TENSOR_DESC_AT(N.outputs, I);
  return D->present ? D : nullptr;
}

/// Float32 with every dimension known at load.
bool staticF32(const OptRtTensorDesc *D) {
  if (!D || D->type != OPT_RT_ELEMENT_F32)
    return false;
  for (int32_t I = 0; I < D->rank; ++I)
    if (D->dims[I] < 0)
      return false;
  return true;
}
bool constF32(const OptRtTensorDesc *D) { return staticF32(D) && D->const_data != nullptr; }
/// Of the node's float type T (float32, or float16 for the f16 operators), every dimension known.
bool staticT(int32_t T, const OptRtTensorDesc *D) {
  if (!D || D->type != T)
    return false;
  for (int32_t I = 0; I < D->rank; ++I)
    if (D->dims[I] < 0)
      return false;
  return true;
}
bool constT(int32_t T, const OptRtTensorDesc *D) { return staticT(T, D) && D->const_data != nullptr; }
int32_t floatType(const NodePlan &P) { return P.Half ? OPT_RT_ELEMENT_F16 : OPT_RT_ELEMENT_F32; }

/// IEEE binary16 <-> float32 (round to nearest even), for the few float16 constants the extension
/// reads or rescales (Clip bounds, a Gemm's alpha and beta): the public header's conversions.
float halfToFloat(uint16_t H) { return runtime::float16::toFloat(H); }
uint16_t floatToHalf(float F) { return runtime::float16::fromFloat(F); }
/// A float constant of the node's type, as float32.
float readFloat(const NodePlan &P, const void *Data, size_t I) {
  return P.Half ? halfToFloat(static_cast<const uint16_t *>(Data)[I]) : static_cast<const float *>(Data)[I];
}

size_t countOf(const OptRtTensorDesc *D) {
  size_t C = 1;
  for (int32_t I = 0; I < D->rank; ++I)
    C *= static_cast<size_t>(D->dims[I]);
  return C;
}
std::vector<int64_t> dimsOf(const OptRtTensorDesc *D) { return std::vector<int64_t>(D->dims, D->dims + D->rank); }

std::string dimsText(const int64_t *Dims, int32_t Rank) {
  std::ostringstream OS;
  OS << '[';
  for (int32_t I = 0; I < Rank; ++I)
    OS << (I ? "," : "") << Dims[I];
  OS << ']';
  return OS.str();
}

/// A node's attributes through the host API.
class Attrs {
public:
  Attrs(const OptRtHostApi &H, const OptRtNode &N) : H(H), Node(N.host_node) {}
  /// Every attribute the node carries is in Allowed (the fusion passes add internal ones this
  /// extension must not ignore). False also when the host cannot list them.
  bool only(std::initializer_list<const char *> Allowed, std::string &Why) const {
    if (H.struct_size < offsetof(OptRtHostApi, get_attr_name) + sizeof(H.get_attr_name) || !H.get_attr_name) {
      Why = "the runtime cannot list node attributes (OptRtHostApi::get_attr_name)";
      return false;
    }
    const char *Name = nullptr;
    for (size_t I = 0; H.get_attr_name(Node, I, &Name) == 0; ++I) {
      bool Known = false;
      for (const char *A : Allowed)
        Known |= std::strcmp(A, Name) == 0;
      if (!Known) {
        Why = std::string("attribute '") + Name + "' is not supported";
        return false;
      }
    }
    return true;
  }
  int64_t i(const char *Name, int64_t Default) const {
    int64_t V = Default;
    return H.get_attr_int(Node, Name, &V) == 0 ? V : Default;
  }
  float f(const char *Name, float Default) const {
    float V = Default;
    return H.get_attr_float(Node, Name, &V) == 0 ? V : Default;
  }
  bool has(const char *Name) const {
    const char *N = nullptr;
    for (size_t I = 0; H.get_attr_name && H.get_attr_name(Node, I, &N) == 0; ++I)
      if (std::strcmp(N, Name) == 0)
        return true;
    return false;
  }
  std::string s(const char *Name, const char *Default) const {
    const char *P = nullptr;
    size_t Len = 0;
    return H.get_attr_string(Node, Name, &P, &Len) == 0 ? std::string(P, Len) : std::string(Default);
  }
  /// Ints of Name (Default when absent); false when present with another count than Count.
  bool ints(const char *Name, size_t Count, std::vector<int64_t> &Out, int64_t Default) const {
    const int64_t *P = nullptr;
    size_t N = 0;
    if (H.get_attr_ints(Node, Name, &P, &N) != 0) {
      Out.assign(Count, Default);
      return true;
    }
    if (N != Count)
      return false;
    Out.assign(P, P + N);
    return true;
  }

private:
  const OptRtHostApi &H;
  const void *Node;
};

bool fail(std::string &Why, const std::string &Message) {
  Why = Message;
  return false;
}

/// The fused activation a pass put on a Conv (passes/FuseConvActivation: a clamp only here).
void readClamp(const Attrs &A, NodePlan &P) {
  P.OutMin = A.f("optimium.act_min", -kInf);
  P.OutMax = A.f("optimium.act_max", kInf);
}

/// Window geometry shared by Conv and the pools: strides, dilations, pads (explicit or auto_pad),
/// checked against the output size shape inference computed.
bool planWindow(const Attrs &A, NodePlan &P, bool Dilations, bool CeilPads, std::string &Why) {
  std::vector<int64_t> S, D, Pads;
  if (!A.ints("strides", 2, S, 1) || !A.ints("pads", 4, Pads, 0) || (Dilations && !A.ints("dilations", 2, D, 1)))
    return fail(Why, "strides, dilations or pads are not 2-D");
  if (!Dilations)
    D = {1, 1};
  for (int64_t V : S)
    if (V < 1)
      return fail(Why, "strides below 1");
  for (int64_t V : D)
    if (V < 1)
      return fail(Why, "dilations below 1");
  P.SH = static_cast<uint32_t>(S[0]), P.SW = static_cast<uint32_t>(S[1]);
  P.DH = static_cast<uint32_t>(D[0]), P.DW = static_cast<uint32_t>(D[1]);
  const int64_t EffH = (static_cast<int64_t>(P.KH) - 1) * P.DH + 1, EffW = (static_cast<int64_t>(P.KW) - 1) * P.DW + 1;
  const std::string AutoPad = A.s("auto_pad", "NOTSET");
  if (AutoPad == "SAME_UPPER" || AutoPad == "SAME_LOWER") {
    const int64_t TotH = std::max<int64_t>(0, (static_cast<int64_t>(P.OH) - 1) * P.SH + EffH - static_cast<int64_t>(P.H));
    const int64_t TotW = std::max<int64_t>(0, (static_cast<int64_t>(P.OW) - 1) * P.SW + EffW - static_cast<int64_t>(P.W));
    const bool Upper = AutoPad == "SAME_UPPER";
    Pads = {Upper ? TotH / 2 : TotH - TotH / 2, Upper ? TotW / 2 : TotW - TotW / 2, 0, 0};
    Pads[2] = TotH - Pads[0];
    Pads[3] = TotW - Pads[1];
  } else if (AutoPad == "VALID") {
    Pads = {0, 0, 0, 0};
  } else if (AutoPad != "NOTSET") {
    return fail(Why, "auto_pad " + AutoPad);
  }
  for (int64_t V : Pads)
    if (V < 0)
      return fail(Why, "negative pads");
  P.PT = static_cast<uint32_t>(Pads[0]), P.PL = static_cast<uint32_t>(Pads[1]);
  P.PB = static_cast<uint32_t>(Pads[2]), P.PR = static_cast<uint32_t>(Pads[3]);
  // ceil_mode (pools): the extra bottom/right padding that makes floor division give that size.
  const auto Rows = [&](int64_t In, int64_t Begin, int64_t End, int64_t Eff, int64_t Stride) {
    return (In + Begin + End - Eff) / Stride + 1;
  };
  if (CeilPads) {
    const int64_t ExtraH = (static_cast<int64_t>(P.OH) - 1) * P.SH + EffH - (static_cast<int64_t>(P.H) + P.PT + P.PB);
    const int64_t ExtraW = (static_cast<int64_t>(P.OW) - 1) * P.SW + EffW - (static_cast<int64_t>(P.W) + P.PL + P.PR);
    if (ExtraH > 0)
      P.PB += static_cast<uint32_t>(ExtraH);
    if (ExtraW > 0)
      P.PR += static_cast<uint32_t>(ExtraW);
  }
  if (static_cast<int64_t>(P.H) + P.PT + P.PB < EffH || static_cast<int64_t>(P.W) + P.PL + P.PR < EffW ||
      Rows(P.H, P.PT, P.PB, EffH, P.SH) != static_cast<int64_t>(P.OH) ||
      Rows(P.W, P.PL, P.PR, EffW, P.SW) != static_cast<int64_t>(P.OW))
    return fail(Why, "the window does not give the inferred output size");
  return true;
}

/// A 2-D convolution's sizes from its NCHW input, OIHW weights and output (float or 8-bit): groups
/// dividing both channel counts, and kernel_shape (when given) equal to the weights'.
bool planConvShape(const Attrs &A, const OptRtTensorDesc *X, const OptRtTensorDesc *W, const OptRtTensorDesc *Y,
                   NodePlan &P, std::string &Why) {
  P.N = X->dims[0], P.C = X->dims[1], P.H = X->dims[2], P.W = X->dims[3];
  P.OC = W->dims[0], P.OH = Y->dims[2], P.OW = Y->dims[3];
  P.KH = static_cast<uint32_t>(W->dims[2]), P.KW = static_cast<uint32_t>(W->dims[3]);
  const int64_t G = A.i("group", 1);
  if (G < 1 || P.C % G != 0 || P.OC % G != 0 || W->dims[1] != static_cast<int64_t>(P.C / G) ||
      Y->dims[0] != static_cast<int64_t>(P.N) || Y->dims[1] != static_cast<int64_t>(P.OC) || P.N == 0)
    return fail(Why, "channels and groups do not match");
  P.Groups = static_cast<uint32_t>(G);
  std::vector<int64_t> K;
  if (!A.ints("kernel_shape", 2, K, -1) || (K[0] != -1 && (K[0] != P.KH || K[1] != P.KW)))
    return fail(Why, "kernel_shape differs from the weights");
  return true;
}

bool planConv(const OptRtHostApi &H, const OptRtNode &N, NodePlan &P, std::string &Why) {
  const Attrs A(H, N);
  if (!A.only({"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides", "optimium.act_min",
               "optimium.act_max", "optimium.residual"},
              Why))
    return false;
  const OptRtTensorDesc *X = input(N, 0), *W = input(N, 1), *B = input(N, 2), *Y = output(N, 0);
  const int32_t T = floatType(P);
  if (!staticT(T, X) || X->rank != 4 || !constT(T, W) || W->rank != 4 || !staticT(T, Y) || Y->rank != 4)
    return fail(Why, "not a 2-D float convolution with constant weights of its type and static shapes");
  P.Kind = OpKind::Conv;
  P.Residual = A.i("optimium.residual", 0) != 0;
  const OptRtTensorDesc *R = input(N, 3);
  if (P.Residual != (R != nullptr) || N.num_inputs > 4 || (R && (!staticT(T, R) || dimsOf(R) != dimsOf(Y))))
    return fail(Why, "residual input does not match the output");
  if (!planConvShape(A, X, W, Y, P, Why))
    return false;
  if (B && (!constT(T, B) || countOf(B) != P.OC))
    return fail(Why, "bias is not a constant of the output channels");
  P.Weights = W->const_data;
  P.Bias = B ? B->const_data : nullptr;
  readClamp(A, P);
  return planWindow(A, P, true, false, Why);
}

/// int8 or uint8 with every dimension known at load.
bool static8(const OptRtTensorDesc *D) {
  if (!D || (D->type != OPT_RT_ELEMENT_I8 && D->type != OPT_RT_ELEMENT_U8))
    return false;
  for (int32_t I = 0; I < D->rank; ++I)
    if (D->dims[I] < 0)
      return false;
  return true;
}

/// A constant of Type with Count (or, where AllowOne, one) elements, read as int32 / float.
bool constInts(const OptRtTensorDesc *D, int32_t Type, size_t Count, std::vector<int32_t> &Out) {
  if (!D || D->type != Type || !D->const_data || (countOf(D) != Count && countOf(D) != 1))
    return false;
  Out.resize(countOf(D));
  for (size_t I = 0; I < Out.size(); ++I)
    Out[I] = Type == OPT_RT_ELEMENT_I8 ? static_cast<const int8_t *>(D->const_data)[I]
                                       : static_cast<const uint8_t *>(D->const_data)[I];
  return true;
}
bool constScales(const OptRtTensorDesc *D, size_t Count, std::vector<float> &Out) {
  if (!constF32(D) || (countOf(D) != Count && countOf(D) != 1))
    return false;
  const float *V = static_cast<const float *>(D->const_data);
  Out.assign(V, V + countOf(D));
  for (float S : Out)
    if (!std::isnormal(S) || S <= 0.0f)
      return false;
  return true;
}

/// The 8-bit parameters shared by QLinearConv and QLinearMatMul: inputs (x, x_scale, x_zp, w,
/// w_scale, w_zp, y_scale, y_zp) at 0..7, w constant with OutCh output channels. Chooses qs8 (int8,
/// w_zp 0, one w_scale), qc8 (int8, w_zp 0, a scale per channel; if AllowPerChannel) or qu8 (uint8,
/// one w_scale and one w_zp), and reads the clamp a fused activation put on the node.
bool planQuant(const Attrs &A, const OptRtNode &N, size_t OutCh, bool AllowPerChannel, NodePlan &P, std::string &Why) {
  const OptRtTensorDesc *X = input(N, 0), *W = input(N, 3), *Y = output(N, 0);
  if (!static8(X) || !static8(Y) || !W || !W->const_data || X->type != Y->type || W->type != X->type)
    return fail(Why, "not an 8-bit op with static shapes, constant weights and one 8-bit type for input, weights "
                     "and output (XNNPACK has no mixed uint8 x int8 operator)");
  const int32_t T = X->type;
  std::vector<float> XS, YS;
  std::vector<int32_t> XZ{0}, WZ{0}, YZ{0};
  if (!constScales(input(N, 1), 1, XS) || !constScales(input(N, 4), OutCh, P.WScales) || !constScales(input(N, 6), 1, YS))
    return fail(Why, "scales are not positive normal float32 constants (one, or one per output channel for w)");
  if ((input(N, 2) && !constInts(input(N, 2), T, 1, XZ)) || (input(N, 5) && !constInts(input(N, 5), T, OutCh, WZ)) ||
      (input(N, 7) && !constInts(input(N, 7), T, 1, YZ)))
    return fail(Why, "zero points are not constants of the tensors' type");
  for (int32_t Z : WZ)
    if (Z != WZ[0])
      return fail(Why, "a zero point per output channel (XNNPACK takes one)");
  P.XScale = XS[0], P.YScale = YS[0], P.XZp = XZ[0], P.WZp = WZ[0], P.YZp = YZ[0];
  if (T == OPT_RT_ELEMENT_I8) {
    if (P.WZp != 0)
      return fail(Why, "int8 weights with a nonzero zero point (XNNPACK's int8 operators take symmetric weights)");
    P.Quant = P.WScales.size() == 1 ? QuantKind::QS8 : QuantKind::QC8;
    if (P.Quant == QuantKind::QC8 && !AllowPerChannel)
      return fail(Why, "a weight scale per output channel (XNNPACK's int8 fully connected operator takes one)");
    P.QMin = -128, P.QMax = 127;
  } else {
    if (P.WScales.size() != 1)
      return fail(Why, "uint8 weights with a scale per output channel (XNNPACK's uint8 operators take one)");
    P.Quant = QuantKind::QU8;
    P.QMin = 0, P.QMax = 255;
  }
  // XNNPACK requantizes with the float32 scale x_scale * w_scale / y_scale and refuses one of 256 or more.
  for (float WS : P.WScales)
    if (!(P.XScale * WS / P.YScale < 256.0f) || !(P.XScale * WS / P.YScale >= 1.0f / 4294967296.0f))
      return fail(Why, "a requantization scale outside XNNPACK's range [2^-32, 256)");
  // A fused activation: its bounds quantized as the QuantizeLinear the fusion removed (monotone, so
  // exact), as the native QLinearConv does.
  const int32_t Lo = P.QMin, Hi = P.QMax;
  const auto Q = [&](float V) {
    const float R = std::nearbyint(V / P.YScale) + static_cast<float>(P.YZp);
    return static_cast<int32_t>(std::min<float>(Hi, std::max<float>(Lo, R)));
  };
  const float Min = A.f("optimium.act_min", -kInf), Max = A.f("optimium.act_max", kInf);
  if (!std::isinf(Min) || Min > 0)
    P.QMin = std::max(P.QMin, Q(Min));
  if (!std::isinf(Max) || Max < 0)
    P.QMax = std::min(P.QMax, Q(Max));
  if (P.QMin >= P.QMax)
    return fail(Why, "the fused clamp leaves one output value");
  P.QWeights = W->const_data;
  return true;
}

bool planQConv(const OptRtHostApi &H, const OptRtNode &N, NodePlan &P, std::string &Why) {
  const Attrs A(H, N);
  if (!A.only({"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides", "optimium.act_min", "optimium.act_max"},
              Why))
    return false;
  const OptRtTensorDesc *X = input(N, 0), *W = input(N, 3), *B = input(N, 8), *Y = output(N, 0);
  if (!static8(X) || X->rank != 4 || !W || W->rank != 4 || !static8(Y) || Y->rank != 4 || N.num_inputs > 9)
    return fail(Why, "not a 2-D 8-bit convolution with static shapes");
  P.Kind = OpKind::QConv;
  if (!planConvShape(A, X, W, Y, P, Why))
    return false;
  if (B && (B->type != OPT_RT_ELEMENT_I32 || !B->const_data || countOf(B) != P.OC))
    return fail(Why, "bias is not an int32 constant of the output channels");
  P.QBias = B ? static_cast<const int32_t *>(B->const_data) : nullptr;
  return planQuant(A, N, P.OC, true, P, Why) && planWindow(A, P, true, false, Why);
}

bool planQMatMul(const OptRtHostApi &H, const OptRtNode &N, NodePlan &P, std::string &Why) {
  const Attrs A(H, N);
  if (!A.only({}, Why))
    return false;
  const OptRtTensorDesc *X = input(N, 0), *W = input(N, 3), *Y = output(N, 0);
  if (!static8(X) || X->rank < 2 || !W || W->rank != 2 || !static8(Y) || N.num_inputs != 8)
    return fail(Why, "not an 8-bit product with constant 2-D weights and static shapes");
  P.Kind = OpKind::QFullyConnected;
  P.InCh = X->dims[X->rank - 1], P.OutCh = W->dims[1];
  if (W->dims[0] != static_cast<int64_t>(P.InCh) || P.InCh == 0 || P.OutCh == 0)
    return fail(Why, "the weights do not match the input");
  P.Batch = countOf(X) / P.InCh;
  if (countOf(Y) != P.Batch * P.OutCh || Y->dims[Y->rank - 1] != static_cast<int64_t>(P.OutCh))
    return fail(Why, "the output does not match");
  P.WeightsKxN = true;
  return planQuant(A, N, P.OutCh, false, P, Why);
}

bool planPool(const OptRtHostApi &H, const OptRtNode &N, NodePlan &P, std::string &Why) {
  const Attrs A(H, N);
  const bool Max = std::strcmp(N.op_type, "MaxPool") == 0;
  if (Max ? !A.only({"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "storage_order", "strides"}, Why)
          : !A.only({"auto_pad", "ceil_mode", "count_include_pad", "kernel_shape", "pads", "strides"}, Why))
    return false;
  const OptRtTensorDesc *X = input(N, 0), *Y = output(N, 0);
  const int32_t T = floatType(P);
  if (!staticT(T, X) || X->rank != 4 || !staticT(T, Y) || N.num_inputs != 1 || output(N, 1))
    return fail(Why, "not a 2-D float pool with static shapes and one output");
  if (P.Half && !Max)
    return fail(Why, "this libxnnpack has no float16 average pooling");
  P.Kind = Max ? OpKind::MaxPool : OpKind::AveragePool;
  P.N = X->dims[0], P.C = X->dims[1], P.H = X->dims[2], P.W = X->dims[3];
  P.OC = P.C, P.OH = Y->dims[2], P.OW = Y->dims[3];
  std::vector<int64_t> K;
  if (!A.ints("kernel_shape", 2, K, -1) || K[0] < 1 || K[1] < 1)
    return fail(Why, "kernel_shape is not 2-D");
  P.KH = static_cast<uint32_t>(K[0]), P.KW = static_cast<uint32_t>(K[1]);
  if (P.KH * P.KW < 2)
    return fail(Why, "a 1x1 window");
  const bool Ceil = A.i("ceil_mode", 0) != 0;
  if (!planWindow(A, P, Max, Ceil, Why))
    return false;
  if (!Max && (P.PT | P.PL | P.PB | P.PR) != 0 && (A.i("count_include_pad", 0) != 0 || Ceil))
    return fail(Why, "padding counted in the average (count_include_pad or ceil_mode)");
  return true;
}

bool planGemm(const OptRtHostApi &H, const OptRtNode &N, NodePlan &P, std::string &Why) {
  const Attrs A(H, N);
  const bool IsGemm = std::strcmp(N.op_type, "Gemm") == 0;
  if (IsGemm ? !A.only({"alpha", "beta", "transA", "transB"}, Why)
             : !A.only({"optimium.fused_bias", "optimium.transpose_b"}, Why))
    return false;
  const OptRtTensorDesc *X = input(N, 0), *W = input(N, 1), *B = input(N, 2), *Y = output(N, 0);
  const int32_t T = floatType(P);
  if (!staticT(T, X) || X->rank < 2 || !constT(T, W) || W->rank != 2 || !staticT(T, Y))
    return fail(Why, "not a float product with constant 2-D weights of its type and static shapes");
  P.Kind = OpKind::FullyConnected;
  bool TransB = false;
  if (IsGemm) {
    if (X->rank != 2 || A.i("transA", 0) != 0)
      return fail(Why, "transA or a rank other than 2");
    TransB = A.i("transB", 0) != 0;
    P.Alpha = A.f("alpha", 1.0f);
    P.Beta = A.f("beta", 1.0f);
  } else {
    TransB = A.i("optimium.transpose_b", 0) != 0;
    if ((A.i("optimium.fused_bias", 0) != 0) != (B != nullptr) || N.num_inputs > 3)
      return fail(Why, "a bias input without optimium.fused_bias");
  }
  P.InCh = X->dims[X->rank - 1];
  P.OutCh = TransB ? W->dims[0] : W->dims[1];
  if ((TransB ? W->dims[1] : W->dims[0]) != static_cast<int64_t>(P.InCh) || P.InCh == 0 || P.OutCh == 0)
    return fail(Why, "the weights do not match the input");
  P.WeightsKxN = !TransB;
  P.Batch = countOf(X) / P.InCh;
  if (countOf(Y) != P.Batch * P.OutCh || Y->dims[Y->rank - 1] != static_cast<int64_t>(P.OutCh))
    return fail(Why, "the output does not match");
  if (B) {
    const size_t BC = countOf(B);
    if (!constT(T, B) || (BC != 1 && BC != P.OutCh) || (BC == P.OutCh && B->rank >= 2 && B->dims[B->rank - 1] != static_cast<int64_t>(P.OutCh)))
      return fail(Why, "the bias is not a constant broadcast along the rows");
    P.Bias = B->const_data;
    P.BiasCount = BC;
  }
  P.Weights = W->const_data;
  return true;
}

bool planBinary(const OptRtHostApi &H, const OptRtNode &N, NodePlan &P, std::string &Why) {
  static const struct {
    const char *Name;
    BinaryOp Op;
  } Ops[] = {{"Add", BinaryOp::Add}, {"Sub", BinaryOp::Sub}, {"Mul", BinaryOp::Mul},
             {"Div", BinaryOp::Div}, {"Max", BinaryOp::Max}, {"Min", BinaryOp::Min}};
  for (const auto &O : Ops)
    if (std::strcmp(O.Name, N.op_type) == 0)
      P.Binary = O.Op;
  if (!Attrs(H, N).only({}, Why))
    return false;
  if (P.Half && P.Binary != BinaryOp::Add && P.Binary != BinaryOp::Mul)
    return fail(Why, std::string("this libxnnpack has no float16 ") + N.op_type);
  const int32_t T = floatType(P);
  const OptRtTensorDesc *A = input(N, 0), *B = input(N, 1), *Y = output(N, 0);
  if (N.num_inputs != 2 || !staticT(T, A) || !staticT(T, B) || !staticT(T, Y) || A->rank > XNN_MAX_TENSOR_DIMS ||
      B->rank > XNN_MAX_TENSOR_DIMS || Y->rank > XNN_MAX_TENSOR_DIMS)
    return fail(Why, "not two static operands of the float type of rank <= 6");
  P.Kind = OpKind::Binary;
  P.ShapeA.assign(A->dims, A->dims + A->rank);
  P.ShapeB.assign(B->dims, B->dims + B->rank);
  P.ConstA = A->const_data;
  P.ConstB = B->const_data;
  P.Count = countOf(Y);
  if (P.Count == 0)
    return fail(Why, "an empty output");
  return true;
}

bool planUnary(const OptRtHostApi &H, const OptRtNode &N, NodePlan &P, std::string &Why) {
  const Attrs A(H, N);
  const std::string Op = N.op_type;
  const OptRtTensorDesc *X = input(N, 0), *Y = output(N, 0);
  const int32_t T = floatType(P);
  if (!staticT(T, X) || !staticT(T, Y) || countOf(X) != countOf(Y) || countOf(X) == 0)
    return fail(Why, "not a static, non-empty float tensor");
  // This libxnnpack's float16 unary operators: clamp, leaky relu and hardswish.
  if (P.Half && Op != "Relu" && Op != "Clip" && Op != "LeakyRelu" && Op != "HardSwish")
    return fail(Why, "this libxnnpack has no float16 " + Op);
  P.Kind = OpKind::Unary;
  P.Count = countOf(X);
  if (Op == "Relu") {
    P.Unary = UnaryOp::Clamp, P.P0 = 0.0f, P.P1 = kInf;
    return N.num_inputs == 1 && A.only({}, Why);
  }
  if (Op == "Clip") {
    P.Unary = UnaryOp::Clamp, P.P0 = -kInf, P.P1 = kInf;
    if (N.opset_version < 11) {
      P.P0 = A.f("min", -kInf), P.P1 = A.f("max", kInf);
      return A.only({"min", "max"}, Why);
    }
    for (uint32_t I = 1; I < N.num_inputs && I < 3; ++I) {
      const OptRtTensorDesc *L = input(N, I);
      if (!L)
        continue;
      if (!constT(T, L) || countOf(L) != 1)
        return fail(Why, "a bound that is not a constant scalar of the input's type");
      (I == 1 ? P.P0 : P.P1) = readFloat(P, L->const_data, 0);
    }
    if (std::isnan(P.P0) || std::isnan(P.P1) || P.P0 > P.P1)
      return fail(Why, "min above max");
    return N.num_inputs <= 3 && A.only({}, Why);
  }
  if (N.num_inputs != 1)
    return fail(Why, "more than one input");
  if (Op == "LeakyRelu") {
    P.Unary = UnaryOp::LeakyRelu, P.P0 = A.f("alpha", 0.01f);
    return A.only({"alpha"}, Why);
  }
  if (Op == "Elu") {
    P.Unary = UnaryOp::Elu, P.P0 = A.f("alpha", 1.0f);
    return A.only({"alpha"}, Why);
  }
  static const struct {
    const char *Name;
    UnaryOp Op;
  } Plain[] = {{"Sigmoid", UnaryOp::Sigmoid}, {"HardSwish", UnaryOp::HardSwish}, {"Abs", UnaryOp::Abs},
               {"Neg", UnaryOp::Neg},         {"Floor", UnaryOp::Floor},         {"Ceil", UnaryOp::Ceil},
               {"Sqrt", UnaryOp::Sqrt},       {"Round", UnaryOp::Round}};
  for (const auto &U : Plain)
    if (Op == U.Name) {
      P.Unary = U.Op;
      return A.only({}, Why);
    }
  return fail(Why, "op not supported");
}

bool planSoftmax(const OptRtHostApi &H, const OptRtNode &N, NodePlan &P, std::string &Why) {
  const Attrs A(H, N);
  if (!A.only({"axis"}, Why))
    return false;
  const OptRtTensorDesc *X = input(N, 0), *Y = output(N, 0);
  if (P.Half)
    return fail(Why, "this libxnnpack has no float16 softmax");
  if (N.num_inputs != 1 || !staticF32(X) || !staticF32(Y) || X->rank < 1 || countOf(X) == 0)
    return fail(Why, "not a static, non-empty float32 tensor");
  int64_t Axis = A.i("axis", N.opset_version < 13 ? 1 : -1);
  if (Axis < 0)
    Axis += X->rank;
  if (Axis < 0 || Axis >= X->rank)
    return fail(Why, "axis out of range");
  if (N.opset_version >= 13 && Axis != X->rank - 1)
    return fail(Why, "softmax over an axis other than the last");
  P.Kind = OpKind::Softmax;
  P.Channels = 1;
  for (int32_t D = static_cast<int32_t>(Axis); D < X->rank; ++D)
    P.Channels *= static_cast<size_t>(X->dims[D]);
  P.Rows = countOf(X) / P.Channels;
  return true;
}

// --- layout changes at the node's boundaries ---------------------------------------------------

template <typename T> struct TransposeJob {
  const T *Src;
  T *Dst;
  size_t Rows, Cols; ///< per image: Src is [Rows, Cols], Dst [Cols, Rows]
  size_t Images;
};

constexpr size_t kTile = 32;

template <typename T> void transposeRange(void *User, size_t Begin, size_t End) {
  const TransposeJob<T> &J = *static_cast<const TransposeJob<T> *>(User);
  const size_t RowTiles = (J.Rows + kTile - 1) / kTile;
  for (size_t Tl = Begin; Tl < End; ++Tl) {
    const size_t Image = Tl / RowTiles, R0 = (Tl % RowTiles) * kTile, R1 = std::min(J.Rows, R0 + kTile);
    const T *S = J.Src + Image * J.Rows * J.Cols;
    T *D = J.Dst + Image * J.Rows * J.Cols;
    for (size_t C0 = 0; C0 < J.Cols; C0 += kTile) {
      const size_t C1 = std::min(J.Cols, C0 + kTile);
      for (size_t R = R0; R < R1; ++R)
        for (size_t C = C0; C < C1; ++C)
          D[C * J.Rows + R] = S[R * J.Cols + C];
    }
  }
}

/// Per image, [Rows, Cols] -> [Cols, Rows] (NCHW -> NHWC: Rows = C, Cols = H*W), split over the pool.
template <typename T>
void transposeImages(const T *Src, T *Dst, size_t Images, size_t Rows, size_t Cols, const OptRtExecContext *Ctx) {
  TransposeJob<T> J{Src, Dst, Rows, Cols, Images};
  const size_t Tiles = Images * ((Rows + kTile - 1) / kTile);
  if (Ctx && Ctx->parallel_for && Ctx->num_threads > 1 && Rows * Cols * Images >= 16384)
    Ctx->parallel_for(Ctx->pool, Tiles, 1, &transposeRange<T>, &J);
  else
    transposeRange<T>(&J, 0, Tiles);
}

uint8_t *sized8(std::vector<uint8_t> &V, size_t Count) {
  if (V.size() < Count + XNN_EXTRA_BYTES)
    V.assign(Count + XNN_EXTRA_BYTES, 0);
  return V.data();
}

float *sized(std::vector<float> &V, size_t Count) {
  if (V.size() < Count + kExtraFloats)
    V.assign(Count + kExtraFloats, 0.0f);
  return V.data();
}

uint16_t *sized16(std::vector<uint16_t> &V, size_t Count) {
  if (V.size() < Count + XNN_EXTRA_BYTES / sizeof(uint16_t) + 1)
    V.assign(Count + XNN_EXTRA_BYTES / sizeof(uint16_t) + 1, 0);
  return V.data();
}

/// OIHW -> OHWI per group ([G, O/G, KH, KW, C/G], XNNPACK's layout; a depthwise Conv is its
/// G x 1 x KH x KW x 1 case), for weights of any element type.
template <typename T> std::vector<T> packConvWeights(const NodePlan &P, const void *Weights) {
  const size_t Cg = P.C / P.Groups, Kk = static_cast<size_t>(P.KH) * P.KW;
  const T *W = static_cast<const T *>(Weights);
  std::vector<T> Packed(P.OC * Kk * Cg);
  for (size_t O = 0; O < P.OC; ++O)
    for (size_t Ci = 0; Ci < Cg; ++Ci)
      for (size_t K = 0; K < Kk; ++K)
        Packed[(O * Kk + K) * Cg + Ci] = W[(O * Cg + Ci) * Kk + K];
  return Packed;
}

int32_t xnnError(xnn_status S, const char *Step, const NodePlan &P, std::string &Error) {
  Error = std::string("xnnpack: cannot ") + Step + " " + P.Label + ": " + statusText(S);
  return S == xnn_status_out_of_memory ? OPT_RT_ERROR_OUT_OF_RESOURCE : OPT_RT_ERROR_INFER;
}

#define XNN_TRY(Call, Step)                                                                            \
  do {                                                                                                 \
    const xnn_status S_ = (Call);                                                                      \
    if (S_ != xnn_status_success)                                                                      \
      return xnnError(S_, Step, P, Error);                                                             \
  } while (0)

} // namespace

const char *statusText(xnn_status S) {
  switch (S) {
  case xnn_status_success: return "success";
  case xnn_status_uninitialized: return "XNNPACK is not initialized";
  case xnn_status_invalid_parameter: return "invalid parameter";
  case xnn_status_invalid_state: return "invalid state";
  case xnn_status_unsupported_parameter: return "unsupported parameter";
  case xnn_status_unsupported_hardware: return "unsupported hardware (this CPU lacks the instructions XNNPACK needs)";
  case xnn_status_out_of_memory: return "out of memory";
  }
  return "unknown status";
}

bool planNode(const OptRtHostApi &Host, const OptRtNode &Node, NodePlan &Plan, std::string &Why) {
  if (Node.domain[0] != '\0')
    return fail(Why, "not an ai.onnx op");
  Plan.Label = std::string(Node.op_type) + " '" + Node.name + "'";
  if (Node.num_outputs != 1 && std::strcmp(Node.op_type, "MaxPool") != 0)
    return fail(Why, "more than one output");
  const std::string Op = Node.op_type;
  // Float nodes run in float32, or in float16 on XNNPACK's f16 operators (where this libxnnpack has
  // one: each plan function refuses the rest); 8-bit nodes ignore this.
  const OptRtTensorDesc *In0 = input(Node, 0);
  Plan.Half = In0 && In0->type == OPT_RT_ELEMENT_F16;
  bool Ok = false;
  if (Op == "Conv")
    Ok = planConv(Host, Node, Plan, Why);
  else if (Op == "QLinearConv")
    Ok = planQConv(Host, Node, Plan, Why);
  else if (Op == "QLinearMatMul")
    Ok = planQMatMul(Host, Node, Plan, Why);
  else if (Op == "MaxPool" || Op == "AveragePool")
    Ok = planPool(Host, Node, Plan, Why);
  else if (Op == "GlobalAveragePool") {
    const OptRtTensorDesc *X = input(Node, 0), *Y = output(Node, 0);
    const int32_t T = floatType(Plan);
    Ok = Attrs(Host, Node).only({}, Why) && staticT(T, X) && X->rank == 4 && staticT(T, Y) && countOf(X) > 0;
    if (Ok) {
      Plan.Kind = OpKind::GlobalAveragePool;
      Plan.N = X->dims[0], Plan.C = X->dims[1], Plan.H = X->dims[2], Plan.W = X->dims[3];
    } else if (Why.empty()) {
      Why = "not a static, non-empty 4-D float tensor";
    }
  } else if (Op == "Gemm" || Op == "MatMul")
    Ok = planGemm(Host, Node, Plan, Why);
  else if (Op == "Add" || Op == "Sub" || Op == "Mul" || Op == "Div" || Op == "Max" || Op == "Min")
    Ok = planBinary(Host, Node, Plan, Why);
  else if (Op == "Softmax")
    Ok = planSoftmax(Host, Node, Plan, Why);
  else
    Ok = planUnary(Host, Node, Plan, Why);
  if (!Ok)
    return false;
  Plan.InDims = dimsOf(input(Node, 0));
  Plan.OutDims = dimsOf(output(Node, 0));
  return true;
}

std::unique_ptr<ScratchPool::Set> ScratchPool::take() {
  std::lock_guard<std::mutex> L(M);
  if (Free.empty())
    return std::unique_ptr<Set>(new Set());
  std::unique_ptr<Set> S = std::move(Free.back());
  Free.pop_back();
  return S;
}

void ScratchPool::give(std::unique_ptr<Set> S) {
  std::lock_guard<std::mutex> L(M);
  Free.push_back(std::move(S));
}

Kernel::~Kernel() {
  if (Op)
    xnn_delete_operator(Op);
  if (ResidualAdd)
    xnn_delete_operator(ResidualAdd);
}

int32_t createKernel(const OptRtHostApi &Host, const OptRtNode &Node, std::unique_ptr<Kernel> &Out, std::string &Error) {
  std::unique_ptr<Kernel> K(new Kernel());
  NodePlan &P = K->Plan;
  std::string Why;
  if (!planNode(Host, Node, P, Why)) {
    Error = "xnnpack: " + std::string(Node.op_type) + " '" + Node.name + "' is not supported: " + Why;
    return OPT_RT_ERROR_NOT_IMPLEMENTED;
  }
  switch (P.Kind) {
  case OpKind::Conv: {
    const size_t Cg = P.C / P.Groups;
    const float Min = P.Residual ? -kInf : P.OutMin, Max = P.Residual ? kInf : P.OutMax;
    if (P.Half) {
      // float16 weights and bias as the model stores them (XNNPACK's f16 operator packs them as is).
      const std::vector<uint16_t> Packed = packConvWeights<uint16_t>(P, P.Weights);
      XNN_TRY(xnn_create_convolution2d_nhwc_f16(P.PT, P.PR, P.PB, P.PL, P.KH, P.KW, P.SH, P.SW, P.DH, P.DW, P.Groups,
                                                Cg, P.OC / P.Groups, P.C, P.OC, Packed.data(), P.Bias, Min, Max, 0,
                                                &K->Op),
              "create the float16 convolution of");
      if (P.Residual)
        XNN_TRY(xnn_create_add_nd_f16(P.OutMin, P.OutMax, 0, &K->ResidualAdd), "create the float16 residual add of");
      break;
    }
    const std::vector<float> Packed = packConvWeights<float>(P, P.Weights);
    XNN_TRY(xnn_create_convolution2d_nhwc_f32(P.PT, P.PR, P.PB, P.PL, P.KH, P.KW, P.SH, P.SW, P.DH, P.DW, P.Groups, Cg,
                                              P.OC / P.Groups, P.C, P.OC, Packed.data(),
                                              static_cast<const float *>(P.Bias), Min, Max, 0, &K->Op),
            "create the convolution of");
    if (P.Residual)
      XNN_TRY(xnn_create_add_nd_f32(P.OutMin, P.OutMax, 0, &K->ResidualAdd), "create the residual add of");
    break;
  }
  case OpKind::FullyConnected: {
    if (P.Half) {
      // float16 weights packed to XNNPACK's [N, K] here (alpha folded in, rounded to float16 once),
      // the bias broadcast to N and scaled by beta.
      const auto *W = static_cast<const uint16_t *>(P.Weights);
      std::vector<uint16_t> Packed(P.InCh * P.OutCh), Bias;
      for (size_t Kx = 0; Kx < P.InCh; ++Kx)
        for (size_t Nx = 0; Nx < P.OutCh; ++Nx) {
          const uint16_t V = P.WeightsKxN ? W[Kx * P.OutCh + Nx] : W[Nx * P.InCh + Kx];
          Packed[Nx * P.InCh + Kx] = P.Alpha == 1.0f ? V : floatToHalf(P.Alpha * halfToFloat(V));
        }
      if (P.Bias) {
        Bias.resize(P.OutCh);
        for (size_t I = 0; I < P.OutCh; ++I)
          Bias[I] = floatToHalf(P.Beta * readFloat(P, P.Bias, P.BiasCount == 1 ? 0 : I));
      }
      XNN_TRY(xnn_create_fully_connected_nc_f16(P.InCh, P.OutCh, P.InCh, P.OutCh, Packed.data(),
                                                P.Bias ? Bias.data() : nullptr, -kInf, kInf, 0, &K->Op),
              "create the float16 fully connected operator of");
      break;
    }
    std::vector<float> Scaled, Bias;
    const float *W = static_cast<const float *>(P.Weights);
    if (P.Alpha != 1.0f) {
      Scaled.assign(W, W + P.InCh * P.OutCh);
      for (float &V : Scaled)
        V *= P.Alpha;
      W = Scaled.data();
    }
    if (P.Bias) {
      Bias.resize(P.OutCh);
      for (size_t I = 0; I < P.OutCh; ++I)
        Bias[I] = P.Beta * readFloat(P, P.Bias, P.BiasCount == 1 ? 0 : I);
    }
    XNN_TRY(xnn_create_fully_connected_nc_f32(P.InCh, P.OutCh, P.InCh, P.OutCh, W, P.Bias ? Bias.data() : nullptr, -kInf,
                                              kInf, P.WeightsKxN ? XNN_FLAG_TRANSPOSE_WEIGHTS : 0, &K->Op),
            "create the fully connected operator of");
    break;
  }
  case OpKind::QConv: {
    // OIHW -> OHWI per group, bytes (as the float32 Conv).
    const size_t Cg = P.C / P.Groups, Kk = static_cast<size_t>(P.KH) * P.KW;
    const auto *Wt = static_cast<const uint8_t *>(P.QWeights);
    std::vector<uint8_t> Packed(P.OC * Kk * Cg);
    for (size_t O = 0; O < P.OC; ++O)
      for (size_t Ci = 0; Ci < Cg; ++Ci)
        for (size_t T = 0; T < Kk; ++T)
          Packed[(O * Kk + T) * Cg + Ci] = Wt[(O * Cg + Ci) * Kk + T];
    const size_t Og = P.OC / P.Groups;
    switch (P.Quant) {
    case QuantKind::QS8:
      XNN_TRY(xnn_create_convolution2d_nhwc_qs8(
                  P.PT, P.PR, P.PB, P.PL, P.KH, P.KW, P.SH, P.SW, P.DH, P.DW, P.Groups, Cg, Og, P.C, P.OC,
                  static_cast<int8_t>(P.XZp), P.XScale, P.WScales[0], reinterpret_cast<const int8_t *>(Packed.data()),
                  P.QBias, static_cast<int8_t>(P.YZp), P.YScale, static_cast<int8_t>(P.QMin),
                  static_cast<int8_t>(P.QMax), 0, &K->Op),
              "create the int8 convolution of");
      break;
    case QuantKind::QC8:
      XNN_TRY(xnn_create_convolution2d_nhwc_qc8(
                  P.PT, P.PR, P.PB, P.PL, P.KH, P.KW, P.SH, P.SW, P.DH, P.DW, P.Groups, Cg, Og, P.C, P.OC,
                  static_cast<int8_t>(P.XZp), P.XScale, P.WScales.data(), reinterpret_cast<const int8_t *>(Packed.data()),
                  P.QBias, static_cast<int8_t>(P.YZp), P.YScale, static_cast<int8_t>(P.QMin),
                  static_cast<int8_t>(P.QMax), 0, &K->Op),
              "create the per-channel int8 convolution of");
      break;
    case QuantKind::QU8:
      XNN_TRY(xnn_create_convolution2d_nhwc_qu8(P.PT, P.PR, P.PB, P.PL, P.KH, P.KW, P.SH, P.SW, P.DH, P.DW, P.Groups, Cg,
                                                Og, P.C, P.OC, static_cast<uint8_t>(P.XZp), P.XScale,
                                                static_cast<uint8_t>(P.WZp), P.WScales[0], Packed.data(), P.QBias,
                                                static_cast<uint8_t>(P.YZp), P.YScale, static_cast<uint8_t>(P.QMin),
                                                static_cast<uint8_t>(P.QMax), 0, &K->Op),
              "create the uint8 convolution of");
      break;
    }
    break;
  }
  case OpKind::QFullyConnected: {
    // B is [K, N]: packed to XNNPACK's [N, K] here (its transposed-weights flag is not used for the
    // 8-bit operators: the uint8 one gives wrong results with it in this XNNPACK).
    const auto *Wt = static_cast<const uint8_t *>(P.QWeights);
    std::vector<uint8_t> Packed(P.InCh * P.OutCh);
    for (size_t Kx = 0; Kx < P.InCh; ++Kx)
      for (size_t Nx = 0; Nx < P.OutCh; ++Nx)
        Packed[Nx * P.InCh + Kx] = Wt[Kx * P.OutCh + Nx];
    if (P.Quant == QuantKind::QS8)
      XNN_TRY(xnn_create_fully_connected_nc_qs8(P.InCh, P.OutCh, P.InCh, P.OutCh, static_cast<int8_t>(P.XZp), P.XScale,
                                                P.WScales[0], reinterpret_cast<const int8_t *>(Packed.data()), nullptr,
                                                static_cast<int8_t>(P.YZp), P.YScale, static_cast<int8_t>(P.QMin),
                                                static_cast<int8_t>(P.QMax), 0, &K->Op),
              "create the int8 fully connected operator of");
    else
      XNN_TRY(xnn_create_fully_connected_nc_qu8(P.InCh, P.OutCh, P.InCh, P.OutCh, static_cast<uint8_t>(P.XZp), P.XScale,
                                                static_cast<uint8_t>(P.WZp), P.WScales[0], Packed.data(), nullptr,
                                                static_cast<uint8_t>(P.YZp), P.YScale, static_cast<uint8_t>(P.QMin),
                                                static_cast<uint8_t>(P.QMax), 0, &K->Op),
              "create the uint8 fully connected operator of");
    break;
  }
  case OpKind::MaxPool:
    if (P.Half) {
      XNN_TRY(xnn_create_max_pooling2d_nhwc_f16(P.PT, P.PR, P.PB, P.PL, P.KH, P.KW, P.SH, P.SW, P.DH, P.DW, P.C, P.C,
                                                P.C, -kInf, kInf, 0, &K->Op),
              "create the float16 max pooling of");
      break;
    }
    XNN_TRY(xnn_create_max_pooling2d_nhwc_f32(P.PT, P.PR, P.PB, P.PL, P.KH, P.KW, P.SH, P.SW, P.DH, P.DW, P.C, P.C, P.C,
                                              -kInf, kInf, 0, &K->Op),
            "create the max pooling of");
    break;
  case OpKind::AveragePool:
    XNN_TRY(xnn_create_average_pooling2d_nhwc_f32(P.PT, P.PR, P.PB, P.PL, P.KH, P.KW, P.SH, P.SW, P.C, P.C, P.C, -kInf,
                                                  kInf, 0, &K->Op),
            "create the average pooling of");
    break;
  case OpKind::GlobalAveragePool:
    // NCHW read as N*C rows of H*W pixels with one channel: no layout change.
    if (P.Half)
      XNN_TRY(xnn_create_global_average_pooling_nwc_f16(1, 1, 1, -kInf, kInf, 0, &K->Op),
              "create the float16 global average pooling of");
    else
      XNN_TRY(xnn_create_global_average_pooling_nwc_f32(1, 1, 1, -kInf, kInf, 0, &K->Op),
              "create the global average pooling of");
    break;
  case OpKind::Binary: {
    // Constant operands get a copy with XNNPACK's read-past-the-end slack.
    const auto Count = [](const std::vector<size_t> &Shape) {
      size_t C = 1;
      for (size_t D : Shape)
        C *= D;
      return std::max<size_t>(1, C);
    };
    if (P.ConstA && P.Half)
      std::memcpy(sized16(K->ConstAH, Count(P.ShapeA)), P.ConstA, Count(P.ShapeA) * sizeof(uint16_t));
    else if (P.ConstA)
      std::memcpy(sized(K->ConstA, Count(P.ShapeA)), P.ConstA, Count(P.ShapeA) * sizeof(float));
    if (P.ConstB && P.Half)
      std::memcpy(sized16(K->ConstBH, Count(P.ShapeB)), P.ConstB, Count(P.ShapeB) * sizeof(uint16_t));
    else if (P.ConstB)
      std::memcpy(sized(K->ConstB, Count(P.ShapeB)), P.ConstB, Count(P.ShapeB) * sizeof(float));
    if (P.Half) { // planBinary takes only Add and Mul in float16
      if (P.Binary == BinaryOp::Add)
        XNN_TRY(xnn_create_add_nd_f16(-kInf, kInf, 0, &K->Op), "create the float16 add of");
      else
        XNN_TRY(xnn_create_multiply_nd_f16(-kInf, kInf, 0, &K->Op), "create the float16 multiply of");
      break;
    }
    switch (P.Binary) {
    case BinaryOp::Add: XNN_TRY(xnn_create_add_nd_f32(-kInf, kInf, 0, &K->Op), "create"); break;
    case BinaryOp::Sub: XNN_TRY(xnn_create_subtract_nd_f32(-kInf, kInf, 0, &K->Op), "create"); break;
    case BinaryOp::Mul: XNN_TRY(xnn_create_multiply_nd_f32(-kInf, kInf, 0, &K->Op), "create"); break;
    case BinaryOp::Div: XNN_TRY(xnn_create_divide_nd_f32(-kInf, kInf, 0, &K->Op), "create"); break;
    case BinaryOp::Max: XNN_TRY(xnn_create_maximum_nd_f32(0, &K->Op), "create"); break;
    case BinaryOp::Min: XNN_TRY(xnn_create_minimum_nd_f32(0, &K->Op), "create"); break;
    }
    break;
  }
  case OpKind::Unary:
    if (P.Half) { // planUnary takes only these in float16
      switch (P.Unary) {
      case UnaryOp::Clamp: XNN_TRY(xnn_create_clamp_nc_f16(1, 1, 1, P.P0, P.P1, 0, &K->Op), "create"); break;
      case UnaryOp::LeakyRelu: XNN_TRY(xnn_create_leaky_relu_nc_f16(1, 1, 1, P.P0, 0, &K->Op), "create"); break;
      case UnaryOp::HardSwish: XNN_TRY(xnn_create_hardswish_nc_f16(1, 1, 1, 0, &K->Op), "create"); break;
      default: return xnnError(xnn_status_unsupported_parameter, "create (no float16 operator)", P, Error);
      }
      break;
    }
    switch (P.Unary) {
    case UnaryOp::Clamp: XNN_TRY(xnn_create_clamp_nc_f32(1, 1, 1, P.P0, P.P1, 0, &K->Op), "create"); break;
    case UnaryOp::LeakyRelu: XNN_TRY(xnn_create_leaky_relu_nc_f32(1, 1, 1, P.P0, 0, &K->Op), "create"); break;
    case UnaryOp::Sigmoid: XNN_TRY(xnn_create_sigmoid_nc_f32(1, 1, 1, 0, &K->Op), "create"); break;
    case UnaryOp::HardSwish: XNN_TRY(xnn_create_hardswish_nc_f32(1, 1, 1, 0, &K->Op), "create"); break;
    case UnaryOp::Elu: XNN_TRY(xnn_create_elu_nc_f32(1, 1, 1, P.P0, 0, &K->Op), "create"); break;
    case UnaryOp::Abs: XNN_TRY(xnn_create_abs_nc_f32(1, 1, 1, 0, &K->Op), "create"); break;
    case UnaryOp::Neg: XNN_TRY(xnn_create_negate_nc_f32(1, 1, 1, 0, &K->Op), "create"); break;
    case UnaryOp::Floor: XNN_TRY(xnn_create_floor_nc_f32(1, 1, 1, 0, &K->Op), "create"); break;
    case UnaryOp::Ceil: XNN_TRY(xnn_create_ceiling_nc_f32(1, 1, 1, 0, &K->Op), "create"); break;
    case UnaryOp::Sqrt: XNN_TRY(xnn_create_square_root_nc_f32(1, 1, 1, 0, &K->Op), "create"); break;
    case UnaryOp::Round: XNN_TRY(xnn_create_bankers_rounding_nc_f32(1, 1, 1, 0, &K->Op), "create"); break;
    }
    break;
  case OpKind::Softmax:
    XNN_TRY(xnn_create_softmax_nc_f32(P.Channels, P.Channels, P.Channels, 0, &K->Op), "create the softmax of");
    break;
  }
  P.Weights = P.Bias = P.ConstA = P.ConstB = nullptr; // packed or copied: the runtime's bytes are not read again
  P.QWeights = nullptr;
  P.QBias = nullptr;
  Out = std::move(K);
  return OPT_RT_OK;
}

namespace {

int32_t setupUnary(Kernel &K, const void *InV, void *OutV, pthreadpool_t Pool) {
  const NodePlan &P = K.Plan;
  if (P.Half) {
    switch (P.Unary) {
    case UnaryOp::Clamp: return xnn_setup_clamp_nc_f16(K.Op, P.Count, InV, OutV, Pool);
    case UnaryOp::LeakyRelu: return xnn_setup_leaky_relu_nc_f16(K.Op, P.Count, InV, OutV, Pool);
    case UnaryOp::HardSwish: return xnn_setup_hardswish_nc_f16(K.Op, P.Count, InV, OutV, Pool);
    default: return xnn_status_invalid_parameter;
    }
  }
  const float *In = static_cast<const float *>(InV);
  float *Out = static_cast<float *>(OutV);
  switch (P.Unary) {
  case UnaryOp::Clamp: return xnn_setup_clamp_nc_f32(K.Op, P.Count, In, Out, Pool);
  case UnaryOp::LeakyRelu: return xnn_setup_leaky_relu_nc_f32(K.Op, P.Count, In, Out, Pool);
  case UnaryOp::Sigmoid: return xnn_setup_sigmoid_nc_f32(K.Op, P.Count, In, Out, Pool);
  case UnaryOp::HardSwish: return xnn_setup_hardswish_nc_f32(K.Op, P.Count, In, Out, Pool);
  case UnaryOp::Elu: return xnn_setup_elu_nc_f32(K.Op, P.Count, In, Out, Pool);
  case UnaryOp::Abs: return xnn_setup_abs_nc_f32(K.Op, P.Count, In, Out, Pool);
  case UnaryOp::Neg: return xnn_setup_negate_nc_f32(K.Op, P.Count, In, Out, Pool);
  case UnaryOp::Floor: return xnn_setup_floor_nc_f32(K.Op, P.Count, In, Out, Pool);
  case UnaryOp::Ceil: return xnn_setup_ceiling_nc_f32(K.Op, P.Count, In, Out, Pool);
  case UnaryOp::Sqrt: return xnn_setup_square_root_nc_f32(K.Op, P.Count, In, Out, Pool);
  case UnaryOp::Round: return xnn_setup_bankers_rounding_nc_f32(K.Op, P.Count, In, Out, Pool);
  }
  return xnn_status_invalid_parameter;
}

int32_t setupBinary(Kernel &K, const void *AV, const void *BV, void *OutV, pthreadpool_t Pool) {
  const NodePlan &P = K.Plan;
  const size_t RA = P.ShapeA.size(), RB = P.ShapeB.size();
  const size_t *SA = P.ShapeA.data(), *SB = P.ShapeB.data();
  if (P.Half)
    return P.Binary == BinaryOp::Add ? xnn_setup_add_nd_f16(K.Op, RA, SA, RB, SB, AV, BV, OutV, Pool)
                                     : xnn_setup_multiply_nd_f16(K.Op, RA, SA, RB, SB, AV, BV, OutV, Pool);
  const float *A = static_cast<const float *>(AV), *B = static_cast<const float *>(BV);
  float *Out = static_cast<float *>(OutV);
  switch (P.Binary) {
  case BinaryOp::Add: return xnn_setup_add_nd_f32(K.Op, RA, SA, RB, SB, A, B, Out, Pool);
  case BinaryOp::Sub: return xnn_setup_subtract_nd_f32(K.Op, RA, SA, RB, SB, A, B, Out, Pool);
  case BinaryOp::Mul: return xnn_setup_multiply_nd_f32(K.Op, RA, SA, RB, SB, A, B, Out, Pool);
  case BinaryOp::Div: return xnn_setup_divide_nd_f32(K.Op, RA, SA, RB, SB, A, B, Out, Pool);
  case BinaryOp::Max: return xnn_setup_maximum_nd_f32(K.Op, RA, SA, RB, SB, A, B, Out, Pool);
  case BinaryOp::Min: return xnn_setup_minimum_nd_f32(K.Op, RA, SA, RB, SB, A, B, Out, Pool);
  }
  return xnn_status_invalid_parameter;
}

bool sameDims(const OptRtTensor *T, const std::vector<int64_t> &Dims) {
  return T && T->rank == static_cast<int32_t>(Dims.size()) && std::equal(Dims.begin(), Dims.end(), T->dims);
}

} // namespace

int32_t runKernel(Kernel &K, const OptRtTensor *Inputs, uint32_t NumInputs, const OptRtTensor *Outputs,
                  uint32_t NumOutputs, const OptRtExecContext *Ctx, ScratchPool &Scratch, std::string &Error) {
  const NodePlan &P = K.Plan;
  if (NumInputs < 1 || NumOutputs < 1 || !OPT_RT_TENSOR_AT(Outputs, 0)->data) {
    Error = "xnnpack: " + P.Label + ": unexpected inputs or outputs";
    return OPT_RT_ERROR_INFER;
  }
  const OptRtTensor *X = OPT_RT_TENSOR_AT(Inputs, 0), *Y = OPT_RT_TENSOR_AT(Outputs, 0);
  if (!sameDims(X, P.InDims) || !sameDims(Y, P.OutDims)) {
    Error = "xnnpack: " + P.Label + " was created for input " + dimsText(P.InDims.data(), static_cast<int32_t>(P.InDims.size())) +
            " -> output " + dimsText(P.OutDims.data(), static_cast<int32_t>(P.OutDims.size())) + ", but runs with " +
            dimsText(X->dims, X->rank) + " -> " + dimsText(Y->dims, Y->rank);
    return OPT_RT_ERROR_SHAPE;
  }
  const float *In = static_cast<const float *>(X->data);
  float *Out = static_cast<float *>(Y->data);
  void *OutV = Y->data;
  std::lock_guard<std::mutex> Hold(K.Lock); // an XNNPACK operator holds its setup until it runs
  ScopedPool Pool(Ctx);                     // XNNPACK's parallel loops go to the runtime's pool
  switch (P.Kind) {
  case OpKind::QConv: {
    std::unique_ptr<ScratchPool::Set> S = Scratch.take();
    uint8_t *Nhwc = sized8(S->In8, P.N * P.C * P.H * P.W);
    uint8_t *NhwcOut = sized8(S->Out8, P.N * P.OC * P.OH * P.OW);
    transposeImages(static_cast<const uint8_t *>(X->data), Nhwc, P.N, P.C, P.H * P.W, Ctx);
    xnn_status St;
    switch (P.Quant) {
    case QuantKind::QS8:
      St = xnn_setup_convolution2d_nhwc_qs8(K.Op, P.N, P.H, P.W, reinterpret_cast<const int8_t *>(Nhwc),
                                            reinterpret_cast<int8_t *>(NhwcOut), Pool.threadpool());
      break;
    case QuantKind::QC8:
      St = xnn_setup_convolution2d_nhwc_qc8(K.Op, P.N, P.H, P.W, reinterpret_cast<const int8_t *>(Nhwc),
                                            reinterpret_cast<int8_t *>(NhwcOut), Pool.threadpool());
      break;
    default:
      St = xnn_setup_convolution2d_nhwc_qu8(K.Op, P.N, P.H, P.W, Nhwc, NhwcOut, Pool.threadpool());
      break;
    }
    if (St == xnn_status_success)
      St = xnn_run_operator(K.Op, Pool.threadpool());
    if (St == xnn_status_success)
      transposeImages(static_cast<const uint8_t *>(NhwcOut), static_cast<uint8_t *>(Y->data), P.N, P.OH * P.OW, P.OC, Ctx);
    Scratch.give(std::move(S));
    if (St != xnn_status_success)
      return xnnError(St, "run", P, Error);
    return OPT_RT_OK;
  }
  case OpKind::QFullyConnected:
    if (P.Quant == QuantKind::QS8)
      XNN_TRY(xnn_setup_fully_connected_nc_qs8(K.Op, P.Batch, static_cast<const int8_t *>(X->data),
                                               static_cast<int8_t *>(Y->data), Pool.threadpool()),
              "set up");
    else
      XNN_TRY(xnn_setup_fully_connected_nc_qu8(K.Op, P.Batch, static_cast<const uint8_t *>(X->data),
                                               static_cast<uint8_t *>(Y->data), Pool.threadpool()),
              "set up");
    break;
  case OpKind::Conv:
  case OpKind::MaxPool:
  case OpKind::AveragePool: {
    std::unique_ptr<ScratchPool::Set> S = Scratch.take();
    if (P.Half) { // float16: the same layout changes on 16-bit elements (no float16 average pooling)
      uint16_t *Nhwc = sized16(S->In16, P.N * P.C * P.H * P.W);
      uint16_t *NhwcOut = sized16(S->Out16, P.N * P.OC * P.OH * P.OW);
      transposeImages(static_cast<const uint16_t *>(X->data), Nhwc, P.N, P.C, P.H * P.W, Ctx);
      xnn_status St = P.Kind == OpKind::Conv
                          ? xnn_setup_convolution2d_nhwc_f16(K.Op, P.N, P.H, P.W, Nhwc, NhwcOut, Pool.threadpool())
                          : xnn_setup_max_pooling2d_nhwc_f16(K.Op, P.N, P.H, P.W, Nhwc, NhwcOut, Pool.threadpool());
      if (St == xnn_status_success)
        St = xnn_run_operator(K.Op, Pool.threadpool());
      if (St == xnn_status_success)
        transposeImages(static_cast<const uint16_t *>(NhwcOut), static_cast<uint16_t *>(OutV), P.N, P.OH * P.OW, P.OC,
                        Ctx);
      Scratch.give(std::move(S));
      if (St != xnn_status_success)
        return xnnError(St, "run", P, Error);
    } else {
      float *Nhwc = sized(S->In, P.N * P.C * P.H * P.W);
      float *NhwcOut = sized(S->Out, P.N * P.OC * P.OH * P.OW);
      transposeImages(In, Nhwc, P.N, P.C, P.H * P.W, Ctx);
      xnn_status St = P.Kind == OpKind::Conv
                          ? xnn_setup_convolution2d_nhwc_f32(K.Op, P.N, P.H, P.W, Nhwc, NhwcOut, Pool.threadpool())
                      : P.Kind == OpKind::MaxPool
                          ? xnn_setup_max_pooling2d_nhwc_f32(K.Op, P.N, P.H, P.W, Nhwc, NhwcOut, Pool.threadpool())
                          : xnn_setup_average_pooling2d_nhwc_f32(K.Op, P.N, P.H, P.W, Nhwc, NhwcOut, Pool.threadpool());
      if (St == xnn_status_success)
        St = xnn_run_operator(K.Op, Pool.threadpool());
      if (St != xnn_status_success) {
        Scratch.give(std::move(S));
        return xnnError(St, "run", P, Error);
      }
      transposeImages(NhwcOut, Out, P.N, P.OH * P.OW, P.OC, Ctx);
      Scratch.give(std::move(S));
    }
    if (K.ResidualAdd) {
      const OptRtTensor *R = NumInputs > 3 ? OPT_RT_TENSOR_AT(Inputs, 3) : nullptr;
      if (!R || !R->data || !sameDims(R, P.OutDims)) {
        Error = "xnnpack: " + P.Label + ": the residual input is missing or has another shape than the output";
        return OPT_RT_ERROR_INFER;
      }
      const size_t Count = P.N * P.OC * P.OH * P.OW;
      XNN_TRY(P.Half ? xnn_setup_add_nd_f16(K.ResidualAdd, 1, &Count, 1, &Count, OutV, R->data, OutV, Pool.threadpool())
                     : xnn_setup_add_nd_f32(K.ResidualAdd, 1, &Count, 1, &Count, Out,
                                            static_cast<const float *>(R->data), Out, Pool.threadpool()),
              "set up the residual add of");
      XNN_TRY(xnn_run_operator(K.ResidualAdd, Pool.threadpool()), "run the residual add of");
    }
    return OPT_RT_OK;
  }
  case OpKind::GlobalAveragePool:
    XNN_TRY(P.Half ? xnn_setup_global_average_pooling_nwc_f16(K.Op, P.N * P.C, P.H * P.W, X->data, OutV, Pool.threadpool())
                   : xnn_setup_global_average_pooling_nwc_f32(K.Op, P.N * P.C, P.H * P.W, In, Out, Pool.threadpool()),
            "set up");
    break;
  case OpKind::FullyConnected:
    XNN_TRY(P.Half ? xnn_setup_fully_connected_nc_f16(K.Op, P.Batch, X->data, OutV, Pool.threadpool())
                   : xnn_setup_fully_connected_nc_f32(K.Op, P.Batch, In, Out, Pool.threadpool()),
            "set up");
    break;
  case OpKind::Softmax:
    XNN_TRY(xnn_setup_softmax_nc_f32(K.Op, P.Rows, In, Out, Pool.threadpool()), "set up");
    break;
  case OpKind::Unary:
    XNN_TRY(static_cast<xnn_status>(setupUnary(K, X->data, OutV, Pool.threadpool())), "set up");
    break;
  case OpKind::Binary: {
    const OptRtTensor *B = NumInputs > 1 ? OPT_RT_TENSOR_AT(Inputs, 1) : nullptr;
    const void *CA = P.Half ? static_cast<const void *>(K.ConstAH.data()) : K.ConstA.data();
    const void *CB = P.Half ? static_cast<const void *>(K.ConstBH.data()) : K.ConstB.data();
    const bool HasA = P.Half ? !K.ConstAH.empty() : !K.ConstA.empty();
    const bool HasB = P.Half ? !K.ConstBH.empty() : !K.ConstB.empty();
    const void *A = HasA ? CA : X->data;
    const void *Bp = HasB ? CB : B ? B->data : nullptr;
    if (!A || !Bp) {
      Error = "xnnpack: " + P.Label + ": an operand is missing";
      return OPT_RT_ERROR_INFER;
    }
    XNN_TRY(static_cast<xnn_status>(setupBinary(K, A, Bp, OutV, Pool.threadpool())), "set up");
    break;
  }
  }
  XNN_TRY(xnn_run_operator(K.Op, Pool.threadpool()), "run");
  return OPT_RT_OK;
}

} // namespace xnnpack_ext
} // namespace optimium
