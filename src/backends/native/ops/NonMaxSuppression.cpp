// NonMaxSuppression (opsets 10, 11; f32 boxes and scores -> i64 [selected, 3]): per batch and
// class, greedy selection by descending score (ties: lower box index first) of boxes whose IoU
// with every selected box is <= iou_threshold, after dropping scores <= score_threshold, up to
// max_output_boxes_per_class. The output length depends on the data: inference returns a fresh
// symbol unless every input's value is known, in which case it runs the selection itself.
#include <algorithm>

#include "backends/native/ops/common/OpUtil.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct NmsParams {
  int64_t MaxPerClass = 0;
  float Iou = 0, Score = 0;
  bool HasScore = false;
  bool CenterPoint = false;
};

bool suppressByIou(const float *B1, const float *B2, bool Center, float Threshold) {
  float X1Min, X1Max, X2Min, X2Max, Y1Min, Y1Max, Y2Min, Y2Max;
  if (!Center) {
    X1Min = std::min(B1[1], B1[3]), X1Max = std::max(B1[1], B1[3]);
    X2Min = std::min(B2[1], B2[3]), X2Max = std::max(B2[1], B2[3]);
    Y1Min = std::min(B1[0], B1[2]), Y1Max = std::max(B1[0], B1[2]);
    Y2Min = std::min(B2[0], B2[2]), Y2Max = std::max(B2[0], B2[2]);
  } else {
    X1Min = B1[0] - B1[2] / 2, X1Max = B1[0] + B1[2] / 2, X2Min = B2[0] - B2[2] / 2, X2Max = B2[0] + B2[2] / 2;
    Y1Min = B1[1] - B1[3] / 2, Y1Max = B1[1] + B1[3] / 2, Y2Min = B2[1] - B2[3] / 2, Y2Max = B2[1] + B2[3] / 2;
  }
  const float IXMin = std::max(X1Min, X2Min), IXMax = std::min(X1Max, X2Max);
  if (IXMax <= IXMin)
    return false;
  const float IYMin = std::max(Y1Min, Y2Min), IYMax = std::min(Y1Max, Y2Max);
  if (IYMax <= IYMin)
    return false;
  const float Inter = (IXMax - IXMin) * (IYMax - IYMin);
  if (Inter <= 0)
    return false;
  const float A1 = (X1Max - X1Min) * (Y1Max - Y1Min), A2 = (X2Max - X2Min) * (Y2Max - Y2Min);
  const float Union = A1 + A2 - Inter;
  if (A1 <= 0 || A2 <= 0 || Union <= 0)
    return false;
  return Inter / Union > Threshold;
}

/// Runs the selection; returns (batch, class, box) triples in output order.
std::vector<int64_t> nmsSelect(const float *Boxes, const float *Scores, int64_t Batches, int64_t Classes, int64_t NumBoxes,
                               const NmsParams &P) {
  std::vector<int64_t> Out;
  std::vector<int64_t> Order, Selected;
  for (int64_t B = 0; B < Batches; ++B)
    for (int64_t C = 0; C < Classes; ++C) {
      const float *S = Scores + (B * Classes + C) * NumBoxes;
      const float *Bx = Boxes + B * NumBoxes * 4;
      Order.clear();
      for (int64_t I = 0; I < NumBoxes; ++I)
        if (!P.HasScore || S[I] > P.Score)
          Order.push_back(I);
      std::stable_sort(Order.begin(), Order.end(), [S](int64_t L, int64_t R) { return S[L] > S[R]; });
      Selected.clear();
      for (int64_t I : Order) {
        if (static_cast<int64_t>(Selected.size()) >= P.MaxPerClass)
          break;
        bool Keep = true;
        for (int64_t J : Selected)
          if (suppressByIou(Bx + I * 4, Bx + J * 4, P.CenterPoint, P.Iou)) {
            Keep = false;
            break;
          }
        if (Keep) {
          Selected.push_back(I);
          Out.insert(Out.end(), {B, C, I});
        }
      }
    }
  return Out;
}

