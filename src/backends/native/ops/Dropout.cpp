// Dropout for inference: output = input, mask (when requested) all true (bool since opset 10,
// the input's type before). Training mode (opset 12+ input) with a non-zero ratio would need
// random masks and is refused.
#include "backends/native/ops/common/Indexing.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

Status computeDropout(const Node &N, const std::vector<TensorView> &In, const std::vector<TensorView> &Out,
                      const Parallel &) {
  const TensorView &X = In[0];
  if (N.OpsetVersion == 0 || N.OpsetVersion >= 12) {
    if (In.size() > 2 && In[2].Data && In[2].elementCount() == 1 && *static_cast<const uint8_t *>(In[2].Data)) {
      double Ratio = 0.5;
      if (In.size() > 1 && In[1].Data) {
        visitNumeric(In[1].Type, [&](auto Tag) {
          using T = typename decltype(Tag)::type;
          Ratio = static_cast<double>(static_cast<typename ComputeType<T>::type>(*In[1].data<const T>()));
        });
      }
      if (Ratio != 0)
        return runError("any_dropout__ref", "training_mode with ratio ", Ratio,
                        " is not supported (inference runtime: random dropout is not implemented)");
    }
  }
  const size_t Bytes = X.elementCount() * getElementSize(X.Type);
  if (Bytes && Out[0].Data)
    std::memcpy(Out[0].Data, X.Data, Bytes);
  if (Out.size() > 1 && Out[1].Data) {
    const TensorView &M = Out[1];
    visitNumeric(M.Type, [&](auto Tag) {
      using T = typename decltype(Tag)::type;
      for (size_t I = 0; I < M.elementCount(); ++I)
        M.data<T>()[I] = T(1);
    });
  }
  return Status::ok();
}

OpSchema dropoutSchema() {
  OpSchema S;
  S.OpType = "Dropout";
  S.MinInputs = 1;
  S.MaxInputs = 3;
  S.MinOutputs = 1;
  S.MaxOutputs = 2;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireNumericType(Ctx, 0));
    const bool InputsForm = Ctx.N.OpsetVersion == 0 || Ctx.N.OpsetVersion >= 12;
    if (!InputsForm && Ctx.Inputs.size() > 1)
      return Ctx.error(ErrorCode::Model, "before opset 12 Dropout takes 1 input, got ", Ctx.Inputs.size());
    if (InputsForm && Ctx.hasInput(2)) {
      RETURN_IF_ERROR(requireInputType(Ctx, 2, {ElementType::Bool}));
    }
    ASSIGN_OR_RETURN(const float Ratio, Ctx.N.getFloat("ratio", 0.5f));
    if (Ratio < 0 || Ratio >= 1)
      return Ctx.error(ErrorCode::Model, "attribute 'ratio' value ", Ratio, " must be in [0, 1)");
    Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
    Ctx.Outputs[0].Shape = Ctx.Inputs[0].Shape;
    if (Ctx.Outputs.size() > 1) {
      Ctx.Outputs[1].Type = Ctx.N.OpsetVersion > 0 && Ctx.N.OpsetVersion < 10 ? Ctx.Inputs[0].Type : ElementType::Bool;
      Ctx.Outputs[1].Shape = Ctx.Inputs[0].Shape;
    }
    return foldIfConstant(Ctx, computeDropout);
  };
  return S;
}

OpKernels dropoutKernels() {
  OpKernels K;
  K.OpType = "Dropout";
  K.Variants.push_back(computeVariant("any_dropout__ref", 0, computeDropout));
  K.TestCases = [] {
    return std::vector<OpTestCase>{
        testCase("identity", {tensorInput({3, 4})}),
        withOutputs(testCase("with_mask", {tensorInput({2, 5}), scalarInput(0.3, ElementType::F32)}), 2),
        withOutputs(testCase("training_zero_ratio", {tensorInput({2, 5}), scalarInput(0, ElementType::F32),
                                                     scalarInput(1, ElementType::Bool)}), 2),
        withOutputs(withOpset(testCase("opset7_mask_same_type", {tensorInput({4})}, {{"ratio", attrFloat(0.2f)}}), 7), 2),
        withOpset(testCase("opset10", {tensorInput({4})}), 10),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(Dropout, dropoutSchema());
OPT_REGISTER_KERNELS(Dropout, dropoutKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
