// Encrypted model folders at the file level: round trips, the parameter file, and every way a
// folder can be wrong (passphrase, tampered, truncated, swapped, renamed, missing, forged params).
#include "import/SealedFolder.h"

#include <gtest/gtest.h>

#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <iterator>
#include <random>

#include <nlohmann/json.hpp>

#include "core/Status.h"

using namespace optimium::runtime::detail;

namespace {

// Cheap KDF for the tests (the format stores N; the default is measured in the docs).
ScryptParams fastKdf() {
  ScryptParams K;
  K.N = 1u << 10;
  return K;
}

std::string tempDir() {
  char Tmpl[] = "/tmp/optimium_sealed_XXXXXX";
  return mkdtemp(Tmpl);
}

std::string readAll(const std::string &Path) {
  std::ifstream F(Path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(F), std::istreambuf_iterator<char>());
}

void writeAll(const std::string &Path, const std::string &Bytes) {
  std::ofstream(Path, std::ios::binary | std::ios::trunc) << Bytes;
}

std::string randomBytes(size_t N, unsigned Seed) {
  std::mt19937 G(Seed);
  std::string S(N, '\0');
  for (char &C : S)
    C = static_cast<char>(G() & 0xff);
  return S;
}

/// Plain files a.bin (4 KiB), sub/b.txt and empty.bin, encrypted into Out.
struct Fixture {
  std::string In = tempDir(), Out = tempDir() + "/sealed";
  std::string A = randomBytes(4096, 1), B = "hello, sealed world\n";
  explicit Fixture(const std::string &Passphrase = "correct horse") {
    ::mkdir((In + "/sub").c_str(), 0755);
    writeAll(In + "/a.bin", A);
    writeAll(In + "/sub/b.txt", B);
    writeAll(In + "/empty.bin", "");
    Status S = encryptFiles({{In + "/a.bin", "a.bin"}, {In + "/sub/b.txt", "sub/b.txt"}, {In + "/empty.bin", "empty.bin"}},
                            Out, Passphrase, fastKdf());
    EXPECT_TRUE(S.isOk()) << S.message();
  }
};

std::string bytesOf(const std::shared_ptr<const PlainBuffer> &B) {
  return std::string(reinterpret_cast<const char *>(B->data()), B->size());
}

} // namespace

TEST(SealedFolder, RoundTripsEveryFile) {
  Fixture F;
  auto S = SealedFolder::open(F.Out, "correct horse");
  ASSERT_TRUE(S.isOk()) << S.status().message();
  EXPECT_EQ(S.value()->files(), (std::vector<std::string>{"a.bin", "sub/b.txt", "empty.bin"}));
  auto A = S.value()->readFile("a.bin");
  ASSERT_TRUE(A.isOk()) << A.status().message();
  EXPECT_EQ(bytesOf(A.value()), F.A);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(A.value()->data()) % 64, 0u);
  auto B = S.value()->readFile("./sub//b.txt"); // the canonical name is looked up
  ASSERT_TRUE(B.isOk()) << B.status().message();
  EXPECT_EQ(bytesOf(B.value()), F.B);
  auto E = S.value()->readFile("empty.bin");
  ASSERT_TRUE(E.isOk()) << E.status().message();
  EXPECT_EQ(E.value()->size(), 0u);
  // The one-call reader.
  auto One = readModelFile(F.Out, "sub/b.txt", "correct horse");
  ASSERT_TRUE(One.isOk()) << One.status().message();
  EXPECT_EQ(bytesOf(One.value()), F.B);
  // The ciphertext is not the plaintext.
  EXPECT_EQ(readAll(F.Out + "/a.bin").find(F.A.substr(0, 64)), std::string::npos);
  EXPECT_EQ(readAll(F.Out + "/sub/b.txt").find("sealed world"), std::string::npos);
}

