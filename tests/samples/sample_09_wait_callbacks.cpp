// Spec section 9 "Running an inference": wait() with a timeout, getStatus(), callbacks and
// cancellation. Each fragment is verbatim, in its own block of main() (after rt::AutoInit) with
// `Model` (the digits model), `Request` and `Inputs` (zero-filled, in input order) declared just
// before it. The "// ... later:" placeholder of the cancellation fragment is left empty (cancel
// right away). Checks afterwards: statuses, callback invocations, and the cancel outcome (either
// the run finished first, or wait() raises InferError and the status is Fault).
#include <Optimium/Runtime.h>
#include <Optimium/Runtime/Utils/StreamHelper.h>

#include <atomic>
#include <chrono>
#include <exception>
#include <iostream>
#include <memory>
#include <string>
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

namespace {

std::vector<rt::Tensor> zeroInputs(const rt::Model &Model) {
    std::vector<rt::Tensor> Inputs;
    for (rt::StringRef Name : Model.getInputNames()) {
        const rt::TensorInfo &Info = Model.getTensorInfo(Name);
        rt::TypedTensor<float> T = rt::tensor<float>(Info.Shape);
        T.fill(0.0f);
        Inputs.push_back(T);
    }
    return Inputs;
}

} // namespace

int main() {
    rt::AutoInit Init;
    rt::Model Model = rt::loadModel(SAMPLE_MODEL_DIR);

    {
        rt::InferRequest Request = Model.createRequest();
        std::vector<rt::Tensor> Inputs = zeroInputs(Model);

        using namespace std::chrono_literals;

        // wait until inference is finished.
        Request.infer(rt::make_array(Inputs));
        Request.wait();

        // wait 500 milliseconds
        Request.infer(rt::make_array(Inputs));
        if (Request.wait(500ms))
            std::cout << "inference not finished after 500ms" << std::endl;
        else
            std::cout << "inference finished within 500ms" << std::endl;

        std::cout << "status of request: " << Request.getStatus() << std::endl;

        // --- checks (not part of the spec sample) ---
        Request.wait(); // in case the 500 ms ran out first
        CHECK(Request.getStatus() == rt::InferStatus::Ready);
        CHECK(!Request.wait(500ms)); // nothing running: returns at once, no timeout
        CHECK(Request.getOutput(0).getShape() == rt::TensorShape({1, 10}));
    }

    {
        rt::InferRequest Request = Model.createRequest();
        std::vector<rt::Tensor> Inputs = zeroInputs(Model);
        auto Calls = std::make_shared<std::atomic<int>>(0);
        auto Faults = std::make_shared<std::atomic<int>>(0);
        Request.addCallback([Calls, Faults](rt::InferStatus Status, std::exception_ptr Err) {
            ++*Calls;
            if (Status == rt::InferStatus::Fault || Err)
                ++*Faults;
        });

        Request.addCallback([](rt::InferStatus Status, std::exception_ptr Err) {
            if (Status == rt::InferStatus::Fault) {
                try { std::rethrow_exception(Err); }
                catch (const std::exception &E) {
                    std::cerr << "Inference error: " << E.what() << std::endl;
                }
            }
        });

        Request.infer(rt::make_array(Inputs));
        Request.wait();

        // --- checks (not part of the spec sample) ---
        std::cout << "callback calls: " << Calls->load() << ", faults: " << Faults->load() << std::endl;
        CHECK(Calls->load() == 1 && Faults->load() == 0);
        Request.infer(rt::make_array(Inputs));
        Request.wait();
        CHECK(Calls->load() == 2 && Faults->load() == 0);
    }

    {
        // Cancellation races with a tiny model; try a few fresh requests (a faulted request must
        // not be reused) until one is actually cancelled.
        int Cancelled = 0, Finished = 0;
        for (int Attempt = 0; Attempt < 50 && Cancelled == 0; ++Attempt) {
            rt::InferRequest Request = Model.createRequest();
            std::vector<rt::Tensor> Inputs = zeroInputs(Model);
            auto Status = std::make_shared<std::atomic<int>>(-1);
            auto ErrorWhat = std::make_shared<std::string>();
            Request.addCallback([Status, ErrorWhat](rt::InferStatus S, std::exception_ptr Err) {
                if (Err) {
                    try { std::rethrow_exception(Err); }
                    catch (const rt::InferError &E) { *ErrorWhat = E.what(); }
                    catch (...) { *ErrorWhat = "<not an InferError>"; }
                }
                Status->store(static_cast<int>(S));
            });

            Request.infer(rt::make_array(Inputs));
            // ... later:
            Request.cancel();

            // --- checks (not part of the spec sample) ---
            try {
                Request.wait();
                CHECK(Request.getStatus() == rt::InferStatus::Ready);
                CHECK(Status->load() == static_cast<int>(rt::InferStatus::Ready));
                ++Finished;
            } catch (const rt::InferError &E) {
                std::cout << "cancelled: wait() threw InferError: " << E.what() << std::endl;
                CHECK(Request.getStatus() == rt::InferStatus::Fault);
                CHECK(Status->load() == static_cast<int>(rt::InferStatus::Fault));
                CHECK(!ErrorWhat->empty() && *ErrorWhat != "<not an InferError>");
                ++Cancelled;
            }
        }
        std::cout << "cancel: " << Cancelled << " cancelled, " << Finished << " finished first" << std::endl;
        CHECK(Cancelled + Finished > 0);
    }
    return 0;
}
