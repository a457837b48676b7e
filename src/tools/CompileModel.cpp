// optimium-compile's library part: argument parsing and the call into the loader's compile path.
#include "tools/CompileModel.h"

#include <cstdio>
#include <iostream>

#include "Optimium/Runtime.h"
#include "exec/ModelCompiler.h"
#include "exec/ModelState.h"

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
  } else {
    const rtd::Status S = rtd::writeCompiledFolder(F, Options.Output);
    if (!S.isOk())
      return S.message();
    Src.Folder = Options.Output;
  }
  if (Options.Verify) {
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
          << ": graph " << F.Graph.size() << " bytes, weights " << F.Weights.size() << " bytes, packed weights "
          << F.Packed.size() << " bytes, "
          << (Options.Bf16 ? "bfloat16" : "float32") << " compute, for CPU features: " << Cpu.toString() << "\n";
  return "";
}

int compileModelMain(int Argc, char **Argv, std::ostream &Out, std::ostream &Err) {
  const char *Usage = "usage: optimium-compile <model.onnx | model folder> -o <output folder> [--bundle] "
                      "[--precision=f32|bf16] [--keep_intermediates] [--verify]\n";
  CompileOptions O;
  for (int I = 1; I < Argc; ++I) {
    const std::string A = Argv[I];
    if (A == "-h" || A == "--help") {
      Out << Usage
          << "  -o PATH               the compiled model folder to write (a file with --bundle)\n"
             "  --bundle              write one file instead of a folder (loadModel(path) and loadModel(bytes) take it)\n"
             "  --precision=f32|bf16  the compute precision to compile for (as ModelLoadOptions.Precision)\n"
             "  --keep_intermediates  no fusions: every intermediate stays readable\n"
             "  --verify              read the output back and check every file's CRC-32\n";
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
