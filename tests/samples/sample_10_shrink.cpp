// Spec section 10 "Reclaiming capacity with ShrinkToFit". Verbatim fragment; the model is
// tests/models/resizable_cache (no declared capacity, so the cache may overflow its base [1024]).
// Checks afterwards: shapes and the preserved prefix.
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
    static_cast<float *>(Request.getTensor("cache").data())[3] = 7.0f;

// Long prompt: the cache overflows its base capacity and the pool grows.
Request.setTensorShape("cache", rt::TensorShape({8192}));
Request.applyShapeChanges();

// ... decode the long sequence ...

    // --- checks (not part of the spec sample) ---
    CHECK(Request.getTensor("cache").getShape() == rt::TensorShape({8192}));
    CHECK(static_cast<const float *>(Request.getTensor("cache").data())[3] == 7.0f);
    CHECK(static_cast<const float *>(Request.getTensor("cache").data())[8000] == 0.0f);

// Short conversation next. Drop back down AND give the memory back.
Request.setTensorShape("cache", rt::TensorShape({512}));
Request.applyShapeChanges(/*ShrinkToFit=*/true);

    // --- checks (not part of the spec sample) ---
    CHECK(Request.getTensor("cache").getShape() == rt::TensorShape({512}));
    CHECK(static_cast<const float *>(Request.getTensor("cache").data())[3] == 7.0f);
    std::cout << "ok" << std::endl;
    return 0;
}
