// Shared implementation of the broadcasting binary ops (Add, Sub, Mul, Div; f32, f64 and every
// integer width): schema, a reference
// kernel (per-element index arithmetic), a fast kernel (same shape, scalar and row/column
// broadcast loops split over the thread pool), and common harness cases. Each op's own file
// supplies the arithmetic and registers it.
#pragma once

#include <type_traits>

#include "backends/native/ops/common/ElementwiseCommon.h"
#include "backends/native/ops/common/OpUtil.h"
#include "backends/native/ops/common/SimdDispatch.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

/// Integer arithmetic wraps (through an unsigned type at least as wide as `unsigned`, so small
/// types do not promote to signed int and overflow) instead of being undefined on overflow.
template <typename T, bool = std::is_integral<T>::value> struct WrapTypeOf { using type = T; };
template <typename T> struct WrapTypeOf<T, true> {
  using type = typename std::conditional<(sizeof(T) < sizeof(unsigned)), unsigned,
                                         typename std::make_unsigned<T>::type>::type;
};
template <typename T> using WrapType = typename WrapTypeOf<T>::type;

/// Element strides of In broadcast to OutDims (0 along broadcast dims).
inline std::vector<int64_t> broadcastStrides(const std::vector<int64_t> &In, const std::vector<int64_t> &OutDims) {
  const size_t R = OutDims.size();
  std::vector<int64_t> S(R, 0);
  int64_t Stride = 1;
  for (size_t I = In.size(); I-- > 0;) {
    const size_t O = I + R - In.size();
    S[O] = In[I] == 1 ? 0 : Stride;
    Stride *= In[I];
  }
  return S;
}

inline Status checkBroadcast(const char *Name, const TensorView &A, const TensorView &B, const TensorView &Y) {
  const size_t R = Y.rank();
  if (A.rank() > R || B.rank() > R)
    return runError(Name, "input rank exceeds output rank");
  for (size_t I = 0; I < R; ++I) {
    const int64_t DA = I + A.rank() >= R ? A.Dims[I + A.rank() - R] : 1;
    const int64_t DB = I + B.rank() >= R ? B.Dims[I + B.rank() - R] : 1;
    if ((DA != Y.Dims[I] && DA != 1) || (DB != Y.Dims[I] && DB != 1))
      return runError(Name, "input shapes ", joinInts(A.Dims), " and ", joinInts(B.Dims),
                      " do not broadcast to the output ", joinInts(Y.Dims));
  }
  return Status::ok();
}

/// Integer division by zero would trap (SIGFPE); report it instead of killing the host.
template <typename Op, typename T> Status checkDivisor(const TensorView &B) {
  if (Op::IsDivision && std::is_integral<T>::value) {
    const T *P = B.data<T>();
    for (size_t I = 0, N = B.elementCount(); I < N; ++I)
      if (P[I] == 0)
        return makeError(ErrorCode::Infer, "integer division by zero");
  }
  return Status::ok();
}

template <typename Op, typename T> class BinaryRefKernel : public Kernel {
public:
  explicit BinaryRefKernel(std::string Name) : Name(std::move(Name)) {}
  Status run(const KernelContext &Ctx) const override {
    const TensorView &A = Ctx.Inputs[0], &B = Ctx.Inputs[1], &Y = Ctx.Outputs[0];
    RETURN_IF_ERROR(checkBroadcast(Name.c_str(), A, B, Y));
    RETURN_IF_ERROR((checkDivisor<Op, T>(B)));
    const std::vector<int64_t> SA = broadcastStrides(A.Dims, Y.Dims), SB = broadcastStrides(B.Dims, Y.Dims);
    const T *PA = A.data<T>(), *PB = B.data<T>();
    T *PY = Y.data<T>();
    const size_t N = Y.elementCount(), R = Y.rank();
    for (size_t I = 0; I < N; ++I) {
      // Decode the output index, innermost dim first.
      size_t Rem = I;
      int64_t OA = 0, OB = 0;
      for (size_t D = R; D-- > 0;) {
        const int64_t Idx = static_cast<int64_t>(Rem % static_cast<size_t>(Y.Dims[D]));
        Rem /= static_cast<size_t>(Y.Dims[D]);
        OA += Idx * SA[D];
        OB += Idx * SB[D];
      }
      PY[I] = Op::template apply<T>(PA[OA], PB[OB]);
    }
    return Status::ok();
  }

private:
  std::string Name;
};

