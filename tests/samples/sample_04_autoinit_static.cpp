// Spec section 4 "Initialization lifecycle", approach 2 (recommended form): a static global
// rt::AutoInit. Verbatim except `int main(...)` -> `int main()`; the "// ... load models, run
// inference ..." placeholder is filled minimally.
#include <Optimium/Runtime.h>
#include <Optimium/Runtime/Utils/StreamHelper.h>

#include <iostream>
#include <vector>

#ifndef SAMPLE_MODEL_DIR
#error "SAMPLE_MODEL_DIR must point at models/digits"
#endif

namespace rt = optimium::runtime;

// Recommended: static global — runtime lives for the entire process lifetime.
static rt::AutoInit Init;

int main() {
    // ... load models, run inference ...
    if (!rt::isInitialized()) {
        std::cerr << "FAIL: static AutoInit did not initialize the runtime" << std::endl;
        return 1;
    }
    rt::Model Model = rt::loadModel(SAMPLE_MODEL_DIR);
    rt::InferRequest Request = Model.createRequest();
    rt::TypedTensor<float> Image = rt::tensor<float>(Model.getInputTensorInfo(0).Shape);
    Image.fill(0.0f);
    std::vector<rt::Tensor> Inputs{Image};
    Request.infer(rt::make_array(Inputs));
    Request.wait();
    std::cout << "output: " << Request.getOutput(0) << std::endl;
    // rt::finalize() is called automatically when the process exits.
}