Result<bool> centerPointBox(const Node &N) {
  ASSIGN_OR_RETURN(const int64_t V, N.getInt("center_point_box", 0));
  if (V != 0 && V != 1)
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'center_point_box' value ", V, " must be 0 or 1");
  return V == 1;
}

/// Parameters from the optional scalar inputs (Values[i] null = omitted or empty).
NmsParams nmsParams(bool Center, const int64_t *Max, const float *Iou, const float *Score) {
  NmsParams P;
  P.CenterPoint = Center;
  P.MaxPerClass = Max ? std::max<int64_t>(0, *Max) : 0;
  P.Iou = Iou ? *Iou : 0.0f;
  P.HasScore = Score != nullptr;
  P.Score = Score ? *Score : 0.0f;
  return P;
}

Status inferNms(ShapeContext &Ctx) {
  RETURN_IF_ERROR(requireInputType(Ctx, 0, {ElementType::F32}));
  RETURN_IF_ERROR(requireInputType(Ctx, 1, {ElementType::F32}));
  if (Ctx.hasInput(2))
    RETURN_IF_ERROR(requireInputType(Ctx, 2, {ElementType::I64}));
  for (size_t I : {size_t(3), size_t(4)})
    if (Ctx.hasInput(I))
      RETURN_IF_ERROR(requireInputType(Ctx, I, {ElementType::F32}));
  ASSIGN_OR_RETURN(const bool Center, centerPointBox(Ctx.N));
  const TensorShape &B = Ctx.Inputs[0].Shape, &S = Ctx.Inputs[1].Shape;
  if (B.getRank() != 3 || (B[2].isConst() && B[2].value() != 4))
    return Ctx.error(ErrorCode::Shape, "boxes ", B.toString(), " must be [num_batches, num_boxes, 4]");
  if (S.getRank() != 3)
    return Ctx.error(ErrorCode::Shape, "scores ", S.toString(), " must be [num_batches, num_classes, num_boxes]");
  if ((B[0].isConst() && S[0].isConst() && B[0].value() != S[0].value()) ||
      (B[1].isConst() && S[2].isConst() && B[1].value() != S[2].value()))
    return Ctx.error(ErrorCode::Shape, "boxes ", B.toString(), " and scores ", S.toString(), " do not match");
  Ctx.Outputs[0].Type = ElementType::I64;
  bool AllKnown = Ctx.Inputs[0].Const && Ctx.Inputs[1].Const;
  for (size_t I = 2; I < 5; ++I)
    if (Ctx.hasInput(I) && !Ctx.Inputs[I].Const)
      AllKnown = false;
  if (!AllKnown) {
    Ctx.Outputs[0].Shape = TensorShape({Ctx.newSymbol(), Expr(3)});
    return Status::ok();
  }
  const auto scalar = [&](size_t I) -> const void * {
    return Ctx.hasInput(I) && Ctx.Inputs[I].Const->elementCount() > 0 ? Ctx.Inputs[I].Const->Data : nullptr;
  };
  const NmsParams P = nmsParams(Center, static_cast<const int64_t *>(scalar(2)), static_cast<const float *>(scalar(3)),
                                static_cast<const float *>(scalar(4)));
  const std::vector<int64_t> Dims = B.getDims(), SDims = S.getDims();
  const std::vector<int64_t> Sel =
      nmsSelect(Ctx.Inputs[0].Const->as<float>(), Ctx.Inputs[1].Const->as<float>(), Dims[0], SDims[1], Dims[1], P);
  Ctx.Outputs[0].Shape = TensorShape({Expr(static_cast<int64_t>(Sel.size() / 3)), Expr(3)});
  return Status::ok();
}

