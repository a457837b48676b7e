// Shared by Cast and CastLike: the ONNX data-type codes, and a kernel converting between any two
// of bool, the integer types, f16, bf16, f32 and f64 (float -> int truncates toward zero and
// saturates, NaN -> 0; anything -> bool is "!= 0"; f64 -> f16/bf16 rounds through f32).
#pragma once

#include "backends/native/ops/common/ElementwiseCommon.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

/// TensorProto.DataType code -> ElementType; TypeError naming the code for unsupported ones
/// (string, complex, float8, int4/uint4, float4, ...).
inline Result<ElementType> elementTypeFromOnnx(const ShapeContext &Ctx, const char *Attr, int64_t Code) {
  switch (Code) {
  case 1: return ElementType::F32;
  case 2: return ElementType::U8;
  case 3: return ElementType::I8;
  case 4: return ElementType::U16;
  case 5: return ElementType::I16;
  case 6: return ElementType::I32;
  case 7: return ElementType::I64;
  case 9: return ElementType::Bool;
  case 10: return ElementType::F16;
  case 11: return ElementType::F64;
  case 12: return ElementType::U32;
  case 13: return ElementType::U64;
  case 16: return ElementType::BF16;
  default: break;
  }
  const char *Name = "an unknown type";
  switch (Code) {
  case 8: Name = "string"; break;
  case 14: Name = "complex64"; break;
  case 15: Name = "complex128"; break;
  case 17: Name = "float8e4m3fn"; break;
  case 18: Name = "float8e4m3fnuz"; break;
  case 19: Name = "float8e5m2"; break;
  case 20: Name = "float8e5m2fnuz"; break;
  case 21: Name = "uint4"; break;
  case 22: Name = "int4"; break;
  case 23: Name = "float4e2m1"; break;
  case 24: Name = "float8e8m0"; break;
  default: break;
  }
  return Ctx.error(ErrorCode::Type, "attribute '", Attr, "' value ", Code, " (", Name,
                   ") is not an element type the native backend supports");
}

/// Types Cast converts between.
inline bool castableType(ElementType T) {
  return T != ElementType::String && T != ElementType::Undefined;
}

using CastFn = void (*)(const void *, void *, size_t, size_t);

template <typename From, typename To> void castRange(const void *In, void *Out, size_t Lo, size_t Hi) {
  const From *X = static_cast<const From *>(In);
  To *Y = static_cast<To *>(Out);
  for (size_t I = Lo; I < Hi; ++I)
    Y[I] = convertValue<To>(X[I]);
}

template <typename From> CastFn castFnTo(ElementType To) {
  switch (To) {
  case ElementType::Bool: return castRange<From, bool>;
  case ElementType::I8: return castRange<From, int8_t>;
  case ElementType::I16: return castRange<From, int16_t>;
  case ElementType::I32: return castRange<From, int32_t>;
  case ElementType::I64: return castRange<From, int64_t>;
  case ElementType::U8: return castRange<From, uint8_t>;
  case ElementType::U16: return castRange<From, uint16_t>;
  case ElementType::U32: return castRange<From, uint32_t>;
  case ElementType::U64: return castRange<From, uint64_t>;
  case ElementType::F16: return castRange<From, float16>;
  case ElementType::BF16: return castRange<From, bfloat16>;
  case ElementType::F32: return castRange<From, float>;
  case ElementType::F64: return castRange<From, double>;
  default: return nullptr;
  }
}

inline CastFn castFn(ElementType From, ElementType To) {
  switch (From) {
  case ElementType::Bool: return castFnTo<bool>(To);
  case ElementType::I8: return castFnTo<int8_t>(To);
  case ElementType::I16: return castFnTo<int16_t>(To);
  case ElementType::I32: return castFnTo<int32_t>(To);
  case ElementType::I64: return castFnTo<int64_t>(To);
  case ElementType::U8: return castFnTo<uint8_t>(To);
  case ElementType::U16: return castFnTo<uint16_t>(To);
  case ElementType::U32: return castFnTo<uint32_t>(To);
  case ElementType::U64: return castFnTo<uint64_t>(To);
  case ElementType::F16: return castFnTo<float16>(To);
  case ElementType::BF16: return castFnTo<bfloat16>(To);
  case ElementType::F32: return castFnTo<float>(To);
  case ElementType::F64: return castFnTo<double>(To);
  default: return nullptr;
  }
}

/// Converts input 0 to output 0's type (the types come from the bound tensors).
class CastKernel : public Kernel {
public:
  CastKernel(std::string Name, bool Parallel) : Name(std::move(Name)), Par(Parallel) {}
  Status run(const KernelContext &Ctx) const override {
    const TensorView &X = Ctx.Inputs[0], &Y = Ctx.Outputs[0];
    if (X.elementCount() != Y.elementCount())
      return runError(Name.c_str(), "input and output element counts differ");
    const size_t N = X.elementCount();
    if (X.Type == Y.Type) {
      if (N)
        std::memcpy(Y.Data, X.Data, N * getElementSize(X.Type));
      return Status::ok();
    }
    const CastFn Fn = castFn(X.Type, Y.Type);
    if (!Fn)
      return runError(Name.c_str(), "cannot convert ", toString(X.Type), " to ", toString(Y.Type));
    if (Par)
      Ctx.Par.forRange(N, 16384, [&](size_t Lo, size_t Hi) { Fn(X.Data, Y.Data, Lo, Hi); });
    else
      Fn(X.Data, Y.Data, 0, N);
    return Status::ok();
  }

private:
  std::string Name;
  bool Par;
};

inline KernelVariant castVariant(const std::string &Name, bool Parallel) {
  return {Name, Parallel ? 10 : 0, nullptr,
          [Name, Parallel](const KernelCreateInfo &) { return makeKernel<CastKernel>(Name, Parallel); }};
}

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