template <typename Op, typename T> class BinaryFastKernel : public Kernel {
  using RowFn = void (*)(const T *, const T *, T *, int64_t, int64_t, int64_t);

  /// Out[0:Inner) = A op B along a row; IncA / IncB are the inputs' steps (0: a broadcast scalar).
  static void row(const T *RA, const T *RB, T *Out, int64_t IncA, int64_t IncB, int64_t Inner) {
    if (IncA == 1 && IncB == 1) {
      for (int64_t J = 0; J < Inner; ++J)
        Out[J] = Op::template apply<T>(RA[J], RB[J]);
    } else if (IncA == 1 && IncB == 0) {
      const T S = RB[0];
      for (int64_t J = 0; J < Inner; ++J)
        Out[J] = Op::template apply<T>(RA[J], S);
    } else if (IncA == 0 && IncB == 1) {
      const T S = RA[0];
      for (int64_t J = 0; J < Inner; ++J)
        Out[J] = Op::template apply<T>(S, RB[J]);
    } else {
      for (int64_t J = 0; J < Inner; ++J)
        Out[J] = Op::template apply<T>(RA[J * IncA], RB[J * IncB]);
    }
  }
  /// row() compiled for AVX-512 (SimdDispatch.h): float rows take it where the CPU has it.
  OPT_TARGET_AVX512 static void rowAvx512(const T *RA, const T *RB, T *Out, int64_t IncA, int64_t IncB, int64_t Inner) {
    row(RA, RB, Out, IncA, IncB, Inner);
  }

public:
  explicit BinaryFastKernel(std::string Name) : Name(std::move(Name)) {}

  Status run(const KernelContext &Ctx) const override {
    const TensorView &A = Ctx.Inputs[0], &B = Ctx.Inputs[1], &Y = Ctx.Outputs[0];
    RETURN_IF_ERROR(checkBroadcast(Name.c_str(), A, B, Y));
    RETURN_IF_ERROR((checkDivisor<Op, T>(B)));
    const T *PA = A.data<T>(), *PB = B.data<T>();
    T *PY = Y.data<T>();
    const size_t N = Y.elementCount(), NA = A.elementCount(), NB = B.elementCount();
    constexpr size_t Grain = 16384;
    const RowFn Row = std::is_same<T, float>::value && simdAvx512() ? rowAvx512 : row;
    // Same-size operands or one scalar: the whole tensor is one row, split over the pool.
    if (N == NA || N == NB || NA == 1 || NB == 1) {
      const int64_t IncA = NA == N ? 1 : 0, IncB = NB == N ? 1 : 0;
      if ((IncA || NA == 1) && (IncB || NB == 1)) {
        Ctx.Par.forRange(N, Grain, [&](size_t Lo, size_t Hi) {
          Row(PA + (IncA ? Lo : 0), PB + (IncB ? Lo : 0), PY + Lo, IncA, IncB, static_cast<int64_t>(Hi - Lo));
        });
        return Status::ok();
      }
    }
    // General case: collapse to [Outer, Inner] rows where the innermost run is either contiguous
    // or a broadcast scalar for each operand, then loop rows in parallel.
    const std::vector<int64_t> SA = broadcastStrides(A.Dims, Y.Dims), SB = broadcastStrides(B.Dims, Y.Dims);
    const size_t R = Y.rank();
    const int64_t Inner = R ? Y.Dims[R - 1] : 1;
    const int64_t IncA = R ? SA[R - 1] : 0, IncB = R ? SB[R - 1] : 0;
    const size_t Rows = Inner ? N / static_cast<size_t>(Inner) : 0;
    Ctx.Par.forRange(Rows, std::max<size_t>(1, Grain / static_cast<size_t>(std::max<int64_t>(Inner, 1))),
                     [&](size_t Lo, size_t Hi) {
                       for (size_t Row_ = Lo; Row_ < Hi; ++Row_) {
                         size_t Rem = Row_;
                         int64_t OA = 0, OB = 0;
                         for (size_t D = R - 1; D-- > 0;) {
                           const int64_t Idx = static_cast<int64_t>(Rem % static_cast<size_t>(Y.Dims[D]));
                           Rem /= static_cast<size_t>(Y.Dims[D]);
                           OA += Idx * SA[D];
                           OB += Idx * SB[D];
                         }
                         Row(PA + OA, PB + OB, PY + Row_ * static_cast<size_t>(Inner), IncA, IncB, Inner);
                       }
                     });
    return Status::ok();
  }

private:
  std::string Name;
};

