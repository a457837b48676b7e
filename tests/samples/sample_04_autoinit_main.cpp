// Spec section 4 "Initialization lifecycle": approach 1 (explicit initialize()/finalize()) and
// approach 2's "Also OK: top of main()" form. Each spec fragment is its own `int main(...)`, so
// approach 1 lives in a helper (the spec's main body, verbatim) and main() is the AutoInit form.
// The "// ... load models, run inference ..." placeholders are filled minimally.
#include <Optimium/Runtime.h>
#include <Optimium/Runtime/Utils/StreamHelper.h>

#include <iostream>
#include <vector>

#ifndef SAMPLE_MODEL_DIR
#error "SAMPLE_MODEL_DIR must point at models/digits"
#endif

namespace rt = optimium::runtime;

namespace {

// Loads the digits model, runs one inference on zeros, returns the top-1 class.
int loadAndRun() {
    rt::Model Model = rt::loadModel(SAMPLE_MODEL_DIR);
    rt::InferRequest Request = Model.createRequest();
    rt::TypedTensor<float> Image = rt::tensor<float>(Model.getInputTensorInfo(0).Shape);
    Image.fill(0.0f);
    std::vector<rt::Tensor> Inputs{Image};
    Request.infer(rt::make_array(Inputs));
    Request.wait();
    rt::TypedTensor<float> Out(Request.getOutput(0));
    int Best = 0;
    for (int I = 1; I < 10; ++I)
        if (Out[I] > Out[Best])
            Best = I;
    std::cout << "output: " << Out << " (top-1 " << Best << ")" << std::endl;
    return Best;
}

// Approach 1: explicit initialize() / finalize() calls (the spec's `int main(...)` body).
int approach1() {
    rt::initialize();

    // ... load models, run inference ...
    int Best = loadAndRun();

    rt::finalize();
    return Best;
}

} // namespace

// Also OK: top of main() — runtime lives until main() returns.
int main() {
    const int Best1 = approach1();
    if (rt::isInitialized()) {
        std::cerr << "FAIL: runtime still initialized after finalize()" << std::endl;
        return 1;
    }

    rt::AutoInit Init;

    // ... load models, run inference ...
    if (!rt::isInitialized()) {
        std::cerr << "FAIL: AutoInit did not initialize the runtime" << std::endl;
        return 1;
    }
    const int Best2 = loadAndRun();
    if (Best1 != Best2) {
        std::cerr << "FAIL: results differ across initialize/finalize cycles" << std::endl;
        return 1;
    }
}
