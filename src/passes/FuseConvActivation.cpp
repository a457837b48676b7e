// Conv + activation fusion (see FuseConvActivation.h).
#include "passes/FuseConvActivation.h"
#include "passes/EraseNodes.h"
#include "passes/PassMatch.h"

#include <Optimium/Runtime/Types/Float16.h>

#include <cmath>
#include <vector>

namespace optimium {
namespace runtime {
namespace detail {

namespace {

/// The constant float32 or float16 scalar of input I of N, or Default when the input is omitted;
/// false when it is present but not such a constant.
bool constBound(const Graph &G, const Node &N, size_t I, float Default, float &Out) {
  if (I >= N.Inputs.size() || N.Inputs[I] < 0) {
    Out = Default;
    return true;
  }
  const Value &V = G.Values[N.Inputs[I]];
  if (!V.Const || V.Const->elementCount() != 1)
    return false;
  if (V.Const->Type == ElementType::F32)
    Out = V.Const->as<float>()[0];
  else if (V.Const->Type == ElementType::F16)
    Out = float16::toFloat(V.Const->as<uint16_t>()[0]);
  else
    return false;
  return true;
}

/// The clamp of an activation node, when it is one this pass fuses.
bool activationBounds(const Graph &G, const Node &A, float &Lo, float &Hi) {
  if (!A.Domain.empty())
    return false;
  if (A.OpType == "Relu") {
    Lo = 0.0f;
    Hi = INFINITY;
    return true;
  }
  if (A.OpType != "Clip")
    return false;
  if (A.OpsetVersion > 0 && A.OpsetVersion < 11) {
    auto Min = A.getFloat("min", -INFINITY), Max = A.getFloat("max", INFINITY);
    if (!Min.isOk() || !Max.isOk())
      return false;
    Lo = *Min;
    Hi = *Max;
    return true;
  }
  return constBound(G, A, 1, -INFINITY, Lo) && constBound(G, A, 2, INFINITY, Hi);
}

/// Another activation this pass fuses (a kFusedActKind): Sigmoid, HardSigmoid, HardSwish, Swish.
bool activationKind(const Node &A, const char *&Kind, float &Alpha, float &Beta) {
  if (!A.Domain.empty() || A.Inputs.size() != 1)
    return false;
  Alpha = 1.0f, Beta = 0.0f;
  if (A.OpType == "Sigmoid") {
    Kind = kFusedActSigmoid;
    return true;
  }
  if (A.OpType == "HardSwish") {
    Kind = kFusedActHardSwish, Alpha = 1.0f / 6.0f, Beta = 0.5f;
    return true;
  }
  if (A.OpType == "HardSigmoid") {
    auto Al = A.getFloat("alpha", 0.2f), Be = A.getFloat("beta", 0.5f);
    if (!Al.isOk() || !Be.isOk() || !std::isfinite(*Al) || !std::isfinite(*Be))
      return false;
    Kind = kFusedActHardSigmoid, Alpha = *Al, Beta = *Be;
    return true;
  }
  if (A.OpType == "Swish") { // opset 24: x * sigmoid(alpha * x)
    auto Al = A.getFloat("alpha", 1.0f);
    if (!Al.isOk() || !std::isfinite(*Al))
      return false;
    Kind = kFusedActSilu, Alpha = *Al;
    return true;
  }
  return false;
}

/// Conv output Y read by exactly Sigmoid(Y) and Mul(Y, Sigmoid(Y)) (either operand order), the
/// Sigmoid's output read by that Mul only: SiLU. The two node indices on success.
bool siluPattern(const Graph &G, int Y, const std::vector<char> &Remove, int &SigI, int &MulI) {
  const Value &V = G.Values[static_cast<size_t>(Y)];
  if (V.Consumers.size() != 2)
    return false;
  for (int Pick = 0; Pick < 2; ++Pick) {
    const int S = V.Consumers[static_cast<size_t>(Pick)], M = V.Consumers[static_cast<size_t>(1 - Pick)];
    if (S == M || Remove[static_cast<size_t>(S)] || Remove[static_cast<size_t>(M)])
      continue;
    const Node &Sig = G.Nodes[static_cast<size_t>(S)], &Mul = G.Nodes[static_cast<size_t>(M)];
    if (!isOp(Sig, "Sigmoid", 1) || Sig.Inputs[0] != Y || !isOp(Mul, "Mul", 2))
      continue;
    const int SOut = Sig.Outputs[0];
    const Value &SV = G.Values[static_cast<size_t>(SOut)];
    if (SV.IsGraphOutput || SV.Consumers.size() != 1 || SV.Consumers[0] != M || SV.Type != ElementType::F32)
      continue;
    const bool Operands = (Mul.Inputs[0] == Y && Mul.Inputs[1] == SOut) || (Mul.Inputs[0] == SOut && Mul.Inputs[1] == Y);
    if (!Operands || G.Values[static_cast<size_t>(Mul.Outputs[0])].Type != ElementType::F32)
      continue;
    SigI = S, MulI = M;
    return true;
  }
  return false;
}

} // namespace

size_t fuseConvActivation(Graph &G) {
  std::vector<char> Remove(G.Nodes.size(), 0);
  size_t Fused = 0;
  for (size_t I = 0; I < G.Nodes.size(); ++I) {
    Node &C = G.Nodes[I];
    if (C.OpType != "Conv" || !C.Domain.empty() || C.Outputs.size() != 1 || C.Outputs[0] < 0 ||
        hasFusedActivation(C))
      continue;
    const Value &Y = G.Values[C.Outputs[0]];
    // float16 Convs take clamps only: clamp(round16(y)) == round16(clamp(y)) for float16 bounds
    // (rounding is monotone), so the fused node gives the unfused graph's values bit for bit; the
    // other kinds would drop the rounding between the Conv and the activation.
    const bool Half = Y.Type == ElementType::F16;
    if (Y.IsGraphOutput || (Y.Type != ElementType::F32 && !Half))
      continue;
    int SigI = -1, MulI = -1;
    if (!Half && siluPattern(G, C.Outputs[0], Remove, SigI, MulI)) {
      C.Attrs[kFusedActKind] = attrString(kFusedActSilu);
      C.Attrs[kFusedActAlpha] = attrFloat(1.0f);
      C.Outputs[0] = G.Nodes[static_cast<size_t>(MulI)].Outputs[0];
      Remove[static_cast<size_t>(SigI)] = Remove[static_cast<size_t>(MulI)] = 1;
      ++Fused;
      continue;
    }
    if (Y.Consumers.size() != 1)
      continue;
    const int AI = Y.Consumers[0];
    Node &A = G.Nodes[static_cast<size_t>(AI)];
    if (Remove[static_cast<size_t>(AI)] || A.Inputs.empty() || A.Inputs[0] != C.Outputs[0] || A.Outputs.size() != 1 ||
        A.Outputs[0] < 0 || G.Values[A.Outputs[0]].Type != Y.Type)
      continue;
    // The activation may read the Conv's output only as its data input.
    bool OnlyData = true;
    for (size_t K = 1; K < A.Inputs.size(); ++K)
      OnlyData &= A.Inputs[K] != C.Outputs[0];
    if (!OnlyData)
      continue;
    float Lo = 0, Hi = 0, Alpha = 1, Beta = 0;
    const char *Kind = nullptr;
    if (activationBounds(G, A, Lo, Hi) && !std::isnan(Lo) && !std::isnan(Hi) &&
        (!Half || (float16::toFloat(float16::fromFloat(Lo)) == Lo && float16::toFloat(float16::fromFloat(Hi)) == Hi))) {
      C.Attrs[kFusedActMin] = attrFloat(Lo);
      C.Attrs[kFusedActMax] = attrFloat(Hi);
    } else if (!Half && activationKind(A, Kind, Alpha, Beta)) {
      C.Attrs[kFusedActKind] = attrString(Kind);
      C.Attrs[kFusedActAlpha] = attrFloat(Alpha);
      C.Attrs[kFusedActBeta] = attrFloat(Beta);
    } else {
      continue;
    }
    C.Outputs[0] = A.Outputs[0];
    Remove[static_cast<size_t>(AI)] = 1;
    ++Fused;
  }
  eraseMarkedNodes(G, Remove);
  return Fused;
}

} // namespace detail
} // namespace runtime
} // namespace optimium
