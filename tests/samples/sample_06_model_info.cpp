// Spec section 6 "Listing model information". Verbatim except:
//  * `int main(...)` -> `int main()`; `Model` is declared before each fragment (rt::AutoInit
//    first, as section 4 requires);
//  * "path/to/model" -> the digits model; "input_0"/"output_0" -> its "image"/"probabilities";
//  * inferShape: the input shape {1, 3, 224, 224} -> {1, 1, 8, 8} (the digits input is
//    [batch, 1, 8, 8]; 3x224x224 would be a ShapeError) and the model is model_batch.onnx,
//    whose dim 0 is the symbol "batch";
//  * each stand-alone fragment is its own block, since they reuse variable names.
// Model attributes: the digits models carry none, so the "model_type" branch is not taken; the
// checks verify that (empty Attribute for a missing key).
#include <Optimium/Runtime.h>
#include <Optimium/Runtime/Utils/StreamHelper.h>

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

int main() {
    rt::AutoInit Init;

    {
        rt::Model Model = rt::loadModel(SAMPLE_MODEL_DIR);

        // print model name
        std::cout << "model name: " << Model.getName() << std::endl;

        // print list of input tensor info
        std::cout << "input tensors" << std::endl;
        for (rt::StringRef Name : Model.getInputNames())
            std::cout << Model.getTensorInfo(Name) << std::endl;

        // print list of output tensor info
        std::cout << "output tensors" << std::endl;
        for (rt::StringRef Name : Model.getOutputNames())
            std::cout << Model.getTensorInfo(Name) << std::endl;

        // access by index
        const rt::TensorInfo &FirstInput = Model.getInputTensorInfo(0);
        const rt::TensorInfo &FirstOutput = Model.getOutputTensorInfo(0);

        // every tensor in the model (inputs, outputs, intermediates)
        for (const rt::TensorInfo &Info : Model.getTensors())
            std::cout << Info << std::endl;

        // list operations
        for (const rt::OpInfo &Op : Model.getOperations())
            std::cout << "op: " << Op.Name << " on device: " << Op.Device << std::endl;

        // --- checks (not part of the spec sample) ---
        CHECK(Model.getInputNames().size() == 1 && Model.getInputNames()[0] == "image");
        CHECK(Model.getOutputNames().size() == 1 && Model.getOutputNames()[0] == "probabilities");
        CHECK(FirstInput.Name == "image" && FirstInput.Type == rt::ElementType::F32);
        CHECK(FirstInput.Shape == rt::TensorShape({1, 1, 8, 8}));
        CHECK(FirstOutput.Name == "probabilities" && FirstOutput.Shape == rt::TensorShape({1, 10}));
        CHECK(!Model.isDynamic());
        bool SawIntermediate = false;
        for (const rt::TensorInfo &Info : Model.getTensors())
            SawIntermediate |= Info.Name == "/features/features.1/Relu_output_0";
        CHECK(SawIntermediate);
        bool SawConv = false;
        for (const rt::OpInfo &Op : Model.getOperations())
            SawConv |= Op.Name == "/features/features.0/Conv" && Op.Type == "Conv";
        CHECK(SawConv);
    }

    {
        rt::Model Model = rt::loadModel(SAMPLE_MODEL_DIR);

        const rt::TensorInfo &Info = Model.getTensorInfo("image");

        std::cout << "name:      " << Info.Name << "\n"
                  << "shape:     " << Info.Shape << "\n"
                  << "alignment: " << Info.Alignment << "\n"
                  << "type:      " << Info.Type << "\n"
                  << "padding:   " << Info.Padding << "\n"
                  << "bytes:     " << Info.getTensorSize() << "\n"
                  << "resizable: " << Info.Resizable << std::endl;

        if (Info.Scheme)
            std::cout << "scheme: " << *(Info.Scheme) << std::endl;

        // --- checks (not part of the spec sample) ---
        CHECK(Info.getTensorSize() == 64 * sizeof(float));
        CHECK(!Info.Resizable && !Info.Scheme);
        bool Threw = false;
        try {
            Model.getTensorInfo("no_such_tensor");
        } catch (const rt::InvalidArgumentError &E) {
            Threw = true;
            std::cout << "unknown tensor: " << E.what() << std::endl;
        }
        CHECK(Threw);
    }

    {
        rt::Model Model = rt::loadModel(SAMPLE_DYNAMIC_MODEL);

        if (Model.hasAttribute("model_type")) {
            rt::Attribute Attr = Model.getAttribute("model_type");
            if (Attr.isa<rt::StringAttr>())
                std::cout << "type: " << Attr.cast<rt::StringAttr>().value() << std::endl;
        }

        for (rt::StringRef Key : Model.getAttributeKeys())
            std::cout << "attribute: " << Key << std::endl;

        // --- checks (not part of the spec sample) ---
        CHECK(!Model.hasAttribute("model_type"));
        CHECK(!Model.getAttribute("model_type"));
    }

    {
        rt::Model Model = rt::loadModel(SAMPLE_DYNAMIC_MODEL);

        // infer output shape from input shapes (by name)
        std::map<std::string, rt::TensorShape> InputShapes;
        InputShapes["image"] = rt::TensorShape({1, 1, 8, 8});
        rt::TensorShape OutputShape = Model.inferShape("probabilities", InputShapes);

        // infer output shape from input shapes (by index)
        std::vector<rt::TensorShape> InputShapeList = { rt::TensorShape({1, 1, 8, 8}) };
        rt::TensorShape OutputShape2 = Model.inferShape("probabilities", rt::make_array(InputShapeList));

        // --- checks (not part of the spec sample) ---
        std::cout << "dynamic input:  " << Model.getInputTensorInfo(0) << std::endl;
        std::cout << "dynamic output: " << Model.getOutputTensorInfo(0) << std::endl;
        std::cout << "inferShape by name:  " << OutputShape << std::endl;
        std::cout << "inferShape by index: " << OutputShape2 << std::endl;
        CHECK(Model.isDynamic());
        CHECK(Model.getInputTensorInfo(0).Shape.isDynamic());
        CHECK(Model.getInputTensorInfo(0).Shape[0] == rt::Expr("batch"));
        CHECK(OutputShape == rt::TensorShape({1, 10}));
        CHECK(OutputShape2 == rt::TensorShape({1, 10}));

        // A different batch through the symbol.
        InputShapes["image"] = rt::TensorShape({5, 1, 8, 8});
        rt::TensorShape Batch5 = Model.inferShape("probabilities", InputShapes);
        std::cout << "inferShape batch 5:  " << Batch5 << std::endl;
        CHECK(Batch5 == rt::TensorShape({5, 10}));
        // resolve() on the symbolic output shape.
        rt::TensorShape Resolved = Model.getOutputTensorInfo(0).Shape.resolve({{"batch", 7}});
        CHECK(Resolved == rt::TensorShape({7, 10}));
        CHECK(Resolved.getElementCount() == rt::Expr(70));
    }
    return 0;
}
