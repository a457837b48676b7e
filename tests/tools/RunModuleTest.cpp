// optimium-run: flag and --input parsing, output formatting, comparison (library functions of
// src/tools/: RunModuleFlags, InputSpec, OutputFormat) and end-to-end runs of the real binary.
#include "tools/RunModule.h"
#include "tools/ElementText.h"
#include "tools/Flagfile.h"
#include "tools/InputSpec.h"
#include "tools/OutputFormat.h"
#include "ToolTestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace optimium::tools;
namespace rt = optimium::runtime;
using rt::ElementType;
using namespace optimium_test;

namespace {

std::string dataPath(const std::string &Rel) { return std::string(OPTIMIUM_TEST_DATA_DIR) + "/" + Rel; }

std::string tempDir() { return testTempDir("optimium_run_"); }

void writeFile(const std::string &Path, const std::string &Bytes) {
  std::ofstream F(Path, std::ios::binary);
  F.write(Bytes.data(), static_cast<std::streamsize>(Bytes.size()));
}

template <typename T> std::vector<T> values(const HostArray &A) {
  std::vector<T> V(A.Bytes.size() / sizeof(T));
  if (!V.empty())
    std::memcpy(V.data(), A.Bytes.data(), A.Bytes.size());
  return V;
}

template <typename T> std::string bytesOf(const std::vector<T> &V) {
  return std::string(reinterpret_cast<const char *>(V.data()), V.size() * sizeof(T));
}

HostArray one(const std::string &Spec, const rt::TensorInfo *Info = nullptr) {
  InputStreams S;
  std::vector<HostArray> A = parseInputSpec(Spec, S, Info);
  EXPECT_EQ(A.size(), 1u) << Spec;
  S.checkRawFilesConsumed("--input");
  return A.empty() ? HostArray() : A[0];
}

// The message of the ToolError a spec produces ("" when it parses).
std::string specError(const std::string &Spec) {
  try {
    parseInputSpecs({Spec});
  } catch (const ToolError &E) {
    return E.what();
  }
  return "";
}

HostArray f32(std::vector<int64_t> Dims, std::vector<float> V) {
  HostArray A;
  A.Type = ElementType::F32;
  A.Dims = std::move(Dims);
  A.Bytes.resize(V.size() * 4);
  if (!V.empty())
    std::memcpy(A.Bytes.data(), V.data(), A.Bytes.size());
  return A;
}

rt::TensorInfo info(const std::string &Name, rt::TensorShape Shape, ElementType Type = ElementType::F32) {
  rt::TensorInfo I;
  I.Name = Name;
  I.Shape = std::move(Shape);
  I.Type = Type;
  return I;
}

RunModuleOptions flags(std::vector<std::string> Args) {
  std::vector<const char *> Argv = {"optimium-run"};
  for (const std::string &A : Args)
    Argv.push_back(A.c_str());
  return parseFlags(static_cast<int>(Argv.size()), Argv.data());
}

std::string flagError(std::vector<std::string> Args) {
  try {
    flags(std::move(Args));
  } catch (const ToolError &E) {
    return E.what();
  }
  return "";
}

} // namespace

// ---- element types and values ------------------------------------------------------------------

TEST(RunModuleParse, ElementTypeSpellings) {
  const std::pair<const char *, ElementType> Cases[] = {
      {"i1", ElementType::Bool},  {"i8", ElementType::I8},    {"si8", ElementType::I8},   {"ui8", ElementType::U8},
      {"i16", ElementType::I16},  {"si16", ElementType::I16}, {"ui16", ElementType::U16}, {"i32", ElementType::I32},
      {"si32", ElementType::I32}, {"ui32", ElementType::U32}, {"i64", ElementType::I64},  {"si64", ElementType::I64},
      {"ui64", ElementType::U64}, {"f16", ElementType::F16},  {"bf16", ElementType::BF16}, {"f32", ElementType::F32},
      {"f64", ElementType::F64}};
  for (const auto &C : Cases) {
    ElementType T = ElementType::Undefined;
    EXPECT_TRUE(parseElementTypeName(C.first, T)) << C.first;
    EXPECT_EQ(T, C.second) << C.first;
  }
  ElementType T;
  EXPECT_FALSE(parseElementTypeName("float", T));
  EXPECT_FALSE(parseElementTypeName("u8", T));
  EXPECT_EQ(elementTypeName(ElementType::U8), "ui8");
  EXPECT_EQ(elementTypeName(ElementType::Bool), "i1");
  EXPECT_EQ(formatShapeAndType({1, 10}, ElementType::F32), "1x10xf32");
  EXPECT_EQ(formatShapeAndType({}, ElementType::I64), "i64");
}

