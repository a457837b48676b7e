// Test helpers for remote inference: a temporary workspace holding the test models, and the REAL
// optimium-remote-server binary started as a child process on 127.0.0.1 with an ephemeral port
// (read from its "listening on HOST:PORT" line); its stderr goes to a log file the tests read.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "OnnxBuilder.h"

namespace remote_test {

namespace fs = std::filesystem;

inline std::string makeTempDir(const std::string &Tag) {
  std::string T = (fs::temp_directory_path() / ("optimium-" + Tag + "-XXXXXX")).string();
  if (!::mkdtemp(&T[0]))
    throw std::runtime_error("mkdtemp failed");
  return T;
}

/// A workspace folder with the models the tests load, a symlink escaping it and a model folder
/// whose model.onnx is a symlink to a file outside.
struct TestWorkspace {
  std::string Root, Outside;
  TestWorkspace() {
    Root = makeTempDir("remote-ws");
    Outside = makeTempDir("remote-outside");
    const std::string Src = OPTIMIUM_TEST_DATA_DIR;
    fs::create_directories(Root + "/digits");
    fs::copy_file(Src + "/models/digits/model.onnx", Root + "/digits/model.onnx");
    for (const char *M : {"cnn", "mlp", "two_inputs", "dynamic_batch", "scripted_loop", "group_decoder",
                          "group_encoder", "resizable_cache"})
      fs::copy(Src + "/tests/models/" + M, Root + "/" + M, fs::copy_options::recursive);
    fs::copy_file(Src + "/models/digits/model.onnx", Outside + "/secret.onnx");
    fs::create_directory_symlink(Outside, Root + "/escape");
    {
      std::ofstream Slow(Root + "/slow.onnx", std::ios::binary);
      Slow << optimium_test::slowChainModel(4000, 192); // seconds of MatMuls: cancel / kill mid-run
    }
    fs::create_directories(Root + "/evil");
    fs::create_symlink(Outside + "/secret.onnx", Root + "/evil/model.onnx");
  }
  ~TestWorkspace() {
    std::error_code Ec;
    fs::remove_all(Root, Ec);
    fs::remove_all(Outside, Ec);
  }
};

class ServerProcess {
public:
  /// Starts the server with --host 127.0.0.1 --port 0 --workspace Workspace + Extra.
  ServerProcess(const std::string &Workspace, std::vector<std::string> Extra = {}) {
    LogPath = makeTempDir("remote-log") + "/server.log";
    int Out[2];
    if (::pipe(Out) != 0)
      throw std::runtime_error("pipe failed");
    std::vector<std::string> Args = {OPTIMIUM_REMOTE_SERVER_BINARY, "--host", "127.0.0.1", "--port", "0",
                                     "--workspace", Workspace};
    Args.insert(Args.end(), Extra.begin(), Extra.end());
    Pid = ::fork();
    if (Pid == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL); // never outlive a test that crashed or was killed
      ::dup2(Out[1], 1);
      const int Log = ::open(LogPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(Log, 2);
      ::close(Out[0]);
      std::vector<char *> Argv;
      for (std::string &A : Args)
        Argv.push_back(&A[0]);
      Argv.push_back(nullptr);
      ::execv(Argv[0], Argv.data());
      ::_exit(127);
    }
    ::close(Out[1]);
    // Read stdout until the "listening on" line (or the server exits / 20 s pass).
    std::string Text;
    const auto Deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (Text.find('\n') == std::string::npos && std::chrono::steady_clock::now() < Deadline) {
      pollfd P{Out[0], POLLIN, 0};
      if (::poll(&P, 1, 200) <= 0)
        continue;
      char Buf[256];
      const ssize_t N = ::read(Out[0], Buf, sizeof(Buf));
      if (N <= 0)
        break;
      Text.append(Buf, static_cast<size_t>(N));
    }
    StdoutFd = Out[0];
    const std::string Prefix = "listening on 127.0.0.1:";
    const size_t At = Text.find(Prefix);
    if (At == std::string::npos)
      throw std::runtime_error("the server did not start: stdout '" + Text + "', log: " + log());
    Port = static_cast<uint16_t>(std::stoi(Text.substr(At + Prefix.size())));
  }
  ~ServerProcess() {
    // A graceful stop first: the server removes its sessions' upload folders.
    if (Pid > 0 && terminate(5) < 0 && Pid > 0) {
      ::kill(Pid, SIGKILL);
      ::waitpid(Pid, nullptr, 0);
    }
    if (StdoutFd >= 0)
      ::close(StdoutFd);
    std::error_code Ec;
    fs::remove_all(fs::path(LogPath).parent_path(), Ec);
  }
  /// SIGTERM, then the exit status (-1 when it did not exit within TimeoutS, then killed).
  int terminate(int TimeoutS = 15) {
    ::kill(Pid, SIGTERM);
    const auto Deadline = std::chrono::steady_clock::now() + std::chrono::seconds(TimeoutS);
    int Status = 0;
    while (std::chrono::steady_clock::now() < Deadline) {
      const pid_t R = ::waitpid(Pid, &Status, WNOHANG);
      if (R == Pid) {
        Pid = -1;
        return WIFEXITED(Status) ? WEXITSTATUS(Status) : 128 + WTERMSIG(Status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return -1;
  }
  bool alive() const { return Pid > 0 && ::kill(Pid, 0) == 0 && ::waitpid(Pid, nullptr, WNOHANG) == 0; }
  std::string log() const {
    std::ifstream F(LogPath);
    std::stringstream S;
    S << F.rdbuf();
    return S.str();
  }
  /// Waits until the log contains Text (true) or TimeoutMs passes.
  bool waitForLog(const std::string &Text, int TimeoutMs = 5000) const {
    const auto Deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(TimeoutMs);
    while (std::chrono::steady_clock::now() < Deadline) {
      if (log().find(Text) != std::string::npos)
        return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }
  uint16_t port() const { return Port; }
  pid_t pid() const { return Pid; }

private:
  pid_t Pid = -1;
  int StdoutFd = -1;
  uint16_t Port = 0;
  std::string LogPath;
};

} // namespace remote_test
