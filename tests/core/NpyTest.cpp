// The .npy library (src/core/Npy.h) shared by the runtime and the tools.
#include "core/Npy.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

using namespace optimium::npy;
using optimium::runtime::ElementType;

namespace {

std::string dataPath(const std::string &Rel) { return std::string(OPTIMIUM_TEST_DATA_DIR) + "/" + Rel; }

std::string tempPath(const std::string &Name) {
  const auto *Info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string Dir = ::testing::TempDir() + "optimium_npy_" + Info->test_suite_name() + "_" + Info->name();
  ::mkdir(Dir.c_str(), 0755);
  return Dir + "/" + Name;
}

HostArray makeF32(std::vector<int64_t> Dims, std::vector<float> V) {
  HostArray A;
  A.Type = ElementType::F32;
  A.Dims = std::move(Dims);
  A.Bytes.resize(V.size() * 4);
  std::memcpy(A.Bytes.data(), V.data(), A.Bytes.size());
  return A;
}

// A raw .npy with a hand-written header (version Major, header text padded by the caller or not).
std::string rawNpy(int Major, const std::string &Header, const std::string &Data) {
  std::string S("\x93NUMPY", 6);
  S += static_cast<char>(Major);
  S += '\0';
  const uint32_t L = static_cast<uint32_t>(Header.size());
  S += static_cast<char>(L & 0xff);
  S += static_cast<char>((L >> 8) & 0xff);
  if (Major >= 2) {
    S += static_cast<char>((L >> 16) & 0xff);
    S += static_cast<char>((L >> 24) & 0xff);
  }
  return S + Header + Data;
}

std::string expectError(const std::string &Bytes) {
  std::istringstream In(Bytes);
  try {
    readNpy(In, "x.npy");
  } catch (const NpyError &E) {
    return E.what();
  }
  return "(no error)";
}

} // namespace

TEST(Npy, RoundTripEveryDtype) {
  const ElementType Types[] = {ElementType::Bool, ElementType::I8,  ElementType::U8,  ElementType::I16,
                               ElementType::U16,  ElementType::I32, ElementType::U32, ElementType::I64,
                               ElementType::U64,  ElementType::F16, ElementType::F32, ElementType::F64};
  for (ElementType T : Types) {
    HostArray A;
    A.Type = T;
    A.Dims = {2, 3};
    A.Bytes.resize(6 * elementByteSize(T));
    for (size_t I = 0; I < A.Bytes.size(); ++I)
      A.Bytes[I] = static_cast<uint8_t>(T == ElementType::Bool ? (I & 1) : I * 7 + 1);
    std::stringstream S;
    writeNpy(S, A);
    const std::string Bytes = S.str();
    // The data starts at a multiple of 64 bytes, the header ends with '\n'.
    EXPECT_EQ((Bytes.size() - A.Bytes.size()) % 64, 0u) << npyDescr(T);
    EXPECT_EQ(Bytes[Bytes.size() - A.Bytes.size() - 1], '\n');
    HostArray B = readNpy(S);
    EXPECT_EQ(B.Type, T) << npyDescr(T);
    EXPECT_EQ(B.Dims, A.Dims);
    EXPECT_EQ(B.Bytes, A.Bytes);
  }
}

TEST(Npy, Descriptors) {
  EXPECT_EQ(npyDescr(ElementType::F32), "<f4");
  EXPECT_EQ(npyDescr(ElementType::Bool), "|b1");
  EXPECT_EQ(npyDescr(ElementType::I8), "|i1");
  EXPECT_EQ(npyDescr(ElementType::U64), "<u8");
  EXPECT_EQ(npyDescr(ElementType::F16), "<f2");
  EXPECT_EQ(npyDescr(ElementType::BF16), "<u2"); // raw bits, as the Python bindings store it
  EXPECT_EQ(elementTypeFromNpyDescr("<f8"), ElementType::F64);
  EXPECT_EQ(elementTypeFromNpyDescr("|u1"), ElementType::U8);
  EXPECT_EQ(elementTypeFromNpyDescr("<i2"), ElementType::I16);
  EXPECT_EQ(elementTypeFromNpyDescr("|b1"), ElementType::Bool);
  EXPECT_THROW(elementTypeFromNpyDescr("<c8"), NpyError);
  EXPECT_THROW(elementTypeFromNpyDescr("<U5"), NpyError);
  EXPECT_THROW(npyDescr(ElementType::String), NpyError);
}

TEST(Npy, ShapesScalarAndOneDim) {
  for (std::vector<int64_t> Dims : {std::vector<int64_t>{}, {5}, {0, 3}, {1, 1, 8, 8}}) {
    HostArray A;
    A.Type = ElementType::I32;
    A.Dims = Dims;
    A.Bytes.assign(dimsElementCount(Dims) * 4, 0x11);
    std::stringstream S;
    writeNpy(S, A);
    if (Dims.size() == 1) {
      EXPECT_NE(S.str().find("'shape': (5,)"), std::string::npos);
    }
    if (Dims.empty()) {
      EXPECT_NE(S.str().find("'shape': ()"), std::string::npos);
    }
    HostArray B = readNpy(S);
    EXPECT_EQ(B.Dims, Dims);
    EXPECT_EQ(B.Bytes, A.Bytes);
  }
}