TEST(SealedFolder, ParameterFileRecordsTheKdf) {
  Fixture F;
  auto J = nlohmann::json::parse(readAll(F.Out + "/" + kSealedParamsFile));
  EXPECT_EQ(J["version"], kSealedFormatVersion);
  EXPECT_EQ(J["cipher"], "AES-256-GCM");
  EXPECT_EQ(J["kdf"]["name"], "scrypt");
  EXPECT_EQ(J["kdf"]["n"], 1024);
  EXPECT_EQ(J["kdf"]["r"], 8);
  EXPECT_EQ(J["kdf"]["p"], 1);
  EXPECT_EQ(J["kdf"]["salt"].get<std::string>().size(), 32u);
  // A second encryption of the same files draws a new salt and new nonces.
  Fixture G;
  auto J2 = nlohmann::json::parse(readAll(G.Out + "/" + kSealedParamsFile));
  EXPECT_NE(J["kdf"]["salt"], J2["kdf"]["salt"]);
  EXPECT_NE(readAll(F.Out + "/a.bin").substr(24, 12), readAll(G.Out + "/a.bin").substr(24, 12));
}

TEST(SealedFolder, WrongOrMissingPassphraseIsAClearError) {
  Fixture F;
  auto Wrong = SealedFolder::open(F.Out, "battery staple");
  ASSERT_FALSE(Wrong.isOk());
  EXPECT_EQ(Wrong.status().code(), ErrorCode::Container);
  EXPECT_NE(Wrong.status().message().find("wrong passphrase"), std::string::npos) << Wrong.status().message();
  EXPECT_NE(Wrong.status().message().find(F.Out), std::string::npos);
  EXPECT_EQ(Wrong.status().message().find("battery staple"), std::string::npos);
  auto None = SealedFolder::open(F.Out, "");
  ASSERT_FALSE(None.isOk());
  EXPECT_EQ(None.status().code(), ErrorCode::Container);
  EXPECT_NE(None.status().message().find("give its passphrase"), std::string::npos) << None.status().message();
}

TEST(SealedFolder, EveryTamperedByteOfEveryFileFailsAuthentication) {
  Fixture F;
  auto S = SealedFolder::open(F.Out, "correct horse");
  ASSERT_TRUE(S.isOk());
  for (const std::string Name : {"a.bin", "sub/b.txt", "empty.bin"}) {
    const std::string Path = F.Out + "/" + Name;
    const std::string Orig = readAll(Path);
    // Every byte after the magic and version: flags, size, nonce, ciphertext and tag.
    for (size_t At = 12; At < Orig.size(); At += (Orig.size() > 200 ? 97 : 1)) {
      std::string Bad = Orig;
      Bad[At] = static_cast<char>(Bad[At] ^ 0x20);
      writeAll(Path, Bad);
      auto R = S.value()->readFile(Name);
      ASSERT_FALSE(R.isOk()) << Name << " byte " << At;
      EXPECT_EQ(R.status().code(), ErrorCode::Container);
      EXPECT_NE(R.status().message().find(Path), std::string::npos) << R.status().message();
      if (At >= 24) { // past the size field: only the tag can tell
        EXPECT_NE(R.status().message().find("wrong passphrase or corrupted file"), std::string::npos)
            << R.status().message();
      }
    }
    writeAll(Path, Orig);
    EXPECT_TRUE(S.value()->readFile(Name).isOk());
  }
}

TEST(SealedFolder, TruncatedExtendedAndForeignFilesAreNamed) {
  Fixture F;
  auto S = SealedFolder::open(F.Out, "correct horse");
  ASSERT_TRUE(S.isOk());
  const std::string Path = F.Out + "/a.bin";
  const std::string Orig = readAll(Path);
  for (size_t Keep : {size_t{0}, size_t{5}, size_t{40}, Orig.size() - 1, Orig.size() - 16}) {
    writeAll(Path, Orig.substr(0, Keep));
    auto R = S.value()->readFile("a.bin");
    ASSERT_FALSE(R.isOk()) << Keep;
    EXPECT_EQ(R.status().code(), ErrorCode::Container);
    EXPECT_NE(R.status().message().find(Path), std::string::npos) << R.status().message();
    if (Keep >= 8) {
      EXPECT_NE(R.status().message().find("truncated"), std::string::npos) << R.status().message();
    }
  }
  writeAll(Path, Orig + "x");
  auto Longer = S.value()->readFile("a.bin");
  ASSERT_FALSE(Longer.isOk());
  EXPECT_NE(Longer.status().message().find("wrong size"), std::string::npos) << Longer.status().message();
  writeAll(Path, F.A); // a plain file put in place of the encrypted one
  auto Plain = S.value()->readFile("a.bin");
  ASSERT_FALSE(Plain.isOk());
  EXPECT_NE(Plain.status().message().find("not an encrypted file"), std::string::npos) << Plain.status().message();
  ::unlink(Path.c_str());
  auto Missing = S.value()->readFile("a.bin");
  ASSERT_FALSE(Missing.isOk());
  EXPECT_EQ(Missing.status().code(), ErrorCode::Container);
  EXPECT_NE(Missing.status().message().find("missing"), std::string::npos) << Missing.status().message();
  auto Unlisted = S.value()->readFile("other.bin");
  ASSERT_FALSE(Unlisted.isOk());
  EXPECT_NE(Unlisted.status().message().find("not one of its encrypted files"), std::string::npos);
  EXPECT_FALSE(S.value()->readFile("../a.bin").isOk());
}

