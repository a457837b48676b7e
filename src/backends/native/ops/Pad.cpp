// Pad: pads (or, with negative pads, crops) each dim; modes constant, reflect, edge and wrap
// (opset 19). Pads/value are attributes before opset 11 and inputs since; the optional 'axes'
// input (opset 18) restricts the pads to some dims. Negative pads crop first, then the other
// side is padded from the cropped data. Any numeric or bool type.
#include "backends/native/ops/common/Indexing.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

enum class PadMode { Constant, Reflect, Edge, Wrap };

Result<PadMode> padMode(const Node &N) {
  ASSIGN_OR_RETURN(const std::string M, N.getString("mode", "constant"));
  if (M == "constant")
    return PadMode::Constant;
  if (M == "reflect")
    return PadMode::Reflect;
  if (M == "edge")
    return PadMode::Edge;
  if (M == "wrap" && (N.OpsetVersion == 0 || N.OpsetVersion >= 19))
    return PadMode::Wrap;
  return makeError(ErrorCode::Model, N.describe(), ": attribute 'mode' value '", M,
                   "' is not one of constant, reflect, edge", N.OpsetVersion >= 19 || N.OpsetVersion == 0 ? ", wrap" : "");
}

bool padsAreAttrs(const Node &N) { return N.OpsetVersion > 0 && N.OpsetVersion < 11; }

/// Full per-dim [begin..., end...] pads of length 2 * Rank from the raw pads and axes.
Result<std::vector<int64_t>> fullPads(const Node &N, const std::vector<int64_t> &Raw, std::vector<int64_t> Axes,
                                      int64_t Rank) {
  if (Axes.empty())
    for (int64_t I = 0; I < Rank; ++I)
      Axes.push_back(I);
  if (Raw.size() != 2 * Axes.size())
    return makeError(ErrorCode::Model, N.describe(), ": pads ", joinInts(Raw), " must have 2 x ", Axes.size(),
                     " entries");
  std::vector<int64_t> P(static_cast<size_t>(2 * Rank), 0);
  for (size_t I = 0; I < Axes.size(); ++I) {
    ASSIGN_OR_RETURN(const int64_t A, normalizeAxis(N, "axes", Axes[I], Rank));
    P[static_cast<size_t>(A)] = Raw[I];
    P[static_cast<size_t>(A + Rank)] = Raw[I + Axes.size()];
  }
  return P;
}

