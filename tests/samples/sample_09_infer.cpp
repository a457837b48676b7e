// Spec section 9 "Running an inference": the input-list and input-map samples. Verbatim except:
//  * each `int main(...)` fragment is a block of main() (after rt::AutoInit), with `Model` (the
//    digits model) and `Request` declared just before it;
//  * "output_0" -> "probabilities" (the digits model's output).
// Checks afterwards: output metadata, the documented output lifetime (getOutput() shares the
// request's buffer, overwritten in place for a static-shape model), a real digit classified
// correctly, and a batched run of the dynamic model_batch.onnx.
#include <Optimium/Runtime.h>
#include <Optimium/Runtime/Utils/StreamHelper.h>

#include <cmath>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#ifndef SAMPLE_MODEL_DIR
#error "SAMPLE_MODEL_DIR must point at models/digits"
#endif
#ifndef SAMPLE_DYNAMIC_MODEL
#error "SAMPLE_DYNAMIC_MODEL must point at models/digits/model_batch.onnx"
#endif

namespace rt = optimium::runtime;

#define CHECK(Cond)                                                                                \
    do {                                                                                           \
        if (!(Cond)) {                                                                             \
            std::cerr << "FAIL: " #Cond " (line " << __LINE__ << ")" << std::endl;                \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

namespace {

int top1(const float *P, size_t N) {
    size_t Best = 0;
    for (size_t I = 1; I < N; ++I)
        if (P[I] > P[Best])
            Best = I;
    return static_cast<int>(Best);
}

} // namespace

int main() {
    rt::AutoInit Init;

    {
        rt::Model Model = rt::loadModel(SAMPLE_MODEL_DIR);
        rt::InferRequest Request = Model.createRequest();

        // running inference with an input list
        std::vector<rt::Tensor> Inputs;
        for (rt::StringRef Name : Model.getInputNames()) {
            const rt::TensorInfo &Info = Model.getTensorInfo(Name);
            Inputs.push_back(rt::tensor(Info.Type, Info.Shape));
        }

        // rt::make_array is a helper that creates an rt::ArrayRef.
        Request.infer(rt::make_array(Inputs));
        Request.wait();

        // read the outputs back
        rt::Tensor Out0 = Request.getOutput(0);
        rt::Tensor OutByName = Request.getOutput("probabilities");

        // --- checks (not part of the spec sample) ---
        CHECK(Out0.getType() == rt::ElementType::F32);
        CHECK(Out0.getShape() == rt::TensorShape({1, 10}));
        CHECK(OutByName.data() == Out0.data());
        CHECK(Request.getStatus() == rt::InferStatus::Ready);

        // A real digit (the bundled sample, a 7), reusing the same input tensor.
        Inputs[0].load(SAMPLE_MODEL_DIR "/sample_input.bin");
        Request.infer(rt::make_array(Inputs));
        Request.wait();
        rt::TypedTensor<float> Probs(Request.getOutput(0));
        std::cout << "sample digit: " << rt::Tensor(Probs) << std::endl;
        CHECK(top1(Probs.data(), 10) == 7 && Probs[7] > 0.99f);
        float Sum = 0.0f;
        for (float P : Probs)
            Sum += P;
        CHECK(std::fabs(Sum - 1.0f) < 1e-4f);
        // Static-shape model: the held Out0 was overwritten in place by this run.
        CHECK(Probs.data() == Out0.data());
        // copyTo() takes a snapshot that later runs leave alone.
        rt::Tensor Snapshot = rt::tensor(rt::ElementType::F32, {1, 10});
        Out0.copyTo(Snapshot);
        rt::TypedTensor<float>(Inputs[0]).fill(0.0f);
        Request.infer(rt::make_array(Inputs));
        Request.wait();
        CHECK(top1(static_cast<const float *>(Snapshot.data()), 10) == 7);
    }

    {
        rt::Model Model = rt::loadModel(SAMPLE_MODEL_DIR);
        rt::InferRequest Request = Model.createRequest();

        // running inference with an input map
        std::map<std::string, rt::Tensor> Inputs;
        for (rt::StringRef Name : Model.getInputNames()) {
            const rt::TensorInfo &Info = Model.getTensorInfo(Name);
            Inputs[Name] = rt::tensor(Info.Type, Info.Shape);
        }

        Request.infer(Inputs);
        Request.wait();

        // --- checks (not part of the spec sample) ---
        CHECK(Inputs.size() == 1 && Inputs.count("image") == 1);
        CHECK(Request.getOutput("probabilities").getShape() == rt::TensorShape({1, 10}));
        Inputs["image"].load(SAMPLE_MODEL_DIR "/sample_input.bin");
        Request.infer(Inputs);
        Request.wait();
        rt::TypedTensor<float> Probs(Request.getOutput(0));
        std::cout << "sample digit (by name): " << rt::Tensor(Probs) << std::endl;
        CHECK(top1(Probs.data(), 10) == 7);
    }

    {
        // Batched run of the dynamic model: the first 3 test images vs. one-at-a-time runs.
        rt::Model Single = rt::loadModel(SAMPLE_MODEL_DIR);
        rt::Model Batched = rt::loadModel(SAMPLE_DYNAMIC_MODEL);
        CHECK(Batched.isDynamic());
        std::vector<float> Images(3 * 64);
        std::ifstream File(SAMPLE_MODEL_DIR "/test_images.bin", std::ios::in | std::ios::binary);
        File.read(reinterpret_cast<char *>(Images.data()),
                  static_cast<std::streamsize>(Images.size() * sizeof(float)));
        CHECK(File.gcount() == static_cast<std::streamsize>(Images.size() * sizeof(float)));

        rt::InferRequest BatchRequest = Batched.createRequest();
        std::vector<rt::Tensor> BatchInputs{rt::tensor<float>({3, 1, 8, 8}, Images.data(), false)};
        BatchRequest.infer(rt::make_array(BatchInputs));
        BatchRequest.wait();
        rt::TypedTensor<float> BatchOut(BatchRequest.getOutput("probabilities"));
        std::cout << "batch of 3: " << rt::Tensor(BatchOut) << std::endl;
        CHECK(BatchOut.getShape() == rt::TensorShape({3, 10}));

        rt::InferRequest SingleRequest = Single.createRequest();
        for (size_t B = 0; B < 3; ++B) {
            std::vector<rt::Tensor> One{rt::tensor<float>({1, 1, 8, 8}, Images.data() + B * 64, false)};
            SingleRequest.infer(rt::make_array(One));
            SingleRequest.wait();
            rt::TypedTensor<float> Out(SingleRequest.getOutput(0));
            for (size_t I = 0; I < 10; ++I)
                CHECK(std::fabs(Out[I] - BatchOut[B * 10 + I]) < 1e-5f);
        }
    }
    return 0;
}
