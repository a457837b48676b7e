// optimium-encrypt: reads the passphrase from a file or the environment and encrypts a model with
// the runtime's own writer (import/SealedFolder.h), which the loader's reader matches.
#include "tools/EncryptModel.h"

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>

#include <openssl/crypto.h>

#include "import/SealedFolder.h"
#include "tools/Passphrase.h"

namespace optimium {
namespace tools {

std::string readPassphrase(const EncryptOptions &O, std::string &Passphrase) {
  return readPassphraseFrom(O.PassphraseFile, Passphrase);
}

std::string encryptModel(const EncryptOptions &O, std::ostream &Summary) {
  if (O.ScryptLog2N < 10 || O.ScryptLog2N > 22)
    return "--scrypt-log2n must be in [10, 22], got " + std::to_string(O.ScryptLog2N);
  std::string Passphrase;
  const std::string Error = readPassphrase(O, Passphrase);
  if (!Error.empty())
    return Error;
  runtime::detail::ScryptParams Kdf;
  Kdf.N = uint64_t{1} << O.ScryptLog2N;
  auto R = runtime::detail::encryptModelFolder(O.Input, O.OutFolder, Passphrase, Kdf);
  OPENSSL_cleanse(&Passphrase[0], Passphrase.size());
  if (!R.isOk())
    return R.status().message();
  for (const std::string &Name : R.value())
    Summary << "encrypted " << O.OutFolder << "/" << Name << "\n";
  Summary << "wrote " << O.OutFolder << "/" << runtime::detail::kSealedParamsFile << "\n";
  return "";
}

int encryptModelMain(int Argc, char **Argv, std::ostream &Out, std::ostream &Err) {
  EncryptOptions O;
  const char *Usage = "usage: optimium-encrypt <model.onnx | model-folder> -o <out-folder> [--passphrase-file FILE]\n"
                      "                        [--scrypt-log2n N]\n"
                      "The passphrase is the first line of FILE, or else the variable OPTIMIUM_RT_PASSPHRASE.\n";
  for (int I = 1; I < Argc; ++I) {
    const std::string A = Argv[I];
    auto Value = [&](const std::string &Flag, std::string &Into) {
      if (A.compare(0, Flag.size() + 1, Flag + "=") == 0) {
        Into = A.substr(Flag.size() + 1);
        return true;
      }
      if (A == Flag && I + 1 < Argc) {
        Into = Argv[++I];
        return true;
      }
      return false;
    };
    std::string LogN;
    if (A == "--help" || A == "-h") {
      Out << Usage;
      return 0;
    }
    if (isPassphraseArgument(A)) {
      Err << "optimium-encrypt: the passphrase is not taken from the command line (other users can read it there); "
             "use --passphrase-file FILE or OPTIMIUM_RT_PASSPHRASE\n";
      return 1;
    }
    if (Value("-o", O.OutFolder) || Value("--output", O.OutFolder) || Value("--passphrase-file", O.PassphraseFile))
      continue;
    if (Value("--scrypt-log2n", LogN)) {
      char *End = nullptr;
      const long V = std::strtol(LogN.c_str(), &End, 10);
      if (LogN.empty() || *End) {
        Err << "optimium-encrypt: --scrypt-log2n expects an integer, got '" << LogN << "'\n";
        return 1;
      }
      O.ScryptLog2N = static_cast<int>(V);
      continue;
    }
    if (A.compare(0, 1, "-") == 0 || !O.Input.empty()) {
      Err << "optimium-encrypt: unexpected argument '" << A << "'\n" << Usage;
      return 1;
    }
    O.Input = A;
  }
  if (O.Input.empty() || O.OutFolder.empty()) {
    Err << Usage;
    return 1;
  }
  const std::string Error = encryptModel(O, Out);
  if (!Error.empty()) {
    Err << "optimium-encrypt: " << Error << "\n";
    return 1;
  }
  return 0;
}

int encryptModelMain(int Argc, char **Argv) { return encryptModelMain(Argc, Argv, std::cout, std::cerr); }

} // namespace tools
} // namespace optimium
