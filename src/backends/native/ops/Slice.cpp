// Slice: per-axis start/end/step (negative values count from the end; starts/ends clamp as the
// spec says, steps may be negative), any element type. Opset < 10 takes starts/ends/axes as
// attributes, opset 10+ as inputs (plus steps). Folded at load for small constant inputs;
// slices of symbolic dims get exact expressions for step 1, fresh symbols otherwise.
#include <limits>

#include "backends/native/ops/common/Indexing.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct SliceParams {
  std::vector<int64_t> Starts, Ends, Axes, Steps; ///< Axes already normalised.
};

/// Validates the per-axis lists (lengths, axes range and uniqueness, non-zero steps).
Status checkParams(const Node &N, SliceParams &P, int64_t Rank) {
  if (P.Starts.size() != P.Ends.size())
    return makeError(ErrorCode::Model, N.describe(), ": starts ", joinInts(P.Starts), " and ends ", joinInts(P.Ends),
                     " differ in length");
  if (P.Axes.empty())
    for (size_t I = 0; I < P.Starts.size(); ++I)
      P.Axes.push_back(static_cast<int64_t>(I));
  if (P.Steps.empty())
    P.Steps.assign(P.Starts.size(), 1);
  if (P.Axes.size() != P.Starts.size() || P.Steps.size() != P.Starts.size())
    return makeError(ErrorCode::Model, N.describe(), ": axes ", joinInts(P.Axes), " and steps ", joinInts(P.Steps),
                     " must have as many entries as starts ", joinInts(P.Starts));
  std::vector<bool> Seen(static_cast<size_t>(Rank), false);
  for (int64_t &A : P.Axes) {
    ASSIGN_OR_RETURN(A, normalizeAxis(N, "axes", A, Rank));
    if (Seen[static_cast<size_t>(A)])
      return makeError(ErrorCode::Model, N.describe(), ": axes ", joinInts(P.Axes), " repeat axis ", A);
    Seen[static_cast<size_t>(A)] = true;
  }
  for (int64_t S : P.Steps)
    if (S == 0)
      return makeError(ErrorCode::Model, N.describe(), ": steps ", joinInts(P.Steps), " contain 0");
  return Status::ok();
}

/// Clamped start and output length of one axis of size Dim.
void sliceAxis(int64_t Dim, int64_t Start, int64_t End, int64_t Step, int64_t &OutStart, int64_t &OutLen) {
  if (Start < 0)
    Start += Dim;
  if (End < 0)
    End += Dim;
  if (Step > 0) {
    Start = std::min(std::max(Start, int64_t(0)), Dim);
    End = std::min(std::max(End, int64_t(0)), Dim);
    OutLen = End > Start ? (End - Start + Step - 1) / Step : 0;
  } else {
    Start = std::min(std::max(Start, int64_t(0)), Dim - 1);
    End = std::min(std::max(End, int64_t(-1)), Dim - 1);
    OutLen = Start > End ? (Start - End - Step - 1) / -Step : 0;
  }
  OutStart = Start;
}

/// Reads the parameters from attributes (opset < 10) or from the inputs given by Get(I) (null
/// view = omitted input).
Result<SliceParams> paramsFromAttrs(const Node &N) {
  SliceParams P;
  ASSIGN_OR_RETURN(P.Starts, N.getInts("starts", {}));
  ASSIGN_OR_RETURN(P.Ends, N.getInts("ends", {}));
  ASSIGN_OR_RETURN(P.Axes, N.getInts("axes", {}));
  if (!N.hasAttr("starts") || !N.hasAttr("ends"))
    return makeError(ErrorCode::Model, N.describe(), ": attributes 'starts' and 'ends' are required before opset 10");
  return P;
}

bool usesAttrs(const Node &N) { return N.OpsetVersion > 0 && N.OpsetVersion < 10; }