TEST(SealedFolder, FilesCannotBeSwappedOrRenamed) {
  Fixture F, G; // same passphrase, two encryptions
  // A file of another encryption under the same name.
  writeAll(F.Out + "/a.bin", readAll(G.Out + "/a.bin"));
  auto S = SealedFolder::open(F.Out, "correct horse");
  ASSERT_TRUE(S.isOk());
  auto R = S.value()->readFile("a.bin");
  ASSERT_FALSE(R.isOk());
  EXPECT_NE(R.status().message().find("wrong passphrase or corrupted file"), std::string::npos);
  // Two files of one encryption swapped: the name is authenticated.
  auto SG = SealedFolder::open(G.Out, "correct horse");
  ASSERT_TRUE(SG.isOk());
  const std::string GA = readAll(G.Out + "/a.bin"), GB = readAll(G.Out + "/sub/b.txt");
  writeAll(G.Out + "/a.bin", GB);
  writeAll(G.Out + "/sub/b.txt", GA);
  EXPECT_FALSE(SG.value()->readFile("a.bin").isOk());
  EXPECT_FALSE(SG.value()->readFile("sub/b.txt").isOk());
  // The parameter file of another encryption: its key check holds another salt.
  Fixture H;
  writeAll(H.Out + "/" + kSealedParamsFile, readAll(F.Out + "/" + kSealedParamsFile));
  auto SH = SealedFolder::open(H.Out, "correct horse");
  ASSERT_TRUE(SH.isOk()); // F's parameters verify with F's key ...
  EXPECT_FALSE(SH.value()->readFile("sub/b.txt").isOk()); // ... which does not open H's files
}

TEST(SealedFolder, ParameterFileProblemsAreContainerErrors) {
  Fixture F;
  const std::string Params = F.Out + "/" + kSealedParamsFile;
  const std::string Orig = readAll(Params);
  const auto Expect = [&](const std::string &Text, const std::string &Wanted) {
    writeAll(Params, Text);
    auto S = SealedFolder::open(F.Out, "correct horse");
    ASSERT_FALSE(S.isOk()) << Wanted;
    EXPECT_EQ(S.status().code(), ErrorCode::Container) << S.status().message();
    EXPECT_NE(S.status().message().find(Wanted), std::string::npos) << S.status().message();
  };
  const auto Edit = [&](const std::function<void(nlohmann::json &)> &Change) {
    auto J = nlohmann::json::parse(Orig);
    Change(J);
    return J.dump();
  };
  Expect("{not json", "not a JSON object");
  Expect(Edit([](nlohmann::json &J) { J["version"] = 2; }), "format version 2 is not supported");
  Expect(Edit([](nlohmann::json &J) { J["kdf"]["n"] = 1000; }), "power of two");
  Expect(Edit([](nlohmann::json &J) { J["kdf"]["n"] = 1u << 30; }), "power of two");
  Expect(Edit([](nlohmann::json &J) { J["kdf"]["r"] = 64; J["kdf"]["p"] = 64; J["kdf"]["n"] = 1u << 20; }), "2 GiB");
  Expect(Edit([](nlohmann::json &J) { J["kdf"]["salt"] = "zz"; }), "kdf.salt");
  Expect(Edit([](nlohmann::json &J) { J["cipher"] = "AES-128-CBC"; }), "cipher");
  Expect(Edit([](nlohmann::json &J) { J["files"] = {"../x"}; }), "leaves the model folder");
  Expect(Edit([](nlohmann::json &J) { J.erase("check"); }), "'check'");
  // Changes the key check covers: they read like a wrong passphrase.
  Expect(Edit([](nlohmann::json &J) { J["kdf"]["n"] = 2048; }), "wrong passphrase");
  Expect(Edit([](nlohmann::json &J) { J["files"].push_back("extra.bin"); }), "wrong passphrase");
  Expect(Edit([](nlohmann::json &J) {
           std::string S = J["kdf"]["salt"];
           S[0] = S[0] == '0' ? '1' : '0';
           J["kdf"]["salt"] = S;
         }),
         "wrong passphrase");
  ::unlink(Params.c_str());
  auto Missing = SealedFolder::open(F.Out, "correct horse");
  ASSERT_FALSE(Missing.isOk());
  EXPECT_NE(Missing.status().message().find("parameter file encryption.json is missing"), std::string::npos)
      << Missing.status().message();
}