Status computePad(const Node &N, const std::vector<TensorView> &In, const std::vector<TensorView> &Out,
                  const Parallel &Par) {
  const TensorView &X = In[0], &Y = Out[0];
  const int64_t Rank = static_cast<int64_t>(X.rank());
  ASSIGN_OR_RETURN(const PadMode Mode, padMode(N));
  std::vector<int64_t> Raw, Axes;
  const size_t Elem = getElementSize(X.Type);
  std::vector<char> Value(Elem, 0);
  if (padsAreAttrs(N)) {
    ASSIGN_OR_RETURN(Raw, N.getInts("pads", {}));
    ASSIGN_OR_RETURN(const float V, N.getFloat("value", 0.0f));
    visitNumeric(X.Type, [&](auto Tag) {
      using T = typename decltype(Tag)::type;
      const T TV = static_cast<T>(V);
      std::memcpy(Value.data(), &TV, Elem);
    });
  } else {
    ASSIGN_OR_RETURN(Raw, readInts(In[1], "pads"));
    if (In.size() > 2 && In[2].Data && In[2].elementCount() > 0)
      std::memcpy(Value.data(), In[2].Data, Elem);
    if (In.size() > 3 && In[3].Data) {
      ASSIGN_OR_RETURN(Axes, readInts(In[3], "axes"));
    }
  }
  ASSIGN_OR_RETURN(const std::vector<int64_t> P, fullPads(N, Raw, Axes, Rank));
  // Per dim and output coordinate: the input coordinate, or -1 for the constant value.
  std::vector<std::vector<int64_t>> Map(static_cast<size_t>(Rank));
  for (int64_t D = 0; D < Rank; ++D) {
    const int64_t B = P[static_cast<size_t>(D)], E = P[static_cast<size_t>(D + Rank)], Dim = X.Dims[static_cast<size_t>(D)];
    const int64_t Lo = std::max<int64_t>(0, -B), M = Dim - Lo - std::max<int64_t>(0, -E), Before = std::max<int64_t>(0, B);
    const int64_t OutDim = Y.Dims[static_cast<size_t>(D)];
    if (OutDim != Dim + B + E)
      return runError("any_pad__ref", "output ", joinInts(Y.Dims), " does not match input ", joinInts(X.Dims),
                      " padded by ", joinInts(P));
    if (M <= 0 && OutDim > 0 && Mode != PadMode::Constant)
      return runError("any_pad__ref", "cannot pad an empty dim in this mode");
    auto &Mp = Map[static_cast<size_t>(D)];
    Mp.resize(static_cast<size_t>(OutDim));
    for (int64_t O = 0; O < OutDim; ++O) {
      int64_t R = O - Before;
      if (R < 0 || R >= M) {
        switch (Mode) {
        case PadMode::Constant: R = -1; break;
        case PadMode::Edge: R = R < 0 ? 0 : M - 1; break;
        case PadMode::Wrap: R = ((R % M) + M) % M; break;
        case PadMode::Reflect:
          if (M == 1) {
            R = 0;
          } else {
            const int64_t Period = 2 * (M - 1);
            R = ((R % Period) + Period) % Period;
            if (R >= M)
              R = Period - R;
          }
          break;
        }
      }
      Mp[static_cast<size_t>(O)] = R < 0 ? -1 : R + Lo;
    }
  }
  const std::vector<int64_t> XS = stridesOf(X.Dims);
  const size_t Count = Y.elementCount();
  if (Count == 0)
    return Status::ok();
  const size_t Inner = Rank ? static_cast<size_t>(Y.Dims[static_cast<size_t>(Rank - 1)]) : 1;
  const size_t Rows = Count / std::max<size_t>(Inner, 1);
  const char *Src = static_cast<const char *>(X.Data);
  char *Dst = static_cast<char *>(Y.Data);
  Par.forRange(Rows, std::max<size_t>(1, 4096 / std::max<size_t>(Inner, 1)), [&](size_t Lo, size_t Hi) {
    for (size_t T = Lo; T < Hi; ++T) {
      size_t Rem = T;
      int64_t Off = 0;
      bool IsConst = false;
      for (int64_t D = Rank - 1; D-- > 0;) {
        const int64_t I = Map[static_cast<size_t>(D)][Rem % static_cast<size_t>(Y.Dims[static_cast<size_t>(D)])];
        Rem /= static_cast<size_t>(Y.Dims[static_cast<size_t>(D)]);
        IsConst |= I < 0;
        Off += I * XS[static_cast<size_t>(D)];
      }
      char *Row = Dst + T * Inner * Elem;
      for (size_t J = 0; J < Inner; ++J) {
        const int64_t I = Rank ? Map[static_cast<size_t>(Rank - 1)][J] : 0;
        if (IsConst || I < 0)
          copyElement(Row + J * Elem, Value.data(), Elem);
        else
          copyElement(Row + J * Elem, Src + (Off + I) * static_cast<int64_t>(Elem), Elem);
      }
    }
  });
  return Status::ok();
}

