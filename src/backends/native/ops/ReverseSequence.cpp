// ReverseSequence: per batch entry b, reverses the first sequence_lens[b] steps along time_axis
// (batch_axis/time_axis are 0 and 1 in either order); the remaining steps are copied. Any
// element type.
#include "backends/native/ops/common/Indexing.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

Status computeReverseSequence(const Node &N, const std::vector<TensorView> &In, const std::vector<TensorView> &Out,
                              const Parallel &) {
  const TensorView &X = In[0], &Y = Out[0];
  ASSIGN_OR_RETURN(const int64_t BatchAxis, N.getInt("batch_axis", 1));
  ASSIGN_OR_RETURN(const int64_t TimeAxis, N.getInt("time_axis", 0));
  ASSIGN_OR_RETURN(const std::vector<int64_t> Lens, readInts(In[1], "sequence_lens"));
  const size_t Elem = getElementSize(X.Type);
  const int64_t Batch = X.Dims[static_cast<size_t>(BatchAxis)], Time = X.Dims[static_cast<size_t>(TimeAxis)];
  const int64_t Inner = product(X.Dims, 2, X.rank());
  const std::vector<int64_t> XS = stridesOf(X.Dims);
  if (static_cast<int64_t>(Lens.size()) != Batch)
    return runError("any_reversesequence__ref", "sequence_lens has ", Lens.size(), " entries for batch ", Batch);
  for (int64_t B = 0; B < Batch; ++B) {
    const int64_t L = Lens[static_cast<size_t>(B)];
    if (L < 0 || L > Time)
      return runError("any_reversesequence__ref", "sequence_lens[", B, "] = ", L, " is out of range [0, ", Time, "]");
    for (int64_t T = 0; T < Time; ++T) {
      const int64_t SrcT = T < L ? L - 1 - T : T;
      const int64_t DstOff = B * XS[static_cast<size_t>(BatchAxis)] + T * XS[static_cast<size_t>(TimeAxis)];
      const int64_t SrcOff = B * XS[static_cast<size_t>(BatchAxis)] + SrcT * XS[static_cast<size_t>(TimeAxis)];
      std::memcpy(static_cast<char *>(Y.Data) + DstOff * static_cast<int64_t>(Elem),
                  static_cast<const char *>(X.Data) + SrcOff * static_cast<int64_t>(Elem), static_cast<size_t>(Inner) * Elem);
    }
  }
  return Status::ok();
}

OpSchema reverseSequenceSchema() {
  OpSchema S;
  S.OpType = "ReverseSequence";
  S.MinInputs = S.MaxInputs = 2;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireCopyableType(Ctx, 0));
    RETURN_IF_ERROR(requireInputType(Ctx, 1, {ElementType::I64}));
    const TensorShape &X = Ctx.Inputs[0].Shape;
    if (X.getRank() < 2)
      return Ctx.error(ErrorCode::Shape, "input 0 must have rank >= 2, got ", X.toString());
    ASSIGN_OR_RETURN(const int64_t BatchAxis, Ctx.N.getInt("batch_axis", 1));
    ASSIGN_OR_RETURN(const int64_t TimeAxis, Ctx.N.getInt("time_axis", 0));
    if (!((BatchAxis == 0 && TimeAxis == 1) || (BatchAxis == 1 && TimeAxis == 0)))
      return Ctx.error(ErrorCode::Model, "attributes 'batch_axis' (", BatchAxis, ") and 'time_axis' (", TimeAxis,
                       ") must be 0 and 1 in some order");
    Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
    Ctx.Outputs[0].Shape = X;
    return foldIfConstant(Ctx, computeReverseSequence);
  };
  return S;
}

OpKernels reverseSequenceKernels() {
  OpKernels K;
  K.OpType = "ReverseSequence";
  K.Variants.push_back(computeVariant("any_reversesequence__ref", 0, computeReverseSequence));
  K.TestCases = [] {
    return std::vector<OpTestCase>{
        testCase("time_major", {tensorInput({4, 4}), valuesInput({4}, {4, 3, 2, 1}, ElementType::I64, false)}),
        testCase("batch_major", {tensorInput({4, 4, 2}), valuesInput({4}, {1, 2, 3, 4}, ElementType::I64, false)},
                 {{"batch_axis", attrInt(0)}, {"time_axis", attrInt(1)}}),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(ReverseSequence, reverseSequenceSchema());
OPT_REGISTER_KERNELS(ReverseSequence, reverseSequenceKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
