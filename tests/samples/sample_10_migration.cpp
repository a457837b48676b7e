// Spec section 10 "Custom migration callbacks". Verbatim fragment; the model is
// tests/models/resizable_cache. Checks afterwards: the callback ran on the resize and the default
// migration is back after passing nullptr.
#include <Optimium/Runtime.h>

#include <cstdint>
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
    static_cast<float *>(Request.getTensor("cache").data())[0] = 3.0f;

Request.setResizeMigration("cache", [](const rt::Tensor &Old, rt::Tensor &New) {
    const auto *O = static_cast<const float *>(Old.data());
    auto *N = static_cast<float *>(New.data());
    const uint32_t OldN = Old.getShape()[0].value();
    const uint32_t NewN = New.getShape()[0].value();
    const uint32_t Count = OldN < NewN ? OldN : NewN;
    // e.g. a ring-buffer shift, a non-outer growth axis, or a custom fill.
    for (uint32_t I = 0; I < Count; ++I)
        N[I] = O[I];
});

    // --- checks (not part of the spec sample) ---
    Request.setTensorShape("cache", rt::TensorShape({2000}));
    Request.applyShapeChanges();
    CHECK(static_cast<const float *>(Request.getTensor("cache").data())[0] == 3.0f);

// pass an empty function to restore the default migration
Request.setResizeMigration("cache", nullptr);

    // --- checks (not part of the spec sample) ---
    Request.setTensorShape("cache", rt::TensorShape({100}));
    Request.applyShapeChanges();
    CHECK(static_cast<const float *>(Request.getTensor("cache").data())[0] == 3.0f);
    bool Threw = false;
    try {
        Request.setResizeMigration("x", nullptr);
    } catch (const rt::InvalidArgumentError &) {
        Threw = true;
    }
    CHECK(Threw);
    std::cout << "ok" << std::endl;
    return 0;
}
