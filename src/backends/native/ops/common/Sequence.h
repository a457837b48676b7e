// Shared pieces of the sequence and optional ops (Sequence*.cpp, SplitToSequence.cpp,
// ConcatFromSequence.cpp, Optional*.cpp): schema checks on value kinds, reading positions, and
// getting at the containers of a kernel's inputs and outputs (ir/Container.h).
#pragma once

#include <string>
#include <vector>

#include "backends/native/ops/common/ControlFlow.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

/// TypeError unless input I is a sequence(tensor).
inline Status requireSequenceInput(const ShapeContext &Ctx, size_t I) {
  if (Ctx.Inputs[I].Kind != ValueKind::Sequence)
    return Ctx.error(ErrorCode::Type, "input ", I, " must be a sequence(tensor), got a ", toString(Ctx.Inputs[I].Kind));
  return Status::ok();
}

/// TypeError unless input I is a tensor.
inline Status requireTensorInput(const ShapeContext &Ctx, size_t I) {
  if (isContainerKind(Ctx.Inputs[I].Kind))
    return Ctx.error(ErrorCode::Type, "input ", I, " must be a tensor, got a ", toString(Ctx.Inputs[I].Kind));
  return Status::ok();
}

/// TypeError unless the position input I is a single int32/int64 value (shape [] or [1]).
inline Status requirePositionInput(const ShapeContext &Ctx, size_t I) {
  RETURN_IF_ERROR(requireTensorInput(Ctx, I));
  RETURN_IF_ERROR(requireInputType(Ctx, I, {ElementType::I32, ElementType::I64}));
  const TensorShape &S = Ctx.Inputs[I].Shape;
  if (S.getRank() > 1 || (S.getRank() == 1 && S[0].isConst() && S[0].value() != 1))
    return Ctx.error(ErrorCode::Shape, "input ", I, " (position) must hold one value, got shape ", S.toString());
  return Status::ok();
}

/// The shape "unknown" (rank included): one symbol, the IR's convention (see ControlFlow.h).
inline TensorShape unknownShape(ShapeContext &Ctx) { return TensorShape({Ctx.newSymbol()}); }

/// Element shape of a sequence holding elements of shapes A and B (symbols where they differ).
inline TensorShape mergeElementShapes(ShapeContext &Ctx, const TensorShape &A, const TensorShape &B) {
  return A == B ? A : mergeOrSymbols(Ctx, A, B);
}

/// Sets output I to a sequence of Type elements shaped Shape.
inline void setSequenceOutput(ShapeContext &Ctx, size_t I, ElementType Type, TensorShape Shape) {
  Ctx.Outputs[I].Kind = ValueKind::Sequence;
  Ctx.Outputs[I].Type = Type;
  Ctx.Outputs[I].Shape = std::move(Shape);
}

/// The sequence input I of a running kernel (also an optional sequence holding one).
inline Result<const ContainerValue *> sequenceIn(const Node &N, const KernelContext &Ctx, size_t I) {
  const ContainerValue *C = I < Ctx.Inputs.size() ? Ctx.Inputs[I].container() : nullptr;
  if (!C || unwrapOptional(C->Kind) != ValueKind::Sequence)
    return makeError(ErrorCode::Type, N.describe(), ": input ", I, " is not a sequence");
  if (!C->HasValue)
    return makeError(ErrorCode::Infer, N.describe(), ": input ", I, " is an empty optional, not a sequence");
  return C;
}

/// The container of output I of a running kernel.
inline Result<ContainerValue *> containerOut(const Node &N, const KernelContext &Ctx, size_t I) {
  ContainerValue *C = I < Ctx.Outputs.size() ? Ctx.Outputs[I].container() : nullptr;
  if (!C)
    return makeError(ErrorCode::Infer, N.describe(), ": output ", I, " has no sequence/optional storage");
  return C;
}

/// The position input V (one int32/int64 value) normalized against a sequence of Length
/// elements: valid are [-Length, Length - 1], plus Length itself when AllowEnd (insertion).
/// InferError naming the node, the position and the length otherwise.
inline Result<int64_t> readPosition(const Node &N, const TensorView &V, size_t Length, bool AllowEnd) {
  if (V.elementCount() != 1 || (V.Type != ElementType::I32 && V.Type != ElementType::I64))
    return makeError(ErrorCode::Infer, N.describe(), ": position must be one int32/int64 value, got ",
                     toString(V.Type), " of shape ", joinInts(V.Dims));
  const int64_t P = readIndex(V, 0);
  const int64_t Len = static_cast<int64_t>(Length);
  const int64_t Hi = AllowEnd ? Len : Len - 1;
  if (P < -Len || P > Hi)
    return makeError(ErrorCode::Infer, N.describe(), ": position ", P, " is out of range for a sequence of length ",
                     Len, " (valid: ", -Len, " to ", Hi, ")");
  return P < 0 ? P + Len : P;
}

// --- harness test inputs --------------------------------------------------------------------------

inline TestInput sequenceInput(std::vector<std::vector<int64_t>> Elements, ElementType T = ElementType::F32) {
  TestInput I;
  I.Type = T;
  I.Kind = ValueKind::Sequence;
  I.Elements = std::move(Elements);
  return I;
}

inline TestInput optionalInput(ValueKind K, std::vector<std::vector<int64_t>> Elements,
                               ElementType T = ElementType::F32) {
  TestInput I = sequenceInput(std::move(Elements), T);
  I.Kind = K;
  return I;
}

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