Status computeSlice(const Node &N, const std::vector<TensorView> &In, const std::vector<TensorView> &Out,
                    const Parallel &Par, bool Fast) {
  const TensorView &X = In[0], &Y = Out[0];
  SliceParams P;
  if (usesAttrs(N)) {
    ASSIGN_OR_RETURN(P, paramsFromAttrs(N));
  } else {
    ASSIGN_OR_RETURN(P.Starts, readInts(In[1], "starts"));
    ASSIGN_OR_RETURN(P.Ends, readInts(In[2], "ends"));
    if (In.size() > 3 && In[3].Data) {
      ASSIGN_OR_RETURN(P.Axes, readInts(In[3], "axes"));
    }
    if (In.size() > 4 && In[4].Data) {
      ASSIGN_OR_RETURN(P.Steps, readInts(In[4], "steps"));
    }
  }
  const int64_t Rank = static_cast<int64_t>(X.rank());
  RETURN_IF_ERROR(checkParams(N, P, Rank));
  const std::vector<int64_t> XS = stridesOf(X.Dims);
  StridedView V;
  V.Dims = X.Dims;
  V.Strides = XS;
  for (size_t I = 0; I < P.Axes.size(); ++I) {
    const size_t A = static_cast<size_t>(P.Axes[I]);
    int64_t Start = 0, Len = 0;
    sliceAxis(X.Dims[A], P.Starts[I], P.Ends[I], P.Steps[I], Start, Len);
    V.Dims[A] = Len;
    V.Offset += Len ? Start * XS[A] : 0;
    V.Strides[A] = XS[A] * P.Steps[I];
  }
  if (V.Dims != Y.Dims)
    return runError(Fast ? "any_slice__strided" : "any_slice__ref", "output ", joinInts(Y.Dims), " differs from the slice ",
                    joinInts(V.Dims));
  if (Y.elementCount() == 0)
    return Status::ok();
  if (Fast)
    stridedCopyFast(X.Data, Y.Data, getElementSize(X.Type), V, Par);
  else
    stridedCopyRef(X.Data, Y.Data, getElementSize(X.Type), V);
  return Status::ok();
}

Status computeSliceRef(const Node &N, const std::vector<TensorView> &In, const std::vector<TensorView> &Out,
                       const Parallel &Par) {
  return computeSlice(N, In, Out, Par, false);
}
Status computeSliceFast(const Node &N, const std::vector<TensorView> &In, const std::vector<TensorView> &Out,
                        const Parallel &Par) {
  return computeSlice(N, In, Out, Par, true);
}

/// A bound beyond any real dim (models use INT64_MAX or INT32_MAX for "to the end").
bool isHuge(int64_t V) { return V >= (int64_t(1) << 31) - 1; }
bool isHugeNeg(int64_t V) { return V <= -((int64_t(1) << 31) - 1); }

/// Output length of a step-1 slice of a symbolic dim.
Expr symbolicLen(const Expr &D, int64_t Start, int64_t End) {
  const auto Bound = [&D](int64_t V) -> Expr {
    if (isHuge(V))
      return D;
    if (isHugeNeg(V) || V == 0)
      return Expr(0);
    return V < 0 ? max(D + Expr(static_cast<long long>(V)), Expr(0)) : min(Expr(static_cast<long long>(V)), D);
  };
  const Expr S = Bound(Start), E = Bound(End);
  if (S.isConst() && S.value() == 0)
    return E;
  return max(E - S, Expr(0));
}

Status inferSlice(ShapeContext &Ctx) {
  RETURN_IF_ERROR(requireCopyableType(Ctx, 0));
  const TensorShape &X = Ctx.Inputs[0].Shape;
  const int64_t Rank = static_cast<int64_t>(X.getRank());
  Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
  SliceParams P;
  bool Known = true;
  if (usesAttrs(Ctx.N)) {
    if (Ctx.Inputs.size() != 1)
      return Ctx.error(ErrorCode::Model, "before opset 10 Slice takes 1 input, got ", Ctx.Inputs.size());
    ASSIGN_OR_RETURN(P, paramsFromAttrs(Ctx.N));
  } else {
    if (Ctx.Inputs.size() < 3)
      return Ctx.error(ErrorCode::Model, "since opset 10 Slice takes inputs data, starts, ends[, axes, steps], got ",
                       Ctx.Inputs.size(), " inputs");
    for (size_t I = 1; I < Ctx.Inputs.size(); ++I)
      if (Ctx.hasInput(I))
        RETURN_IF_ERROR(requireIndexType(Ctx, I));
    if (Ctx.hasInput(3) && !isConstInput(Ctx, 3)) {
      // Unknown axes: any dim may change.
      std::vector<Expr> Dims;
      for (int64_t I = 0; I < Rank; ++I)
        Dims.push_back(Ctx.newSymbol());
      Ctx.Outputs[0].Shape = TensorShape(std::move(Dims));
      return Status::ok();
    }
    if (Ctx.hasInput(3)) {
      ASSIGN_OR_RETURN(P.Axes, constInts(Ctx, 3));
    }
    Known = isConstInput(Ctx, 1) && isConstInput(Ctx, 2) && (!Ctx.hasInput(4) || isConstInput(Ctx, 4));
    if (Known) {
      ASSIGN_OR_RETURN(P.Starts, constInts(Ctx, 1));
      ASSIGN_OR_RETURN(P.Ends, constInts(Ctx, 2));
      if (Ctx.hasInput(4)) {
        ASSIGN_OR_RETURN(P.Steps, constInts(Ctx, 4));
      }
    } else {
      // Only the sliced axes matter: take the count from the starts input's length.
      const TensorShape &SS = Ctx.Inputs[1].Shape;
      if (SS.getRank() != 1 || !SS[0].isConst())
        return Ctx.error(ErrorCode::Shape, "input 1 (starts) must be 1-D of known length, got ", SS.toString());
      P.Starts.assign(static_cast<size_t>(SS[0].value()), 0);
      P.Ends = P.Starts;
    }
  }
  if (P.Starts.size() > static_cast<size_t>(Rank))
    return Ctx.error(ErrorCode::Model, "starts ", joinInts(P.Starts), " has more entries than the data rank ", Rank);
  RETURN_IF_ERROR(checkParams(Ctx.N, P, Rank));
  std::vector<Expr> Dims = X.dims();
  for (size_t I = 0; I < P.Axes.size(); ++I) {
    const size_t A = static_cast<size_t>(P.Axes[I]);
    if (!Known) {
      Dims[A] = Ctx.newSymbol();
    } else if (X[A].isConst()) {
      int64_t Start = 0, Len = 0;
      sliceAxis(X[A].value(), P.Starts[I], P.Ends[I], P.Steps[I], Start, Len);
      Dims[A] = Expr(static_cast<long long>(Len));
    } else if (P.Steps[I] == 1) {
      Dims[A] = symbolicLen(X[A], P.Starts[I], P.Ends[I]);
    } else {
      Dims[A] = Ctx.newSymbol();
    }
  }
  Ctx.Outputs[0].Shape = TensorShape(std::move(Dims));
  return foldIfConstant(Ctx, computeSliceRef);
}

