// Shared machinery of the data-movement ops (Gather, Slice, Expand, Pad, ...): one compute
// function per op used both by its kernels and by load-time folding, strided copies over any
// element size, integer index reading, and typed dispatch for the few ops that do arithmetic.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "backends/native/ops/common/OpUtil.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

/// Computes a node's outputs from its inputs. Kernels call it at run time and the schema calls it
/// at load to fold small constant subgraphs, so both always agree. Out is allocated by the caller
/// with the inferred dims.
using ComputeFn = std::function<Status(const Node &N, const std::vector<TensorView> &In,
                                       const std::vector<TensorView> &Out, const Parallel &Par)>;

/// A kernel over a ComputeFn; keeps its own copy of the node (attributes are re-read per run,
/// which is cheap next to moving the data).
class ComputeKernel : public Kernel {
public:
  ComputeKernel(const Node &N, ComputeFn F) : N(N), F(std::move(F)) {}
  Status run(const KernelContext &Ctx) const override { return F(N, Ctx.Inputs, Ctx.Outputs, Ctx.Par); }

private:
  Node N;
  ComputeFn F;
};

inline KernelVariant computeVariant(std::string Name, int Priority, ComputeFn F,
                                    std::function<bool(const KernelCreateInfo &)> Supports = nullptr) {
  return {std::move(Name), Priority, std::move(Supports),
          [F](const KernelCreateInfo &I) { return makeKernel<ComputeKernel>(I.N, F); }};
}

/// Outputs larger than this are not folded at load (they would bloat the model's memory).
constexpr size_t MaxFoldElements = 4096;

inline TensorView constView(const ConstData &C) {
  TensorView V;
  V.Type = C.Type;
  V.Dims = C.Dims;
  V.Data = const_cast<void *>(C.Data);
  return V;
}

/// Folds the node when it can: every input whose data F reads (all but those in ShapeOnlyMask,
/// bit I = input I) is constant, the other inputs have constant shapes, and every output has a
/// constant shape of at most MaxFoldElements elements and a non-string type. Sets
/// Ctx.Outputs[i].Const; leaves the outputs alone otherwise.
Status foldIfConstant(ShapeContext &Ctx, const ComputeFn &F, unsigned ShapeOnlyMask = 0);

/// Row-major strides (in elements) of Dims.
std::vector<int64_t> stridesOf(const std::vector<int64_t> &Dims);

/// Reads an integer tensor (any integer type or bool) as int64.
Result<std::vector<int64_t>> readInts(const TensorView &V, const char *What);
/// Reads element I of an integer index tensor (i32 or i64).
inline int64_t readIndex(const TensorView &V, size_t I) {
  return V.Type == ElementType::I32 ? static_cast<int64_t>(V.data<const int32_t>()[I]) : V.data<const int64_t>()[I];
}

/// Constant int64 values of input I (null result status when it is not constant).
Result<std::vector<int64_t>> constInts(const ShapeContext &Ctx, size_t I);
inline bool isConstInput(const ShapeContext &Ctx, size_t I) { return Ctx.hasInput(I) && Ctx.Inputs[I].Const; }

/// Out[i0..in] = Src[Offset + sum(i_d * Strides[d])], element size Elem. Strides may be zero
/// (broadcast) or negative (reversed slices).
struct StridedView {
  std::vector<int64_t> Dims;
  std::vector<int64_t> Strides;
  int64_t Offset = 0;
};
/// One element at a time (the reference).
void stridedCopyRef(const void *Src, void *Dst, size_t Elem, const StridedView &S);
/// Merges dims, copies contiguous runs with memcpy, fills broadcast runs, splits across threads.
void stridedCopyFast(const void *Src, void *Dst, size_t Elem, const StridedView &S, const Parallel &Par);

inline void copyElement(char *Dst, const char *Src, size_t Elem) {
  switch (Elem) {
  case 1: *Dst = *Src; break;
  case 2: std::memcpy(Dst, Src, 2); break;
  case 4: std::memcpy(Dst, Src, 4); break;
  case 8: std::memcpy(Dst, Src, 8); break;
  default: std::memcpy(Dst, Src, Elem);
  }
}

/// TypeError unless input I is i32 or i64 (index tensors).
inline Status requireIndexType(const ShapeContext &Ctx, size_t I) {
  return requireInputType(Ctx, I, {ElementType::I32, ElementType::I64});
}

template <typename T> struct TypeTag { using type = T; };

/// Calls Fn(TypeTag<C++ type>) for a numeric or bool element type; false for the others.
template <typename F> bool visitNumeric(ElementType T, F &&Fn) {
  switch (T) {
  case ElementType::F32: Fn(TypeTag<float>()); return true;
  case ElementType::F64: Fn(TypeTag<double>()); return true;
  case ElementType::F16: Fn(TypeTag<float16>()); return true;
  case ElementType::BF16: Fn(TypeTag<bfloat16>()); return true;
  case ElementType::I8: Fn(TypeTag<int8_t>()); return true;
  case ElementType::I16: Fn(TypeTag<int16_t>()); return true;
  case ElementType::I32: Fn(TypeTag<int32_t>()); return true;
  case ElementType::I64: Fn(TypeTag<int64_t>()); return true;
  case ElementType::U8: Fn(TypeTag<uint8_t>()); return true;
  case ElementType::U16: Fn(TypeTag<uint16_t>()); return true;
  case ElementType::U32: Fn(TypeTag<uint32_t>()); return true;
  case ElementType::U64: Fn(TypeTag<uint64_t>()); return true;
  case ElementType::Bool: Fn(TypeTag<bool>()); return true;
  default: return false;
  }
}

/// The arithmetic type a storage type computes in (half types widen to float).
template <typename T> struct ComputeType { using type = T; };
template <> struct ComputeType<float16> { using type = float; };
template <> struct ComputeType<bfloat16> { using type = float; };

/// Rejects String/Undefined for ops that do arithmetic or comparisons.
inline Status requireNumericType(const ShapeContext &Ctx, size_t I) {
  const ElementType T = Ctx.Inputs[I].Type;
  if (T == ElementType::String || T == ElementType::Undefined)
    return Ctx.error(ErrorCode::Type, "input ", I, " has element type ", toString(T),
                     ", this op needs a numeric or bool tensor");
  return Status::ok();
}

/// Input helpers for harness cases (attribute ones: ir/Graph.h).
inline TestInput intsInput(std::vector<int64_t> Values, bool Constant = true, ElementType T = ElementType::I64) {
  std::vector<double> D(Values.begin(), Values.end());
  return valuesInput({static_cast<int64_t>(Values.size())}, std::move(D), T, Constant);
}
inline TestInput scalarInput(double V, ElementType T, bool Constant = true) { return valuesInput({}, {V}, T, Constant); }
inline OpTestCase withOutputs(OpTestCase C, int N) {
  C.NumOutputs = N;
  return C;
}

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
