// Spec section 14 "Extensions", run against the XNNPACK platform extension this tree builds
// (liboptimium-runtime-xnnpack.so). The spec's one line, with the path of the built library:
//
//     rt::loadExtension("path/to/liboptimium-runtime-hexagon.so");
//
// and its documented errors: InvalidArgumentError when the path is not a file, ExtensionError when
// an extension is already loaded for that platform or fails to register. xnnpack is on the spec's
// auto-load list, so where the library sits beside the runtime (the build tree, an install)
// initialize() has loaded it already and the explicit load is the ExtensionError. ctest runs this
// sample twice (tests/samples/CMakeLists.txt):
//   sample_14_extensions auto-loaded   the runtime of the build tree, the extension beside it;
//   sample_14_extensions explicit      the same runtime found through a folder that holds only
//                                      the runtime (LD_LIBRARY_PATH), as an install that keeps
//                                      extensions elsewhere: nothing is auto-loaded, the explicit
//                                      load registers the device (after one refused while the
//                                      extension is disabled), a second load is the error.
// Both then load the digits model on the XNNPack device, check where getOperations() says each op
// went and compare the output with the native CPU's.
#include <Optimium/Runtime.h>
#include <Optimium/Runtime/Utils/StreamHelper.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#ifndef SAMPLE_MODEL_DIR
#error "SAMPLE_MODEL_DIR must point at models/digits"
#endif
#ifndef SAMPLE_XNNPACK_EXTENSION
#error "SAMPLE_XNNPACK_EXTENSION must be the path of liboptimium-runtime-xnnpack.so"
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

// The XNNPack device of the local host, if one is registered.
bool findXnnpack(rt::DeviceID &Out) {
    for (rt::DeviceID ID : rt::getLocalInfo().Devices)
        if (ID.getPlatform() == rt::PlatformKind::XNNPack) {
            Out = ID;
            return true;
        }
    return false;
}

rt::DeviceID nativeCpu() {
    for (rt::DeviceID ID : rt::getLocalInfo().Devices)
        if (ID.getPlatform() == rt::PlatformKind::Native)
            return ID;
    return rt::DeviceID();
}

// Expects loadExtension(Path) to throw exactly E; prints the message.
template <typename E> bool loadFails(const std::string &Path, const char *Expected, const char *MessagePart) {
    try {
        rt::loadExtension(Path);
        std::cerr << "FAIL: loadExtension(\"" << Path << "\") did not throw; expected " << Expected << std::endl;
    } catch (const E &Err) {
        std::cout << "ok    loadExtension(\"" << Path << "\"): " << Expected << ": " << Err.what() << std::endl;
        if (std::strstr(Err.what(), MessagePart))
            return true;
        std::cerr << "FAIL: the message does not say \"" << MessagePart << "\"" << std::endl;
    } catch (const rt::Exception &Err) {
        std::cerr << "FAIL: loadExtension(\"" << Path << "\") threw another error than " << Expected << ": "
                  << Err.what() << std::endl;
    }
    return false;
}

std::vector<float> run(rt::Model &Model, const std::string &InputFile) {
    rt::InferRequest Request = Model.createRequest();
    const rt::TensorInfo &Info = Model.getTensorInfo(Model.getInputNames()[0]);
    rt::Tensor Input = rt::tensor(Info.Type, Info.Shape);
    Input.load(InputFile);
    Request.infer(rt::make_array(std::vector<rt::Tensor>{Input}));
    Request.wait();
    const rt::Tensor Out = Request.getOutput(0);
    const float *P = static_cast<const float *>(Out.data());
    return std::vector<float>(P, P + Out.getElementCount());
}

} // namespace

