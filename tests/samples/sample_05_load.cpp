// Spec section 5 "Load a model". Verbatim except:
//  * `int main(...)` -> `int main()`, with rt::AutoInit declared first (section 4: the runtime
//    must be initialized before loading a model);
//  * "path/to/model" -> SAMPLE_MODEL_DIR (the models/digits folder; a model may be a folder);
//  * `Options.Cores = {0, 1, 2, 3};` -> the cores this machine has: pinning to a core that does
//    not exist is rejected with InvalidArgumentError, and CI machines may have fewer than 4.
// The ARM64 device stays as in the spec: with Strict = false the runtime falls back to the local
// CPU, which is what the checks after the sample verify (plus one inference on each model, the
// in-memory loadModel overload, and Strict = true raising DeviceError).
#include <Optimium/Runtime.h>
#include <Optimium/Runtime/Utils/StreamHelper.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <iterator>
#include <thread>
#include <vector>

#ifndef SAMPLE_MODEL_DIR
#error "SAMPLE_MODEL_DIR must point at models/digits"
#endif

namespace rt = optimium::runtime;

namespace {

// Cores {0, 1, ..., min(4, hardware_concurrency) - 1}.
std::vector<int> availableCores() {
    unsigned N = std::thread::hardware_concurrency();
    if (N == 0)
        N = 1;
    std::vector<int> Cores;
    for (unsigned I = 0; I < N && I < 4; ++I)
        Cores.push_back(static_cast<int>(I));
    return Cores;
}

// One inference on zeros; checks the softmax output sums to 1. Returns the top-1 class or -1.
int runOnce(const rt::Model &M, const char *What) {
    rt::InferRequest Request = M.createRequest();
    rt::TypedTensor<float> Image = rt::tensor<float>(M.getInputTensorInfo(0).Shape);
    Image.fill(0.0f);
    std::vector<rt::Tensor> Inputs{Image};
    Request.infer(rt::make_array(Inputs));
    Request.wait();
    rt::TypedTensor<float> Out(Request.getOutput(0));
    float Sum = 0.0f;
    int Best = 0;
    for (size_t I = 0; I < Out.getElementCount(); ++I) {
        Sum += Out[I];
        if (Out[I] > Out[static_cast<size_t>(Best)])
            Best = static_cast<int>(I);
    }
    std::cout << What << ": " << Out << std::endl;
    if (Out.getElementCount() != 10 || std::fabs(Sum - 1.0f) > 1e-4f) {
        std::cerr << "FAIL: " << What << " output is not a 10-way softmax (sum " << Sum << ")" << std::endl;
        return -1;
    }
    return Best;
}

} // namespace

int main() {
    rt::AutoInit Init;

    // load a model with default options (auto-detected devices, Auto scheduler).
    rt::Model Model = rt::loadModel(SAMPLE_MODEL_DIR);

    // load a model with manual configuration.
    rt::ModelLoadOptions Options;
    Options.Devices = { rt::DeviceID::from(rt::PlatformKind::Native, rt::DeviceKind::ARM64) };
    Options.Strict = false;
    Options.EnableMemoryOptimization = true;
    Options.DisableDenormals = true;
    Options.Passphrase = "";
    Options.ThreadCount = 4;
    Options.Cores = availableCores(); // spec: {0, 1, 2, 3}; only cores that exist are accepted
    Options.SpinIterations = rt::kDefaultSpinIterations;
    Options.SpinYieldIterations = rt::kDefaultSpinYieldIterations;
    Options.EnableWorkStealing = true;   // default
    Options.Scheduler = rt::SchedulerType::Auto;

    rt::Model Model2 = rt::loadModel(SAMPLE_MODEL_DIR, Options);

    // --- checks (not part of the spec sample) ---
    const rt::DeviceID Local = rt::getLocalInfo().Devices[0];
    for (const rt::OpInfo &Op : Model2.getOperations()) {
        if (Op.Device.getPlatform() != rt::PlatformKind::Native ||
            Op.Device.getDeviceKind() != Local.getDeviceKind()) {
            std::cerr << "FAIL: op " << Op.Name << " placed on " << Op.Device
                      << ", expected the local CPU fallback " << Local << std::endl;
            return 1;
        }
    }
    std::cout << "Model2 fell back to " << Local << " (ARM64 requested, Strict = false)" << std::endl;
    const int Best1 = runOnce(Model, "default options");
    const int Best2 = runOnce(Model2, "manual options");
    if (Best1 < 0 || Best2 < 0 || Best1 != Best2) {
        std::cerr << "FAIL: the two loads disagree" << std::endl;
        return 1;
    }

    // The in-memory overload (the buffer must outlive the model and its requests).
    std::ifstream File(SAMPLE_MODEL_DIR "/model.onnx", std::ios::in | std::ios::binary);
    const std::vector<uint8_t> Bytes((std::istreambuf_iterator<char>(File)), std::istreambuf_iterator<char>());
    rt::Model FromMemory = rt::loadModel(Bytes.data(), Bytes.size());
    if (Bytes.empty() || runOnce(FromMemory, "from memory") != Best1) {
        std::cerr << "FAIL: the model loaded from memory disagrees" << std::endl;
        return 1;
    }

    // Strict = true must refuse the missing device instead of falling back (DeviceError).
    if (Local.getDeviceKind() != rt::DeviceKind::ARM64) {
        rt::ModelLoadOptions StrictOptions;
        StrictOptions.Devices = { rt::DeviceID::from(rt::PlatformKind::Native, rt::DeviceKind::ARM64) };
        StrictOptions.Strict = true;
        try {
            rt::loadModel(SAMPLE_MODEL_DIR, StrictOptions);
            std::cerr << "FAIL: Strict load on a missing ARM64 device succeeded" << std::endl;
            return 1;
        } catch (const rt::DeviceError &E) {
            std::cout << "Strict = true: DeviceError: " << E.what() << std::endl;
        }
    }
    return 0;
}
