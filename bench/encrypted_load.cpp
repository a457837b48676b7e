// Load-time cost of encrypted model folders (not a test): for each model, the median over fresh
// processes of loadModel on the plain model vs on an encrypted copy (default scrypt parameters),
// split into key derivation, decryption of every file, and the rest; peak RSS (VmHWM) of each.
//
//   optimium_encrypted_load_bench [--rounds N] MODEL_PATH...
//
// Every sample runs in a forked child that has not initialized the runtime before, so the numbers
// are those of a process loading its first model. Prints a Markdown table.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "Optimium/Runtime.h"
#include "import/SealedFolder.h"

namespace rt = optimium::runtime;
namespace sd = optimium::runtime::detail;

namespace {

const char *const kPassphrase = "benchmark passphrase";

struct Sample {
  double LoadMs = 0, KdfMs = 0, DecryptMs = 0, RssMb = 0;
};

double peakRssMb() {
  std::ifstream S("/proc/self/status");
  std::string Line;
  while (std::getline(S, Line))
    if (Line.compare(0, 6, "VmHWM:") == 0)
      return std::atof(Line.c_str() + 6) / 1024.0;
  return 0;
}

double msSince(std::chrono::steady_clock::time_point T0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - T0).count();
}

/// Runs Body in a forked child and reads back its Sample.
Sample inChild(const std::function<Sample()> &Body) {
  int Fd[2];
  if (::pipe(Fd) != 0)
    std::exit(2);
  const pid_t Pid = ::fork();
  if (Pid == 0) {
    ::close(Fd[0]);
    Sample S = Body();
    if (::write(Fd[1], &S, sizeof(S)) != sizeof(S))
      ::_exit(3);
    ::_exit(0);
  }
  ::close(Fd[1]);
  Sample S;
  const ssize_t N = ::read(Fd[0], &S, sizeof(S));
  ::close(Fd[0]);
  int Status = 0;
  ::waitpid(Pid, &Status, 0);
  if (N != sizeof(S) || !WIFEXITED(Status) || WEXITSTATUS(Status) != 0) {
    std::cerr << "a benchmark child failed\n";
    std::exit(1);
  }
  return S;
}

double median(std::vector<double> V) {
  std::sort(V.begin(), V.end());
  return V.empty() ? 0 : V[V.size() / 2];
}

uint64_t folderBytes(const std::string &Folder, const std::vector<std::string> &Names) {
  uint64_t Sum = 0;
  for (const std::string &N : Names) {
    std::ifstream F(Folder + "/" + N, std::ios::binary | std::ios::ate);
    Sum += static_cast<uint64_t>(F.tellg());
  }
  return Sum;
}

} // namespace

int main(int Argc, char **Argv) {
  int Rounds = 5;
  std::vector<std::string> Models;
  for (int I = 1; I < Argc; ++I) {
    const std::string A = Argv[I];
    if (A == "--rounds" && I + 1 < Argc)
      Rounds = std::atoi(Argv[++I]);
    else
      Models.push_back(A);
  }
  if (Models.empty() || Rounds < 1) {
    std::cerr << "usage: optimium_encrypted_load_bench [--rounds N] MODEL_PATH...\n";
    return 1;
  }
  std::cout << "| model | MB | plain load ms | encrypted load ms | of which KDF ms | decrypt ms | overhead ms | "
               "peak RSS plain MB | peak RSS encrypted MB |\n|---|---|---|---|---|---|---|---|---|\n";
  for (const std::string &Model : Models) {
    char Tmpl[] = "/tmp/optimium_enc_bench_XXXXXX";
    const std::string Out = std::string(::mkdtemp(Tmpl)) + "/enc";
    auto Names = sd::encryptModelFolder(Model, Out, kPassphrase);
    if (!Names.isOk()) {
      std::cerr << Model << ": " << Names.status().message() << "\n";
      return 1;
    }
    rt::ModelLoadOptions Options;
    Options.ThreadCount = 1;
    std::vector<double> Plain, Enc, Kdf, Dec, RssPlain, RssEnc;
    for (int R = 0; R < Rounds; ++R) {
      // Alternate, so drift in the machine's load hits both alike.
      Sample P = inChild([&] {
        rt::AutoInit Init;
        const auto T0 = std::chrono::steady_clock::now();
        rt::Model M = rt::loadModel(Model, Options);
        Sample S;
        S.LoadMs = msSince(T0);
        S.RssMb = peakRssMb();
        return S;
      });
      Sample E = inChild([&] {
        rt::AutoInit Init;
        rt::ModelLoadOptions O = Options;
        O.Passphrase = kPassphrase;
        const auto T0 = std::chrono::steady_clock::now();
        rt::Model M = rt::loadModel(Out, O);
        Sample S;
        S.LoadMs = msSince(T0);
        S.RssMb = peakRssMb();
        return S;
      });
      // The decryption parts on their own: the KDF, then every file.
      Sample D = inChild([&] {
        Sample S;
        const auto T0 = std::chrono::steady_clock::now();
        auto F = sd::SealedFolder::open(Out, kPassphrase);
        S.KdfMs = msSince(T0);
        const auto T1 = std::chrono::steady_clock::now();
        for (const std::string &N : F.value()->files())
          if (!F.value()->readFile(N).isOk())
            ::_exit(4);
        S.DecryptMs = msSince(T1);
        return S;
      });
      Plain.push_back(P.LoadMs), RssPlain.push_back(P.RssMb);
      Enc.push_back(E.LoadMs), RssEnc.push_back(E.RssMb);
      Kdf.push_back(D.KdfMs), Dec.push_back(D.DecryptMs);
    }
    std::string Name = Model;
    while (Name.size() > 1 && Name.back() == '/')
      Name.pop_back();
    Name = Name.substr(Name.find_last_of('/') + 1);
    char Line[512];
    std::snprintf(Line, sizeof(Line), "| %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.0f | %.0f |\n", Name.c_str(),
                  folderBytes(Out, Names.value()) / 1048576.0, median(Plain), median(Enc), median(Kdf), median(Dec),
                  median(Enc) - median(Plain), median(RssPlain), median(RssEnc));
    std::cout << Line << std::flush;
  }
  return 0;
}
