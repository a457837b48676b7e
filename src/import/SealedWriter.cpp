// Encrypted model folders, the writer: encrypts a model's files (streaming, bounded memory) and
// writes the parameter file. Linked into the runtime and into the tools (optimium-encrypt).
#include "import/SealedFormat.h"
#include "import/SealedOpenSsl.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <set>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>

#include "import/Manifest.h"

namespace optimium {
namespace runtime {
namespace detail {

using namespace sealed;

namespace {

using nlohmann::json;

/// A read-only mapping of an input file (the writer does not use the runtime's MappedFile: it is
/// linked into the tools, which see only the runtime's public symbols).
struct InputMap {
  const uint8_t *Data = nullptr;
  size_t Size = 0;
  ~InputMap() {
    if (Data)
      ::munmap(const_cast<uint8_t *>(Data), Size);
  }
  Status open(const std::string &Path) {
    const int Fd = ::open(Path.c_str(), O_RDONLY | O_CLOEXEC);
    if (Fd < 0)
      return makeError(ErrorCode::IO, "cannot open '", Path, "': ", std::strerror(errno));
    struct stat St;
    if (::fstat(Fd, &St) != 0) {
      const int E = errno;
      ::close(Fd);
      return makeError(ErrorCode::IO, "cannot stat '", Path, "': ", std::strerror(E));
    }
    Size = static_cast<size_t>(St.st_size);
    if (Size) {
      void *P = ::mmap(nullptr, Size, PROT_READ, MAP_PRIVATE, Fd, 0);
      if (P == MAP_FAILED) {
        const int E = errno;
        ::close(Fd);
        Size = 0;
        return makeError(ErrorCode::IO, "cannot map '", Path, "': ", std::strerror(E));
      }
      Data = static_cast<const uint8_t *>(P);
    }
    ::close(Fd);
    return Status::ok();
  }
};

Status writeAll(int Fd, const uint8_t *P, size_t N, const std::string &Path) {
  while (N) {
    const ssize_t W = ::write(Fd, P, std::min(N, kChunkBytes));
    if (W < 0) {
      if (errno == EINTR)
        continue;
      return makeError(ErrorCode::IO, "cannot write '", Path, "': ", std::strerror(errno));
    }
    P += W;
    N -= static_cast<size_t>(W);
  }
  return Status::ok();
}

Status makeFolders(const std::string &Path) {
  if (Path.empty() || isDirectory(Path))
    return Status::ok();
  RETURN_IF_ERROR(makeFolders(dirName(Path) == Path ? std::string() : dirName(Path)));
  if (::mkdir(Path.c_str(), 0755) != 0 && errno != EEXIST)
    return makeError(ErrorCode::IO, "cannot create folder '", Path, "': ", std::strerror(errno));
  return Status::ok();
}


Status encryptOne(const SealedInput &In, const std::string &OutFolder, const Key &K) {
  InputMap Mapped;
  struct {
    const uint8_t *Data;
    size_t Size;
  } Bytes{In.Data, In.Size}, *Src = &Bytes;
  if (!In.InMemory) {
    RETURN_IF_ERROR(Mapped.open(In.SourcePath));
    Bytes = {Mapped.Data, Mapped.Size};
  }
  uint8_t Header[kHeaderBytes];
  std::memcpy(Header, kSealedFileMagic, 8);
  putLE(Header + 8, kSealedFormatVersion, 4);
  putLE(Header + 12, 0, 4);
  putLE(Header + 16, Src->Size, 8);
  if (RAND_bytes(Header + kNonceOffset, static_cast<int>(kNonceBytes)) != 1)
    return makeError(ErrorCode::OS, "cannot draw a random nonce (OpenSSL RAND_bytes failed)");
  const std::string OutPath = OutFolder + "/" + In.Name;
  RETURN_IF_ERROR(makeFolders(dirName(OutPath)));
  const int Fd = ::open(OutPath.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (Fd < 0)
    return makeError(ErrorCode::IO, "cannot create '", OutPath, "': ", std::strerror(errno));
  // Streams through a bounded buffer: a multi-GB weight file never needs a second copy in memory.
  const auto Fail = [&](Status S) {
    ::close(Fd);
    ::unlink(OutPath.c_str());
    return S;
  };
  Status S = writeAll(Fd, Header, kHeaderBytes, OutPath);
  if (!S.isOk())
    return Fail(S);
  CipherCtx Ctx;
  const std::string Aad = fileAad(Header, In.Name);
  int Len = 0;
  if (!Ctx.C || EVP_EncryptInit_ex(Ctx.C, EVP_aes_256_gcm(), nullptr, nullptr, nullptr) != 1 ||
      EVP_CIPHER_CTX_ctrl(Ctx.C, EVP_CTRL_GCM_SET_IVLEN, static_cast<int>(kNonceBytes), nullptr) != 1 ||
      EVP_EncryptInit_ex(Ctx.C, nullptr, nullptr, K.data(), Header + kNonceOffset) != 1 ||
      EVP_EncryptUpdate(Ctx.C, nullptr, &Len, reinterpret_cast<const uint8_t *>(Aad.data()), static_cast<int>(Aad.size())) != 1)
    return Fail(makeError(ErrorCode::OS, "AES-256-GCM setup failed for '", In.SourcePath, "'"));
  constexpr size_t Step = size_t{16} << 20;
  std::vector<uint8_t> Buf(std::min(Step, Src->Size) + 16);
  for (size_t Off = 0; Off < Src->Size; Off += Step) {
    const int N = static_cast<int>(std::min(Step, Src->Size - Off));
    if (EVP_EncryptUpdate(Ctx.C, Buf.data(), &Len, Src->Data + Off, N) != 1)
      return Fail(makeError(ErrorCode::OS, "AES-256-GCM encryption of '", In.SourcePath, "' failed"));
    S = writeAll(Fd, Buf.data(), static_cast<size_t>(Len), OutPath);
    if (!S.isOk())
      return Fail(S);
  }
  uint8_t Tag[kTagBytes + 16];
  if (EVP_EncryptFinal_ex(Ctx.C, Tag, &Len) != 1 ||
      EVP_CIPHER_CTX_ctrl(Ctx.C, EVP_CTRL_GCM_GET_TAG, static_cast<int>(kTagBytes), Tag) != 1)
    return Fail(makeError(ErrorCode::OS, "AES-256-GCM encryption of '", In.SourcePath, "' failed"));
  S = writeAll(Fd, Tag, kTagBytes, OutPath);
  if (!S.isOk())
    return Fail(S);
  if (::close(Fd) != 0) {
    const int E = errno;
    ::unlink(OutPath.c_str());
    return makeError(ErrorCode::IO, "cannot write '", OutPath, "': ", std::strerror(E));
  }
  return Status::ok();
}

/// The external data files a model references (locations relative to its folder), in the order
/// first met; walks the main graph, subgraphs and tensor attributes.

void collectExternal(const onnx::GraphProto &G, std::vector<std::string> &Out, std::set<std::string> &Seen);
void collectTensor(const onnx::TensorProto &T, std::vector<std::string> &Out, std::set<std::string> &Seen) {
  if (T.data_location() != onnx::TensorProto_DataLocation_EXTERNAL)
    return;
  for (const auto &E : T.external_data())
    if (E.key() == "location" && Seen.insert(E.value()).second)
      Out.push_back(E.value());
}
void collectExternal(const onnx::GraphProto &G, std::vector<std::string> &Out, std::set<std::string> &Seen) {
  for (const auto &T : G.initializer())
    collectTensor(T, Out, Seen);
  for (const auto &S : G.sparse_initializer()) {
    collectTensor(S.values(), Out, Seen);
    collectTensor(S.indices(), Out, Seen);
  }
  for (const auto &N : G.node())
    for (const auto &A : N.attribute()) {
      if (A.has_t())
        collectTensor(A.t(), Out, Seen);
      for (const auto &T : A.tensors())
        collectTensor(T, Out, Seen);
      if (A.has_g())
        collectExternal(A.g(), Out, Seen);
      for (const auto &Sub : A.graphs())
        collectExternal(Sub, Out, Seen);
    }
}

Result<std::vector<std::string>> externalDataFiles(const std::string &ModelPath) {
  InputMap F_;
  RETURN_IF_ERROR(F_.open(ModelPath));
  const InputMap *F = &F_;
  if (F->Size == 0 || F->Size > static_cast<size_t>(INT_MAX))
    return makeError(ErrorCode::Container, "'", ModelPath, "' is not a valid ONNX model (", F->Size, " bytes)");
  onnx::ModelProto M;
  {
    google::protobuf::io::ArrayInputStream Stream(F->Data, static_cast<int>(F->Size));
    google::protobuf::io::CodedInputStream Coded(&Stream);
    Coded.SetTotalBytesLimit(INT_MAX);
    Coded.SetRecursionLimit(256);
    if (!M.ParseFromCodedStream(&Coded) || !Coded.ConsumedEntireMessage())
      return makeError(ErrorCode::Container, "'", ModelPath, "' is not a valid ONNX model (protobuf parsing failed)");
  }
  if (!M.has_graph())
    return makeError(ErrorCode::Container, "'", ModelPath, "' is not an ONNX model (no graph)");
  std::vector<std::string> Out;
  std::set<std::string> Seen;
  collectExternal(M.graph(), Out, Seen);
  return Out;
}


} // namespace

Status encryptFiles(const std::vector<SealedInput> &Inputs, const std::string &OutFolderIn, const std::string &Passphrase,
                    const ScryptParams &Kdf) {
  const std::string OutFolder = trimSlashes(OutFolderIn);
  if (Passphrase.empty())
    return makeError(ErrorCode::InvalidArgument, "the passphrase is empty");
  if (Inputs.empty())
    return makeError(ErrorCode::InvalidArgument, "no files to encrypt");
  RETURN_IF_ERROR(checkScrypt(Kdf));
  std::vector<std::string> Names;
  for (const SealedInput &In : Inputs) {
    ASSIGN_OR_RETURN(std::string Name, sealedFileName(In.Name));
    if (Name != In.Name || Name == kSealedParamsFile)
      return makeError(ErrorCode::InvalidArgument, "file name '", In.Name, "' is not canonical (use '", Name,
                       "') or is reserved");
    if (std::find(Names.begin(), Names.end(), Name) != Names.end())
      return makeError(ErrorCode::InvalidArgument, "file name '", Name, "' is given twice");
    if (!In.InMemory && !isRegularFile(In.SourcePath))
      return makeError(ErrorCode::IO, "cannot read '", In.SourcePath, "': not an existing file");
    if (exists(OutFolder + "/" + Name))
      return makeError(ErrorCode::IO, "'", OutFolder, "/", Name, "' already exists; not overwriting it");
    Names.push_back(Name);
  }
  if (exists(OutFolder + "/" + kSealedParamsFile))
    return makeError(ErrorCode::IO, "'", OutFolder, "/", kSealedParamsFile, "' already exists; not overwriting it");
  RETURN_IF_ERROR(makeFolders(OutFolder));
  std::vector<uint8_t> Salt(kSaltBytes), Nonce(kNonceBytes);
  if (RAND_bytes(Salt.data(), static_cast<int>(Salt.size())) != 1 ||
      RAND_bytes(Nonce.data(), static_cast<int>(Nonce.size())) != 1)
    return makeError(ErrorCode::OS, "cannot draw random bytes (OpenSSL RAND_bytes failed)");
  Key K{};
  struct Wipe {
    Key &K;
    ~Wipe() { OPENSSL_cleanse(K.data(), K.size()); }
  } WipeKey{K};
  RETURN_IF_ERROR(deriveKey(Passphrase, Salt, Kdf, K));
  for (const SealedInput &In : Inputs)
    RETURN_IF_ERROR(encryptOne(In, OutFolder, K));
  uint8_t Tag[kTagBytes];
  if (!gcm(true, K, Nonce.data(), checkAad(Kdf, Salt, Names), nullptr, 0, nullptr, Tag))
    return makeError(ErrorCode::OS, "AES-256-GCM failed on the passphrase check");
  json J;
  J["format"] = kFormatName;
  J["version"] = kSealedFormatVersion;
  J["cipher"] = "AES-256-GCM";
  J["kdf"] = {{"name", "scrypt"}, {"n", Kdf.N}, {"r", Kdf.R}, {"p", Kdf.P}, {"salt", toHex(Salt.data(), Salt.size())}};
  J["files"] = Names;
  J["check"] = {{"nonce", toHex(Nonce.data(), Nonce.size())}, {"tag", toHex(Tag, kTagBytes)}};
  const std::string Text = J.dump(2) + "\n";
  const std::string ParamsPath = OutFolder + "/" + kSealedParamsFile;
  const int Fd = ::open(ParamsPath.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (Fd < 0)
    return makeError(ErrorCode::IO, "cannot create '", ParamsPath, "': ", std::strerror(errno));
  Status S = writeAll(Fd, reinterpret_cast<const uint8_t *>(Text.data()), Text.size(), ParamsPath);
  if (::close(Fd) != 0 && S.isOk())
    S = makeError(ErrorCode::IO, "cannot write '", ParamsPath, "': ", std::strerror(errno));
  return S;
}

Result<std::vector<std::string>> encryptModelFolder(const std::string &InputIn, const std::string &OutFolderIn,
                                                    const std::string &Passphrase, const ScryptParams &Kdf) {
  const std::string Input = trimSlashes(InputIn), OutFolder = trimSlashes(OutFolderIn);
  if (!exists(Input))
    return makeError(ErrorCode::IO, "model path '", Input, "' does not exist");
  ASSIGN_OR_RETURN(bool AlreadySealed, isSealedModelPath(Input));
  if (AlreadySealed)
    return makeError(ErrorCode::InvalidArgument, "'", Input, "' is already an encrypted model folder");
  const bool Folder = isDirectory(Input);
  const std::string ModelPath = Folder ? Input + "/model.onnx" : Input;
  const std::string BaseDir = Folder ? Input : dirName(Input);
  if (!isRegularFile(ModelPath))
    return makeError(ErrorCode::Container, "model folder '", Input, "' holds no model.onnx");
  if (isDirectory(OutFolder)) {
    char Real1[PATH_MAX], Real2[PATH_MAX];
    if (::realpath(OutFolder.c_str(), Real1) && ::realpath(BaseDir.c_str(), Real2) && std::strcmp(Real1, Real2) == 0)
      return makeError(ErrorCode::InvalidArgument, "the output folder '", OutFolder, "' is the model's own folder");
  }
  std::vector<SealedInput> Inputs{{ModelPath, "model.onnx"}};
  ASSIGN_OR_RETURN(auto External, externalDataFiles(ModelPath));
  for (const std::string &Location : External) {
    auto Name = sealedFileName(Location);
    if (!Name.isOk())
      return makeError(ErrorCode::Model, "'", ModelPath, "': external data location '", Location,
                       "' must be a relative path inside the model folder");
    if (Name.value() == "model.onnx" || Name.value() == "optimium.json")
      return makeError(ErrorCode::Model, "'", ModelPath, "': external data location '", Location,
                       "' clashes with a file name of the encrypted folder");
    if (std::none_of(Inputs.begin(), Inputs.end(), [&](const SealedInput &I) { return I.Name == Name.value(); }))
      Inputs.push_back({BaseDir + "/" + Name.value(), Name.value()});
  }
  const std::string ManifestPath = manifestPathFor(Folder ? Input : ModelPath);
  if (!ManifestPath.empty() && isRegularFile(ManifestPath))
    Inputs.push_back({ManifestPath, "optimium.json"});
  RETURN_IF_ERROR(encryptFiles(Inputs, OutFolder, Passphrase, Kdf));
  std::vector<std::string> Names;
  for (const SealedInput &I : Inputs)
    Names.push_back(I.Name);
  return Names;
}


} // namespace detail
} // namespace runtime
} // namespace optimium