Status runNms(bool Center, const KernelContext &Ctx) {
  const TensorView &B = Ctx.Inputs[0], &S = Ctx.Inputs[1], &Y = Ctx.Outputs[0];
  if (B.rank() != 3 || S.rank() != 3 || B.Dims[2] != 4 || B.Dims[0] != S.Dims[0] || B.Dims[1] != S.Dims[2])
    return runError("nonmaxsuppression", "boxes ", joinInts(B.Dims), " and scores ", joinInts(S.Dims), " do not match");
  const auto scalar = [&](size_t I) -> const void * {
    return I < Ctx.Inputs.size() && Ctx.Inputs[I].Data && Ctx.Inputs[I].elementCount() > 0 ? Ctx.Inputs[I].Data : nullptr;
  };
  const NmsParams P = nmsParams(Center, static_cast<const int64_t *>(scalar(2)), static_cast<const float *>(scalar(3)),
                                static_cast<const float *>(scalar(4)));
  const std::vector<int64_t> Sel = nmsSelect(B.data<const float>(), S.data<const float>(), B.Dims[0], S.Dims[1], B.Dims[1], P);
  if (Y.elementCount() != Sel.size())
    return runError("nonmaxsuppression", "output ", joinInts(Y.Dims), " does not hold the ", Sel.size() / 3,
                    " selected boxes");
  std::copy(Sel.begin(), Sel.end(), Y.data<int64_t>());
  return Status::ok();
}

OpSchema nmsSchema() {
  OpSchema S;
  S.OpType = "NonMaxSuppression";
  S.MinInputs = 2;
  S.MaxInputs = 5;
  S.Infer = inferNms;
  return S;
}

OpKernels nmsKernels() {
  OpKernels K;
  K.OpType = "NonMaxSuppression";
  K.Variants.push_back({"f32_nonmaxsuppression__ref", 0, nullptr, [](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
                          ASSIGN_OR_RETURN(const bool Center, centerPointBox(I.N));
                          return makeKernel<FunctionKernel>([Center](const KernelContext &C) { return runNms(Center, C); });
                        }});
  K.TestCases = [] {
    const auto F = [](std::vector<int64_t> D, std::vector<double> V) { return valuesInput(D, V, ElementType::F32, true); };
    const auto I64 = [](int64_t V) { return valuesInput({1}, {static_cast<double>(V)}, ElementType::I64, true); };
    const std::vector<double> Boxes = {0, 0, 1, 1, 0, 0.1, 1, 1.1, 0, -0.1, 1, 0.9, 0, 10, 1, 11, 0, 10.1, 1, 11.1, 0, 100, 1, 101};
    const std::vector<double> Scores = {0.9, 0.75, 0.6, 0.95, 0.5, 0.3};
    const std::vector<double> Centers = {0.5, 0.5, 1, 1, 0.5, 0.6, 1, 1, 0.5, 0.4, 1, 1, 0.5, 10.5, 1, 1, 0.5, 10.6, 1, 1, 0.5, 100.5, 1, 1};
    TestInput RandBoxes = constInput({2, 20, 4});
    RandBoxes.Low = 0, RandBoxes.High = 4;
    TestInput RandScores = constInput({2, 3, 20});
    RandScores.Low = 0, RandScores.High = 1;
    return std::vector<OpTestCase>{
        testCase("suppress", {F({1, 6, 4}, Boxes), F({1, 1, 6}, Scores), I64(3), F({1}, {0.5}), F({1}, {0.0})}),
        testCase("score_threshold", {F({1, 6, 4}, Boxes), F({1, 1, 6}, Scores), I64(3), F({1}, {0.5}), F({1}, {0.4})}),
        testCase("center_point_box", {F({1, 6, 4}, Centers), F({1, 1, 6}, Scores), I64(3), F({1}, {0.5}), F({1}, {0.0})},
                 {{"center_point_box", attrInt(1)}}),
        testCase("no_max_output", {F({1, 6, 4}, Boxes), F({1, 1, 6}, Scores)}),
        testCase("random_multi_class", {RandBoxes, RandScores, I64(5), F({1}, {0.3})}),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(NonMaxSuppression, nmsSchema());
OPT_REGISTER_KERNELS(NonMaxSuppression, nmsKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
