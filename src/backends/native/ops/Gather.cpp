// Gather: picks slices of data along 'axis' at the given indices (i32/i64, negative counts from
// the end), any element type. Output dims: data[:axis] + indices + data[axis+1:]. Folded at load
// for small constant inputs (the Shape -> Gather step of shape subgraphs).
#include "backends/native/ops/common/Indexing.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

/// Checks and normalises one index against the axis size.
inline Result<int64_t> gatherIndex(int64_t Idx, int64_t Dim, const char *Kernel) {
  const int64_t I = Idx < 0 ? Idx + Dim : Idx;
  if (I < 0 || I >= Dim)
    return runError(Kernel, "index ", Idx, " is out of range [", -Dim, ", ", Dim - 1, "]");
  return I;
}

template <bool Blocked>
Status computeGather(const Node &N, const std::vector<TensorView> &In, const std::vector<TensorView> &Out,
                     const Parallel &Par) {
  const char *Name = Blocked ? "any_gather__blocked" : "any_gather__ref";
  const TensorView &X = In[0], &Idx = In[1], &Y = Out[0];
  ASSIGN_OR_RETURN(int64_t Axis, N.getInt("axis", 0));
  ASSIGN_OR_RETURN(Axis, normalizeAxis(N, "axis", Axis, static_cast<int64_t>(X.rank())));
  const size_t A = static_cast<size_t>(Axis);
  const int64_t Outer = product(X.Dims, 0, A), Dim = X.Dims[A], Inner = product(X.Dims, A + 1, X.rank());
  const size_t NumIdx = Idx.elementCount(), Elem = getElementSize(X.Type);
  std::vector<int64_t> Index(NumIdx);
  for (size_t I = 0; I < NumIdx; ++I) {
    ASSIGN_OR_RETURN(Index[I], gatherIndex(readIndex(Idx, I), Dim, Name));
  }
  if (Y.elementCount() != static_cast<size_t>(Outer * Inner) * NumIdx)
    return runError(Name, "output ", joinInts(Y.Dims), " does not match data ", joinInts(X.Dims), " and indices ",
                    joinInts(Idx.Dims));
  const char *Src = static_cast<const char *>(X.Data);
  char *Dst = static_cast<char *>(Y.Data);
  if (!Blocked) {
    for (int64_t O = 0; O < Outer; ++O)
      for (size_t I = 0; I < NumIdx; ++I)
        for (int64_t J = 0; J < Inner; ++J)
          std::memcpy(Dst + ((O * static_cast<int64_t>(NumIdx) + static_cast<int64_t>(I)) * Inner + J) * Elem,
                      Src + ((O * Dim + Index[I]) * Inner + J) * Elem, Elem);
    return Status::ok();
  }
  const size_t RowBytes = static_cast<size_t>(Inner) * Elem;
  Par.forRange(static_cast<size_t>(Outer) * NumIdx, std::max<size_t>(1, 16384 / std::max<size_t>(RowBytes, 1)),
               [&](size_t Lo, size_t Hi) {
                 for (size_t T = Lo; T < Hi; ++T) {
                   const size_t O = T / NumIdx, I = T % NumIdx;
                   std::memcpy(Dst + T * RowBytes, Src + (O * static_cast<size_t>(Dim) + Index[I]) * RowBytes, RowBytes);
                 }
               });
  return Status::ok();
}