template <typename Op, typename T>
void addBinaryVariants(std::vector<KernelVariant> &Out, const std::string &TypeName, const std::string &OpName) {
  const ElementType ET = ElementTypeOf<T>::value;
  const auto Supports = [ET](const KernelCreateInfo &I) { return inputIs(I, 0, ET) && inputIs(I, 1, ET); };
  const std::string Ref = TypeName + "_" + OpName + "__ref", Fast = TypeName + "_" + OpName + "__fast";
  Out.push_back({Ref, 0, Supports, [Ref](const KernelCreateInfo &) { return makeKernel<BinaryRefKernel<Op, T>>(Ref); }});
  Out.push_back({Fast, 10, Supports,
                 [Fast](const KernelCreateInfo &) { return makeKernel<BinaryFastKernel<Op, T>>(Fast); }});
}

/// Cases every binary op runs: each broadcast pattern in f32, every other type once, and int64
/// values beyond the int32 range. DivisorLow/High keep integer divisors away from zero.
inline std::vector<OpTestCase> binaryElementwiseCases(bool IsDivision) {
  std::vector<OpTestCase> Cases;
  const auto add = [&](const std::string &Label, std::vector<int64_t> DA, std::vector<int64_t> DB, ElementType T,
                       double Lo, double Hi) {
    TestInput A = tensorInput(std::move(DA), T), B = tensorInput(std::move(DB), T);
    A.Low = Lo, A.High = Hi;
    if (IsDivision) {
      B.Low = 1, B.High = 9; // strictly positive divisors
    } else {
      B.Low = Lo, B.High = Hi;
    }
    Cases.push_back(testCase(Label, {A, B}));
  };
  const ElementType F32 = ElementType::F32;
  add("same_shape", {2, 3, 4}, {2, 3, 4}, F32, -1, 1);
  add("large_same_shape", {4, 64, 129}, {4, 64, 129}, F32, -1, 1);
  add("scalar_rhs", {3, 5}, {}, F32, -1, 1);
  add("scalar_lhs", {}, {3, 5}, F32, -1, 1);
  add("one_element_rhs", {2, 3}, {1, 1}, F32, -1, 1);
  add("row_broadcast", {2, 3, 4}, {4}, F32, -1, 1);
  add("column_broadcast", {2, 3, 4}, {3, 1}, F32, -1, 1);
  add("lhs_broadcast", {4}, {2, 3, 4}, F32, -1, 1);
  add("bidirectional", {2, 1, 4}, {3, 1}, F32, -1, 1);
  add("middle_broadcast", {2, 1, 5}, {2, 3, 5}, F32, -1, 1);
  add("empty", {0, 3}, {3}, F32, -1, 1);
  add("f64", {3, 4}, {4}, ElementType::F64, -1, 1);
  add("i32", {3, 4}, {3, 4}, ElementType::I32, -100, 100);
  add("i32_broadcast", {3, 4}, {1, 4}, ElementType::I32, -100, 100);
  add("i64", {3, 4}, {4}, ElementType::I64, -100, 100);
  add("i64_beyond_i32", {2, 8}, {2, 8}, ElementType::I64, -4e12, 4e12);
  if (IsDivision) {
    // Negative integer divisors: truncating division.
    TestInput A = tensorInput({4, 4}, ElementType::I32), B = tensorInput({4, 4}, ElementType::I32);
    A.Low = -100, A.High = 100, B.Low = -9, B.High = -1;
    Cases.push_back(testCase("i32_negative_divisor", {A, B}));
  }
  return Cases;
}

