// Spec section 11 "Model groups": the encoder/decoder sample. Verbatim except:
//  * `int main(...)` -> `int main()`, with rt::AutoInit first (as every sample needs);
//  * "path/to/encoder" / "path/to/decoder" -> the group_encoder / group_decoder test models
//    (tests/models/make_group_models.py; the decoder's `past` cache is Preserved + Resizable);
//  * the two `/* ... */` inputs -> the encoder's input and the decoder's input (the encoder's
//    expected output, read from files), and `Steps` declared before them.
//  * `GroupOptions.Cores = {4, 5, 6, 7};` -> the machine's last (up to) four cores: pinning to a
//    core that does not exist is rejected with InvalidArgumentError (as for loadModel, section 5),
//    and CI machines may have two.
// Checks afterwards: the encoder's output, the shared pool, sealing, and the decoder's
// request reused across the steps (its cache holds one column per step; logits grow with it).
#include <Optimium/Runtime.h>

#include <cmath>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#ifndef SAMPLE_TEST_MODELS_DIR
#error "SAMPLE_TEST_MODELS_DIR must point at tests/models"
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

rt::Tensor readFloats(const std::string &Path, const std::vector<int64_t> &Dims) {
    rt::TypedTensor<float> T = rt::tensor<float>(rt::TensorShape::fromDims(Dims));
    std::ifstream In(Path, std::ios::binary);
    In.read(reinterpret_cast<char *>(T.data()), static_cast<std::streamsize>(T.getElementCount() * sizeof(float)));
    if (!In)
        throw std::runtime_error("cannot read " + Path);
    return T;
}

// The machine's last min(4, hardware_concurrency) cores (the spec's {4, 5, 6, 7} on an 8-core SoC).
std::vector<int> lastCores() {
    int N = static_cast<int>(std::thread::hardware_concurrency());
    if (N <= 0)
        N = 1;
    std::vector<int> Cores;
    for (int I = N > 4 ? N - 4 : 0; I < N; ++I)
        Cores.push_back(I);
    return Cores;
}

bool near(float A, float B) { return std::fabs(A - B) <= 1e-5f * (1.f + std::fabs(B)); }

} // namespace

int main() {
    rt::AutoInit Init;
    const std::string Dir = SAMPLE_TEST_MODELS_DIR;
    rt::Tensor Memory = readFloats(Dir + "/group_encoder/output_0.bin", {1, 8});
    rt::Tensor Logits0 = readFloats(Dir + "/group_decoder/logits_0.bin", {1, 5});
    const int Steps = 4;
    rt::ModelGroup KeptGroup;
    rt::GroupMember KeptDecoder;
    rt::Tensor KeptEncOut, KeptLogits;

    {
    rt::ModelGroupOptions GroupOptions;   // PoolTuning knobs only
    GroupOptions.Cores = lastCores(); // spec: {4, 5, 6, 7}; only cores that exist are accepted
    GroupOptions.SpinIterations = -1;     // stay warm across the alternation
    GroupOptions.DisableDenormals = true;
    GroupOptions.EnableWorkStealing = true;   // default

    rt::ModelGroup Group = rt::createModelGroup(GroupOptions);

    rt::GroupMemberOptions MemberOptions;  // PerModelOptions only
    MemberOptions.ThreadCount = 4;

    rt::GroupMember Encoder = Group.add(Dir + "/group_encoder", MemberOptions);
    rt::GroupMember Decoder = Group.add(Dir + "/group_decoder", MemberOptions);

    std::vector<rt::Tensor> EncIn = {readFloats(Dir + "/group_encoder/input_0.bin", {1, 4})};
    std::vector<rt::Tensor> DecIn = {Memory};

    // run() is BLOCKING: dispatch + wait folded into one call.
    Encoder.run(rt::make_array(EncIn));
    rt::Tensor EncOut = Encoder.getOutput(0);

    for (int Step = 0; Step < Steps; ++Step) {
        Decoder.run(rt::make_array(DecIn));
        rt::Tensor Logits = Decoder.getOutput("logits");
        KeptLogits = Logits;
    }
    KeptGroup = Group;
    KeptDecoder = Decoder;
    KeptEncOut = EncOut;
    }

    // The encoder computed what the reference computed.
    const float *E = static_cast<const float *>(KeptEncOut.data());
    const float *M = static_cast<const float *>(Memory.data());
    for (int I = 0; I < 8; ++I)
        CHECK(near(E[I], M[I]));
    // Sealed by the first run: no more members.
    CHECK(KeptGroup.size() == 2);
    CHECK(KeptGroup.sealed());
    bool Threw = false;
    try {
        KeptGroup.add(Dir + "/group_encoder");
    } catch (const rt::InvalidStateError &Ex) {
        Threw = true;
        std::cout << "add() after sealing: " << Ex.what() << std::endl;
    }
    CHECK(Threw);
    // The decoder's request was reused: its cache holds one column per step, each mean(memory),
    // so the last logits are logits_0 + (Steps - 1) * mean(memory).
    rt::Tensor Past = KeptDecoder.getTensor("past");
    CHECK(Past.getShape().getDims() == std::vector<int64_t>({1, Steps}));
    float Mean = 0;
    for (int I = 0; I < 8; ++I)
        Mean += M[I] / 8;
    const float *L = static_cast<const float *>(KeptLogits.data());
    const float *L0 = static_cast<const float *>(Logits0.data());
    for (int I = 0; I < 5; ++I)
        CHECK(near(L[I], L0[I] + (Steps - 1) * Mean));
    std::cout << "model group sample: encoder + " << Steps << " decoder steps OK" << std::endl;
    return 0;
}