OpSchema gatherSchema() {
  OpSchema S;
  S.OpType = "Gather";
  S.MinInputs = S.MaxInputs = 2;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireCopyableType(Ctx, 0));
    RETURN_IF_ERROR(requireIndexType(Ctx, 1));
    const TensorShape &X = Ctx.Inputs[0].Shape, &I = Ctx.Inputs[1].Shape;
    if (X.getRank() == 0)
      return Ctx.error(ErrorCode::Shape, "input 0 (data) must have rank >= 1, got a scalar");
    ASSIGN_OR_RETURN(int64_t Axis, Ctx.N.getInt("axis", 0));
    ASSIGN_OR_RETURN(Axis, normalizeAxis(Ctx.N, "axis", Axis, static_cast<int64_t>(X.getRank())));
    std::vector<Expr> Dims(X.begin(), X.begin() + Axis);
    Dims.insert(Dims.end(), I.begin(), I.end());
    Dims.insert(Dims.end(), X.begin() + Axis + 1, X.end());
    if (isConstInput(Ctx, 1) && X[static_cast<size_t>(Axis)].isConst()) {
      const int64_t Dim = X[static_cast<size_t>(Axis)].value();
      ASSIGN_OR_RETURN(const std::vector<int64_t> Idx, constInts(Ctx, 1));
      for (int64_t V : Idx)
        if (V < -Dim || V >= Dim)
          return Ctx.error(ErrorCode::Shape, "input 1 (indices) value ", V, " is out of range [", -Dim, ", ", Dim - 1,
                           "] for axis ", Axis, " of data ", X.toString());
    }
    Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
    Ctx.Outputs[0].Shape = TensorShape(std::move(Dims));
    return foldIfConstant(Ctx, computeGather<false>);
  };
  return S;
}

/// The blocked Gather reading a constant table that stayed in the model file (an initializer the
/// importer left uncopied: ConstData::Source, any alignment; rows are copied with memcpy), so only
/// the rows a run reads are ever resident. Tables with an aligned working copy read that.
class GatherFromConstKernel : public Kernel {
public:
  GatherFromConstKernel(Node N, const void *Table) : N(std::move(N)), Table(Table) {}
  Status run(const KernelContext &Ctx) const override {
    std::vector<TensorView> In = Ctx.Inputs;
    if (!In[0].Data)
      In[0].Data = const_cast<void *>(Table);
    return computeGather<true>(N, In, Ctx.Outputs, Ctx.Par);
  }

private:
  Node N;
  const void *Table;
};

OpKernels gatherKernels() {
  OpKernels K;
  K.OpType = "Gather";
  K.Variants.push_back(computeVariant("any_gather__ref", 0, computeGather<false>));
  K.Variants.push_back(computeVariant("any_gather__blocked", 10, computeGather<true>));
  K.Variants.push_back({"any_gather__const_table", 20,
                        [](const KernelCreateInfo &I) {
                          return I.Inputs[0].Const && !I.Inputs[0].Const->Data && I.Inputs[0].Const->Source;
                        },
                        [](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
                          return makeKernel<GatherFromConstKernel>(I.N, I.Inputs[0].Const->Source);
                        }});
  K.TestCases = [] {
    const auto idx = [](std::vector<int64_t> Dims, std::vector<double> V, ElementType T = ElementType::I64) {
      return valuesInput(std::move(Dims), std::move(V), T, false);
    };
    return std::vector<OpTestCase>{
        testCase("axis0", {tensorInput({5, 4}), idx({3}, {0, 4, 2})}),
        testCase("axis1_2d_idx", {tensorInput({3, 5, 2}), idx({2, 2}, {1, -1, 0, 3})}, {{"axis", attrInt(1)}}),
        testCase("neg_axis_i32", {tensorInput({3, 4}), idx({2}, {3, -4}, ElementType::I32)}, {{"axis", attrInt(-1)}}),
        testCase("scalar_idx", {tensorInput({4, 3}), idx({}, {2})}),
        testCase("shape_vector", {intsInput({2, 3, 4}), valuesInput({}, {0}, ElementType::I64, true)}),
        testCase("u8_embedding", {typedInputs({10, 8}, ElementType::U8)[0], idx({2, 3}, {9, 0, 1, 1, 5, 7})}),
        testCase("empty_idx", {tensorInput({3, 2}), idx({0}, {})}),
        testCase("big_rows", {tensorInput({64, 300}), idx({40}, {5, 1, 63, 0, 7, 7, 12, 33})}),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(Gather, gatherSchema());
OPT_REGISTER_KERNELS(Gather, gatherKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
