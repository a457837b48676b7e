// The external consumer of the package test: loads the model given as argv[1], runs one inference
// on zeros, prints the output, and checks that the loaded library is the version the installed
// headers describe. Built as C++14 against the installed headers only.
#if __cplusplus != 201402L
#error "the consumer must be compiled as C++14 (set(CMAKE_CXX_STANDARD 14))"
#endif

#include <Optimium/Runtime.h>
#include <Optimium/Runtime/Utils/StreamHelper.h>

#include <cmath>
#include <iostream>
#include <vector>

namespace rt = optimium::runtime;

static rt::AutoInit Init;

int main(int argc, char **argv) {
    if (argc != 2) {
        std::cerr << "usage: " << argv[0] << " <model>" << std::endl;
        return 2;
    }
    try {
        const rt::Version V = rt::getVersion();
        constexpr rt::Version Compiled = OPTIMIUM_RT_CURRENT_VERSION;
        std::cout << "runtime " << V << ", headers " << Compiled << std::endl;
        if (V != Compiled) {
            std::cerr << "FAIL: runtime/header version mismatch" << std::endl;
            return 1;
        }

        rt::Model Model = rt::loadModel(argv[1]);
        rt::InferRequest Request = Model.createRequest();
        std::vector<rt::Tensor> Inputs;
        for (rt::StringRef Name : Model.getInputNames()) {
            const rt::TensorInfo &Info = Model.getTensorInfo(Name);
            std::cout << "input:  " << Info << std::endl;
            rt::TypedTensor<float> T = rt::tensor<float>(Info.Shape);
            T.fill(0.0f);
            Inputs.push_back(T);
        }
        Request.infer(rt::make_array(Inputs));
        Request.wait();

        rt::TypedTensor<float> Out(Request.getOutput(0));
        std::cout << "output: " << Model.getOutputTensorInfo(0) << std::endl;
        std::cout << rt::Tensor(Out) << std::endl;
        float Sum = 0.0f;
        for (float P : Out)
            Sum += P;
        if (Out.getElementCount() != 10 || std::fabs(Sum - 1.0f) > 1e-4f) {
            std::cerr << "FAIL: expected 10 probabilities summing to 1, got sum " << Sum << std::endl;
            return 1;
        }
    } catch (const rt::Exception &E) {
        std::cerr << "FAIL: " << E.what() << std::endl;
        return 1;
    }
    std::cout << "package consumer OK" << std::endl;
    return 0;
}