int main(int argc, char **argv) {
    const std::string Mode = argc > 1 ? argv[1] : "";
    if (Mode != "auto-loaded" && Mode != "explicit") {
        std::cerr << "usage: sample_14_extensions auto-loaded|explicit" << std::endl;
        return 2;
    }
    rt::AutoInit Init;
    rt::DeviceID Xnn;
    const bool AutoLoaded = findXnnpack(Xnn);
    std::cout << "XNNPack auto-loaded at initialize(): " << (AutoLoaded ? "yes" : "no") << std::endl;
    CHECK(AutoLoaded == (Mode == "auto-loaded"));

    if (!AutoLoaded) {
        // An extension that fails to register is an ExtensionError too: the XNNPACK extension
        // refuses to register while OPTIMIUM_RT_XNNPACK_DISABLE is set (docs/using.md).
        setenv("OPTIMIUM_RT_XNNPACK_DISABLE", "1", 1);
        CHECK(loadFails<rt::ExtensionError>(SAMPLE_XNNPACK_EXTENSION, "ExtensionError", "failed to register"));
        unsetenv("OPTIMIUM_RT_XNNPACK_DISABLE");
        CHECK(!findXnnpack(Xnn));
    }

    // --- the spec sample ---
    if (!AutoLoaded) {
        rt::loadExtension(SAMPLE_XNNPACK_EXTENSION);
        CHECK(findXnnpack(Xnn));
        std::cout << "loaded " << Xnn << " capability: " << Xnn.getCapability().toString() << std::endl;
    }
    // Loaded now either way: the same load again is "already loaded for that platform".
    CHECK(loadFails<rt::ExtensionError>(SAMPLE_XNNPACK_EXTENSION, "ExtensionError", "already loaded"));

    // --- the documented errors ---
    CHECK(loadFails<rt::InvalidArgumentError>("path/to/liboptimium-runtime-hexagon.so", "InvalidArgumentError",
                                              "is not a file"));
    CHECK(loadFails<rt::InvalidArgumentError>(SAMPLE_MODEL_DIR, "InvalidArgumentError", "is not a file"));
    CHECK(loadFails<rt::ExtensionError>(std::string(SAMPLE_MODEL_DIR) + "/model.onnx", "ExtensionError",
                                        "cannot load extension"));

    // --- the extension at work: the digits model on the XNNPack device ---
    CHECK(rt::isDeviceCPU(Xnn.getDeviceKind()));
    CHECK(Xnn.getCapability().getKind() != rt::CapabilityKind::Void);
    rt::ModelLoadOptions Options;
    Options.Devices = {Xnn, nativeCpu()}; // XNNPack first, the native CPU for what it lacks
    rt::Model OnXnn = rt::loadModel(SAMPLE_MODEL_DIR, Options);
    int XnnOps = 0;
    for (const rt::OpInfo &Op : OnXnn.getOperations()) {
        std::cout << "  " << Op.Name << " (" << Op.Type << ") on " << Op.Device << std::endl;
        const bool Heavy = Op.Type.find("Conv") != std::string::npos || Op.Type.find("Gemm") != std::string::npos ||
                           Op.Type == "MaxPool" || Op.Type == "Softmax";
        if (Heavy && !(Op.Device == Xnn)) {
            std::cerr << "FAIL: " << Op.Name << " (" << Op.Type << ") is not on XNNPack" << std::endl;
            return 1;
        }
        // XNNPACK has no Flatten: it stays on the native CPU.
        if (Op.Type == "Flatten" && Op.Device.getPlatform() != rt::PlatformKind::Native) {
            std::cerr << "FAIL: Flatten is on " << Op.Device << ", expected the native CPU" << std::endl;
            return 1;
        }
        XnnOps += Op.Device == Xnn;
    }
    CHECK(XnnOps >= 4);

    rt::ModelLoadOptions NativeOptions;
    NativeOptions.Devices = {nativeCpu()};
    rt::Model OnCpu = rt::loadModel(SAMPLE_MODEL_DIR, NativeOptions);
    const std::string Input = std::string(SAMPLE_MODEL_DIR) + "/sample_input.bin";
    const std::vector<float> A = run(OnXnn, Input), B = run(OnCpu, Input);
    CHECK(A.size() == B.size() && A.size() == 10);
    double MaxDiff = 0;
    for (size_t I = 0; I < A.size(); ++I)
        MaxDiff = std::max(MaxDiff, static_cast<double>(std::fabs(A[I] - B[I])));
    std::cout << "XNNPack vs native CPU: max |difference| " << MaxDiff << std::endl;
    CHECK(MaxDiff <= 1e-5); // probabilities in [0, 1]; the two differ by float rounding only
    CHECK(std::max_element(A.begin(), A.end()) - A.begin() == std::max_element(B.begin(), B.end()) - B.begin());
    return 0;
}
