// Encrypted model folders, the reader: derives the key once, decrypts each file into memory and
// hands it out only after its GCM tag verified (format: docs/encrypted-models.md).
#include "import/SealedFormat.h"

#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <set>

#include <nlohmann/json.hpp>

#include "core/LargeAlloc.h"
#include "import/MappedFile.h"

namespace optimium {
namespace runtime {
namespace detail {

using namespace sealed;

namespace {

using nlohmann::json;

Status containerError(const std::string &Folder, const std::string &Why) {
  return makeError(ErrorCode::Container, "encrypted model folder '", Folder, "': ", Why);
}


} // namespace

PlainBuffer::~PlainBuffer() {
  if (Data) {
    wipe(Data, Size);
    freeBlock(Data, Mapped);
  }
}


SealedFolder::~SealedFolder() { wipe(Key.data(), Key.size()); }

Result<std::shared_ptr<SealedFolder>> SealedFolder::open(const std::string &FolderIn, const std::string &Passphrase) {
  const std::string Folder = trimSlashes(FolderIn);
  const std::string ParamsPath = Folder + "/" + kSealedParamsFile;
  if (!isDirectory(Folder))
    return makeError(ErrorCode::IO, "encrypted model folder '", Folder, "' does not exist or is not a folder");
  if (!isRegularFile(ParamsPath))
    return containerError(Folder, std::string("the parameter file ") + kSealedParamsFile + " is missing");
  if (Passphrase.empty())
    return containerError(Folder, "the model is encrypted; give its passphrase (ModelLoadOptions.Passphrase, "
                                  "Python passphrase=)");
  ASSIGN_OR_RETURN(auto Raw, MappedFile::open(ParamsPath));
  const auto Bad = [&](const std::string &Why) {
    return makeError(ErrorCode::Container, "'", ParamsPath, "': ", Why);
  };
  json J = json::parse(Raw->Data, Raw->Data + Raw->Size, nullptr, /*allow_exceptions=*/false);
  if (J.is_discarded() || !J.is_object())
    return Bad("not a JSON object");
  if (!J.contains("format") || J["format"] != kFormatName)
    return Bad(std::string("'format' is not \"") + kFormatName + "\"");
  if (!J.contains("version") || !J["version"].is_number_integer())
    return Bad("'version' is missing or not an integer");
  const int64_t Version = J["version"].get<int64_t>();
  if (Version > kSealedFormatVersion || Version < 1)
    return Bad("format version " + std::to_string(Version) + " is not supported (this runtime reads version " +
               std::to_string(kSealedFormatVersion) + "; a newer runtime wrote it?)");
  if (!J.contains("cipher") || J["cipher"] != "AES-256-GCM")
    return Bad("'cipher' must be \"AES-256-GCM\"");
  if (!J.contains("kdf") || !J["kdf"].is_object())
    return Bad("'kdf' is missing");
  const json &K = J["kdf"];
  if (!K.contains("name") || K["name"] != "scrypt")
    return Bad("'kdf.name' must be \"scrypt\"");
  for (const char *Key : {"n", "r", "p"})
    if (!K.contains(Key) || !K[Key].is_number_unsigned())
      return Bad(std::string("'kdf.") + Key + "' is missing or not a positive integer");
  ScryptParams Params;
  Params.N = K["n"].get<uint64_t>();
  const uint64_t R = K["r"].get<uint64_t>(), P = K["p"].get<uint64_t>();
  if (R > 64 || P > 64)
    return Bad("'kdf.r' and 'kdf.p' must be at most 64");
  Params.R = static_cast<uint32_t>(R);
  Params.P = static_cast<uint32_t>(P);
  Status KS = checkScrypt(Params);
  if (!KS.isOk())
    return Bad(KS.message());
  std::vector<uint8_t> Salt, Nonce, Tag;
  if (!K.contains("salt") || !K["salt"].is_string() || !fromHex(K["salt"].get<std::string>(), Salt) || Salt.size() < 8 ||
      Salt.size() > 64)
    return Bad("'kdf.salt' must be 8 to 64 bytes in hex");
  if (!J.contains("files") || !J["files"].is_array() || J["files"].empty())
    return Bad("'files' must be a non-empty list of file names");
  auto Folder_ = std::shared_ptr<SealedFolder>(new SealedFolder());
  Folder_->Folder = Folder;
  std::set<std::string> Seen;
  for (const json &F : J["files"]) {
    if (!F.is_string())
      return Bad("'files' holds a non-string entry");
    auto Name = sealedFileName(F.get<std::string>());
    if (!Name.isOk())
      return Bad("'files': " + Name.status().message());
    if (Name.value() != F.get<std::string>() || !Seen.insert(Name.value()).second || Name.value() == kSealedParamsFile)
      return Bad("'files': '" + F.get<std::string>() + "' is not a canonical, unique file name");
    Folder_->Files.push_back(Name.value());
  }
  if (!J.contains("check") || !J["check"].is_object() || !J["check"].contains("nonce") || !J["check"]["nonce"].is_string() ||
      !J["check"].contains("tag") || !J["check"]["tag"].is_string() ||
      !fromHex(J["check"]["nonce"].get<std::string>(), Nonce) || Nonce.size() != kNonceBytes ||
      !fromHex(J["check"]["tag"].get<std::string>(), Tag) || Tag.size() != kTagBytes)
    return Bad("'check' must hold a 12-byte 'nonce' and a 16-byte 'tag' in hex");
  const auto T0 = std::chrono::steady_clock::now();
  RETURN_IF_ERROR(deriveKey(Passphrase, Salt, Params, Folder_->Key));
  Folder_->KdfSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - T0).count();
  if (!gcm(false, Folder_->Key, Nonce.data(), checkAad(Params, Salt, Folder_->Files), nullptr, 0, nullptr, Tag.data()))
    return containerError(Folder, std::string("wrong passphrase (or ") + kSealedParamsFile + " was modified)");
  return Folder_;
}

bool SealedFolder::contains(const std::string &Name) const {
  auto N = sealedFileName(Name);
  return N.isOk() && std::find(Files.begin(), Files.end(), N.value()) != Files.end();
}

Result<std::shared_ptr<const PlainBuffer>> SealedFolder::readFile(const std::string &NameIn) const {
  auto NameR = sealedFileName(NameIn);
  if (!NameR.isOk())
    return containerError(Folder, NameR.status().message());
  const std::string Name = NameR.value();
  const std::string Path = Folder + "/" + Name;
  if (std::find(Files.begin(), Files.end(), Name) == Files.end())
    return containerError(Folder, "'" + Name + "' is not one of its encrypted files (" + kSealedParamsFile + " lists " +
                                      std::to_string(Files.size()) + ")");
  if (!exists(Path))
    return makeError(ErrorCode::Container, "'", Path, "': this file of the encrypted model folder is missing");
  ASSIGN_OR_RETURN(auto F, MappedFile::open(Path));
  const auto Bad = [&](const std::string &Why) { return makeError(ErrorCode::Container, "'", Path, "': ", Why); };
  if (F->Size < 8 || std::memcmp(F->Data, kSealedFileMagic, 8) != 0)
    return Bad("not an encrypted file (its magic bytes are missing)");
  if (F->Size < kHeaderBytes + kTagBytes)
    return Bad("truncated: " + std::to_string(F->Size) + " bytes, shorter than the " +
               std::to_string(kHeaderBytes + kTagBytes) + "-byte header and tag");
  const uint64_t Version = getLE(F->Data + 8, 4);
  if (Version != static_cast<uint64_t>(kSealedFormatVersion))
    return Bad("encrypted-file format version " + std::to_string(Version) + " is not supported (this runtime reads " +
               std::to_string(kSealedFormatVersion) + ")");
  const uint64_t Plain = getLE(F->Data + 16, 8);
  const uint64_t Have = F->Size - kHeaderBytes - kTagBytes;
  if (Plain != Have)
    return Bad((Have < Plain ? "truncated: " : "wrong size: ") + std::string("the header announces ") +
               std::to_string(Plain) + " bytes of data, the file holds " + std::to_string(Have));
  auto Out = std::shared_ptr<PlainBuffer>(new PlainBuffer());
  if (Plain) {
    Out->Data = static_cast<uint8_t *>(allocateBlock(Plain, /*Zero=*/false, Out->Mapped));
    if (!Out->Data)
      return makeError(ErrorCode::OutOfResource, "cannot allocate ", Plain, " bytes to decrypt '", Path, "'");
    Out->Size = Plain;
    if (Out->Mapped) // decrypted weights stay out of core dumps
      ::madvise(Out->Data, Out->Mapped, MADV_DONTDUMP);
  }
  const uint8_t *Tag = F->Data + F->Size - kTagBytes;
  if (!gcm(false, Key, F->Data + kNonceOffset, fileAad(F->Data, Name), F->Data + kHeaderBytes, Plain, Out->Data,
           const_cast<uint8_t *>(Tag)))
    return Bad("authentication failed: wrong passphrase or corrupted file"); // Out is wiped and freed
  return std::shared_ptr<const PlainBuffer>(std::move(Out));
}

Result<std::shared_ptr<const PlainBuffer>> readModelFile(const std::string &Folder, const std::string &Name,
                                                         const std::string &Passphrase) {
  ASSIGN_OR_RETURN(auto S, SealedFolder::open(Folder, Passphrase));
  return S->readFile(Name);
}

} // namespace detail
} // namespace runtime
} // namespace optimium
