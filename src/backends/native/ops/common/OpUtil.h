// Small helpers shared by the native ops: input type checks with clear errors, axis handling,
// kernel construction, and shorthands for writing harness test cases.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "backends/native/KernelRegistry.h"
#include "backends/native/KernelTestCase.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

inline std::string joinInts(const std::vector<int64_t> &V) {
  std::ostringstream OS;
  OS << '[';
  for (size_t I = 0; I < V.size(); ++I)
    OS << (I ? ", " : "") << V[I];
  OS << ']';
  return OS.str();
}

inline std::string joinTypes(std::initializer_list<ElementType> Types) {
  std::string S;
  for (ElementType T : Types)
    S += (S.empty() ? "" : ", ") + std::string(toString(T));
  return S;
}

/// TypeError unless input I has one of Types.
inline Status requireInputType(const ShapeContext &Ctx, size_t I, std::initializer_list<ElementType> Types) {
  const ElementType T = Ctx.Inputs[I].Type;
  for (ElementType Ok : Types)
    if (T == Ok)
      return Status::ok();
  return Ctx.error(ErrorCode::Type, "input ", I, " has element type ", toString(T), ", supported: ", joinTypes(Types));
}

/// TypeError naming both types when inputs A and B differ.
inline Status requireSameType(const ShapeContext &Ctx, size_t A, size_t B) {
  if (Ctx.Inputs[A].Type == Ctx.Inputs[B].Type)
    return Status::ok();
  return Ctx.error(ErrorCode::Type, "input ", A, " has element type ", toString(Ctx.Inputs[A].Type), " but input ", B,
                   " has element type ", toString(Ctx.Inputs[B].Type));
}

/// A convolution's optional bias, input I (when present): input 0's type, 1-D with one value per
/// output channel (Channels); ShapeError naming both otherwise.
inline Status checkChannelBias(const ShapeContext &Ctx, size_t I, const Expr &Channels) {
  if (!Ctx.hasInput(I))
    return Status::ok();
  RETURN_IF_ERROR(requireSameType(Ctx, 0, I));
  const TensorShape &B = Ctx.Inputs[I].Shape;
  if (B.getRank() != 1 || (B[0].isConst() && Channels.isConst() && B[0].value() != Channels.value()))
    return Ctx.error(ErrorCode::Shape, "bias ", B.toString(), " must be 1-D with one value per output channel (",
                     Channels.toString(), ")");
  return Status::ok();
}

/// Rejects the types a plain byte copy cannot move (std::string objects) or that are undefined.
inline Status requireCopyableType(const ShapeContext &Ctx, size_t I) {
  const ElementType T = Ctx.Inputs[I].Type;
  if (T == ElementType::String || T == ElementType::Undefined)
    return Ctx.error(ErrorCode::Type, "input ", I, " has element type ", toString(T),
                     ", which the native backend does not support for this op");
  return Status::ok();
}

/// Maps Axis in [-Rank, Rank - 1] (or [-Rank - 1, Rank] with Inclusive, as Flatten allows) to a
/// non-negative axis; ModelError naming the attribute otherwise.
inline Result<int64_t> normalizeAxis(const Node &N, const char *Attr, int64_t Axis, int64_t Rank,
                                     bool Inclusive = false) {
  const int64_t Hi = Inclusive ? Rank : Rank - 1;
  const int64_t Lo = -Rank;
  if (Axis < Lo || Axis > Hi)
    return makeError(ErrorCode::Model, N.describe(), ": attribute '", Attr, "' value ", Axis, " is out of range [",
                     Lo, ", ", Hi, "] for rank ", Rank);
  return Axis < 0 ? Axis + Rank : Axis;
}

/// Input I's data, or null when the node omits that optional input (a bias, a fused residual).
template <typename T = float> const T *inputDataOrNull(const KernelContext &Ctx, size_t I) {
  return Ctx.Inputs.size() > I && Ctx.Inputs[I].Data ? Ctx.Inputs[I].data<T>() : nullptr;
}

