// loadModel on encrypted model folders: identical outputs to the plain model (bundled digits model,
// external data, a manifest), the group path, and every error through the public exception types
// (no passphrase, wrong passphrase, tampered / truncated / swapped / missing files), with no
// decrypted byte written to disk and the passphrase in no message or log line.
#include <gtest/gtest.h>

#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>
#include <set>

#include "Optimium/Runtime.h"
#include "Optimium/Runtime/Logging/LogSettings.h"
#include "Optimium/Runtime/Logging/LogWriter.h"
#include "TestUtil.h"
#include "import/SealedFolder.h"

namespace rt = optimium::runtime;
namespace sealed = optimium::runtime::detail;
using namespace optimium_test;

namespace {

const char *const kPass = "open sesame 42";

std::string readAll(const std::string &Path) {
  std::ifstream F(Path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(F), std::istreambuf_iterator<char>());
}
void writeAll(const std::string &Path, const std::string &Bytes) {
  std::ofstream(Path, std::ios::binary | std::ios::trunc) << Bytes;
}
std::string tempDir() {
  char Tmpl[] = "/tmp/optimium_encmodel_XXXXXX";
  return mkdtemp(Tmpl);
}

/// An encrypted copy of a model path (file or folder) with a cheap KDF; returns the folder.
std::string encrypt(const std::string &Model, const std::string &Passphrase = kPass) {
  sealed::ScryptParams K;
  K.N = 1u << 10;
  const std::string Out = tempDir() + "/enc";
  auto R = sealed::encryptModelFolder(Model, Out, Passphrase, K);
  EXPECT_TRUE(R.isOk()) << R.status().message();
  return Out;
}

rt::ModelLoadOptions withPassphrase(const std::string &P = kPass) {
  rt::ModelLoadOptions O;
  O.Passphrase = P;
  return O;
}

rt::Tensor runOnce(rt::Model &M, const std::vector<rt::Tensor> &Inputs) {
  rt::InferRequest R = M.createRequest();
  R.infer(rt::make_array(Inputs));
  EXPECT_FALSE(R.wait());
  return R.getOutput(0);
}

bool sameBytes(const rt::Tensor &A, const rt::Tensor &B) {
  return A.getShape() == B.getShape() && A.getTensorSize() == B.getTensorSize() &&
         std::memcmp(A.data(), B.data(), A.getTensorSize()) == 0;
}

/// Every entry under Dir (recursively) with its size.
void listTree(const std::string &Dir, std::set<std::string> &Out) {
  DIR *D = ::opendir(Dir.c_str());
  if (!D)
    return;
  while (dirent *E = ::readdir(D)) {
    const std::string Name = E->d_name;
    if (Name == "." || Name == "..")
      continue;
    const std::string Path = Dir + "/" + Name;
    struct stat St;
    if (::lstat(Path.c_str(), &St) != 0)
      continue;
    Out.insert(Path + " " + std::to_string(St.st_size));
    if (S_ISDIR(St.st_mode))
      listTree(Path, Out);
  }
  ::closedir(D);
}

/// Expects loadModel(Folder, O) to throw ContainerError whose message holds every one of Wanted
/// and not the passphrase.
void expectContainerError(const std::string &Folder, const rt::ModelLoadOptions &O,
                          const std::vector<std::string> &Wanted) {
  try {
    rt::loadModel(Folder, O);
    ADD_FAILURE() << "expected ContainerError for " << Folder;
  } catch (const rt::ContainerError &E) {
    const std::string What = E.what();
    for (const std::string &W : Wanted)
      EXPECT_NE(What.find(W), std::string::npos) << "'" << W << "' not in: " << What;
    if (!O.Passphrase.empty()) {
      EXPECT_EQ(What.find(O.Passphrase), std::string::npos) << What;
    }
  }
}

struct Capture : rt::logging::LogWriter {
  std::shared_ptr<std::vector<std::string>> Lines;
  std::shared_ptr<std::mutex> Lock;
  void write(rt::LogLevel, rt::StringRef M) override {
    std::lock_guard<std::mutex> G(*Lock);
    Lines->push_back(M.str());
  }
};

} // namespace

TEST(EncryptedModel, DigitsModelGivesIdenticalOutputs) {
  const std::string Enc = encrypt(dataPath("models/digits"));
  rt::Model Plain = rt::loadModel(dataPath("models/digits"));
  rt::Model Sealed = rt::loadModel(Enc, withPassphrase());
  EXPECT_EQ(Sealed.getName(), "enc");
  rt::Tensor Images = readNpy(dataPath("models/digits/test_images.npy"));
  rt::TypedTensor<float> In = rt::tensor<float>({1, 1, 8, 8});
  for (size_t I = 0; I < 20; ++I) {
    std::copy_n(static_cast<const float *>(Images.data()) + I * 64, 64, In.data());
    EXPECT_TRUE(sameBytes(runOnce(Plain, {In}), runOnce(Sealed, {In}))) << "image " << I;
  }
}

