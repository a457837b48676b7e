// Spec section 10 "Capacity planning". The fragment is verbatim except the model path
// (tests/models/resizable_cache: a 1-D Preserved, Resizable "cache" of base shape [1024] marked by
// its optimium.json; total = sum(cache) + x). Checks afterwards: within capacity the pointer and
// content stay, and beyond the declared capacity setTensorShape throws InvalidArgumentError.
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

rt::ModelLoadOptions Options;
Options.ResizableCapacities.emplace("cache", rt::TensorShape({2048}));
rt::Model Model = rt::loadModel(SAMPLE_TEST_MODELS_DIR "/resizable_cache", Options);

rt::InferRequest Request = Model.createRequest();

    // --- checks (not part of the spec sample) ---
    rt::Tensor Before = Request.getTensor("cache");
    static_cast<float *>(Before.data())[0] = 5.0f;

// Within capacity: metadata-only. Same backing pointer, content stays in place,
// no re-plan, no reallocation, no device re-registration.
Request.setTensorShape("cache", rt::TensorShape({1536}));
Request.applyShapeChanges();

// Beyond a DECLARED capacity: hard cap.
// throws InvalidArgumentError
// Request.setTensorShape("cache", rt::TensorShape({4096}));

    // --- checks (not part of the spec sample) ---
    rt::Tensor After = Request.getTensor("cache");
    CHECK(After.data() == Before.data());
    CHECK(After.getShape() == rt::TensorShape({1536}));
    CHECK(static_cast<const float *>(After.data())[0] == 5.0f);
    CHECK(Model.getTensorInfo("cache").Resizable);
    bool Threw = false;
    try {
        Request.setTensorShape("cache", rt::TensorShape({4096}));
    } catch (const rt::InvalidArgumentError &E) {
        Threw = true;
        std::cout << "expected: " << E.what() << std::endl;
    }
    CHECK(Threw);
    rt::TypedTensor<float> X = rt::tensor<float>({1});
    X.fill(1.0f);
    Request.infer({X});
    Request.wait();
    CHECK(rt::TypedTensor<float>(Request.getOutput("total"))[0] == 6.0f);
    std::cout << "ok" << std::endl;
    return 0;
}