/// The reference kernel for the node's element type (load-time folding).
template <typename Op> Result<std::unique_ptr<Kernel>> binaryRefKernelFor(const KernelCreateInfo &I) {
  const std::string Name = std::string("fold_") + I.N.OpType;
  switch (I.Inputs[0].Type) {
  case ElementType::F32: return makeKernel<BinaryRefKernel<Op, float>>(Name);
  case ElementType::F64: return makeKernel<BinaryRefKernel<Op, double>>(Name);
  case ElementType::I8: return makeKernel<BinaryRefKernel<Op, int8_t>>(Name);
  case ElementType::I16: return makeKernel<BinaryRefKernel<Op, int16_t>>(Name);
  case ElementType::I32: return makeKernel<BinaryRefKernel<Op, int32_t>>(Name);
  case ElementType::I64: return makeKernel<BinaryRefKernel<Op, int64_t>>(Name);
  case ElementType::U8: return makeKernel<BinaryRefKernel<Op, uint8_t>>(Name);
  case ElementType::U16: return makeKernel<BinaryRefKernel<Op, uint16_t>>(Name);
  case ElementType::U32: return makeKernel<BinaryRefKernel<Op, uint32_t>>(Name);
  case ElementType::U64: return makeKernel<BinaryRefKernel<Op, uint64_t>>(Name);
  default: return makeError(ErrorCode::Type, I.N.describe(), ": no kernel for element type ", toString(I.Inputs[0].Type));
  }
}

/// Schema: types, broadcasting, and folding of small constant operands at load (exported shape
/// arithmetic such as Sub(Size(Shape(x)), axis) must be known for the Reshape that follows).
template <typename Op> OpSchema binaryElementwiseSchema(const char *OpType) {
  OpSchema S;
  S.OpType = OpType;
  S.MinInputs = S.MaxInputs = 2;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    // Every integer width: the ONNX node tests use all of them.
    RETURN_IF_ERROR(requireInputType(Ctx, 0,
                                     {ElementType::F32, ElementType::F64, ElementType::I8, ElementType::I16, ElementType::I32,
                                      ElementType::I64, ElementType::U8, ElementType::U16, ElementType::U32, ElementType::U64}));
    RETURN_IF_ERROR(requireSameType(Ctx, 0, 1));
    auto Shape = broadcastShapes(Ctx.Inputs[0].Shape, Ctx.Inputs[1].Shape);
    if (!Shape.isOk())
      return Shape.status().withContext(Ctx.N.describe());
    Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
    Ctx.Outputs[0].Shape = *Shape;
    return foldWithKernel(Ctx, binaryRefKernelFor<Op>);
  };
  return S;
}

template <typename Op> OpKernels binaryElementwiseKernels(const char *OpType, const std::string &OpName) {
  OpKernels K;
  K.OpType = OpType;
  addBinaryVariants<Op, float>(K.Variants, "f32", OpName);
  addBinaryVariants<Op, double>(K.Variants, "f64", OpName);
  addBinaryVariants<Op, int32_t>(K.Variants, "i32", OpName);
  addBinaryVariants<Op, int64_t>(K.Variants, "i64", OpName);
  addBinaryVariants<Op, int8_t>(K.Variants, "i8", OpName);
  addBinaryVariants<Op, int16_t>(K.Variants, "i16", OpName);
  addBinaryVariants<Op, uint8_t>(K.Variants, "u8", OpName);
  addBinaryVariants<Op, uint16_t>(K.Variants, "u16", OpName);
  addBinaryVariants<Op, uint32_t>(K.Variants, "u32", OpName);
  addBinaryVariants<Op, uint64_t>(K.Variants, "u64", OpName);
  K.TestCases = [] { return binaryElementwiseCases(Op::IsDivision); };
  return K;
}

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