TEST(RunModuleParse, SpaceSeparatedValues) {
  HostArray A = one("2x2xf32=1 2 3 4");
  EXPECT_EQ(A.Type, ElementType::F32);
  EXPECT_EQ(A.Dims, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(values<float>(A), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(values<float>(one("  4xf32 = -1.5  2e3 ,0.25\t-0  ")), (std::vector<float>{-1.5f, 2000, 0.25f, -0.0f}));
}

TEST(RunModuleParse, BracketsWithCommasOrSpaces) {
  const std::vector<float> Want = {1, 2, 3, 4};
  EXPECT_EQ(values<float>(one("2x2xf32=[[1,2][3,4]]")), Want);
  EXPECT_EQ(values<float>(one("2x2xf32=[[1,2],[3,4]]")), Want);
  EXPECT_EQ(values<float>(one("2x2xf32=[1 2][3 4]")), Want);
  EXPECT_EQ(values<float>(one("2x2xf32=[[1, 2], [3, 4]]")), Want);
  EXPECT_EQ(values<float>(one("4xf32=1,2,3,4")), Want);
}

TEST(RunModuleParse, SingleValueFills) {
  EXPECT_EQ(values<float>(one("2x3xf32=7")), std::vector<float>(6, 7.0f));
  EXPECT_EQ(values<int8_t>(one("5xi8=-3")), std::vector<int8_t>(5, -3));
  EXPECT_EQ(values<float>(one("f32=2.5")), std::vector<float>{2.5f}); // scalar
}

TEST(RunModuleParse, NoValueIsZeros) {
  for (const char *S : {"2x2xf32", "2x2xf32=", "2x2xf32=[]"}) {
    HostArray A = one(S);
    EXPECT_EQ(A.Dims, (std::vector<int64_t>{2, 2})) << S;
    EXPECT_EQ(values<float>(A), std::vector<float>(4, 0.0f)) << S;
  }
  EXPECT_EQ(one("0x3xf32").Bytes.size(), 0u);
}

TEST(RunModuleParse, IntegerBoolAndHalfTypes) {
  EXPECT_EQ(values<int8_t>(one("3xi8=-128 0 127")), (std::vector<int8_t>{-128, 0, 127}));
  EXPECT_EQ(values<int8_t>(one("2xsi8=-1 1")), (std::vector<int8_t>{-1, 1}));
  EXPECT_EQ(values<uint8_t>(one("2xui8=0 255")), (std::vector<uint8_t>{0, 255}));
  EXPECT_EQ(values<int16_t>(one("2xi16=-32768 32767")), (std::vector<int16_t>{-32768, 32767}));
  EXPECT_EQ(values<uint16_t>(one("1xui16=65535")), (std::vector<uint16_t>{65535}));
  EXPECT_EQ(values<int32_t>(one("2xsi32=-2147483648 2147483647")), (std::vector<int32_t>{INT32_MIN, INT32_MAX}));
  EXPECT_EQ(values<uint32_t>(one("1xui32=4294967295")), (std::vector<uint32_t>{4294967295u}));
  EXPECT_EQ(values<int64_t>(one("2xi64=8589934592 -1099511627776")),
            (std::vector<int64_t>{8589934592LL, -1099511627776LL}));
  EXPECT_EQ(values<uint64_t>(one("1xui64=18446744073709551615")), (std::vector<uint64_t>{UINT64_MAX}));
  EXPECT_EQ(values<uint8_t>(one("4xi1=1 0 true false")), (std::vector<uint8_t>{1, 0, 1, 0}));
  EXPECT_EQ(values<double>(one("1xf64=0.1")), (std::vector<double>{0.1}));
  EXPECT_EQ(values<uint16_t>(one("2xf16=1.5 -2")), (std::vector<uint16_t>{0x3e00, 0xc000}));
  EXPECT_EQ(values<uint16_t>(one("1xbf16=1.5")), (std::vector<uint16_t>{0x3fc0}));
  HostArray Special = one("3xf32=nan inf -inf");
  std::vector<float> V = values<float>(Special);
  EXPECT_TRUE(std::isnan(V[0]));
  EXPECT_TRUE(std::isinf(V[1]) && V[1] > 0);
  EXPECT_TRUE(std::isinf(V[2]) && V[2] < 0);
}

// Low-precision types: IREE spellings, one stored byte per element (float8 codes; int4 sign-extended).
TEST(RunModuleParse, LowPrecisionTypes) {
  EXPECT_EQ(values<uint8_t>(one("3xf8E4M3FN=1 -0.5 1000")), (std::vector<uint8_t>{0x38, 0xB0, 0x7E})); // saturates
  EXPECT_EQ(values<uint8_t>(one("1xf8E5M2=2")), (std::vector<uint8_t>{0x40}));
  EXPECT_EQ(values<uint8_t>(one("2xf4E2M1FN=6 -0.5")), (std::vector<uint8_t>{0x7, 0x9}));
  EXPECT_EQ(values<int8_t>(one("3xi4=-8 0 7")), (std::vector<int8_t>{-8, 0, 7}));
  EXPECT_EQ(values<uint8_t>(one("2xui2=0 3")), (std::vector<uint8_t>{0, 3}));
  EXPECT_NE(specError("1xi4=8").find("range"), std::string::npos) << specError("1xi4=8");
  EXPECT_EQ(elementTypeName(ElementType::F8E4M3FNUZ), "f8E4M3FNUZ");
  EXPECT_EQ(elementTypeName(ElementType::U4), "ui4");
  const std::string View = formatBufferView(one("3xf8E4M3FN=1 -0.5 448"));
  EXPECT_NE(View.find("3xf8E4M3FN=1 -0.5 448"), std::string::npos) << View;
}

// ---- files -------------------------------------------------------------------------------------

TEST(RunModuleParse, RawFileAndContinuation) {
  const std::string Dir = tempDir();
  const std::string Bin = Dir + "/in.bin";
  writeFile(Bin, bytesOf(std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(values<float>(one("2x3xf32=@" + Bin)), (std::vector<float>{1, 2, 3, 4, 5, 6}));

  // `+` continues where the previous read of the same path stopped; `@` restarts at 0.
  std::vector<HostArray> A =
      parseInputSpecs({"2xf32=@" + Bin, "1x3xf32=+" + Bin, "f32=+" + Bin});
  ASSERT_EQ(A.size(), 3u);
  EXPECT_EQ(values<float>(A[0]), (std::vector<float>{1, 2}));
  EXPECT_EQ(values<float>(A[1]), (std::vector<float>{3, 4, 5}));
  EXPECT_EQ(values<float>(A[2]), (std::vector<float>{6}));
  // `+` on a path not read yet starts at 0.
  A = parseInputSpecs({"3xf32=+" + Bin, "3xf32=+" + Bin});
  EXPECT_EQ(values<float>(A[1]), (std::vector<float>{4, 5, 6}));
  // Typed reads: i8 image.
  writeFile(Dir + "/img.bin", std::string("\x01\xff\x7f\x80", 4));
  EXPECT_EQ(values<int8_t>(one("1x2x2xsi8=@" + Dir + "/img.bin")), (std::vector<int8_t>{1, -1, 127, -128}));
}

TEST(RunModuleParse, RawFileSizeMustMatch) {
  const std::string Dir = tempDir();
  const std::string Bin = Dir + "/in.bin";
  writeFile(Bin, bytesOf(std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(specError("2x4xf32=@" + Bin),
            "--input '2x4xf32=@" + Bin + "': " + Bin + " has 24 bytes left at offset 0, 2x4xf32 needs 32");
  EXPECT_EQ(specError("2x2xf32=@" + Bin),
            "--input: " + Bin + " has 24 bytes but the inputs read 16 (the file size must match the shapes given)");
  try {
    parseInputSpecs({"2x2xf32=@" + Bin, "4xf32=+" + Bin});
    FAIL() << "expected an error";
  } catch (const ToolError &E) {
    EXPECT_NE(std::string(E.what()).find("has 8 bytes left at offset 16, 4xf32 needs 16"), std::string::npos)
        << E.what();
  }
}

TEST(RunModuleParse, RawFileWithoutMetadataUsesTheModelInput) {
  const std::string Bin = dataPath("models/digits/sample_input.bin");
  const rt::TensorInfo Image = info("image", rt::TensorShape{1, 1, 8, 8});
  HostArray A = one("@" + Bin, &Image);
  EXPECT_EQ(A.Dims, (std::vector<int64_t>{1, 1, 8, 8}));
  EXPECT_EQ(A.Bytes, readNpyFile(dataPath("models/digits/sample_input.npy")).Bytes);
  // Without a model input to take them from, shape and type are required.
  EXPECT_NE(specError("@" + Bin).find("a file without shape and type must be a .npy file"), std::string::npos);
}

TEST(RunModuleParse, NpyFiles) {
  const std::string Dir = tempDir();
  const std::string Multi = Dir + "/multi.npy";
  writeNpyFile(Multi, f32({2}, {1, 2}));
  writeNpyFile(Multi, f32({1, 3}, {3, 4, 5}), true);
  writeNpyFile(Multi, f32({}, {6}), true);

  // @ reads the first array (shape and type from the file).
  HostArray First = one("@" + Multi);
  EXPECT_EQ(First.Dims, std::vector<int64_t>{2});
  EXPECT_EQ(values<float>(First), (std::vector<float>{1, 2}));

  // + continues with the next array; @ restarts.
  std::vector<HostArray> A = parseInputSpecs({"@" + Multi, "+" + Multi, "@" + Multi, "+" + Multi, "+" + Multi});
  ASSERT_EQ(A.size(), 5u);
  EXPECT_EQ(values<float>(A[1]), (std::vector<float>{3, 4, 5}));
  EXPECT_EQ(values<float>(A[2]), (std::vector<float>{1, 2}));
  EXPECT_EQ(values<float>(A[4]), (std::vector<float>{6}));

  // * reads every (remaining) array as successive inputs.
  A = parseInputSpecs({"*" + Multi});
  ASSERT_EQ(A.size(), 3u);
  EXPECT_EQ(A[1].Dims, (std::vector<int64_t>{1, 3}));
  A = parseInputSpecs({"@" + Multi, "*" + Multi, "2x2xf32=9"});
  ASSERT_EQ(A.size(), 4u);
  EXPECT_EQ(values<float>(A[1]), (std::vector<float>{3, 4, 5}));
  EXPECT_EQ(values<float>(A[3]), std::vector<float>(4, 9.0f));

  // Reading past the last array is an error naming the file.
  EXPECT_NE(specError("*" + Multi).size(), 1u); // (no error: * stops at the end)
  try {
    parseInputSpecs({"*" + Multi, "+" + Multi});
    FAIL();
  } catch (const ToolError &E) {
    EXPECT_NE(std::string(E.what()).find("no array left to read"), std::string::npos) << E.what();
  }

  // The repository's sample, with and without shape/type given.
  const std::string Sample = dataPath("models/digits/sample_input.npy");
  EXPECT_EQ(one("@" + Sample).Dims, (std::vector<int64_t>{1, 1, 8, 8}));
  EXPECT_EQ(one("1x1x8x8xf32=@" + Sample).Dims, (std::vector<int64_t>{1, 1, 8, 8}));
  EXPECT_EQ(specError("1x64xf32=@" + Sample),
            "--input '1x64xf32=@" + Sample + "': " + Sample + " holds 1x1x8x8xf32, not 1x64xf32");
}

// ---- bad specs: one clear line each -------------------------------------------------------------

TEST(RunModuleParse, BadSpecsGiveOneClearLine) {
  const std::pair<std::string, std::string> Cases[] = {
      {"2x2xf32=1 2 3", "--input '2x2xf32=1 2 3': 3 values for 4 elements"},
      {"2x2xf32=1 2 3 4 5", "--input '2x2xf32=1 2 3 4 5': 5 values for 4 elements"},
      {"2x2xf32=1 x 3 4", "--input '2x2xf32=1 x 3 4': value 'x' is not a valid f32"},
      {"2xi8=1 300", "--input '2xi8=1 300': value '300' is out of range for i8"},
      {"2xui8=1 -1", "--input '2xui8=1 -1': value '-1' is out of range for ui8"},
      {"1xi32=1.5", "--input '1xi32=1.5': value '1.5' is not a valid i32"},
      {"1xi64=99999999999999999999", "--input '1xi64=99999999999999999999': value '99999999999999999999' is out of range for i64"},
      {"1xi1=2", "--input '1xi1=2': value '2' is not a valid i1 (use 0/1 or true/false)"},
      {"2x2xfloat=1", "--input '2x2xfloat=1': unknown element type 'float' (expected one of i1 i8 si8 ui8 i16 "
                      "si16 ui16 i32 si32 ui32 i64 si64 ui64 f16 bf16 f32 f64)"},
      {"2xQxf32=1", "--input '2xQxf32=1': invalid dimension 'Q' in shape '2xQxf32'"},
      {"2x-1xf32=1", "--input '2x-1xf32=1': invalid dimension '-1' in shape '2x-1xf32'"},
      {"2xxf32=1", "--input '2xxf32=1': invalid dimension '' in shape '2xxf32'"},
      {"=1 2", "--input '=1 2': missing shape and element type (e.g. 2x2xf32=...)"},
      {"2x2xf32=[[1,2][3,4]", "--input '2x2xf32=[[1,2][3,4]': unbalanced '['"},
      {"2x2xf32=1 2]] 3 4", "--input '2x2xf32=1 2]] 3 4': unbalanced ']'"},
      {"", "--input '': no value given"},
      {"@", "--input '@': missing file name"},
      {"2xf32=@", "--input '2xf32=@': missing file name"},
      {"@/nonexistent/x.npy", "--input '@/nonexistent/x.npy': /nonexistent/x.npy: cannot open file"},
      {"2xf32=@/nonexistent/x.bin", "--input '2xf32=@/nonexistent/x.bin': /nonexistent/x.bin: cannot open file"},
  };
  for (const auto &C : Cases) {
    const std::string Msg = specError(C.first);
    EXPECT_EQ(Msg, C.second);
    EXPECT_EQ(Msg.find('\n'), std::string::npos) << Msg;
  }
  // A non-.npy file given as a .npy reads as a clear error too.
  const std::string Dir = tempDir();
  writeFile(Dir + "/fake.npy", "hello world");
  EXPECT_EQ(specError("@" + Dir + "/fake.npy"),
            "--input '@" + Dir + "/fake.npy': " + Dir + "/fake.npy: not a .npy file (bad magic)");
}

// ---- validation against the model ---------------------------------------------------------------

TEST(RunModuleValidate, CountTypeShape) {
  const std::vector<rt::TensorInfo> Infos = {info("a", rt::TensorShape{2, 3}), info("b", rt::TensorShape{2, 3})};
  EXPECT_NO_THROW(validateInputs({f32({2, 3}, std::vector<float>(6)), f32({2, 3}, std::vector<float>(6))}, Infos));
  auto Err = [&](std::vector<HostArray> In) -> std::string {
    try {
      validateInputs(In, Infos);
    } catch (const ToolError &E) {
      return E.what();
    }
    return "";
  };
  EXPECT_EQ(Err({f32({2, 3}, std::vector<float>(6))}),
            "the model takes 2 inputs (a: 2x3xf32, b: 2x3xf32) but 1 was given with --input");
  EXPECT_EQ(Err({}), "the model takes 2 inputs (a: 2x3xf32, b: 2x3xf32) but 0 were given with --input");
  EXPECT_EQ(Err({f32({2, 3}, std::vector<float>(6)), f32({3, 2}, std::vector<float>(6))}),
            "input 1 'b': expected shape 2x3xf32, got 3x2xf32 (dim 0 is 3, expected 2)");
  EXPECT_EQ(Err({f32({6}, std::vector<float>(6)), f32({2, 3}, std::vector<float>(6))}),
            "input 0 'a': expected shape 2x3xf32 (rank 2), got 6xf32 (rank 1)");
  HostArray I = one("2x3xi32=0");
  EXPECT_EQ(Err({I, I}), "input 0 'a': expected element type f32 (2x3xf32), got i32 (2x3xi32)");
}

TEST(RunModuleValidate, SymbolicDimsMustAgree) {
  const std::vector<rt::TensorInfo> Infos = {info("x", rt::TensorShape{rt::Expr("batch"), 16}),
                                             info("m", rt::TensorShape{rt::Expr("batch"), 1})};
  EXPECT_NO_THROW(validateInputs({one("3x16xf32"), one("3x1xf32")}, Infos));
  EXPECT_NO_THROW(validateInputs({one("7x16xf32"), one("7x1xf32")}, Infos));
  try {
    validateInputs({one("3x16xf32"), one("4x1xf32")}, Infos);
    FAIL();
  } catch (const ToolError &E) {
    EXPECT_EQ(std::string(E.what()), "input 1 'm': expected shape {batch}x1xf32, got 4x1xf32 (dim 0 'batch' is 4 "
                                     "but input 0 'x' dim 0 set it to 3)");
  }
  try {
    validateInputs({one("3x15xf32"), one("3x1xf32")}, Infos);
    FAIL();
  } catch (const ToolError &E) {
    EXPECT_EQ(std::string(E.what()), "input 0 'x': expected shape {batch}x16xf32, got 3x15xf32 (dim 1 is 15, expected 16)");
  }
}

// ---- output formatting -------------------------------------------------------------------------

TEST(RunModuleFormat, LikeIreeBufferViews) {
  EXPECT_EQ(formatBufferView(f32({4}, {1, 2, 3, 4})), "4xf32=1 2 3 4");
  EXPECT_EQ(formatBufferView(f32({2, 2}, {1, 2, 3, 4})), "2x2xf32=[1 2][3 4]");
  EXPECT_EQ(formatBufferView(f32({2, 1, 2}, {1, 2, 3, 4})), "2x1x2xf32=[[1 2]][[3 4]]");
  EXPECT_EQ(formatBufferView(f32({}, {2.5f})), "f32=2.5");
  EXPECT_EQ(formatBufferView(f32({0, 3}, {})), "0x3xf32=");
  EXPECT_EQ(formatBufferView(f32({1, 4}, {0.1f, 1e-5f, 123456789.0f, -0.5f})), "1x4xf32=[0.1 1E-05 1.23457E+08 -0.5]");
  EXPECT_EQ(formatBufferView(one("3xi64=8589934592 -1 0")), "3xi64=8589934592 -1 0");
  EXPECT_EQ(formatBufferView(one("2xui8=255 0")), "2xui8=255 0");
  EXPECT_EQ(formatBufferView(one("2xi8=-128 7")), "2xi8=-128 7");
  EXPECT_EQ(formatBufferView(one("3xi1=1 0 1")), "3xi1=1 0 1");
  EXPECT_EQ(formatBufferView(one("2xf16=1.5 -2")), "2xf16=1.5 -2");
  EXPECT_EQ(formatBufferView(one("1xbf16=0.5")), "1xbf16=0.5");
}

TEST(RunModuleFormat, ElidesBeyondMaxElements) {
  std::vector<float> Ten;
  for (int I = 0; I < 10; ++I)
    Ten.push_back(static_cast<float>(I));
  EXPECT_EQ(formatBufferView(f32({1, 10}, Ten), 4), "1x10xf32=[0 1 2 3...]");
  EXPECT_EQ(formatBufferView(f32({10}, Ten), 10), "10xf32=0 1 2 3 4 5 6 7 8 9");
  EXPECT_EQ(formatBufferView(f32({2, 5}, Ten), 7), "2x5xf32=[0 1 2 3 4][5 6...]");
  EXPECT_EQ(formatBufferView(f32({5, 2}, Ten), 3), "5x2xf32=[0 1][2...][...][...][...]");
  EXPECT_EQ(formatBufferView(f32({10}, Ten), 0), "10xf32=...");
  EXPECT_EQ(formatOutput(0, f32({1, 3}, {0.25f, 0.5f, 0.25f})), "result[0]: hal.buffer_view\n1x3xf32=[0.25 0.5 0.25]");
  EXPECT_EQ(formatOutput(2, f32({1, 10}, Ten), 2), "result[2]: hal.buffer_view\n1x10xf32=[0 1...]");
}

TEST(RunModuleFormat, WriteOutputForms) {
  const std::string Dir = tempDir();
  const HostArray A = f32({1, 3}, {1, 2, 3});
  std::ostringstream Out;
  writeOutput("-", 0, A, Out, 1024);
  EXPECT_EQ(Out.str(), "result[0]: hal.buffer_view\n1x3xf32=[1 2 3]\n");
  Out.str("");
  writeOutput("", 0, A, Out, 1024); // skipped
  EXPECT_EQ(Out.str(), "");

  writeOutput("@" + Dir + "/o.npy", 0, A, Out, 1024);
  HostArray B = readNpyFile(Dir + "/o.npy");
  EXPECT_EQ(B.Dims, A.Dims);
  EXPECT_EQ(B.Bytes, A.Bytes);
  writeOutput("+" + Dir + "/o.npy", 1, f32({2}, {4, 5}), Out, 1024);
  std::vector<HostArray> All = readAllNpy(Dir + "/o.npy");
  ASSERT_EQ(All.size(), 2u);
  EXPECT_EQ(values<float>(All[1]), (std::vector<float>{4, 5}));
  writeOutput("@" + Dir + "/o.npy", 0, A, Out, 1024); // @ truncates
  EXPECT_EQ(readAllNpy(Dir + "/o.npy").size(), 1u);

  writeOutput("@" + Dir + "/o.bin", 0, A, Out, 1024);
  EXPECT_EQ(readFile(Dir + "/o.bin"), bytesOf(std::vector<float>{1, 2, 3}));
  writeOutput("+" + Dir + "/o.bin", 0, A, Out, 1024);
  EXPECT_EQ(readFile(Dir + "/o.bin").size(), 24u);

  try {
    writeOutput("out.npy", 0, A, Out, 1024);
    FAIL();
  } catch (const ToolError &E) {
    EXPECT_EQ(std::string(E.what()), "--output 'out.npy': expected '-', '' (skip), '@file' (write) or '+file' (append)");
  }
  EXPECT_THROW(writeOutput("@/nonexistent/dir/o.npy", 0, A, Out, 1024), ToolError);
}

// ---- runtime tensors ---------------------------------------------------------------------------

TEST(RunModuleTensor, ToAndFromRuntimeTensors) {
  rt::Tensor T = parseInputSpec("2x2xf32=[[1,2][3,4]]");
  EXPECT_EQ(T.getType(), ElementType::F32);
  EXPECT_EQ(T.getShape().getDims(), (std::vector<int64_t>{2, 2}));
  const float *P = static_cast<const float *>(T.data());
  EXPECT_EQ(std::vector<float>(P, P + 4), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(formatOutput(1, T), "result[1]: hal.buffer_view\n2x2xf32=[1 2][3 4]");
  HostArray Back = fromTensor(toTensor(one("3xi64=1 -2 8589934592")));
  EXPECT_EQ(values<int64_t>(Back), (std::vector<int64_t>{1, -2, 8589934592LL}));

  const rt::TensorInfo Image = info("image", rt::TensorShape{1, 1, 8, 8});
  EXPECT_EQ(parseInputSpec("1x1x8x8xf32=0.5", &Image).getElementCount(), 64u);
  try {
    parseInputSpec("1x1x8x9xf32=0.5", &Image);
    FAIL();
  } catch (const ToolError &E) {
    EXPECT_EQ(std::string(E.what()), "input 0 'image': expected shape 1x1x8x8xf32, got 1x1x8x9xf32 (dim 3 is 9, expected 8)");
  }
  const std::string Two = tempDir() + "/two.npy";
  writeNpyFile(Two, f32({1}, {1}));
  writeNpyFile(Two, f32({1}, {2}), true);
  EXPECT_THROW(parseInputSpec("*" + Two), ToolError); // two arrays where one tensor is expected
}

// ---- comparison --------------------------------------------------------------------------------

TEST(RunModuleCompare, ToleranceAndMessages) {
  const HostArray E = f32({1, 4}, {0.1f, 2.0f, 1000.0f, -3.0f});
  EXPECT_EQ(compareArrays(E, E), "");
  EXPECT_EQ(compareArrays(E, f32({1, 4}, {0.10005f, 2.0001f, 1000.05f, -3.0f})), ""); // within 1e-4*max(1,|e|)
  EXPECT_EQ(compareArrays(E, f32({1, 4}, {0.1f, 2.0f, 1000.5f, -3.5f})),
            "2 of 4 elements differ; first at [0,2]: got 1000.5, expected 1000 (tolerance 0.0001 * max(1, |expected|))");
  EXPECT_EQ(compareArrays(E, f32({1, 4}, {0.1f, 2.0f, 1000.5f, -3.0f}), 1e-3), "");
  EXPECT_EQ(compareArrays(E, f32({4}, {0.1f, 2.0f, 1000.0f, -3.0f})), "expected 1x4xf32, got 4xf32");
  EXPECT_EQ(compareArrays(E, one("1x4xf64=0.1 2 1000 -3")), "expected 1x4xf32, got 1x4xf64");
  EXPECT_EQ(compareArrays(one("2xf32=nan 1"), one("2xf32=nan 1")), "");
  EXPECT_NE(compareArrays(one("2xf32=nan 1"), one("2xf32=0 1")), "");
  EXPECT_EQ(compareArrays(one("2xi64=8589934592 1"), one("2xi64=8589934593 1")),
            "1 of 2 elements differ; first at [0]: got 8589934593, expected 8589934592");
  EXPECT_EQ(compareArrays(one("2x2xi32=1 2 3 4"), one("2x2xi32=1 2 3 5")),
            "1 of 4 elements differ; first at [1,1]: got 5, expected 4");
}

// ---- flags -------------------------------------------------------------------------------------

TEST(RunModuleFlags, ParsesEveryFlag) {
  RunModuleOptions O = flags({"--module=m.onnx", "--function=main", "--device=local-task", "--hw_type=x",
                              "--device_allocator=cpu", "--input=2xf32=1 2", "--input=@a.npy", "--output=-",
                              "--output=", "--expected_output=@e.npy", "--output_max_element_count=7",
                              "--threads=3", "--print_statistics", "--dump_devices=false",
                              "--expected_tolerance=0.01"});
  EXPECT_EQ(O.Module, "m.onnx");
  EXPECT_EQ(O.Device, "local-task");
  EXPECT_TRUE(O.DeviceGiven);
  EXPECT_EQ(O.HwType, "x");
  EXPECT_EQ(O.DeviceAllocator, "cpu");
  EXPECT_EQ(O.Inputs, (std::vector<std::string>{"2xf32=1 2", "@a.npy"}));
  EXPECT_EQ(O.Outputs, (std::vector<std::string>{"-", ""}));
  EXPECT_EQ(O.ExpectedOutputs, std::vector<std::string>{"@e.npy"});
  EXPECT_EQ(O.OutputMaxElementCount, 7u);
  EXPECT_EQ(O.Threads, 3);
  EXPECT_TRUE(O.PrintStatistics);
  EXPECT_FALSE(O.DumpDevices);
  EXPECT_DOUBLE_EQ(O.ExpectedTolerance, 0.01);
  EXPECT_FALSE(O.NoArguments);

  RunModuleOptions D = flags({"--module=m"});
  EXPECT_EQ(D.Function, "main");
  EXPECT_EQ(D.Device, "native");
  EXPECT_FALSE(D.DeviceGiven);
  EXPECT_EQ(D.OutputMaxElementCount, 1024u);
  EXPECT_TRUE(flags({}).NoArguments);
  EXPECT_TRUE(flags({"--help"}).Help);
  EXPECT_NE(usage().find("--expected_output"), std::string::npos);
}

TEST(RunModuleFlags, Errors) {
  EXPECT_EQ(flagError({"--modul=x"}), "unknown flag '--modul' (see --help)");
  EXPECT_EQ(flagError({"--module"}), "--module needs a value (--module=...)");
  EXPECT_EQ(flagError({"model.onnx"}), "unexpected argument 'model.onnx' (flags are --name=value; see --help)");
  EXPECT_EQ(flagError({"--device_allocator=gpu"}), "--device_allocator=gpu: expected auto, cpu or dmabuf");
  EXPECT_EQ(flagError({"--threads=-2"}), "--threads=-2: expected an integer >= 0");
  EXPECT_EQ(flagError({"--output_max_element_count=lots"}), "--output_max_element_count=lots: expected an integer >= 0");
  EXPECT_EQ(flagError({"--print_statistics=maybe"}), "--print_statistics=maybe: expected true or false");
  EXPECT_EQ(flagError({"--flagfile=/nonexistent/flags.txt"}), "--flagfile: cannot open '/nonexistent/flags.txt'");
}

TEST(RunModuleFlags, Flagfile) {
  const std::string Dir = tempDir();
  writeFile(Dir + "/inner.txt", "# inner\n--input=2x2xf32=[[1, 2] [3, 4]]\n--threads=2\n");
  writeFile(Dir + "/outer.txt", "# a comment\n\n  --module=model.onnx  \n--flagfile=" + Dir +
                                    "/inner.txt\n--output=@out.npy\n");
  RunModuleOptions O = flags({"--flagfile=" + Dir + "/outer.txt", "--threads=4"});
  EXPECT_EQ(O.Module, "model.onnx");
  EXPECT_EQ(O.Inputs, std::vector<std::string>{"2x2xf32=[[1, 2] [3, 4]]"});
  EXPECT_EQ(O.Outputs, std::vector<std::string>{"@out.npy"});
  EXPECT_EQ(O.Threads, 4); // later flags win
  writeFile(Dir + "/loop.txt", "--flagfile=" + Dir + "/loop.txt\n");
  EXPECT_NE(flagError({"--flagfile=" + Dir + "/loop.txt"}).find("nesting deeper than 16"), std::string::npos);
  writeFile(Dir + "/bad.txt", "--module=x\n--nope=1\n");
  EXPECT_EQ(flagError({"--flagfile=" + Dir + "/bad.txt"}), "unknown flag '--nope' (see --help)");
}

// ---- end to end: the real binary ---------------------------------------------------------------

namespace {

RunResult runTool(const std::vector<std::string> &Args) {
  return runProcess(OPTIMIUM_RUN_BINARY, Args, tempDir() + "/stderr.txt");
}

size_t lineCount(const std::string &S) {
  size_t N = 0;
  for (char C : S)
    N += C == '\n';
  return N + (!S.empty() && S.back() != '\n');
}

const std::string Digits = dataPath("models/digits");

} // namespace

TEST(RunModuleEndToEnd, NoArgumentsRunsTheBundledModel) {
  RunResult R = runTool({});
  ASSERT_EQ(R.Code, 0) << R.Out << R.Err;
  const size_t At = R.Out.find("accuracy ");
  ASSERT_NE(At, std::string::npos) << R.Out;
  const double Accuracy = std::atof(R.Out.c_str() + At + 9);
  EXPECT_GE(Accuracy, 95.0) << R.Out;
  EXPECT_NE(R.Out.find("360 held-out digits"), std::string::npos) << R.Out;
  EXPECT_NE(R.Out.find("latency median "), std::string::npos) << R.Out;
  EXPECT_NE(R.Out.find(" mean "), std::string::npos) << R.Out;
}

TEST(RunModuleEndToEnd, SampleMatchesExpectedOutput) {
  RunResult R = runTool({"--module=" + Digits, "--input=@" + Digits + "/sample_input.npy",
                         "--expected_output=@" + Digits + "/sample_output.npy"});
  EXPECT_EQ(R.Code, 0) << R.Out << R.Err;
  EXPECT_NE(R.Out.find("[SUCCESS]"), std::string::npos) << R.Out;
  EXPECT_NE(R.Out.find("optimium-run: inference took "), std::string::npos) << R.Out;
  // Raw bytes with shape/type, and raw bytes shaped by the model input.
  R = runTool({"--module=" + Digits + "/model.onnx", "--input=1x1x8x8xf32=@" + Digits + "/sample_input.bin",
               "--expected_output=@" + Digits + "/sample_output.npy"});
  EXPECT_EQ(R.Code, 0) << R.Out << R.Err;
  R = runTool({"--module=" + Digits, "--input=@" + Digits + "/sample_input.bin",
               "--expected_output=@" + Digits + "/sample_output.npy", "--device=local-task", "--threads=1"});
  EXPECT_EQ(R.Code, 0) << R.Out << R.Err;
}

TEST(RunModuleEndToEnd, PrintsResultsLikeIree) {
  RunResult R = runTool({"--module=" + Digits, "--input=@" + Digits + "/sample_input.npy"});
  ASSERT_EQ(R.Code, 0) << R.Out << R.Err;
  EXPECT_EQ(R.Out.rfind("result[0]: hal.buffer_view\n1x10xf32=[", 0), 0u) << R.Out;
  R = runTool({"--module=" + Digits, "--input=@" + Digits + "/sample_input.npy", "--output_max_element_count=3"});
  EXPECT_NE(R.Out.find("...]\n"), std::string::npos) << R.Out;
}

TEST(RunModuleEndToEnd, WrongExpectedOutputFails) {
  RunResult R = runTool({"--module=" + Digits, "--input=@" + Digits + "/sample_input.npy",
                         "--expected_output=1x10xf32=0.1"});
  EXPECT_NE(R.Code, 0) << R.Out << R.Err;
  EXPECT_NE(R.Out.find("[FAILED] result[0] 'probabilities': "), std::string::npos) << R.Out;
  R = runTool({"--module=" + Digits, "--input=@" + Digits + "/sample_input.npy", "--expected_output=1x9xf32=0.1"});
  EXPECT_NE(R.Code, 0);
  EXPECT_NE(R.Out.find("expected 1x9xf32, got 1x10xf32"), std::string::npos) << R.Out;
}

TEST(RunModuleEndToEnd, MalformedInputIsOneLine) {
  RunResult R = runTool({"--module=" + Digits, "--input=1x1x8x8xf32=1 2 3"});
  EXPECT_EQ(R.Code, 1);
  EXPECT_EQ(R.Out, "");
  EXPECT_EQ(R.Err, "optimium-run: error: --input '1x1x8x8xf32=1 2 3': 3 values for 64 elements\n");
}

TEST(RunModuleEndToEnd, WrongShapeNamesExpectedAndActual) {
  RunResult R = runTool({"--module=" + Digits, "--input=1x1x8x9xf32=0"});
  EXPECT_EQ(R.Code, 1);
  EXPECT_EQ(lineCount(R.Err), 1u) << R.Err;
  EXPECT_NE(R.Err.find("input 0 'image': expected shape 1x1x8x8xf32, got 1x1x8x9xf32"), std::string::npos) << R.Err;
  R = runTool({"--module=" + Digits, "--input=1x1x8x8xi32=0"});
  EXPECT_EQ(R.Code, 1);
  EXPECT_NE(R.Err.find("expected element type f32"), std::string::npos) << R.Err;
  R = runTool({"--module=" + Digits});
  EXPECT_EQ(R.Code, 1);
  EXPECT_NE(R.Err.find("the model takes 1 input (image: 1x1x8x8xf32) but 0 were given"), std::string::npos) << R.Err;
}

TEST(RunModuleEndToEnd, DumpDevices) {
  RunResult R = runTool({"--dump_devices"});
  EXPECT_EQ(R.Code, 0) << R.Err;
  EXPECT_NE(R.Out.find("host 0: "), std::string::npos) << R.Out;
  EXPECT_NE(R.Out.find("--device=native"), std::string::npos) << R.Out;
  EXPECT_NE(R.Out.find("capability: "), std::string::npos) << R.Out;
}

#ifdef OPTIMIUM_HAVE_XNNPACK
// liboptimium-runtime-xnnpack.so sits beside the runtime library: initialize() auto-loads it, and
// --device=xnnpack runs the digits model on it (the native CPU takes the ops XNNPACK lacks).
TEST(RunModuleEndToEnd, XnnpackDeviceIsListedAndRuns) {
  RunResult R = runTool({"--dump_devices"});
  EXPECT_EQ(R.Code, 0) << R.Err;
  EXPECT_NE(R.Out.find("--device=xnnpack  XNNPack:"), std::string::npos) << R.Out;
  R = runTool({"--module=" + Digits, "--device=xnnpack", "--input=@" + Digits + "/sample_input.npy",
               "--expected_output=@" + Digits + "/sample_output.npy"});
  EXPECT_EQ(R.Code, 0) << R.Out << R.Err;
  EXPECT_NE(R.Out.find("[SUCCESS]"), std::string::npos) << R.Out;
}
#endif

TEST(RunModuleEndToEnd, HwTypeSimRunsOnTheSimulatedNpu) {
  // The simulator is found through OPTIMIUM_RT_EXTENSION_PATH (the build keeps it out of the
  // runtime's folder); its counter file goes where the test says.
  const std::string Sim = OPTIMIUM_SIM_BACKEND;
  const std::string Counter = tempDir() + "/sim_inference_time";
  std::remove(Counter.c_str());
  ::setenv("OPTIMIUM_RT_EXTENSION_PATH", Sim.substr(0, Sim.find_last_of('/')).c_str(), 1);
  ::setenv("OPTIMIUM_RT_SIM_COUNTER_PATH", Counter.c_str(), 1);
  RunResult R = runTool({"--module=" + Digits, "--input=@" + Digits + "/sample_input.npy",
                         "--expected_output=@" + Digits + "/sample_output.npy", "--hw_type=sim"});
  EXPECT_EQ(R.Code, 0) << R.Out << R.Err;
  EXPECT_NE(R.Out.find("[SUCCESS]"), std::string::npos) << R.Out;
  EXPECT_GT(std::stoull(readFile(Counter)), 0u) << "the sim's counter did not grow";
  R = runTool({"--dump_devices"});
  EXPECT_NE(R.Out.find("--device=npu  Synaptics:SynapNPU:0@0"), std::string::npos) << R.Out;
  EXPECT_NE(R.Out.find("hw_type=sim  memory=268435456-byte arena  inference_time_path=" + Counter), std::string::npos)
      << R.Out;
  R = runTool({"--module=" + Digits, "--input=@" + Digits + "/sample_input.npy", "--hw_type=tpu"});
  EXPECT_EQ(R.Code, 1);
  EXPECT_NE(R.Err.find("--hw_type=tpu: unknown hardware type of device npu; known: sim (the simulated NPU, "
                       "liboptimium-runtime-sim.so), astra_machina ("),
            std::string::npos)
      << R.Err;
  R = runTool({"--module=" + Digits, "--input=@" + Digits + "/sample_input.npy", "--device=native", "--hw_type=sim"});
  EXPECT_EQ(R.Code, 1);
  EXPECT_NE(R.Err.find("device 'native' has no selectable hardware backends"), std::string::npos) << R.Err;
  ::unsetenv("OPTIMIUM_RT_EXTENSION_PATH");
  R = runTool({"--module=" + Digits, "--input=@" + Digits + "/sample_input.npy", "--hw_type=sim"});
  EXPECT_EQ(R.Code, 1);
  EXPECT_NE(R.Err.find("--hw_type=sim: no npu backend of that type is loaded"), std::string::npos) << R.Err;
  ::unsetenv("OPTIMIUM_RT_SIM_COUNTER_PATH");
}

TEST(RunModuleEndToEnd, DeviceAllocators) {
  const std::vector<std::string> Run = {"--module=" + Digits, "--input=@" + Digits + "/sample_input.npy",
                                        "--expected_output=@" + Digits + "/sample_output.npy", "--print_statistics"};
  auto With = [&](const std::string &Flag) {
    std::vector<std::string> Args = Run;
    Args.push_back("--device_allocator=" + Flag);
    return runTool(Args);
  };
  const bool HasHeap = ::access("/dev/dma_heap/system", F_OK) == 0;
  RunResult R = With("cpu");
  EXPECT_EQ(R.Code, 0) << R.Err;
  EXPECT_NE(R.Out.find("input buffers from cpu\n"), std::string::npos) << R.Out;
  // auto: the heap where it allocates, else host memory; the result is the same.
  R = With("auto");
  EXPECT_EQ(R.Code, 0) << R.Err;
  EXPECT_NE(R.Out.find("[SUCCESS]"), std::string::npos) << R.Out;
  if (!HasHeap) {
    EXPECT_NE(R.Out.find("input buffers from cpu\n"), std::string::npos) << R.Out;
  }
  R = With("dmabuf");
  if (HasHeap) {
    // Where the heap exists but this user may not allocate from it, the error says so.
    EXPECT_TRUE(R.Code == 0 || R.Err.find("--device_allocator=dmabuf: ") != std::string::npos) << R.Err;
  } else {
    EXPECT_EQ(R.Code, 1);
    EXPECT_EQ(R.Err, "optimium-run: error: --device_allocator=dmabuf: /dev/dma_heap/system does not exist (this kernel "
                     "offers no DMA-BUF system heap, CONFIG_DMABUF_HEAPS_SYSTEM); use --device_allocator=auto or cpu\n");
  }
}

TEST(RunModuleEndToEnd, OutputNpyRoundTrip) {
  const std::string Dir = tempDir();
  RunResult R = runTool({"--module=" + Digits, "--input=@" + Digits + "/sample_input.npy", "--output=@" + Dir + "/x.npy"});
  ASSERT_EQ(R.Code, 0) << R.Out << R.Err;
  EXPECT_EQ(R.Out.find("result[0]"), std::string::npos); // written, not printed
  HostArray Got = readNpyFile(Dir + "/x.npy");
  HostArray Want = readNpyFile(Digits + "/sample_output.npy");
  EXPECT_EQ(compareArrays(Want, Got), "");
  R = runTool({"--module=" + Digits, "--input=@" + Digits + "/sample_input.npy", "--expected_output=@" + Dir + "/x.npy"});
  EXPECT_EQ(R.Code, 0) << R.Out << R.Err;
  // +file appends; @file.bin writes raw bytes.
  runTool({"--module=" + Digits, "--input=@" + Digits + "/sample_input.npy", "--output=+" + Dir + "/x.npy"});
  EXPECT_EQ(readAllNpy(Dir + "/x.npy").size(), 2u);
  R = runTool({"--module=" + Digits, "--input=@" + Digits + "/sample_input.npy", "--output=@" + Dir + "/x.bin"});
  EXPECT_EQ(R.Code, 0) << R.Err;
  EXPECT_EQ(readFile(Dir + "/x.bin").size(), 40u);
  // One --output per output.
  R = runTool({"--module=" + Digits, "--input=@" + Digits + "/sample_input.npy", "--output=-", "--output=-"});
  EXPECT_EQ(R.Code, 1);
  EXPECT_NE(R.Err.find("2 --output flags given but the model has 1 outputs"), std::string::npos) << R.Err;
}

TEST(RunModuleEndToEnd, TestModels) {
  const std::string M = dataPath("tests/models/");
  for (const char *Name : {"mlp", "cnn", "external_data", "dynamic_batch", "int64_input"}) {
    RunResult R = runTool({"--module=" + M + Name, "--input=@" + M + Name + "/input_0.npy",
                           "--expected_output=@" + M + Name + "/output_0.npy"});
    EXPECT_EQ(R.Code, 0) << Name << "\n" << R.Out << R.Err;
  }
  // Two inputs from two files, and from one concatenated file with *.
  const std::string Two = M + "two_inputs";
  RunResult R = runTool({"--module=" + Two, "--input=@" + Two + "/input_0.npy", "--input=@" + Two + "/input_1.npy",
                         "--expected_output=@" + Two + "/output_0.npy"});
  EXPECT_EQ(R.Code, 0) << R.Out << R.Err;
  const std::string Cat = tempDir() + "/both.npy";
  writeFile(Cat, readFile(Two + "/input_0.npy") + readFile(Two + "/input_1.npy"));
  R = runTool({"--module=" + Two, "--input=*" + Cat, "--expected_output=@" + Two + "/output_0.npy"});
  EXPECT_EQ(R.Code, 0) << R.Out << R.Err;
  R = runTool({"--module=" + Two, "--input=@" + Cat, "--input=+" + Cat, "--expected_output=@" + Two + "/output_0.npy"});
  EXPECT_EQ(R.Code, 0) << R.Out << R.Err;
  R = runTool({"--module=" + Two, "--input=2x3xf32=1", "--input=2x3xf32=[[1 2 3][4 5 6]]"});
  EXPECT_EQ(R.Code, 0) << R.Err;
  EXPECT_NE(R.Out.find("2x3xf32=[2 3 4][5 6 7]"), std::string::npos) << R.Out;
}

TEST(RunModuleEndToEnd, RuntimeErrorsAreOneLine) {
  const std::string M = dataPath("tests/models/");
  RunResult R = runTool({"--module=" + M + "unsupported_op", "--input=2x4xf32=0"});
  EXPECT_EQ(R.Code, 1);
  EXPECT_EQ(lineCount(R.Err), 1u) << R.Err;
  EXPECT_EQ(R.Err.rfind("optimium-run: error: ", 0), 0u) << R.Err;
  R = runTool({"--module=" + M + "no_such_model"});
  EXPECT_EQ(R.Code, 1);
  EXPECT_EQ(lineCount(R.Err), 1u) << R.Err;
  R = runTool({"--module=" + Digits, "--function=predict"});
  EXPECT_EQ(R.Code, 1);
  EXPECT_NE(R.Err.find("available functions: main"), std::string::npos) << R.Err;
  R = runTool({"--module=" + Digits, "--device=vulkan"});
  EXPECT_EQ(R.Code, 1);
  EXPECT_NE(R.Err.find("available devices: "), std::string::npos) << R.Err;
  R = runTool({"--module=" + Digits, "--device=tpu9000"});
  EXPECT_EQ(R.Code, 1);
  EXPECT_NE(R.Err.find("unknown device; available devices: "), std::string::npos) << R.Err;
  R = runTool({"--bogus_flag=1"});
  EXPECT_EQ(R.Code, 1);
  EXPECT_EQ(R.Err, "optimium-run: error: unknown flag '--bogus_flag' (see --help)\n");
}

TEST(RunModuleEndToEnd, FlagfileAndHelp) {
  const std::string Dir = tempDir();
  writeFile(Dir + "/flags.txt", "# digits sample\n--module=" + Digits + "\n--input=@" + Digits +
                                    "/sample_input.npy\n--expected_output=@" + Digits + "/sample_output.npy\n");
  RunResult R = runTool({"--flagfile=" + Dir + "/flags.txt", "--print_statistics"});
  EXPECT_EQ(R.Code, 0) << R.Out << R.Err;
  EXPECT_NE(R.Out.find("model load took"), std::string::npos) << R.Out;
  R = runTool({"--help"});
  EXPECT_EQ(R.Code, 0);
  EXPECT_NE(R.Out.find("Usage: optimium-run"), std::string::npos);
}

// optimium-run (runModuleMain) ends with _exit once its results are out (RunModuleOptions::
// ExitWithoutTeardown): everything it prints or writes must still arrive, with the same exit code.
TEST(RunModuleEndToEnd, ExitWithoutTeardownKeepsEveryOutputAndTheExitCode) {
  const std::string Dir = tempDir();
  RunResult R = runTool({"--module=" + Digits, "--input=@" + Digits + "/sample_input.npy", "--output=@" + Dir + "/y.npy",
                         "--print_statistics"});
  ASSERT_EQ(R.Code, 0) << R.Out << R.Err;
  // The last line printed (after the results and the timings) came through the pipe.
  EXPECT_NE(R.Out.find("optimium-run: peak resident memory "), std::string::npos) << R.Out;
  EXPECT_EQ(R.Out.back(), '\n');
  EXPECT_EQ(compareArrays(readNpyFile(Digits + "/sample_output.npy"), readNpyFile(Dir + "/y.npy")), "");
  // A mismatch still exits 1 with its report printed.
  R = runTool({"--module=" + Digits, "--input=@" + Digits + "/sample_input.npy", "--expected_output=1x10xf32=0.1"});
  EXPECT_EQ(R.Code, 1) << R.Out << R.Err;
  EXPECT_NE(R.Out.find("[FAILED] 1 of 1 outputs did not match their expectations"), std::string::npos) << R.Out;
}

// The library function itself returns (and tears down) unless asked not to; asked, it exits.
TEST(RunModuleInProcess, ReturnsUnlessAskedToExitWithoutTeardown) {
  RunModuleOptions O;
  O.Module = Digits;
  O.Inputs = {"@" + Digits + "/sample_input.npy"};
  O.ExpectedOutputs = {"@" + Digits + "/sample_output.npy"};
  for (int Run = 0; Run < 2; ++Run) {
    std::ostringstream Out, Err;
    EXPECT_EQ(runModule(O, Out, Err), 0) << Out.str() << Err.str();
    EXPECT_NE(Out.str().find("[SUCCESS]"), std::string::npos) << Out.str();
  }
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  O.ExitWithoutTeardown = true;
  EXPECT_EXIT(runModule(O, std::cout, std::cerr), ::testing::ExitedWithCode(0), "");
  O.ExpectedOutputs = {"1x10xf32=0.1"};
  EXPECT_EXIT(runModule(O, std::cout, std::cerr), ::testing::ExitedWithCode(1), "");
}
