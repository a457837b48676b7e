// Shared by Cast and CastLike: the ONNX data-type codes, and a kernel converting between any two
// of bool, the integer types, f16, bf16, f32 and f64 (float -> int truncates toward zero and
// saturates, NaN -> 0; anything -> bool is "!= 0"; f64 -> f16/bf16 rounds through f32), and the
// low-precision types (float8 variants, float8e8m0, float4e2m1, int4/uint4/int2/uint2) to and from
// all of those, by the rules of core/LowPrecision.h ('saturate' and 'round_mode' attributes).
#pragma once

#include "backends/native/ops/common/ElementwiseCommon.h"
#include "core/OnnxDataType.h"
#include "core/LowPrecision.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

/// TensorProto.DataType code -> ElementType; TypeError naming the code for unsupported ones
/// (string, complex, float6, ...).
inline Result<ElementType> elementTypeFromOnnx(const ShapeContext &Ctx, const char *Attr, int64_t Code) {
  const ElementType Numeric = numericTypeOfOnnxCode(Code);
  if (Numeric != ElementType::Undefined)
    return Numeric;
  const ElementType Low = lowp::fromOnnxDataType(Code);
  if (Low != ElementType::Undefined)
    return Low;
  const char *Name = "an unknown type";
  switch (Code) {
  case 8: Name = "string"; break;
  case 14: Name = "complex64"; break;
  case 15: Name = "complex128"; break;
  case 27: Name = "float6e2m3"; break;
  case 28: Name = "float6e3m2"; break;
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

/// The attributes that matter for low-precision targets.
struct CastOptions {
  bool Saturate = true;                                   ///< float8 targets: clamp instead of inf/NaN
  lowp::E8M0Rounding Rounding = lowp::E8M0Rounding::Up;   ///< float8e8m0 targets
};

/// 'saturate' (0/1) and 'round_mode' ("up", "down", "nearest"); ModelError naming the node.
inline Result<CastOptions> parseCastOptions(const Node &N) {
  CastOptions O;
  ASSIGN_OR_RETURN(const int64_t Saturate, N.getInt("saturate", 1));
  if (Saturate != 0 && Saturate != 1)
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'saturate' must be 0 or 1, got ", Saturate);
  O.Saturate = Saturate != 0;
  ASSIGN_OR_RETURN(const std::string Mode, N.getString("round_mode", "up"));
  if (Mode == "up")
    O.Rounding = lowp::E8M0Rounding::Up;
  else if (Mode == "down")
    O.Rounding = lowp::E8M0Rounding::Down;
  else if (Mode == "nearest")
    O.Rounding = lowp::E8M0Rounding::Nearest;
  else
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'round_mode' must be 'up', 'down' or 'nearest', got '",
                     Mode, "'");
  return O;
}

/// Casts [Lo, Hi) when either side is a low-precision type, in blocks through a double or int64
/// buffer: float-like sources go through double (exact for every type but 64-bit integers),
/// integer sources to sub-byte integers through int64 (keep the low bits). Any two castableType()s.
inline void castLowPrecisionRange(ElementType From, ElementType To, const CastOptions &O, const void *In, void *Out,
                                  size_t Lo, size_t Hi) {
  const uint8_t *X8 = static_cast<const uint8_t *>(In);
  uint8_t *Y8 = static_cast<uint8_t *>(Out);
  const bool ToLow = lowp::isLowPrecision(To);
  // Sub-byte integers are stored as valid int8 / uint8 values: read them as such.
  const ElementType FromStorage = From == ElementType::I4 || From == ElementType::I2   ? ElementType::I8
                                  : From == ElementType::U4 || From == ElementType::U2 ? ElementType::U8
                                                                                       : From;
  if (!ToLow && lowp::isSubByteInt(From)) {
    castFn(FromStorage, To)(In, Out, Lo, Hi);
    return;
  }
  const bool IntSource = !lowp::isLowPrecisionFloat(From) && !isFloatType(From);
  constexpr size_t Block = 512;
  double D[Block];
  int64_t I64[Block];
  for (size_t B = Lo; B < Hi; B += Block) {
    const size_t N = std::min(Block, Hi - B);
    // Source values of this block.
    if (lowp::isLowPrecisionFloat(From)) {
      for (size_t I = 0; I < N; ++I)
        D[I] = lowp::lowPrecisionToDouble(From, X8[B + I]);
    } else if (IntSource && lowp::isSubByteInt(To)) {
      castFn(FromStorage, ElementType::I64)(X8 + B * getElementSize(FromStorage), I64, 0, N);
    } else {
      castFn(FromStorage, ElementType::F64)(X8 + B * getElementSize(FromStorage), D, 0, N);
    }
    // Destination.
    if (lowp::isSubByteInt(To)) {
      if (IntSource)
        for (size_t I = 0; I < N; ++I)
          Y8[B + I] = lowp::fromLowBits(To, I64[I]);
      else
        for (size_t I = 0; I < N; ++I)
          Y8[B + I] = lowp::castFloatToSubByteInt(To, D[I]);
    } else if (ToLow) {
      for (size_t I = 0; I < N; ++I)
        Y8[B + I] = lowp::doubleToLowPrecision(To, D[I], O.Saturate, O.Rounding);
    } else {
      // Low-precision float source: every value is exact in double; convert like f64 -> To.
      castFn(ElementType::F64, To)(D, Y8 + B * getElementSize(To), 0, N);
    }
  }
}

/// Converts input 0 to output 0's type (the types come from the bound tensors).
class CastKernel : public Kernel {
public:
  CastKernel(std::string Name, bool Parallel, CastOptions Options = CastOptions())
      : Name(std::move(Name)), Par(Parallel), Opts(Options) {}
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
    if (lowp::isLowPrecision(X.Type) || lowp::isLowPrecision(Y.Type)) {
      if (!castableType(X.Type) || !castableType(Y.Type))
        return runError(Name.c_str(), "cannot convert ", toString(X.Type), " to ", toString(Y.Type));
      const auto Run = [&](size_t Lo, size_t Hi) { castLowPrecisionRange(X.Type, Y.Type, Opts, X.Data, Y.Data, Lo, Hi); };
      if (Par)
        Ctx.Par.forRange(N, 16384, Run);
      else
        Run(0, N);
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
  CastOptions Opts;
};

/// A Cast / CastLike kernel with the node's 'saturate' and 'round_mode'.
inline Result<std::unique_ptr<Kernel>> makeCastKernel(const KernelCreateInfo &I, const std::string &Name, bool Parallel) {
  ASSIGN_OR_RETURN(const CastOptions O, parseCastOptions(I.N));
  return makeKernel<CastKernel>(Name, Parallel, O);
}

inline KernelVariant castVariant(const std::string &Name, bool Parallel) {
  return {Name, Parallel ? 10 : 0, nullptr,
          [Name, Parallel](const KernelCreateInfo &I) { return makeCastKernel(I, Name, Parallel); }};
}

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