TEST(EncryptedModel, ExternalDataIsDecryptedInMemory) {
  const std::string Model = dataPath("tests/models/external_data");
  const std::string Enc = encrypt(Model);
  EXPECT_TRUE(sealed::SealedFolder::open(Enc, kPass).value()->contains("weights.bin"));
  EXPECT_NE(readAll(Enc + "/weights.bin"), readAll(Model + "/weights.bin"));
  rt::Tensor In = readNpy(Model + "/input_0.npy");
  rt::Model Plain = rt::loadModel(Model);
  rt::Model Sealed = rt::loadModel(Enc, withPassphrase());
  rt::Tensor Out = runOnce(Sealed, {In});
  EXPECT_TRUE(sameBytes(Out, runOnce(Plain, {In})));
  EXPECT_LE(maxAbsDiff(Out, readNpy(Model + "/output_0.npy")), 1e-4);
  // The same from the .onnx path of the plain model.
  const std::string Enc2 = encrypt(Model + "/model.onnx");
  rt::Model Sealed2 = rt::loadModel(Enc2, withPassphrase());
  EXPECT_TRUE(sameBytes(runOnce(Sealed2, {In}), Out));
}

TEST(EncryptedModel, ManifestIsEncryptedAndApplied) {
  const std::string Model = dataPath("tests/models/resizable_cache");
  const std::string Enc = encrypt(Model);
  EXPECT_EQ(readAll(Enc + "/optimium.json").find("resizable"), std::string::npos);
  rt::Model Plain = rt::loadModel(Model);
  rt::Model Sealed = rt::loadModel(Enc, withPassphrase());
  EXPECT_TRUE(Plain.getTensorInfo("cache").Resizable);
  EXPECT_TRUE(Sealed.getTensorInfo("cache").Resizable);
  EXPECT_EQ(Sealed.getInputNames().size(), Plain.getInputNames().size());
}

TEST(EncryptedModel, GroupMemberLoadsWithItsPassphrase) {
  const std::string Enc = encrypt(dataPath("models/digits"));
  rt::ModelGroup G = rt::createModelGroup();
  rt::GroupMemberOptions O;
  O.Passphrase = kPass;
  rt::GroupMemberOptions Wrong;
  Wrong.Passphrase = "nope";
  EXPECT_THROW(G.add(Enc, Wrong), rt::ContainerError); // the group stays as it was
  rt::GroupMember M = G.add(Enc, O);
  EXPECT_EQ(G.size(), 1u);
  rt::TypedTensor<float> In = rt::tensor<float>({1, 1, 8, 8});
  std::fill_n(In.data(), 64, 0.5f);
  M.run(rt::make_array(std::vector<rt::Tensor>{In}));
  rt::Model Plain = rt::loadModel(dataPath("models/digits"));
  EXPECT_TRUE(sameBytes(M.getOutput(0), runOnce(Plain, {In})));
}

TEST(EncryptedModel, NoOrWrongPassphraseIsAContainerError) {
  const std::string Enc = encrypt(dataPath("tests/models/external_data"));
  expectContainerError(Enc, {}, {Enc, "encrypted", "give its passphrase"});
  expectContainerError(Enc, withPassphrase("open sesame 43"), {Enc, "wrong passphrase"});
  // The lone encrypted model.onnx is recognized, not parsed as ONNX.
  expectContainerError(Enc + "/model.onnx", withPassphrase(), {"one encrypted file of a model folder"});
}

TEST(EncryptedModel, TamperedTruncatedOrMissingFilesNameTheFile) {
  const std::string Enc = encrypt(dataPath("tests/models/resizable_cache"));
  const std::string Enc2 = encrypt(dataPath("tests/models/external_data"));
  for (const std::string &Folder : {Enc, Enc2}) {
    const std::vector<std::string> Files = sealed::SealedFolder::open(Folder, kPass).value()->files();
    for (const std::string &Name : Files) {
      const std::string Path = Folder + "/" + Name;
      const std::string Orig = readAll(Path);
      for (size_t At : {size_t{30}, Orig.size() / 2, Orig.size() - 1}) { // nonce, ciphertext, tag
        std::string Bad = Orig;
        Bad[At] = static_cast<char>(Bad[At] ^ 1);
        writeAll(Path, Bad);
        expectContainerError(Folder, withPassphrase(), {Path, "wrong passphrase or corrupted file"});
      }
      writeAll(Path, Orig.substr(0, Orig.size() - 7));
      expectContainerError(Folder, withPassphrase(), {Path, "truncated"});
      ::unlink(Path.c_str());
      expectContainerError(Folder, withPassphrase(), {Path, "missing"});
      writeAll(Path, Orig);
      EXPECT_NO_THROW(rt::loadModel(Folder, withPassphrase()));
    }
  }
  // Without its parameter file.
  ::unlink((Enc2 + "/encryption.json").c_str());
  expectContainerError(Enc2, withPassphrase(), {Enc2, "encryption.json is missing"});
}

