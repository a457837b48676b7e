// Spec section 4 "Initialize the runtime": logging setup + explicit initialize()/finalize().
// The spec's code is copied verbatim; only `int main(...)` became `int main()` and the
// "// ... (load model, run inference, etc.)" placeholder is filled minimally (load the digits
// model, run one inference). Checks afterwards: the runtime reports initialized/finalized and
// the FileWriter wrote "output.log" in the working directory.
#include <Optimium/Runtime.h>
#include <Optimium/Runtime/Logging/LogSettings.h>
#include <Optimium/Runtime/Logging/ConsoleWriter.h>
#include <Optimium/Runtime/Logging/FileWriter.h>
#if defined(__ANDROID__)
#include <Optimium/Runtime/Logging/AndroidLogWriter.h>
#endif

// Stream operators for runtime types (TensorInfo, TensorShape, DeviceID,
// ElementType, InferStatus, ...) are NOT pulled in by <Optimium/Runtime.h>.
#include <Optimium/Runtime/Utils/StreamHelper.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#ifndef SAMPLE_MODEL_DIR
#error "SAMPLE_MODEL_DIR must point at models/digits"
#endif

namespace rt = optimium::runtime;

int main() {
    std::remove("output.log"); // FileWriter appends: start from a fresh file (not in the spec)

    // change verbosity to debug level.
    // levels: Debug, Verbose, Info, Warning, Error
    rt::logging::setLogLevel(rt::LogLevel::Debug);

    // add console log writer.
    rt::logging::addLogWriter(std::make_unique<rt::logging::ConsoleWriter>());

    // add file log writer to "output.log" file.
    rt::logging::addLogWriter(std::make_unique<rt::logging::FileWriter>("output.log"));

#if defined(__ANDROID__)
    // add Android Logcat log writer. this class only exists on Android.
    rt::logging::addLogWriter(std::make_unique<rt::logging::AndroidLogWriter>());
#endif

    // Explicitly initialize and finalize the runtime.
    rt::initialize();

    // ... (load model, run inference, etc.)
    if (!rt::isInitialized()) {
        std::cerr << "FAIL: isInitialized() is false after initialize()" << std::endl;
        return 1;
    }
    {
        rt::Model Model = rt::loadModel(SAMPLE_MODEL_DIR);
        rt::InferRequest Request = Model.createRequest();
        std::vector<rt::Tensor> Inputs;
        rt::TypedTensor<float> Image = rt::tensor<float>(Model.getInputTensorInfo(0).Shape);
        Image.fill(0.0f);
        Inputs.push_back(Image);
        Request.infer(rt::make_array(Inputs));
        Request.wait();
        std::cout << "output: " << Request.getOutput(0) << std::endl;
    }

    rt::finalize();

    if (rt::isInitialized()) {
        std::cerr << "FAIL: isInitialized() is true after finalize()" << std::endl;
        return 1;
    }
    // Close the log file, then check that the FileWriter wrote something.
    rt::logging::clearLogWriters();
    std::ifstream Log("output.log");
    std::string Line;
    if (!Log || !std::getline(Log, Line) || Line.empty()) {
        std::cerr << "FAIL: output.log is missing or empty" << std::endl;
        return 1;
    }
    std::cout << "output.log first line: " << Line << std::endl;
    return 0;
}