Status inferPad(ShapeContext &Ctx) {
  RETURN_IF_ERROR(requireNumericType(Ctx, 0));
  ASSIGN_OR_RETURN(const PadMode Mode, padMode(Ctx.N));
  (void)Mode;
  const TensorShape &X = Ctx.Inputs[0].Shape;
  const int64_t Rank = static_cast<int64_t>(X.getRank());
  Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
  std::vector<int64_t> Raw, Axes;
  if (padsAreAttrs(Ctx.N)) {
    if (!Ctx.N.hasAttr("pads"))
      return Ctx.error(ErrorCode::Model, "attribute 'pads' is required before opset 11");
    ASSIGN_OR_RETURN(Raw, Ctx.N.getInts("pads", {}));
  } else {
    if (!Ctx.hasInput(1))
      return Ctx.error(ErrorCode::Model, "input 1 (pads) is required since opset 11");
    RETURN_IF_ERROR(requireInputType(Ctx, 1, {ElementType::I64}));
    if (Ctx.hasInput(2)) {
      RETURN_IF_ERROR(requireSameType(Ctx, 0, 2));
      const Expr C = Ctx.Inputs[2].Shape.getElementCount();
      if (C.isConst() && C.value() > 1)
        return Ctx.error(ErrorCode::Shape, "input 2 (constant_value) must be a scalar, got ",
                         Ctx.Inputs[2].Shape.toString());
    }
    if (Ctx.hasInput(3)) {
      RETURN_IF_ERROR(requireIndexType(Ctx, 3));
      if (isConstInput(Ctx, 3)) {
        ASSIGN_OR_RETURN(Axes, constInts(Ctx, 3));
      }
    }
    if (!isConstInput(Ctx, 1) || (Ctx.hasInput(3) && !isConstInput(Ctx, 3))) {
      // Data-dependent pads or axes: same rank, dims resolved at run time.
      std::vector<Expr> Dims;
      for (int64_t I = 0; I < Rank; ++I)
        Dims.push_back(Ctx.newSymbol());
      Ctx.Outputs[0].Shape = TensorShape(std::move(Dims));
      return Status::ok();
    }
    ASSIGN_OR_RETURN(Raw, constInts(Ctx, 1));
  }
  ASSIGN_OR_RETURN(const std::vector<int64_t> P, fullPads(Ctx.N, Raw, Axes, Rank));
  std::vector<Expr> Dims;
  for (int64_t D = 0; D < Rank; ++D) {
    const Expr Dim = X[static_cast<size_t>(D)] + Expr(static_cast<long long>(P[static_cast<size_t>(D)] + P[static_cast<size_t>(D + Rank)]));
    if (Dim.isConst() && Dim.value() < 0)
      return Ctx.error(ErrorCode::Shape, "pads ", joinInts(P), " crop dim ", D, " of ", X.toString(), " below 0");
    Dims.push_back(Dim);
  }
  Ctx.Outputs[0].Shape = TensorShape(std::move(Dims));
  return foldIfConstant(Ctx, computePad);
}

OpSchema padSchema() {
  OpSchema S;
  S.OpType = "Pad";
  S.MinInputs = 1;
  S.MaxInputs = 4;
  S.Infer = inferPad;
  return S;
}

OpKernels padKernels() {
  OpKernels K;
  K.OpType = "Pad";
  K.Variants.push_back(computeVariant("any_pad__ref", 0, computePad));
  K.TestCases = [] {
    const auto mode = [](const char *M) { return std::map<std::string, AttrValue>{{"mode", attrString(M)}}; };
    return std::vector<OpTestCase>{
        testCase("constant", {tensorInput({1, 3, 4, 5}), intsInput({0, 0, 1, 3, 0, 0, 2, 4}), scalarInput(1.5, ElementType::F32)}),
        testCase("constant_default", {tensorInput({3, 4}), intsInput({1, 2, 0, 1})}),
        testCase("reflect", {tensorInput({1, 3, 4, 5}), intsInput({0, 0, 1, 2, 0, 0, 2, 3})}, mode("reflect")),
        testCase("reflect_big", {tensorInput({3}), intsInput({5, 6})}, mode("reflect")),
        testCase("edge", {tensorInput({1, 3, 4, 5}), intsInput({0, 0, 1, 3, 0, 0, 2, 4})}, mode("edge")),
        withOpset(testCase("wrap", {tensorInput({3, 4}), intsInput({2, 5, 1, 3})}, mode("wrap")), 19),
        testCase("negative_crop", {tensorInput({4, 5}), intsInput({-1, 2, 1, -2})}),
        testCase("negative_reflect", {tensorInput({4, 5}), intsInput({-1, 2, 1, -2})}, mode("reflect")),
        withOpset(testCase("axes", {tensorInput({2, 3, 4}), intsInput({1, 2, 3, 0}), omittedInput(), intsInput({0, -1})}), 18),
        testCase("i32", {typedInputs({3, 3}, ElementType::I32)[0], intsInput({1, 1, 1, 1}), scalarInput(7, ElementType::I32)}),
        withOpset(testCase("opset2_attrs", {tensorInput({2, 3})},
                           {{"pads", attrInts({0, 1, 1, 0})}, {"value", attrFloat(2.5f)}}), 2),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(Pad, padSchema());
OPT_REGISTER_KERNELS(Pad, padKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
