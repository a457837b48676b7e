// Spec section 12 "Profiling": the profile() fragment and the custom-recorder fragment, verbatim
// inside main() (after rt::AutoInit), with `Request` (digits model) and `Inputs` (the bundled
// sample digit) declared just before them. Adapted: `int main(...)` -> `int main()`; the second
// fragment's `Options` is the first one's (it is not redeclared), on a second request.
// Checks afterwards: one ModelExecute pair per measured run, every operation has its layer events,
// and the custom recorder received the second profile's events.
#include <Optimium/Runtime.h>
#include <Optimium/Runtime/Utils/StreamHelper.h>

#include <atomic>
#include <iostream>
#include <memory>
#include <vector>

#ifndef SAMPLE_MODEL_DIR
#error "SAMPLE_MODEL_DIR must point at models/digits"
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
    rt::Model Model = rt::loadModel(SAMPLE_MODEL_DIR);
    rt::InferRequest Request = Model.createRequest();
    rt::TypedTensor<float> Digit = rt::tensor<float>({1, 1, 8, 8});
    Digit.load(SAMPLE_MODEL_DIR "/sample_input.bin");
    std::vector<rt::Tensor> Inputs{Digit};

    rt::ProfileOptions Options;
    Options.Repeat = 100;                                     // measured iterations
    Options.WarmUp = 10;                                      // warm-up count
    Options.WarmUpTime = std::chrono::microseconds(1000000);  // warm-up duration cap
    Options.StopThreshold = std::chrono::microseconds(0);     // early-stop threshold
    Options.CheckPeriod = 0;                                  // threshold check period
    Options.EventBufferSize = rt::kDefaultEventBufferSize;    // event capacity (default 4,194,304 events)

    // optional cooperative stop flag
    auto StopFlag = std::make_shared<std::atomic_bool>(false);

    Request.profile(rt::make_array(Inputs), Options, StopFlag);

    for (const rt::ProfileEvent &Event : Request.getProfileEvents())
        std::cout << "Event: " << rt::toString(Event.Kind)
                  << " at " << Event.TimeStamp.time_since_epoch().count()
                  << std::endl;

    std::cout << "Model: " << Request.getModelName() << std::endl;
    for (const rt::OpInfo &Op : Request.getModelOperations())
        std::cout << "  Op: " << Op.Name << std::endl;

    // --- checks (not part of the spec sample) ---
    size_t ModelBegins = 0, ModelEnds = 0, LayerBegins = 0;
    for (const rt::ProfileEvent &Event : Request.getProfileEvents()) {
        ModelBegins += Event.Kind == rt::ProfileEventKind::ModelExecuteBegin;
        ModelEnds += Event.Kind == rt::ProfileEventKind::ModelExecuteEnd;
        LayerBegins += Event.Kind == rt::ProfileEventKind::LayerExecuteBegin;
    }
    CHECK(ModelBegins == 100 && ModelEnds == 100);
    CHECK(LayerBegins == 100 * Request.getModelOperations().size());
    CHECK(Request.getProfileDurations().ModelDurations.size() == 100);

    // The custom-recorder fragment, on a second request.
    {
        rt::InferRequest Request2 = Model.createRequest();
        rt::InferRequest &Request = Request2;
        Options.Repeat = 5;

        auto Recorder = std::make_shared<rt::ProfileEventRecorder>(1024 * 1024);
        Request.setRecorder(Recorder);
        Request.profile(rt::make_array(Inputs), Options);

        CHECK(Recorder->size() == Request.getProfileEvents().size());
        CHECK(Recorder->size() > 5 * Request.getModelOperations().size());
        CHECK(Recorder->dropped() == 0);
    }
    std::cout << "profile sample OK" << std::endl;
    return 0;
}