OpSchema sliceSchema() {
  OpSchema S;
  S.OpType = "Slice";
  S.MinInputs = 1;
  S.MaxInputs = 5;
  S.Infer = inferSlice;
  return S;
}

OpKernels sliceKernels() {
  OpKernels K;
  K.OpType = "Slice";
  K.Variants.push_back(computeVariant("any_slice__ref", 0, computeSliceRef));
  K.Variants.push_back(computeVariant("any_slice__strided", 10, computeSliceFast));
  K.TestCases = [] {
    const int64_t Max = std::numeric_limits<int64_t>::max();
    std::vector<OpTestCase> C{
        testCase("basic", {tensorInput({20, 10, 5}), intsInput({0, 0}), intsInput({3, 10}), intsInput({0, 1}),
                           intsInput({1, 1})}),
        testCase("default_axes", {tensorInput({20, 10, 5}), intsInput({0, 0, 3}), intsInput({20, 10, 4})}),
        testCase("neg", {tensorInput({20, 10, 5}), intsInput({0}), intsInput({-1}), intsInput({1}), intsInput({1})}),
        testCase("neg_steps", {tensorInput({20, 10, 5}), intsInput({20, 10, 4}), intsInput({0, 0, 1}),
                               intsInput({0, 1, 2}), intsInput({-1, -3, -2})}),
        testCase("end_out_of_bounds", {tensorInput({20, 10, 5}), intsInput({1}), intsInput({1000}), intsInput({1}),
                                       intsInput({1})}),
        testCase("start_out_of_bounds", {tensorInput({20, 10, 5}), intsInput({1000}), intsInput({1000}),
                                         intsInput({1}), intsInput({1})}),
        testCase("int_max_end", {tensorInput({4, 6}), intsInput({2}), intsInput({Max}), intsInput({-1})}),
        testCase("reverse_all", {tensorInput({7}), intsInput({-1}), intsInput({-Max}), intsInput({0}), intsInput({-1})}),
        testCase("step3", {tensorInput({3, 10}), intsInput({1}), intsInput({10}), intsInput({1}), intsInput({3})}),
        testCase("i32_params", {typedInputs({4, 5}, ElementType::I32)[0], intsInput({1, -3}, true, ElementType::I32),
                                intsInput({3, 5}, true, ElementType::I32)}),
        testCase("omitted_axes", {tensorInput({6, 8}), intsInput({1, 2}), intsInput({5, -1}), omittedInput(),
                                  intsInput({2, 1})}),
        testCase("u8_inner_contig", {typedInputs({8, 16, 32}, ElementType::U8)[0], intsInput({2}), intsInput({6}),
                                     intsInput({1})}),
        withOpset(testCase("opset9_attrs", {tensorInput({5, 6})},
                           {{"starts", attrInts({1, 0})}, {"ends", attrInts({3, -2})}, {"axes", attrInts({0, 1})}}),
                  9),
        withOpset(testCase("opset1_no_axes", {tensorInput({5, 6})}, {{"starts", attrInts({1})}, {"ends", attrInts({4})}}), 1),
    };
    return C;
  };
  return K;
}

OPT_REGISTER_SCHEMA(Slice, sliceSchema());
OPT_REGISTER_KERNELS(Slice, sliceKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
