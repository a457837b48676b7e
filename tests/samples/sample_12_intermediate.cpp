// Spec section 12 "Profiling" -> "Intermediate tensor access" (EnableMemoryOptimization = false
// + getTensor). The fragment is verbatim inside main() (after rt::AutoInit), with `Inputs` (the
// bundled sample digit) declared just before it. Adapted: "path/to/model" -> SAMPLE_MODEL_DIR;
// "intermediate_tensor_name" -> "/features/features.1/Relu_output_0" (the Relu after the first
// Conv of the digits model, 1x16x8x8).
// Checks afterwards: the intermediate has the model's shape, equals Relu(Conv output) read through
// getTensor() as well, and is non-trivial.
#include <Optimium/Runtime.h>
#include <Optimium/Runtime/Utils/StreamHelper.h>

#include <algorithm>
#include <iostream>
#include <vector>

#ifndef SAMPLE_MODEL_DIR
#error "SAMPLE_MODEL_DIR must point at models/digits"
#endif

namespace rt = optimium::runtime;

#define CHECK(Cond)                                                                                \
    do {                                                                                           \
        if (!(Cond)) {                                                                             \
            std::cerr << "FAIL: " #Cond " (line " << __LINE__ << ")" << std::endl;                \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

int main() {
    rt::AutoInit Init;
    rt::TypedTensor<float> Digit = rt::tensor<float>({1, 1, 8, 8});
    Digit.load(SAMPLE_MODEL_DIR "/sample_input.bin");
    std::vector<rt::Tensor> Inputs{Digit};

    rt::ModelLoadOptions Options;
    Options.EnableMemoryOptimization = false;
    rt::Model Model = rt::loadModel(SAMPLE_MODEL_DIR, Options);

    auto Request = Model.createRequest();
    Request.infer(rt::make_array(Inputs));
    Request.wait();

    rt::Tensor IntermediateTensor = Request.getTensor("/features/features.1/Relu_output_0");

    // --- checks (not part of the spec sample) ---
    rt::config::setPrintThreshold(4);
    std::cout << "intermediate: " << IntermediateTensor << std::endl;
    const rt::TensorInfo &Info = Model.getTensorInfo("/features/features.1/Relu_output_0");
    std::cout << "info: " << Info << std::endl;
    CHECK(IntermediateTensor);
    CHECK(IntermediateTensor.getType() == rt::ElementType::F32);
    CHECK(IntermediateTensor.getShape() == rt::TensorShape({1, 16, 8, 8}));
    CHECK(Info.Shape == IntermediateTensor.getShape());

    rt::TypedTensor<float> Relu(IntermediateTensor);
    rt::TypedTensor<float> Conv(Request.getTensor("/features/features.0/Conv_output_0"));
    CHECK(Conv.getShape() == Relu.getShape());
    size_t Positive = 0;
    for (size_t I = 0; I < Relu.getElementCount(); ++I) {
        CHECK(Relu[I] == std::max(Conv[I], 0.0f));
        Positive += Relu[I] > 0.0f;
    }
    CHECK(Positive > 0 && Positive < Relu.getElementCount());
    // Inputs and outputs are readable by name as well.
    CHECK(Request.getTensor("image").getShape() == rt::TensorShape({1, 1, 8, 8}));
    rt::TypedTensor<float> ByName(Request.getTensor("probabilities"));
    rt::TypedTensor<float> Output(Request.getOutput(0));
    CHECK(ByName.getShape() == rt::TensorShape({1, 10}));
    CHECK(std::equal(ByName.begin(), ByName.end(), Output.begin()));
    return 0;
}