TEST(EncryptedModel, FilesOfAnotherEncryptionAreRejected) {
  const std::string Model = dataPath("tests/models/external_data");
  const std::string A = encrypt(Model), B = encrypt(Model); // same passphrase, two encryptions
  writeAll(A + "/weights.bin", readAll(B + "/weights.bin"));
  expectContainerError(A, withPassphrase(), {A + "/weights.bin", "wrong passphrase or corrupted file"});
  // model.onnx and weights.bin of one folder swapped: the names are authenticated.
  const std::string C = encrypt(Model);
  const std::string M = readAll(C + "/model.onnx"), W = readAll(C + "/weights.bin");
  writeAll(C + "/model.onnx", W);
  writeAll(C + "/weights.bin", M);
  expectContainerError(C, withPassphrase(), {C + "/model.onnx", "wrong passphrase or corrupted file"});
}

TEST(EncryptedModel, NothingDecryptedIsWrittenAndThePassphraseIsNotLogged) {
  const std::string Enc = encrypt(dataPath("tests/models/external_data"));
  // A private TMPDIR and working folder (the shared /tmp sees other processes' files): both must
  // stay empty, and the encrypted folder unchanged.
  const std::string Tmp = tempDir(), Cwd = tempDir();
  const char *OldTmp = std::getenv("TMPDIR");
  const std::string SavedTmp = OldTmp ? OldTmp : "";
  char OldCwd[4096];
  ASSERT_TRUE(::getcwd(OldCwd, sizeof(OldCwd)));
  ::setenv("TMPDIR", Tmp.c_str(), 1);
  ASSERT_EQ(::chdir(Cwd.c_str()), 0);
  std::set<std::string> FolderBefore, TmpAfter, CwdAfter;
  listTree(Enc, FolderBefore);
  const rt::LogLevel Saved = rt::logging::getLogLevel();
  auto Lines = std::make_shared<std::vector<std::string>>();
  auto Lock = std::make_shared<std::mutex>();
  auto W = std::make_unique<Capture>();
  W->Lines = Lines;
  W->Lock = Lock;
  rt::logging::addLogWriter(std::move(W));
  rt::logging::setLogLevel(rt::LogLevel::Debug);
  {
    rt::Model M = rt::loadModel(Enc, withPassphrase());
    runOnce(M, {readNpy(dataPath("tests/models/external_data/input_0.npy"))});
    EXPECT_THROW(rt::loadModel(Enc, withPassphrase("wrong one")), rt::ContainerError);
    // A passphrase given for a plain model: loads, with a warning that does not repeat it.
    rt::Model Plain = rt::loadModel(dataPath("tests/models/external_data"), withPassphrase());
  }
  rt::logging::clearLogWriters();
  rt::logging::setLogLevel(Saved);
  ASSERT_EQ(::chdir(OldCwd), 0);
  if (OldTmp)
    ::setenv("TMPDIR", SavedTmp.c_str(), 1);
  else
    ::unsetenv("TMPDIR");
  std::set<std::string> FolderAfter;
  listTree(Enc, FolderAfter);
  listTree(Tmp, TmpAfter);
  listTree(Cwd, CwdAfter);
  EXPECT_EQ(FolderBefore, FolderAfter);
  EXPECT_TRUE(TmpAfter.empty()) << *TmpAfter.begin();
  EXPECT_TRUE(CwdAfter.empty()) << *CwdAfter.begin();
  bool SawKdf = false, SawIgnored = false;
  for (const std::string &L : *Lines) {
    EXPECT_EQ(L.find(kPass), std::string::npos) << L;
    EXPECT_EQ(L.find("wrong one"), std::string::npos) << L;
    SawKdf |= L.find("key derivation") != std::string::npos;
    SawIgnored |= L.find("the passphrase is ignored") != std::string::npos;
  }
  EXPECT_TRUE(SawKdf);
  EXPECT_TRUE(SawIgnored);
}

TEST(EncryptedModel, EncryptingRefusesItsOwnFolderAndAnEncryptedOne) {
  const std::string Enc = encrypt(dataPath("tests/models/mlp"));
  auto Again = sealed::encryptModelFolder(Enc, tempDir() + "/x", kPass);
  ASSERT_FALSE(Again.isOk());
  EXPECT_NE(Again.status().message().find("already an encrypted model folder"), std::string::npos);
  const std::string Copy = tempDir();
  writeAll(Copy + "/model.onnx", readAll(dataPath("tests/models/mlp/model.onnx")));
  auto Self = sealed::encryptModelFolder(Copy, Copy, kPass);
  ASSERT_FALSE(Self.isOk());
  EXPECT_NE(Self.status().message().find("own folder"), std::string::npos);
  EXPECT_EQ(sealed::encryptModelFolder(tempDir(), tempDir() + "/y", kPass).status().code(), sealed::ErrorCode::Container);
}
