// Gather: picks slices of data along 'axis' at the given indices (i32/i64, negative counts from
// the end), any element type. Output dims: data[:axis] + indices + data[axis+1:]. Folded at load
// for small constant inputs (the Shape -> Gather step of shape subgraphs).
#include <mutex>
#include <numeric>

#include "backends/native/ops/common/Indexing.h"
#include "backends/native/ops/common/ThreadScratch.h"
#include "core/SourceRelease.h"

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

/// A run's geometry: data is Outer blocks of Dim rows of Inner elements along the axis.
struct GatherDims {
  int64_t Outer, Dim, Inner;
  size_t NumIdx, Elem;
};

/// The geometry for data X, indices Idx and output Y, checked against each other.
Result<GatherDims> gatherDims(const Node &N, const TensorView &X, const TensorView &Idx, const TensorView &Y,
                              const char *Name) {
  ASSIGN_OR_RETURN(int64_t Axis, N.getInt("axis", 0));
  ASSIGN_OR_RETURN(Axis, normalizeAxis(N, "axis", Axis, static_cast<int64_t>(X.rank())));
  const size_t A = static_cast<size_t>(Axis);
  const GatherDims G{product(X.Dims, 0, A), X.Dims[A], product(X.Dims, A + 1, X.rank()), Idx.elementCount(),
                     getElementSize(X.Type)};
  if (Y.elementCount() != static_cast<size_t>(G.Outer * G.Inner) * G.NumIdx)
    return runError(Name, "output ", joinInts(Y.Dims), " does not match data ", joinInts(X.Dims), " and indices ",
                    joinInts(Idx.Dims));
  return G;
}

