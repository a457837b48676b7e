// Spec section 13 "Error handling". The section has no C++ code, only the exception list; this
// sample triggers documented errors and catches them the way applications do: by their specific
// type, with `catch (const rt::Exception &E)` as the fallback. Every case must throw exactly the
// documented type, and every type must derive from rt::Exception and std::runtime_error.
#include <Optimium/Runtime.h>
#include <Optimium/Runtime/Logging/FileWriter.h>
#include <Optimium/Runtime/Utils/StreamHelper.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#ifndef SAMPLE_MODEL_DIR
#error "SAMPLE_MODEL_DIR must point at models/digits"
#endif
#ifndef SAMPLE_TEST_MODELS_DIR
#error "SAMPLE_TEST_MODELS_DIR must point at tests/models"
#endif

namespace rt = optimium::runtime;

static_assert(std::is_base_of<std::runtime_error, rt::Exception>::value, "Exception base");
#define ASSERT_EXCEPTION(Name)                                                                     \
    static_assert(std::is_base_of<rt::Exception, rt::Name>::value, #Name " derives from Exception");
ASSERT_EXCEPTION(InvalidArgumentError)
ASSERT_EXCEPTION(InvalidStateError)
ASSERT_EXCEPTION(InvalidOperationError)
ASSERT_EXCEPTION(TypeError)
ASSERT_EXCEPTION(ShapeError)
ASSERT_EXCEPTION(ExtensionError)
ASSERT_EXCEPTION(DeviceError)
ASSERT_EXCEPTION(ModelError)
ASSERT_EXCEPTION(RequestError)
ASSERT_EXCEPTION(InferError)
ASSERT_EXCEPTION(OutOfResourceError)
ASSERT_EXCEPTION(ContainerError)
ASSERT_EXCEPTION(RemoteError)
ASSERT_EXCEPTION(IOError)
ASSERT_EXCEPTION(NetworkError)
ASSERT_EXCEPTION(OSError)
ASSERT_EXCEPTION(NotImplementedError)
#undef ASSERT_EXCEPTION

namespace {

int Failures = 0;

// Runs Fn; passes when it throws an E (caught by its specific type).
template <typename E> void expect(const char *What, const char *Expected, const std::function<void()> &Fn) {
    try {
        Fn();
        std::cout << "FAIL  " << What << ": no exception, expected " << Expected << std::endl;
        ++Failures;
    } catch (const E &Err) {
        std::cout << "ok    " << What << ": " << Expected << ": " << Err.what() << std::endl;
    } catch (const rt::Exception &Err) {
        std::cout << "FAIL  " << What << ": expected " << Expected << ", got another rt::Exception: "
                  << Err.what() << std::endl;
        ++Failures;
    } catch (const std::exception &Err) {
        std::cout << "FAIL  " << What << ": expected " << Expected << ", got a non-runtime exception: "
                  << Err.what() << std::endl;
        ++Failures;
    }
}

std::vector<rt::Tensor> zeros(rt::ElementType Type, const rt::TensorShape &Shape) {
    std::vector<rt::Tensor> Inputs{rt::tensor(Type, Shape)};
    std::memset(Inputs[0].data(), 0, Inputs[0].getTensorSize());
    return Inputs;
}

} // namespace

int main() {
    rt::AutoInit Init;
    const std::string Digits = SAMPLE_MODEL_DIR;
    const std::string TestModels = SAMPLE_TEST_MODELS_DIR;

    // The pattern an application uses (cf. the Python sample of the same section).
    try {
        rt::Model Model = rt::loadModel("nonexistent/path");
    } catch (const rt::ContainerError &E) {
        std::cout << "Container error: " << E.what() << std::endl;
    } catch (const rt::IOError &E) {
        std::cout << "IO error: " << E.what() << std::endl;
    } catch (const rt::Exception &E) {
        std::cout << "Runtime error: " << E.what() << std::endl;
    }

    // Loading.
    expect<rt::IOError>("loadModel(missing path)", "IOError", [] { rt::loadModel("nonexistent/path"); });
    expect<rt::ContainerError>("loadModel(not a model)", "ContainerError",
                               [&] { rt::loadModel(Digits + "/sample_input.bin"); });
    expect<rt::ContainerError>("loadModel(garbage bytes)", "ContainerError", [] {
        static const uint8_t Garbage[] = {0xde, 0xad, 0xbe, 0xef, 0x00, 0x11, 0x22};
        rt::loadModel(Garbage, sizeof(Garbage));
    });
    expect<rt::ModelError>("loadModel(unsupported op)", "ModelError",
                           [&] { rt::loadModel(TestModels + "/unsupported_op/model.onnx"); });
    expect<rt::DeviceError>("loadModel(Strict, missing device)", "DeviceError", [&] {
        rt::ModelLoadOptions Options;
        Options.Devices = {rt::DeviceID::from(rt::PlatformKind::Hexagon, rt::DeviceKind::Hexagon)};
        Options.Strict = true;
        rt::loadModel(Digits, Options);
    });
    expect<rt::InvalidArgumentError>("loadModel(core that does not exist)", "InvalidArgumentError", [&] {
        rt::ModelLoadOptions Options;
        Options.Cores = {static_cast<int>(std::thread::hardware_concurrency()) + 64};
        rt::loadModel(Digits, Options);
    });

    // Inference input validation (infer() throws before starting the run).
    rt::Model Model = rt::loadModel(Digits);
    expect<rt::ShapeError>("infer(bad input shape)", "ShapeError", [&] {
        rt::InferRequest Request = Model.createRequest();
        std::vector<rt::Tensor> Inputs = zeros(rt::ElementType::F32, {1, 1, 7, 7});
        Request.infer(rt::make_array(Inputs));
        Request.wait();
    });
    expect<rt::TypeError>("infer(bad element type)", "TypeError", [&] {
        rt::InferRequest Request = Model.createRequest();
        std::vector<rt::Tensor> Inputs = zeros(rt::ElementType::I32, {1, 1, 8, 8});
        Request.infer(rt::make_array(Inputs));
        Request.wait();
    });
    expect<rt::InvalidArgumentError>("infer(wrong input count)", "InvalidArgumentError", [&] {
        rt::InferRequest Request = Model.createRequest();
        std::vector<rt::Tensor> Inputs = zeros(rt::ElementType::F32, {1, 1, 8, 8});
        Inputs.push_back(Inputs[0]);
        Request.infer(rt::make_array(Inputs));
        Request.wait();
    });
    expect<rt::InvalidArgumentError>("infer(missing input name)", "InvalidArgumentError", [&] {
        rt::InferRequest Request = Model.createRequest();
        std::map<std::string, rt::Tensor> Inputs;
        Inputs["not_an_input"] = zeros(rt::ElementType::F32, {1, 1, 8, 8})[0];
        Request.infer(Inputs);
        Request.wait();
    });

    // Metadata and values.
    expect<rt::InvalidArgumentError>("getTensorInfo(unknown name)", "InvalidArgumentError",
                                     [&] { Model.getTensorInfo("no_such_tensor"); });
    expect<rt::ShapeError>("Expr(\"batch\").value()", "ShapeError", [] { rt::Expr("batch").value(); });
    expect<rt::ShapeError>("getTensorSize() of a symbolic shape", "ShapeError", [&] {
        rt::Model Dynamic = rt::loadModel(Digits + "/model_batch.onnx");
        Dynamic.getInputTensorInfo(0).getTensorSize();
    });
    expect<rt::TypeError>("Attribute::cast to the wrong kind", "TypeError", [] {
        rt::Attribute A = rt::Attribute::getInt(rt::AttributeKind::I32, 5);
        A.cast<rt::StringAttr>();
    });
    expect<rt::TypeError>("TypedTensor<float> over an i32 tensor", "TypeError",
                          [] { rt::TypedTensor<float> T(rt::tensor(rt::ElementType::I32, {4})); });
    expect<rt::ShapeError>("copyTo(shape mismatch)", "ShapeError",
                           [] { rt::tensor<float>({4}).copyTo(rt::tensor<float>({5})); });

    // Files and extensions.
    expect<rt::IOError>("FileWriter(unwritable path)", "IOError",
                        [] { rt::logging::FileWriter W("nonexistent-dir/sub/output.log"); });
    expect<rt::IOError>("Tensor::save(unwritable path)", "IOError",
                        [] { rt::tensor<float>({4}).save("nonexistent-dir/sub/tensor.bin"); });
    expect<rt::InvalidArgumentError>("loadExtension(not a file)", "InvalidArgumentError",
                                     [] { rt::loadExtension("nonexistent/liboptimium-runtime-hexagon.so"); });
    expect<rt::ExtensionError>("loadExtension(not a library)", "ExtensionError",
                               [&] { rt::loadExtension(Digits + "/model.onnx"); });

    if (Failures) {
        std::cerr << Failures << " case(s) failed" << std::endl;
        return 1;
    }
    std::cout << "all documented exceptions raised as expected" << std::endl;
    return 0;
}
