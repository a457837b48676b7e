// Spec section 15 "Remote inference (C++)", run against a real optimium-remote-server started by
// tests/remote/Sample15Driver.cpp (TLS with a test CA trusted through SSL_CERT_FILE, a workspace
// holding "path/on/remote/model"). Verbatim except:
//  * `int main(...)` -> `int main()`;
//  * "192.168.1.100" / rt::kDefaultRemotePort -> 127.0.0.1 and the port the driver's server
//    listens on (SAMPLE_REMOTE_PORT; tests must not take the fixed default port);
//  * `/* ... */` -> the model's one input ("input_0", f32[1,4]) filled with 1..4;
// and checks afterwards that output_0 (= 2 * input) came back, returning 0.
#include <Optimium/Remote.h>

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

namespace rt = optimium::runtime;

namespace {

uint16_t samplePort() {
    const char *P = std::getenv("SAMPLE_REMOTE_PORT");
    return P ? static_cast<uint16_t>(std::atoi(P)) : rt::kDefaultRemotePort;
}

std::vector<rt::Tensor> sampleInputs() {
    rt::TypedTensor<float> T = rt::tensor<float>({1, 4});
    for (int I = 0; I < 4; ++I)
        T[I] = static_cast<float>(I + 1);
    return {T};
}

int check(const rt::Tensor &Out) {
    rt::TypedTensor<float> Y(Out);
    for (int I = 0; I < 4; ++I)
        if (Y[I] != 2.0f * static_cast<float>(I + 1)) {
            std::cerr << "FAIL: output_0[" << I << "] = " << Y[I] << std::endl;
            return 1;
        }
    std::cout << "remote sample: output_0 OK" << std::endl;
    return 0;
}

} // namespace

int main() {
    rt::ConnectOptions ConnOpts;
    ConnOpts.EnableSecureConnection = true;
    ConnOpts.EnableCompression = true;

    rt::RemoteSession Session =
        rt::connect("127.0.0.1", samplePort(), ConnOpts);

    std::cout << Session.getHostInfo().toString() << std::endl;

    rt::ModelLoadOptions Options;
    Options.ThreadCount = 4;
    rt::RemoteModel Model = Session.loadModel(Options, "path/on/remote/model");

    std::vector<rt::Tensor> Inputs = sampleInputs();
    Model.infer(rt::make_array(Inputs));   // asynchronous
    Model.wait();

    rt::Tensor Out = Model.getTensor("output_0");
    return check(Out);
}
