// optimium-compile's library part: argument parsing and the call into the loader's compile path.
#include "tools/CompileModel.h"

#include <cstdio>
#include <iostream>
#include <stdexcept>

#include <openssl/crypto.h>

#include "Optimium/Runtime.h"
#include "exec/ModelCompiler.h"
#include "exec/ModelState.h"
#include "import/SealedFolder.h"
#include "tools/Passphrase.h"

namespace optimium {
namespace tools {

namespace rt = optimium::runtime;
namespace rtd = optimium::runtime::detail;

std::string compileModel(const CompileOptions &Options, std::ostream &Summary) {
  if (Options.Model.empty())
    return "no model given";
  if (Options.Output.empty())
    return "no output given (-o <folder>)";
  rt::AutoInit Init; // the kernels are created once to record their packed weights
  if (Options.Encrypt && Options.Bundle)
    return "an encrypted compiled model is a folder: --bundle and encryption do not go together";
  if (Options.ScryptLog2N < 10 || Options.ScryptLog2N > 22)
    return "--scrypt-log2n must be in [10, 22], got " + std::to_string(Options.ScryptLog2N);
  std::string Passphrase;
  struct Wipe {
    std::string &P;
    ~Wipe() {
      if (!P.empty())
        OPENSSL_cleanse(&P[0], P.size());
    }
  } WipePassphrase{Passphrase};
  if (Options.Encrypt) {
    const std::string Error = readPassphraseFrom(Options.PassphraseFile, Passphrase);
    if (!Error.empty())
      return Error;
  }
  rt::ModelLoadOptions LO;
  LO.Precision = Options.Bf16 ? rt::ComputePrecision::BFloat16 : rt::ComputePrecision::Float32;
  LO.EnableMemoryOptimization = !Options.KeepIntermediates;
  auto Files = rtd::compileModelFiles(Options.Model, LO);
  if (!Files.isOk())
    return Files.status().message();
  const rtd::CompiledFiles &F = Files.value();
  rtd::CompiledSource Src;
  Src.Label = Options.Output;
  if (Options.Bundle) {
    const std::vector<uint8_t> Bundle = rtd::bundleCompiledFiles(F);
    const std::string Tmp = Options.Output + ".tmp";
    FILE *Out = std::fopen(Tmp.c_str(), "wb");
    if (!Out)
      return "cannot write '" + Tmp + "'";
    const bool Ok = std::fwrite(Bundle.data(), 1, Bundle.size(), Out) == Bundle.size();
    if (std::fclose(Out) != 0 || !Ok || std::rename(Tmp.c_str(), Options.Output.c_str()) != 0) {
      std::remove(Tmp.c_str());
      return "cannot write '" + Options.Output + "'";
    }
  } else if (Options.Encrypt) {
    // Each file encrypted from memory; the writer refuses to overwrite an existing file.
    std::vector<rtd::SealedInput> Inputs;
    // packed.bin too when there is one: decrypted into aligned memory, its entries are borrowed
    // from there as from a mapping.
    std::vector<std::pair<const char *, const std::vector<uint8_t> *>> Files = {
        {rtd::kCompiledHeaderFile, &F.Header}, {rtd::kCompiledGraphFile, &F.Graph}, {rtd::kCompiledWeightsFile, &F.Weights}};
    if (!F.Packed.empty())
      Files.push_back({rtd::kCompiledPackedFile, &F.Packed});
    for (const auto &P : Files) {
      rtd::SealedInput In;
      In.Name = P.first;
      In.SourcePath = "compiled " + In.Name;
      In.InMemory = true;
      In.Data = P.second->data();
      In.Size = P.second->size();
      Inputs.push_back(In);
    }
    rtd::ScryptParams Kdf;
    Kdf.N = uint64_t{1} << Options.ScryptLog2N;
    const rtd::Status S = rtd::encryptFiles(Inputs, Options.Output, Passphrase, Kdf);
    if (!S.isOk())
      return S.message();
    Src.Folder = Options.Output;
  } else {
    const rtd::Status S = rtd::writeCompiledFolder(F, Options.Output);
    if (!S.isOk())
      return S.message();
    Src.Folder = Options.Output;
  }
  if (Options.Verify) {
    if (Options.Encrypt) {
      auto Sealed = rtd::SealedFolder::open(Options.Output, Passphrase);
      if (!Sealed.isOk())
        return "verification failed: " + Sealed.status().message();
      Src.Sealed = Sealed.value();
    }
    std::shared_ptr<rtd::MappedFile> Map;
    if (Options.Bundle) {
      auto M = rtd::MappedFile::open(Options.Output);
      if (!M.isOk())
        return M.status().message();
      Map = M.value();
      Src.Bundle = Map->Data;
      Src.BundleSize = Map->Size;
      Src.BundleOwner = Map;
    }
    const rtd::Status S = rtd::verifyCompiledModel(Src);
    if (!S.isOk())
      return "verification failed: " + S.message();
  }
  const rtd::CpuFeatures &Cpu = rtd::cpuFeatures();
  Summary << "compiled '" << Options.Model << "' -> '" << Options.Output << "'" << (Options.Bundle ? " (bundle)" : "")
          << (Options.Encrypt ? " (encrypted)" : "")
          << ": graph " << F.Graph.size() << " bytes, weights " << F.Weights.size() << " bytes, packed weights "
          << F.Packed.size() << " bytes, "
          << (Options.Bf16 ? "bfloat16" : "float32") << " compute, for CPU features: " << Cpu.toString() << "\n";
  return "";
}

int compileModelMain(int Argc, char **Argv, std::ostream &Out, std::ostream &Err) {
  const char *Usage = "usage: optimium-compile <model.onnx | model folder> -o <output folder> [--bundle] "
                      "[--precision=f32|bf16] [--keep_intermediates] [--verify] [--encrypt | --passphrase-file FILE]\n";
  CompileOptions O;
  for (int I = 1; I < Argc; ++I) {
    const std::string A = Argv[I];
    if (A == "-h" || A == "--help") {
      Out << Usage
          << "  -o PATH               the compiled model folder to write (a file with --bundle)\n"
             "  --bundle              write one file instead of a folder (loadModel(path) and loadModel(bytes) take it)\n"
             "  --precision=f32|bf16  the compute precision to compile for (as ModelLoadOptions.Precision)\n"
             "  --keep_intermediates  no fusions: every intermediate stays readable\n"
             "  --verify              read the output back and check every file's CRC-32\n"
             "  --encrypt             encrypt the folder's files (AES-256-GCM; passphrase from OPTIMIUM_RT_PASSPHRASE)\n"
             "  --passphrase-file F   encrypt, with the first line of F as the passphrase\n"
             "  --scrypt-log2n N      the key derivation's cost, N = 2^N (default 14)\n"
             "The passphrase is never taken from the command line (other users can read it there).\n";
      return 0;
    }
    if (A == "-o" || A == "--output") {
      if (I + 1 >= Argc) {
        Err << "optimium-compile: " << A << " needs a path\n" << Usage;
        return 2;
      }
      O.Output = Argv[++I];
    } else if (A.rfind("--output=", 0) == 0) {
      O.Output = A.substr(9);
    } else if (A == "--bundle") {
      O.Bundle = true;
    } else if (A == "--precision=f32" || A == "--precision=float32") {
      O.Bf16 = false;
    } else if (A == "--precision=bf16" || A == "--precision=bfloat16") {
      O.Bf16 = true;
    } else if (A == "--keep_intermediates") {
      O.KeepIntermediates = true;
    } else if (A == "--verify") {
      O.Verify = true;
    } else if (A == "--encrypt") {
      O.Encrypt = true;
    } else if (isPassphraseArgument(A)) {
      Err << "optimium-compile: the passphrase is not taken from the command line (other users can read it there); "
             "use --passphrase-file FILE or --encrypt with OPTIMIUM_RT_PASSPHRASE\n";
      return 2;
    } else if (A == "--passphrase-file" || A.rfind("--passphrase-file=", 0) == 0) {
      if (A == "--passphrase-file" && I + 1 >= Argc) {
        Err << "optimium-compile: --passphrase-file needs a path\n" << Usage;
        return 2;
      }
      O.PassphraseFile = A == "--passphrase-file" ? Argv[++I] : A.substr(18);
      O.Encrypt = true;
    } else if (A == "--scrypt-log2n" || A.rfind("--scrypt-log2n=", 0) == 0) {
      if (A == "--scrypt-log2n" && I + 1 >= Argc) {
        Err << "optimium-compile: --scrypt-log2n needs a number\n" << Usage;
        return 2;
      }
      const std::string V = A == "--scrypt-log2n" ? Argv[++I] : A.substr(15);
      try {
        size_t End = 0;
        O.ScryptLog2N = std::stoi(V, &End);
        if (End != V.size())
          throw std::invalid_argument(V);
      } catch (const std::exception &) {
        Err << "optimium-compile: --scrypt-log2n needs a number, got '" << V << "'\n";
        return 2;
      }
    } else if (!A.empty() && A[0] == '-') {
      Err << "optimium-compile: unknown option '" << A << "'\n" << Usage;
      return 2;
    } else if (O.Model.empty()) {
      O.Model = A;
    } else {
      Err << "optimium-compile: more than one model given ('" << O.Model << "', '" << A << "')\n" << Usage;
      return 2;
    }
  }
  if (O.Model.empty() || O.Output.empty()) {
    Err << "optimium-compile: " << (O.Model.empty() ? "no model given" : "no output given (-o)") << "\n" << Usage;
    return 2;
  }
  try {
    const std::string E = compileModel(O, Out);
    if (!E.empty()) {
      Err << "optimium-compile: " << E << "\n";
      return 1;
    }
  } catch (const std::exception &E) {
    Err << "optimium-compile: " << E.what() << "\n";
    return 1;
  }
  return 0;
}

int compileModelMain(int Argc, char **Argv) { return compileModelMain(Argc, Argv, std::cout, std::cerr); }

} // namespace tools
} // namespace optimium
