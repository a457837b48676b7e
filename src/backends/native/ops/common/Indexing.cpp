// Folding, strided copies and index reading shared by the data-movement ops.
#include "backends/native/ops/common/Indexing.h"

#include <algorithm>

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

Status foldIfConstant(ShapeContext &Ctx, const ComputeFn &F, unsigned ShapeOnlyMask) {
  std::vector<TensorView> In(Ctx.Inputs.size());
  for (size_t I = 0; I < Ctx.Inputs.size(); ++I) {
    const ValueInfo &V = Ctx.Inputs[I];
    if (!V.Present)
      continue;
    if (V.Type == ElementType::String)
      return Status::ok();
    const bool ShapeOnly = I < 32 && (ShapeOnlyMask >> I) & 1u;
    if (!ShapeOnly && !V.Const)
      return Status::ok();
    if (V.Const) {
      if (!V.Const->Data && V.Const->Bytes)
        return Status::ok(); // read in place from the model file by its kernels: not folded
      In[I] = constView(*V.Const);
    } else {
      for (const Expr &D : V.Shape)
        if (!D.isConst())
          return Status::ok();
      In[I].Type = V.Type;
      In[I].Dims = V.Shape.getDims();
    }
  }
  std::vector<std::shared_ptr<ConstData>> Consts(Ctx.Outputs.size());
  std::vector<TensorView> Out(Ctx.Outputs.size());
  for (size_t I = 0; I < Ctx.Outputs.size(); ++I) {
    const ValueInfo &O = Ctx.Outputs[I];
    if (!O.Present)
      continue;
    if (O.Type == ElementType::String || O.Type == ElementType::Undefined)
      return Status::ok();
    for (const Expr &D : O.Shape)
      if (!D.isConst())
        return Status::ok();
    const std::vector<int64_t> Dims = O.Shape.getDims();
    if (product(Dims, 0, Dims.size()) > static_cast<int64_t>(MaxFoldElements))
      return Status::ok();
    Consts[I] = ConstData::allocate(O.Type, Dims);
    Out[I] = constView(*Consts[I]);
  }
  RETURN_IF_ERROR(F(Ctx.N, In, Out, Parallel()));
  for (size_t I = 0; I < Ctx.Outputs.size(); ++I)
    if (Consts[I])
      Ctx.Outputs[I].Const = Consts[I];
  return Status::ok();
}

std::vector<int64_t> stridesOf(const std::vector<int64_t> &Dims) {
  std::vector<int64_t> S(Dims.size(), 1);
  for (size_t I = Dims.size(); I-- > 1;)
    S[I - 1] = S[I] * Dims[I];
  return S;
}

Result<std::vector<int64_t>> readInts(const TensorView &V, const char *What) {
  ConstData C;
  C.Type = V.Type;
  C.Dims = V.Dims;
  C.Data = V.Data;
  C.Bytes = V.elementCount() * getElementSize(V.Type);
  auto R = C.toInt64Vector();
  if (!R.isOk())
    return makeError(ErrorCode::Type, What, ": ", R.status().message());
  return R;
}

Result<std::vector<int64_t>> constInts(const ShapeContext &Ctx, size_t I) {
  if (!isConstInput(Ctx, I))
    return makeError(ErrorCode::Model, "input ", I, " is not constant");
  auto R = Ctx.Inputs[I].Const->toInt64Vector();
  if (!R.isOk())
    return Ctx.error(ErrorCode::Type, "input ", I, ": ", R.status().message());
  return R;
}

void stridedCopyRef(const void *Src, void *Dst, size_t Elem, const StridedView &S) {
  const size_t R = S.Dims.size();
  const size_t N = static_cast<size_t>(product(S.Dims, 0, R));
  const char *In = static_cast<const char *>(Src);
  char *Out = static_cast<char *>(Dst);
  for (size_t T = 0; T < N; ++T) {
    size_t Rem = T;
    int64_t Off = S.Offset;
    for (size_t D = R; D-- > 0;) {
      Off += static_cast<int64_t>(Rem % static_cast<size_t>(S.Dims[D])) * S.Strides[D];
      Rem /= static_cast<size_t>(S.Dims[D]);
    }
    std::memcpy(Out + T * Elem, In + Off * static_cast<int64_t>(Elem), Elem);
  }
}

void stridedCopyFast(const void *Src, void *Dst, size_t Elem, const StridedView &S, const Parallel &Par) {
  // Drop unit dims and merge neighbours that walk memory as one dim.
  std::vector<int64_t> Dims, Strides;
  for (size_t I = 0; I < S.Dims.size(); ++I) {
    if (S.Dims[I] == 0)
      return;
    if (S.Dims[I] == 1)
      continue;
    if (!Dims.empty() && Strides.back() == S.Strides[I] * S.Dims[I]) {
      Dims.back() *= S.Dims[I];
      Strides.back() = S.Strides[I];
    } else {
      Dims.push_back(S.Dims[I]);
      Strides.push_back(S.Strides[I]);
    }
  }
  const char *In = static_cast<const char *>(Src) + S.Offset * static_cast<int64_t>(Elem);
  char *Out = static_cast<char *>(Dst);
  if (Dims.empty()) {
    std::memcpy(Out, In, Elem);
    return;
  }
  const size_t R = Dims.size();
  const int64_t Inner = Dims[R - 1], InnerStride = Strides[R - 1];
  const size_t Rows = static_cast<size_t>(product(Dims, 0, R - 1));
  const size_t RowBytes = static_cast<size_t>(Inner) * Elem;
  Par.forRange(Rows, std::max<size_t>(1, 16384 / std::max<size_t>(RowBytes, 1)), [&](size_t Lo, size_t Hi) {
    for (size_t T = Lo; T < Hi; ++T) {
      size_t Rem = T;
      int64_t Off = 0;
      for (size_t D = R - 1; D-- > 0;) {
        Off += static_cast<int64_t>(Rem % static_cast<size_t>(Dims[D])) * Strides[D];
        Rem /= static_cast<size_t>(Dims[D]);
      }
      const char *Row = In + Off * static_cast<int64_t>(Elem);
      char *O = Out + T * RowBytes;
      if (InnerStride == 1) {
        std::memcpy(O, Row, RowBytes);
      } else if (InnerStride == 0) {
        for (int64_t J = 0; J < Inner; ++J)
          copyElement(O + J * Elem, Row, Elem);
      } else {
        for (int64_t J = 0; J < Inner; ++J)
          copyElement(O + J * Elem, Row + J * InnerStride * static_cast<int64_t>(Elem), Elem);
      }
    }
  });
}

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