TEST(Npy, ReadsVersion2And3Headers) {
  float V[2] = {1.5f, -2.0f};
  const std::string Data(reinterpret_cast<const char *>(V), 8);
  const std::string H = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n";
  for (int Major : {2, 3}) {
    std::istringstream In(rawNpy(Major, H, Data));
    HostArray A = readNpy(In);
    EXPECT_EQ(A.Type, ElementType::F32);
    EXPECT_EQ(A.Dims, std::vector<int64_t>{2});
    EXPECT_EQ(std::memcmp(A.Bytes.data(), V, 8), 0);
  }
  // Unusual but valid spellings: double quotes, key order, no trailing comma, Python 2 longs.
  std::istringstream In(rawNpy(1, "{\"shape\": (1L, 2L), \"fortran_order\": False, \"descr\": \"<f4\"}\n", Data));
  HostArray A = readNpy(In);
  EXPECT_EQ(A.Dims, (std::vector<int64_t>{1, 2}));
}

TEST(Npy, BigEndianIsSwapped) {
  const unsigned char Be[4] = {0x3f, 0x80, 0x00, 0x00}; // 1.0f big-endian
  std::istringstream In(rawNpy(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }\n",
                               std::string(reinterpret_cast<const char *>(Be), 4)));
  HostArray A = readNpy(In);
  float F;
  std::memcpy(&F, A.Bytes.data(), 4);
  EXPECT_EQ(F, 1.0f);
}

TEST(Npy, ClearErrors) {
  const std::string F4 = std::string(8, '\0');
  EXPECT_NE(expectError(rawNpy(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 1, 3), }\n",
                               std::string(24, '\0')))
                .find("Fortran-order arrays are not supported"),
            std::string::npos);
  EXPECT_NE(expectError("not a numpy file at all").find("x.npy: not a .npy file"), std::string::npos);
  EXPECT_NE(expectError(rawNpy(1, "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }\n", F4))
                .find("unsupported dtype '<c8'"),
            std::string::npos);
  EXPECT_NE(expectError(rawNpy(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }\n", F4))
                .find("structured dtypes are not supported"),
            std::string::npos);
  EXPECT_NE(expectError(rawNpy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }\n", F4))
                .find("truncated data: expected 16 bytes, got 8"),
            std::string::npos);
  EXPECT_NE(expectError(rawNpy(9, "{}", "")).find("unsupported .npy format version 9"), std::string::npos);
  EXPECT_NE(expectError(rawNpy(1, "{'descr': '<f4'}\n", "")).find("malformed .npy header"), std::string::npos);
  EXPECT_NE(expectError("").find("no array left"), std::string::npos);
  // A Fortran-order array with one non-trivial dim has the same layout as C order: accepted.
  std::istringstream In(rawNpy(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (1, 2), }\n", F4));
  EXPECT_EQ(readNpy(In).Dims, (std::vector<int64_t>{1, 2}));
}

TEST(Npy, ConcatenatedArraysAppendAndReadAll) {
  const std::string P = tempPath("multi.npy");
  writeNpyFile(P, makeF32({2}, {1, 2}));
  writeNpyFile(P, makeF32({1, 3}, {3, 4, 5}), /*Append=*/true);
  writeNpyFile(P, makeF32({}, {6}), /*Append=*/true);
  std::vector<HostArray> All = readAllNpy(P);
  ASSERT_EQ(All.size(), 3u);
  EXPECT_EQ(All[0].Dims, std::vector<int64_t>{2});
  EXPECT_EQ(All[1].Dims, (std::vector<int64_t>{1, 3}));
  EXPECT_TRUE(All[2].Dims.empty());
  // Stream reading continues where the previous array ended.
  std::ifstream In(P, std::ios::binary);
  readNpy(In);
  EXPECT_FALSE(atNpyEnd(In));
  EXPECT_EQ(readNpy(In).Bytes, All[1].Bytes);
  readNpy(In);
  EXPECT_TRUE(atNpyEnd(In));
  // Without Append the file is truncated.
  writeNpyFile(P, makeF32({1}, {9}));
  EXPECT_EQ(readAllNpy(P).size(), 1u);
  EXPECT_THROW(readNpyFile(tempPath("missing.npy")), NpyError);
}

TEST(Npy, ReadsTheBundledSample) {
  HostArray A = readNpyFile(dataPath("models/digits/sample_input.npy"));
  EXPECT_EQ(A.Type, ElementType::F32);
  EXPECT_EQ(A.Dims, (std::vector<int64_t>{1, 1, 8, 8}));
  std::ifstream Bin(dataPath("models/digits/sample_input.bin"), std::ios::binary);
  std::string Raw((std::istreambuf_iterator<char>(Bin)), std::istreambuf_iterator<char>());
  ASSERT_EQ(Raw.size(), A.Bytes.size());
  EXPECT_EQ(std::memcmp(Raw.data(), A.Bytes.data(), Raw.size()), 0);
  HostArray L = readNpyFile(dataPath("models/digits/test_labels.npy"));
  EXPECT_EQ(L.Type, ElementType::I64);
  EXPECT_EQ(L.Dims, std::vector<int64_t>{360});
}
