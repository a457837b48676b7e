// BitCast: reinterprets the bytes of X as element type 'to' of the same width (f32 <-> i32,
// u16 -> i16, bool -> u8, ...); the shape is unchanged. A byte copy.
#include "backends/native/ops/common/ElementwiseCast.h"
#include "backends/native/ops/common/Indexing.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

OpSchema bitCastSchema() {
  OpSchema S;
  S.OpType = "BitCast";
  S.MinInputs = S.MaxInputs = 1;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireNumericType(Ctx, 0));
    if (!Ctx.N.hasAttr("to"))
      return Ctx.error(ErrorCode::Model, "attribute 'to' is required");
    ASSIGN_OR_RETURN(const int64_t To, Ctx.N.getInt("to", 0));
    ASSIGN_OR_RETURN(const ElementType T, elementTypeFromOnnx(Ctx, "to", To));
    const ElementType From = Ctx.Inputs[0].Type;
    if (getElementSize(T) != getElementSize(From))
      return Ctx.error(ErrorCode::Type, "cannot reinterpret ", toString(From), " (", 8 * getElementSize(From),
                       " bits) as ", toString(T), " (", 8 * getElementSize(T), " bits): the widths differ");
    Ctx.Outputs[0].Type = T;
    Ctx.Outputs[0].Shape = Ctx.Inputs[0].Shape;
    return Status::ok();
  };
  return S;
}

OpKernels bitCastKernels() {
  OpKernels K;
  K.OpType = "BitCast";
  K.Variants.push_back(computeVariant("any_bitcast__ref", 0, [](const Node &, const std::vector<TensorView> &In,
                                                               const std::vector<TensorView> &Out, const Parallel &) {
    const size_t Bytes = In[0].elementCount() * getElementSize(In[0].Type);
    if (Out[0].elementCount() * getElementSize(Out[0].Type) != Bytes)
      return runError("any_bitcast__ref", "output ", joinInts(Out[0].Dims), " is not ", Bytes, " bytes");
    if (Bytes)
      std::memcpy(Out[0].Data, In[0].Data, Bytes);
    return Status::ok();
  }));
  K.TestCases = [] {
    return std::vector<OpTestCase>{
        withOpset(testCase("f32_to_i32", {tensorInput({3, 4})}, {{"to", attrInt(6)}}), 26),
        withOpset(testCase("f64_to_i64", {tensorInput({3}, ElementType::F64)}, {{"to", attrInt(7)}}), 26),
        withOpset(testCase("f16_to_u16", {tensorInput({5}, ElementType::F16)}, {{"to", attrInt(4)}}), 26),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(BitCast, bitCastSchema());
OPT_REGISTER_KERNELS(BitCast, bitCastKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
