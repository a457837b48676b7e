// Spec section 7 "Creating a request". The one-line fragment is verbatim; `Model` is declared
// before it (digits model). Checks afterwards: several requests of the same model run at the same
// time without interfering (one on the bundled sample digit, a 7, one on zeros).
#include <Optimium/Runtime.h>
#include <Optimium/Runtime/Utils/StreamHelper.h>

#include <iostream>
#include <vector>

#ifndef SAMPLE_MODEL_DIR
#error "SAMPLE_MODEL_DIR must point at models/digits"
#endif

namespace rt = optimium::runtime;

namespace {

int top1(const rt::Tensor &T) {
    rt::TypedTensor<float> Out(T);
    int Best = 0;
    for (size_t I = 1; I < Out.getElementCount(); ++I)
        if (Out[I] > Out[static_cast<size_t>(Best)])
            Best = static_cast<int>(I);
    return Best;
}

} // namespace

int main() {
    rt::AutoInit Init;
    rt::Model Model = rt::loadModel(SAMPLE_MODEL_DIR);

    rt::InferRequest Request = Model.createRequest();

    // --- checks (not part of the spec sample) ---
    rt::InferRequest Request2 = Model.createRequest();
    rt::TypedTensor<float> Seven = rt::tensor<float>({1, 1, 8, 8});
    Seven.load(SAMPLE_MODEL_DIR "/sample_input.bin");
    rt::TypedTensor<float> Zeros = rt::tensor<float>({1, 1, 8, 8});
    Zeros.fill(0.0f);
    std::vector<rt::Tensor> InputsA{Seven};
    std::vector<rt::Tensor> InputsB{Zeros};

    // Zeros alone first, for reference.
    Request2.infer(rt::make_array(InputsB));
    Request2.wait();
    const int ZerosTop1 = top1(Request2.getOutput(0));

    for (int Round = 0; Round < 20; ++Round) {
        Request.infer(rt::make_array(InputsA));
        Request2.infer(rt::make_array(InputsB));
        Request.wait();
        Request2.wait();
        if (top1(Request.getOutput(0)) != 7 || top1(Request2.getOutput(0)) != ZerosTop1) {
            std::cerr << "FAIL: concurrent requests interfered in round " << Round << ": "
                      << Request.getOutput(0) << " / " << Request2.getOutput(0) << std::endl;
            return 1;
        }
    }
    std::cout << "request 1 (digit 7): " << Request.getOutput(0) << std::endl;
    std::cout << "request 2 (zeros):   " << Request2.getOutput(0) << std::endl;
    std::cout << "model name via request: " << Request.getModelName() << std::endl;
    if (Request.getModelName() != Model.getName() || Request.getStatus() != rt::InferStatus::Ready) {
        std::cerr << "FAIL: request metadata/status" << std::endl;
        return 1;
    }
    return 0;
}