TEST(SealedFolder, DefaultKdfParametersRoundTrip) {
  const std::string In = tempDir(), Out = tempDir() + "/sealed";
  writeAll(In + "/x", "payload");
  ASSERT_TRUE(encryptFiles({{In + "/x", "x"}}, Out, "pw").isOk());
  auto J = nlohmann::json::parse(readAll(Out + "/" + kSealedParamsFile));
  EXPECT_EQ(J["kdf"]["n"], 16384);
  auto S = SealedFolder::open(Out, "pw");
  ASSERT_TRUE(S.isOk()) << S.status().message();
  EXPECT_GT(S.value()->kdfSeconds(), 0.0);
  EXPECT_EQ(bytesOf(S.value()->readFile("x").value()), "payload");
}

TEST(SealedFolder, EncryptRefusesBadRequests) {
  const std::string In = tempDir();
  writeAll(In + "/x", "payload");
  const std::string Out = tempDir();
  EXPECT_EQ(encryptFiles({{In + "/x", "x"}}, Out, "", fastKdf()).code(), ErrorCode::InvalidArgument);
  EXPECT_EQ(encryptFiles({}, Out, "pw", fastKdf()).code(), ErrorCode::InvalidArgument);
  EXPECT_EQ(encryptFiles({{In + "/x", "../x"}}, Out, "pw", fastKdf()).code(), ErrorCode::InvalidArgument);
  EXPECT_EQ(encryptFiles({{In + "/x", "./x"}}, Out, "pw", fastKdf()).code(), ErrorCode::InvalidArgument);
  EXPECT_EQ(encryptFiles({{In + "/x", kSealedParamsFile}}, Out, "pw", fastKdf()).code(), ErrorCode::InvalidArgument);
  EXPECT_EQ(encryptFiles({{In + "/x", "x"}, {In + "/x", "x"}}, Out, "pw", fastKdf()).code(), ErrorCode::InvalidArgument);
  EXPECT_EQ(encryptFiles({{In + "/missing", "x"}}, Out, "pw", fastKdf()).code(), ErrorCode::IO);
  ScryptParams Bad;
  Bad.N = 3;
  EXPECT_EQ(encryptFiles({{In + "/x", "x"}}, Out, "pw", Bad).code(), ErrorCode::InvalidArgument);
  ASSERT_TRUE(encryptFiles({{In + "/x", "x"}}, Out, "pw", fastKdf()).isOk());
  // Never overwrites.
  EXPECT_EQ(encryptFiles({{In + "/x", "x"}}, Out, "pw", fastKdf()).code(), ErrorCode::IO);
  // A lone encrypted file and a folder without its parameter file are recognized.
  auto Lone = isSealedModelPath(Out + "/x");
  ASSERT_FALSE(Lone.isOk());
  EXPECT_NE(Lone.status().message().find("one encrypted file of a model folder"), std::string::npos);
  EXPECT_TRUE(isSealedModelPath(Out).value());
  EXPECT_FALSE(isSealedModelPath(In).value());
}

TEST(SealedFolder, FileNamesAreCanonical) {
  EXPECT_EQ(sealedFileName("a/b").value(), "a/b");
  EXPECT_EQ(sealedFileName("./a//b/").value(), "a/b");
  EXPECT_FALSE(sealedFileName("").isOk());
  EXPECT_FALSE(sealedFileName("/etc/passwd").isOk());
  EXPECT_FALSE(sealedFileName("a/../../b").isOk());
  EXPECT_FALSE(sealedFileName("./.").isOk());
}
