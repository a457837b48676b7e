// Spec section 10 "releaseStaleShapeMemory()". Verbatim fragment; the model is
// tests/models/resizable_cache (no declared capacity). Checks afterwards: the request still runs.
#include <Optimium/Runtime.h>

#include <iostream>

#ifndef SAMPLE_TEST_MODELS_DIR
#error "SAMPLE_TEST_MODELS_DIR must point at tests/models"
#endif

namespace rt = optimium::runtime;

#define CHECK(C)                                                                                   \
    do {                                                                                           \
        if (!(C)) {                                                                                \
            std::cerr << "check failed: " #C " (line " << __LINE__ << ")" << std::endl;            \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

int main() {
    rt::AutoInit Init;
    rt::Model Model = rt::loadModel(SAMPLE_TEST_MODELS_DIR "/resizable_cache");
    rt::InferRequest Request = Model.createRequest();

Request.setTensorShape("cache", rt::TensorShape({8192}));
Request.applyShapeChanges();           // grows; old pools retained

Request.applyShapeChanges(true);       // capacity already 8192 -> early return,
                                       // old pools still held
Request.releaseStaleShapeMemory();     // this is what frees them

// Whereas an actual shrink does release them itself:
Request.setTensorShape("cache", rt::TensorShape({512}));
Request.applyShapeChanges(true);       // reallocates down AND releases

    // --- checks (not part of the spec sample) ---
    CHECK(Request.getTensor("cache").getShape() == rt::TensorShape({512}));
    rt::TypedTensor<float> X = rt::tensor<float>({1});
    X.fill(2.0f);
    Request.infer({X});
    Request.wait();
    CHECK(rt::TypedTensor<float>(Request.getOutput("total"))[0] == 2.0f);
    std::cout << "ok" << std::endl;
    return 0;
}
