// Encrypted model folders, the shared part: key derivation (scrypt), AES-256-GCM, names.
#include "import/SealedFormat.h"
#include "import/SealedCrypto.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

namespace optimium {
namespace runtime {
namespace detail {
namespace sealed {

bool isDirectory(const std::string &P) {
  struct stat St;
  return ::stat(P.c_str(), &St) == 0 && S_ISDIR(St.st_mode);
}
bool isRegularFile(const std::string &P) {
  struct stat St;
  return ::stat(P.c_str(), &St) == 0 && S_ISREG(St.st_mode);
}
bool exists(const std::string &P) {
  struct stat St;
  return ::stat(P.c_str(), &St) == 0;
}
std::string dirName(const std::string &P) {
  const size_t Slash = P.find_last_of('/');
  return Slash == std::string::npos ? std::string(".") : (Slash == 0 ? std::string("/") : P.substr(0, Slash));
}
std::string trimSlashes(std::string P) {
  while (P.size() > 1 && P.back() == '/')
    P.pop_back();
  return P;
}

std::string toHex(const uint8_t *P, size_t N) {
  static const char *Digits = "0123456789abcdef";
  std::string S;
  for (size_t I = 0; I < N; ++I) {
    S += Digits[P[I] >> 4];
    S += Digits[P[I] & 15];
  }
  return S;
}
bool fromHex(const std::string &S, std::vector<uint8_t> &Out) {
  if (S.size() % 2)
    return false;
  Out.clear();
  auto Nibble = [](char C) {
    return C >= '0' && C <= '9' ? C - '0' : C >= 'a' && C <= 'f' ? C - 'a' + 10 : C >= 'A' && C <= 'F' ? C - 'A' + 10 : -1;
  };
  for (size_t I = 0; I < S.size(); I += 2) {
    const int Hi = Nibble(S[I]), Lo = Nibble(S[I + 1]);
    if (Hi < 0 || Lo < 0)
      return false;
    Out.push_back(static_cast<uint8_t>(Hi * 16 + Lo));
  }
  return true;
}

void putLE(uint8_t *P, uint64_t V, size_t Bytes) {
  for (size_t I = 0; I < Bytes; ++I)
    P[I] = static_cast<uint8_t>(V >> (8 * I));
}
uint64_t getLE(const uint8_t *P, size_t Bytes) {
  uint64_t V = 0;
  for (size_t I = 0; I < Bytes; ++I)
    V |= static_cast<uint64_t>(P[I]) << (8 * I);
  return V;
}

Status checkScrypt(const ScryptParams &K) {
  if (K.N < 2 || (K.N & (K.N - 1)) != 0 || K.N > kMaxScryptN)
    return makeError(ErrorCode::InvalidArgument, "scrypt N must be a power of two in [2, 2^22], got ", K.N);
  if (K.R < 1 || K.R > 64 || K.P < 1 || K.P > 64)
    return makeError(ErrorCode::InvalidArgument, "scrypt r and p must be in [1, 64], got r=", K.R, " p=", K.P);
  if (128 * K.N * K.R * K.P > kMaxScryptMemory || 128ull * K.R * K.P > kMaxScryptMemory)
    return makeError(ErrorCode::InvalidArgument, "scrypt parameters N=", K.N, " r=", K.R, " p=", K.P,
                     " need more than 2 GiB");
  return Status::ok();
}

Status deriveKey(const std::string &Passphrase, const std::vector<uint8_t> &Salt, const ScryptParams &K, Key &Out) {
  std::string Why;
  const CryptoFunctions *F = cryptoFunctions(Why);
  if (!F)
    return makeError(ErrorCode::Extension, Why);
  // OpenSSL counts the B and V arrays plus slack against maxmem.
  const uint64_t MaxMem = 128 * K.N * K.R * K.P + 256 * K.R * K.P + (uint64_t{64} << 20);
  if (F->Scrypt(Passphrase.data(), Passphrase.size(), Salt.data(), Salt.size(), K.N, K.R, K.P, MaxMem, Out.data(),
                Out.size()) != 1)
    return makeError(ErrorCode::OutOfResource, "scrypt key derivation failed (N=", K.N, " r=", K.R, " p=", K.P, ")");
  return Status::ok();
}

void wipe(void *P, size_t Bytes) {
  if (!P || !Bytes)
    return;
  std::memset(P, 0, Bytes);
  // The stores are observable to this (empty) assembly, so they cannot be dropped as dead.
  __asm__ __volatile__("" : : "r"(P) : "memory");
}

/// Additional data of the passphrase check: everything in the parameter file but the check itself,
/// so a changed KDF parameter, salt or file list fails like a wrong passphrase.
std::string checkAad(const ScryptParams &K, const std::vector<uint8_t> &Salt, const std::vector<std::string> &Files) {
  std::string S = std::string(kFormatName) + "\n" + std::to_string(kSealedFormatVersion) + "\nAES-256-GCM\nscrypt " +
                  std::to_string(K.N) + " " + std::to_string(K.R) + " " + std::to_string(K.P) + " " +
                  toHex(Salt.data(), Salt.size()) + "\n";
  for (const std::string &F : Files)
    S += F + '\n';
  return S;
}

/// AES-256-GCM over In (InBytes) into Out; Encrypt: Tag receives the tag, else it is checked.
bool gcm(bool Encrypt, const Key &K, const uint8_t *Nonce, const std::string &Aad, const uint8_t *In,
         size_t InBytes, uint8_t *Out, uint8_t *Tag) {
  std::string Why;
  const CryptoFunctions *F = cryptoFunctions(Why);
  return F && F->Gcm(Encrypt ? 1 : 0, K.data(), Nonce, reinterpret_cast<const uint8_t *>(Aad.data()), Aad.size(), In,
                     InBytes, Out, Tag) == 1;
}

std::string fileAad(const uint8_t *Header, const std::string &Name) {
  return std::string(reinterpret_cast<const char *>(Header), kHeaderBytes) + '\0' + Name;
}


bool startsWithMagic(const std::string &Path) {
  const int Fd = ::open(Path.c_str(), O_RDONLY | O_CLOEXEC);
  if (Fd < 0)
    return false;
  char Buf[8];
  const ssize_t N = ::read(Fd, Buf, sizeof(Buf));
  ::close(Fd);
  return N == 8 && std::memcmp(Buf, kSealedFileMagic, 8) == 0;
}


} // namespace sealed

using namespace sealed;

Result<std::string> sealedFileName(const std::string &Name) {
  if (Name.empty())
    return makeError(ErrorCode::InvalidArgument, "empty file name");
  if (Name[0] == '/')
    return makeError(ErrorCode::InvalidArgument, "file name '", Name, "' must be relative to the model folder");
  std::string Out;
  size_t I = 0;
  while (I <= Name.size()) {
    const size_t J = std::min(Name.find('/', I), Name.size());
    const std::string Part = Name.substr(I, J - I);
    if (Part == "..")
      return makeError(ErrorCode::InvalidArgument, "file name '", Name, "' leaves the model folder");
    if (!Part.empty() && Part != ".")
      Out += (Out.empty() ? "" : "/") + Part;
    I = J + 1;
  }
  if (Out.empty())
    return makeError(ErrorCode::InvalidArgument, "file name '", Name, "' names no file");
  if (Out.find('\n') != std::string::npos || Out.find('\0') != std::string::npos)
    return makeError(ErrorCode::InvalidArgument, "file name '", Out, "' holds a control character");
  return Out;
}


Result<bool> isSealedModelPath(const std::string &PathIn) {
  const std::string Path = trimSlashes(PathIn);
  if (isDirectory(Path)) {
    if (isRegularFile(Path + "/" + kSealedParamsFile))
      return true;
    if (startsWithMagic(Path + "/model.onnx"))
      return makeError(ErrorCode::Container, "encrypted model folder '", Path, "': its model.onnx is encrypted but the ",
                       "parameter file ", kSealedParamsFile, " is missing");
    return false;
  }
  if (isRegularFile(Path) && startsWithMagic(Path))
    return makeError(ErrorCode::Container, "'", Path, "' is one encrypted file of a model folder; load the folder '",
                     dirName(Path), "' with its passphrase");
  return false;
}


} // namespace detail
} // namespace runtime
} // namespace optimium
