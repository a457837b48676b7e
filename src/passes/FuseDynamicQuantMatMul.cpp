// Dynamically quantized MatMul fusion (see FuseDynamicQuantMatMul.h).
#include "passes/FuseDynamicQuantMatMul.h"

#include <vector>

#include "passes/EraseNodes.h"
#include "passes/PassMatch.h"

namespace optimium {
namespace runtime {
namespace detail {

namespace {

const ConstData *constOf(const Graph &G, int V) { return V >= 0 ? G.Values[V].Const.get() : nullptr; }

/// One float32 value (any rank), constant or not, by its known shape.
bool scalarF32(const Graph &G, int V) {
  if (V < 0 || G.Values[V].Type != ElementType::F32)
    return false;
  if (const ConstData *C = constOf(G, V))
    return C->elementCount() == 1;
  const Value &Val = G.Values[V];
  if (!Val.ShapeKnown)
    return false;
  for (size_t D = 0; D < Val.Shape.getRank(); ++D)
    if (!Val.Shape[D].isConst() || Val.Shape[D].value() != 1)
      return false;
  return true;
}

/// A constant float32 vector of 1 or N values shaped [], [N] or [1, ..., 1, N] (or [1, ..., 1]).
bool columnConst(const Graph &G, int V, int64_t N) {
  const ConstData *C = constOf(G, V);
  if (!C || C->Type != ElementType::F32 || (!C->Data && !C->Source))
    return false;
  for (size_t I = 0; I + 1 < C->Dims.size(); ++I)
    if (C->Dims[I] != 1)
      return false;
  return C->elementCount() == 1 || (!C->Dims.empty() && C->Dims.back() == N);
}

} // namespace

size_t fuseDynamicQuantMatMul(Graph &G) {
  std::vector<char> Remove(G.Nodes.size(), 0);
  size_t Fused = 0;
  for (size_t I = 0; I < G.Nodes.size(); ++I) {
    Node &MI = G.Nodes[I];
    if (MI.OpType != "MatMulInteger" || !MI.Domain.empty() || MI.Inputs.size() < 2 || MI.Inputs.size() > 4 ||
        MI.Outputs.size() != 1 || MI.Outputs[0] < 0 || MI.Inputs[0] < 0)
      continue;
    const ConstData *B = constOf(G, MI.Inputs[1]);
    if (!B || B->Dims.size() != 2 || (B->Type != ElementType::U8 && B->Type != ElementType::I8) || (!B->Data && !B->Source))
      continue;
    const int64_t N = B->Dims[1];
    const int BZp = MI.Inputs.size() > 3 ? MI.Inputs[3] : -1;
    if (BZp >= 0 && (!constOf(G, BZp) || !constOf(G, BZp)->Data))
      continue;
    // -> Cast(to=FLOAT) -> Mul(., S), each the only reader of what it reads.
    const int CastI = soleConsumer(G, MI.Outputs[0]);
    if (CastI < 0 || Remove[static_cast<size_t>(CastI)])
      continue;
    const Node &Cast = G.Nodes[static_cast<size_t>(CastI)];
    if (!isCastToFloat(Cast))
      continue;
    const int MulI = soleConsumer(G, Cast.Outputs[0]);
    if (MulI < 0 || Remove[static_cast<size_t>(MulI)])
      continue;
    const Node &Mul = G.Nodes[static_cast<size_t>(MulI)];
    if (!isOp(Mul, "Mul", 2) || G.Values[Mul.Outputs[0]].Type != ElementType::F32)
      continue;
    const int S = Mul.Inputs[0] == Cast.Outputs[0] ? Mul.Inputs[1] : Mul.Inputs[0];
    if (S < 0 || S == Cast.Outputs[0] || G.Values[S].Producer < 0)
      continue;
    // S = Mul(a_scale, b_scale): a_scale one float, b_scale a constant of 1 or N values.
    const size_t ScalesI = static_cast<size_t>(G.Values[S].Producer);
    const Node &Scales = G.Nodes[ScalesI];
    if (!isOp(Scales, "Mul", 2) || Remove[ScalesI])
      continue;
    int AScale = Scales.Inputs[0], BScale = Scales.Inputs[1];
    if (!columnConst(G, BScale, N) || !scalarF32(G, AScale))
      std::swap(AScale, BScale);
    if (!columnConst(G, BScale, N) || !scalarF32(G, AScale))
      continue;
    // The fused node reads a_scale where MatMulInteger stands: it must be made before that.
    if (!G.Values[AScale].Const && G.Values[AScale].Producer >= static_cast<int>(I))
      continue;
    int Out = Mul.Outputs[0], Bias = -1;
    size_t AddI = G.Nodes.size();
    // [-> Add(bias)]: a constant float32 bias over the last dim that does not broadcast Y bigger.
    const int AddC = soleConsumer(G, Out);
    if (AddC >= 0 && !Remove[static_cast<size_t>(AddC)]) {
      const Node &Add = G.Nodes[static_cast<size_t>(AddC)];
      const int Other = Add.Inputs.size() == 2 ? (Add.Inputs[0] == Out ? Add.Inputs[1] : Add.Inputs[0]) : -1;
      const ConstData *BC = constOf(G, Other);
      if (isOp(Add, "Add", 2) && Other != Out && BC && BC->Type == ElementType::F32 && !BC->Dims.empty() &&
          BC->Dims.back() == N && BC->elementCount() == static_cast<size_t>(N) && BC->Data &&
          BC->Dims.size() <= G.Values[Out].Shape.getRank() && G.Values[Add.Outputs[0]].Type == ElementType::F32) {
        Bias = Other;
        AddI = static_cast<size_t>(AddC);
        Out = Add.Outputs[0];
      }
    }
    const int AZp = MI.Inputs.size() > 2 ? MI.Inputs[2] : -1;
    MI.OpType = "MatMulIntegerToFloat";
    MI.Domain = "com.microsoft";
    MI.Inputs = {MI.Inputs[0], MI.Inputs[1], AScale, BScale, AZp, BZp};
    if (Bias >= 0)
      MI.Inputs.push_back(Bias);
    MI.Outputs[0] = Out;
    Remove[static_cast<size_t>(CastI)] = Remove[static_cast<size_t>(MulI)] = 1;
    if (AddI < G.Nodes.size())
      Remove[AddI] = 1;
    // The scales' Mul, unless something else reads its product.
    const Value &Prod = G.Values[S];
    if (!Prod.IsGraphOutput && Prod.Consumers.size() == 1)
      Remove[ScalesI] = 1;
    ++Fused;
  }
  eraseMarkedNodes(G, Remove);
  return Fused;
}

} // namespace detail
} // namespace runtime
} // namespace optimium
