// Runs spec sample 15 (tests/samples/sample_15_remote.cpp, path in argv[1]) against a real
// optimium-remote-server with TLS: makes a test CA (make-test-ca.sh), a workspace holding
// path/on/remote/model (input_0 f32[1,4] -> output_0 = input_0 * 2), starts the server, points the
// sample at it (SAMPLE_REMOTE_PORT; SSL_CERT_FILE makes the CA the one the client trusts by
// default, as a CA installed in the system store would be) and returns the sample's exit status.
#include <sys/wait.h>
#include <unistd.h>

#include <iostream>

#include "RemoteServerProcess.h"

using namespace remote_test;

int main(int argc, char **argv) {
  if (argc != 2) {
    std::cerr << "usage: " << argv[0] << " <sample binary>" << std::endl;
    return 2;
  }
  try {
    const std::string Certs = makeTempDir("sample15-ca");
    if (std::system(("bash " + std::string(OPTIMIUM_TEST_DATA_DIR) + "/tests/remote/make-test-ca.sh " + Certs).c_str()) != 0)
      throw std::runtime_error("make-test-ca.sh failed");
    const std::string Ws = makeTempDir("sample15-ws");
    fs::create_directories(Ws + "/path/on/remote/model");
    {
      optimium_test::OnnxBuilder B;
      B.input("input_0", onnx::TensorProto_DataType_FLOAT, {1, 4});
      B.initializer("two", {1}, std::vector<float>{2.0f});
      B.node("Mul", {"input_0", "two"}, {"output_0"}, "double");
      B.output("output_0", onnx::TensorProto_DataType_FLOAT);
      std::ofstream F(Ws + "/path/on/remote/model/model.onnx", std::ios::binary);
      F << B.bytes();
    }
    int Status = 0;
    {
      ServerProcess Server(Ws, {"--tls-cert", Certs + "/server.pem", "--tls-key", Certs + "/server.key"});
      ::setenv("SAMPLE_REMOTE_PORT", std::to_string(Server.port()).c_str(), 1);
      ::setenv("SSL_CERT_FILE", (Certs + "/ca.pem").c_str(), 1);
      const pid_t Pid = ::fork();
      if (Pid == 0) {
        ::execl(argv[1], argv[1], static_cast<char *>(nullptr));
        ::_exit(127);
      }
      ::waitpid(Pid, &Status, 0);
      if (Server.terminate() != 0)
        std::cerr << "the server did not exit 0 on SIGTERM" << std::endl;
      std::cerr << Server.log();
    }
    fs::remove_all(Certs);
    fs::remove_all(Ws);
    return WIFEXITED(Status) ? WEXITSTATUS(Status) : 1;
  } catch (const std::exception &E) {
    std::cerr << "FAIL: " << E.what() << std::endl;
    return 1;
  }
}