template <bool Blocked>
Status computeGather(const Node &N, const std::vector<TensorView> &In, const std::vector<TensorView> &Out,
                     const Parallel &Par) {
  const char *Name = Blocked ? "any_gather__blocked" : "any_gather__ref";
  const TensorView &X = In[0], &Idx = In[1], &Y = Out[0];
  ASSIGN_OR_RETURN(const GatherDims G, gatherDims(N, X, Idx, Y, Name));
  const int64_t Outer = G.Outer, Dim = G.Dim, Inner = G.Inner;
  const size_t NumIdx = G.NumIdx, Elem = G.Elem;
  std::vector<int64_t> Index(NumIdx);
  for (size_t I = 0; I < NumIdx; ++I) {
    ASSIGN_OR_RETURN(Index[I], gatherIndex(readIndex(Idx, I), Dim, Name));
  }
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

/// Tables of at least this size that lie in a file the loader mapped are read from the file
/// (GatherFileRowsKernel). Smaller ones are copied out of an ONNX file at import, and a compiled
/// folder's weights.bin holds them among the small constants a run reads anyway.
constexpr size_t kFileTableMinBytes = size_t{64} << 10;

/// The Gather of a constant table that lies in a file the loader mapped (an embedding table in a
/// compiled folder's weights.bin or in an ONNX file): each run reads the rows it wants from the
/// file (pread) straight into the output, never through the mapping. Through the mapping, a file
/// written or copied in big writes sits in the page cache in large folios and this kernel (Linux
/// 6.18) maps a whole folio per fault: BERT-mini's 128 rows of its 31 MB table made 32 MiB of the
/// table resident (RssFile, counted in peak RSS). Read from the file, none of it is; the rows
/// stay in the page cache, shared and reclaimable. A read costs a system call (0.5-1 us) where the
/// mapping costs a memcpy, so rows adjacent in both the table and the output are read at once
/// (position embeddings: one read), and a row wanted more than once is read once and copied.
class GatherFileRowsKernel : public Kernel {
public:
  GatherFileRowsKernel(Node N, SourceFileRange Table) : N(std::move(N)), Table(std::move(Table)) {}
  Status run(const KernelContext &Ctx) const override {
    const char *Name = "any_gather__file_rows";
    const TensorView &X = Ctx.Inputs[0], &Idx = Ctx.Inputs[1], &Y = Ctx.Outputs[0];
    ASSIGN_OR_RETURN(const GatherDims G, gatherDims(N, X, Idx, Y, Name));
    const size_t Count = static_cast<size_t>(G.Outer) * G.NumIdx, RowBytes = static_cast<size_t>(G.Inner) * G.Elem;
    if (!Count || !RowBytes)
      return Status::ok();
    ScratchFrame Frame;
    // Row[T]: the table row output row T copies; From[T]: T for the first output row of each
    // table row (read from the file), else that first one (copied from the output).
    uint64_t *Row = Frame.take<uint64_t>(Count);
    size_t *Order = Frame.take<size_t>(Count), *From = Frame.take<size_t>(Count);
    for (size_t I = 0; I < G.NumIdx; ++I) {
      ASSIGN_OR_RETURN(const int64_t Index, gatherIndex(readIndex(Idx, I), G.Dim, Name));
      for (int64_t O = 0; O < G.Outer; ++O)
        Row[static_cast<size_t>(O) * G.NumIdx + I] = static_cast<uint64_t>(O * G.Dim + Index);
    }
    std::iota(Order, Order + Count, size_t{0});
    std::sort(Order, Order + Count, [Row](size_t A, size_t B) { return Row[A] != Row[B] ? Row[A] < Row[B] : A < B; });
    for (size_t K = 0; K < Count; ++K)
      From[Order[K]] = K && Row[Order[K - 1]] == Row[Order[K]] ? From[Order[K - 1]] : Order[K];
    // The reads: runs of first output rows that are adjacent in the output and in the table
    // (Order's storage is free again: it holds where each run starts).
    size_t *RunStart = Order, Runs = 0;
    for (size_t T = 0; T < Count; ++T)
      if (From[T] == T && !(T && From[T - 1] == T - 1 && Row[T] == Row[T - 1] + 1))
        RunStart[Runs++] = T;
    char *Dst = static_cast<char *>(Y.Data);
    std::mutex ErrorMutex;
    Status Error;
    Ctx.Par.forRange(Runs, 8, [&](size_t Lo, size_t Hi) {
      for (size_t R = Lo; R < Hi; ++R) {
        const size_t T = RunStart[R];
        size_t End = T + 1;
        while (End < Count && From[End] == End && Row[End] == Row[End - 1] + 1)
          ++End;
        const Status S = Table.File->read(Table.Offset + Row[T] * RowBytes, Dst + T * RowBytes, (End - T) * RowBytes);
        if (!S.isOk()) {
          std::lock_guard<std::mutex> Lock(ErrorMutex);
          if (Error.isOk())
            Error = S;
        }
      }
    });
    if (!Error.isOk())
      return runError(Name, N.describe(), ": cannot read its table's rows: ", Error.message());
    Ctx.Par.forRange(Count, std::max<size_t>(1, 16384 / RowBytes), [&](size_t Lo, size_t Hi) {
      for (size_t T = Lo; T < Hi; ++T)
        if (From[T] != T)
          std::memcpy(Dst + T * RowBytes, Dst + From[T] * RowBytes, RowBytes);
    });
    return Status::ok();
  }

private:
  Node N;
  SourceFileRange Table;
};

/// Where the table of a Gather whose data is a big constant lies in a file the loader mapped
/// (File null: not in one).
SourceFileRange fileTable(const KernelCreateInfo &I) {
  const std::shared_ptr<ConstData> &C = I.Inputs[0].Const;
  if (!C || C->Bytes < kFileTableMinBytes || C->Type == ElementType::String)
    return SourceFileRange();
  return locateSourceRange(C->Data ? C->Data : C->Source, C->Bytes);
}

OpKernels gatherKernels() {
  OpKernels K;
  K.OpType = "Gather";
  K.Variants.push_back(computeVariant("any_gather__ref", 0, computeGather<false>));
  K.Variants.push_back(computeVariant("any_gather__blocked", 10, computeGather<true>));
  K.Variants.push_back({"any_gather__file_rows", 30,
                        [](const KernelCreateInfo &I) { return static_cast<bool>(fileTable(I).File); },
                        [](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
                          SourceFileRange Table = fileTable(I);
                          if (!Table.File)
                            return makeError(ErrorCode::Infer, I.N.describe(), ": its table no longer lies in a file");
                          return makeKernel<GatherFileRowsKernel>(I.N, std::move(Table));
                        }});
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
    // A table read from the file it lies in (any_gather__file_rows): runs of adjacent rows,
    // repeated rows, negative indices; along axis 1, rows of one element.
    const auto fileTable = [](std::vector<int64_t> Dims) {
      TestInput T = tensorInput(std::move(Dims));
      T.Constant = T.InFile = true;
      return T;
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
        testCase("file_table", {fileTable({300, 64}), idx({2, 6}, {3, 4, 5, 299, 0, 4, 4, -1, 100, 101, 102, 5})}),
        testCase("file_table_axis1", {fileTable({40, 600}), idx({5}, {7, 8, 8, -600, 599})}, {{"axis", attrInt(1)}}),
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
