// Dropout: output = input, mask (when requested) all true (bool since opset 10, the input's
// type before) -- inference, and every opset before 12 (including 1..6 with is_test = 0, which
// an inference runtime treats as test mode). Training mode (opset 12+ input 'training_mode' =
// true, ratio > 0) keeps an element when a uniform [0, 1) draw is >= ratio and scales it by
// 1 / (1 - ratio). The draws are NumPy's legacy RandomState: MT19937 seeded with init_genrand(seed)
// and doubles made of two 32-bit outputs ((a >> 5) * 2^26 + (b >> 6)) / 2^53, in row-major order,
// so with the 'seed' attribute the mask equals the ONNX reference's, and every run of the node
// repeats it. Without 'seed' each run draws a fresh seed.
#include <random>

#include "backends/native/ops/common/ElementwiseCommon.h"
#include "backends/native/ops/common/FloatDispatch.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

/// NumPy's legacy random_sample(): a double in [0, 1) from two MT19937 outputs.
double legacyUniform(std::mt19937 &G) {
  const uint32_t A = G() >> 5, B = G() >> 6;
  return (static_cast<double>(A) * 67108864.0 + static_cast<double>(B)) / 9007199254740992.0;
}

Status computeDropout(const Node &N, const std::vector<TensorView> &In, const std::vector<TensorView> &Out,
                      const Parallel &) {
  const TensorView &X = In[0];
  double Ratio = 0.5;
  bool Training = false;
  if (N.OpsetVersion == 0 || N.OpsetVersion >= 12) {
    Training = In.size() > 2 && In[2].Data && In[2].elementCount() == 1 && *static_cast<const uint8_t *>(In[2].Data);
    if (In.size() > 1 && In[1].Data) {
      visitNumeric(In[1].Type, [&](auto Tag) {
        using T = typename decltype(Tag)::type;
        Ratio = static_cast<double>(static_cast<typename ComputeType<T>::type>(*In[1].data<const T>()));
      });
    }
    if (Training && !(Ratio >= 0 && Ratio < 1))
      return makeError(ErrorCode::Infer, N.describe(), ": ratio ", Ratio, " is not in [0, 1)");
  }
  const bool HasMask = Out.size() > 1 && Out[1].Data;
  if (Training && Ratio != 0) {
    if (!isFloatType(X.Type))
      return makeError(ErrorCode::Type, N.describe(), ": training mode needs a float input, got ", toString(X.Type));
    uint32_t Seed = 0;
    if (N.hasAttr("seed")) {
      ASSIGN_OR_RETURN(const int64_t S, N.getInt("seed", 0));
      Seed = static_cast<uint32_t>(S);
    } else {
      Seed = std::random_device()();
    }
    std::mt19937 Gen(Seed); // std::mt19937's seeding is MT19937's init_genrand
    // The reference computes mask * x * scale in the input type, scale = 1 / (1 - ratio).
    const double Scale = 1.0 / (1.0 - Ratio);
    visitFloat(X.Type, [&](auto Tag) {
      using T = typename decltype(Tag)::type;
      using C = typename ComputeType<T>::type;
      const C S = static_cast<C>(Scale);
      for (size_t I = 0; I < X.elementCount(); ++I) {
        const bool Keep = legacyUniform(Gen) >= Ratio;
        if (Out[0].Data)
          Out[0].data<T>()[I] = Keep ? static_cast<T>(static_cast<C>(X.data<const T>()[I]) * S) : static_cast<T>(C(0));
        if (HasMask)
          Out[1].data<bool>()[I] = Keep;
      }
    });
    return Status::ok();
  }
  const size_t Bytes = X.elementCount() * getElementSize(X.Type);
  if (Bytes && Out[0].Data)
    std::memcpy(Out[0].Data, X.Data, Bytes);
  if (HasMask) {
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
        withOutputs(testCase("training_seeded", {tensorInput({3, 4, 5}), scalarInput(0.75, ElementType::F32),
                                                 scalarInput(1, ElementType::Bool)},
                             {{"seed", attrInt(0)}}),
                    2),
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