inline bool inputIs(const KernelCreateInfo &Info, size_t I, ElementType T) {
  return I < Info.Inputs.size() && Info.Inputs[I].Present && Info.Inputs[I].Type == T;
}
inline bool inputIsConst(const KernelCreateInfo &Info, size_t I) {
  return I < Info.Inputs.size() && Info.Inputs[I].Present && Info.Inputs[I].Const;
}

template <typename K, typename... Args> Result<std::unique_ptr<Kernel>> makeKernel(Args &&...A) {
  return std::unique_ptr<Kernel>(new K(std::forward<Args>(A)...));
}

inline int64_t product(const std::vector<int64_t> &D, size_t Begin, size_t End) {
  int64_t P = 1;
  for (size_t I = Begin; I < End && I < D.size(); ++I)
    P *= D[I];
  return P;
}

inline Expr productExpr(const TensorShape &S, size_t Begin, size_t End) {
  Expr P(1);
  for (size_t I = Begin; I < End && I < S.getRank(); ++I)
    P = P * S[I];
  return P;
}

/// Error for a kernel run on tensors whose shapes contradict what create() was given.
template <typename... Args> Status runError(const char *Kernel, const Args &...Parts) {
  return makeError(ErrorCode::Infer, Kernel, ": ", Parts...);
}

/// Copies input 0 to output 0 byte for byte (Identity, Reshape, Flatten: the executor gives every
/// output its own buffer, so even pure views copy).
class ByteCopyKernel : public Kernel {
public:
  explicit ByteCopyKernel(std::string Name) : Name(std::move(Name)) {}
  Status run(const KernelContext &Ctx) const override {
    const TensorView &X = Ctx.Inputs[0], &Y = Ctx.Outputs[0];
    if (X.elementCount() != Y.elementCount() || X.Type != Y.Type)
      return runError(Name.c_str(), "input ", joinInts(X.Dims), " and output ", joinInts(Y.Dims),
                      " differ in element count or type");
    const size_t Bytes = X.elementCount() * getElementSize(X.Type);
    if (Bytes && X.Data != Y.Data)
      std::memcpy(Y.Data, X.Data, Bytes);
    return Status::ok();
  }

private:
  std::string Name;
};

inline KernelVariant byteCopyVariant(const std::string &Name) {
  return {Name, 0, nullptr, [Name](const KernelCreateInfo &) { return makeKernel<ByteCopyKernel>(Name); }};
}

/// Cases for a copy-like op: the same Attrs over several element types.
inline std::vector<TestInput> typedInputs(std::vector<int64_t> Dims, ElementType T) {
  TestInput I;
  I.Type = T;
  I.Dims = std::move(Dims);
  I.Low = -100, I.High = 100;
  return {I};
}

// --- shorthands for harness test cases (attrInt, attrFloat, attrString, attrInts: ir/Graph.h) ---

inline TestInput tensorInput(std::vector<int64_t> Dims, ElementType T = ElementType::F32) {
  TestInput I;
  I.Type = T;
  I.Dims = std::move(Dims);
  return I;
}
inline TestInput constInput(std::vector<int64_t> Dims, ElementType T = ElementType::F32) {
  TestInput I = tensorInput(std::move(Dims), T);
  I.Constant = true;
  return I;
}
inline TestInput valuesInput(std::vector<int64_t> Dims, std::vector<double> Values, ElementType T, bool Constant) {
  TestInput I = tensorInput(std::move(Dims), T);
  I.Values = std::move(Values);
  I.Constant = Constant;
  return I;
}
inline TestInput omittedInput() {
  TestInput I;
  I.Omitted = true;
  return I;
}

inline OpTestCase testCase(std::string Label, std::vector<TestInput> Inputs,
                           std::map<std::string, AttrValue> Attrs = {}, double Tolerance = 1e-4) {
  OpTestCase C;
  C.Label = std::move(Label);
  C.Inputs = std::move(Inputs);
  C.Attrs = std::move(Attrs);
  C.Tolerance = Tolerance;
  return C;
}

/// The case with the node built at Opset (ops newer than the harness default, opset-specific rules).
inline OpTestCase withOpset(OpTestCase C, int Opset) {
  C.OpsetVersion = Opset;
  return C;
}

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
