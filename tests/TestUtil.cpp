// Test helpers: source-tree paths and a small .npy reader (C order, little-endian).
#include "TestUtil.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <gtest/gtest.h>

namespace rt = optimium::runtime;

namespace optimium_test {

std::string dataPath(const std::string &Relative) { return std::string(OPTIMIUM_TEST_DATA_DIR) + "/" + Relative; }

rt::Tensor readNpy(const std::string &Path) {
  std::ifstream F(Path, std::ios::binary);
  if (!F)
    throw std::runtime_error("cannot open " + Path);
  char Magic[6];
  F.read(Magic, 6);
  if (std::memcmp(Magic, "\x93NUMPY", 6) != 0)
    throw std::runtime_error(Path + " is not a .npy file");
  unsigned char Ver[2];
  F.read(reinterpret_cast<char *>(Ver), 2);
  uint32_t HeaderLen = 0;
  if (Ver[0] == 1) {
    unsigned char L[2];
    F.read(reinterpret_cast<char *>(L), 2);
    HeaderLen = L[0] | (L[1] << 8);
  } else {
    unsigned char L[4];
    F.read(reinterpret_cast<char *>(L), 4);
    HeaderLen = L[0] | (L[1] << 8) | (L[2] << 16) | (static_cast<uint32_t>(L[3]) << 24);
  }
  std::string Header(HeaderLen, '\0');
  F.read(&Header[0], HeaderLen);
  auto Field = [&](const std::string &Key) {
    const size_t P = Header.find("'" + Key + "'");
    if (P == std::string::npos)
      throw std::runtime_error(Path + ": header lacks " + Key);
    return Header.substr(Header.find(':', P) + 1);
  };
  std::string Descr = Field("descr");
  Descr = Descr.substr(Descr.find('\'') + 1);
  Descr = Descr.substr(0, Descr.find('\''));
  if (Field("fortran_order").find("True") < Field("fortran_order").find(','))
    throw std::runtime_error(Path + ": fortran order not supported");
  std::string ShapeStr = Field("shape");
  ShapeStr = ShapeStr.substr(ShapeStr.find('(') + 1, ShapeStr.find(')') - ShapeStr.find('(') - 1);
  std::vector<int64_t> Dims;
  std::stringstream SS(ShapeStr);
  std::string Tok;
  while (std::getline(SS, Tok, ','))
    if (Tok.find_first_of("0123456789") != std::string::npos)
      Dims.push_back(std::stoll(Tok));
  rt::ElementType T;
  if (Descr == "<f4") T = rt::ElementType::F32;
  else if (Descr == "<f8") T = rt::ElementType::F64;
  else if (Descr == "<i8") T = rt::ElementType::I64;
  else if (Descr == "<i4") T = rt::ElementType::I32;
  else if (Descr == "|u1") T = rt::ElementType::U8;
  else if (Descr == "|i1") T = rt::ElementType::I8;
  else if (Descr == "|b1") T = rt::ElementType::Bool;
  else if (Descr == "<f2") T = rt::ElementType::F16;
  else if (Descr == "<i2") T = rt::ElementType::I16;
  else if (Descr == "<u2") T = rt::ElementType::U16;
  else if (Descr == "<u4") T = rt::ElementType::U32;
  else if (Descr == "<u8") T = rt::ElementType::U64;
  else throw std::runtime_error(Path + ": unsupported dtype " + Descr);
  std::vector<rt::Expr> Shape(Dims.begin(), Dims.end());
  rt::Tensor Out = rt::tensor(T, rt::TensorShape(Shape));
  F.read(static_cast<char *>(Out.data()), static_cast<std::streamsize>(Out.getTensorSize()));
  if (!F)
    throw std::runtime_error(Path + ": truncated data");
  return Out;
}

double maxAbsDiff(const rt::Tensor &A, const rt::Tensor &B) {
  if (A.getElementCount() != B.getElementCount())
    return INFINITY;
  const float *PA = static_cast<const float *>(A.data());
  const float *PB = static_cast<const float *>(B.data());
  double M = 0;
  for (size_t I = 0; I < A.getElementCount(); ++I)
    M = std::max(M, static_cast<double>(std::fabs(PA[I] - PB[I])));
  return M;
}

rt::Model loadModelBytes(const std::string &Bytes, bool MemOpt, int Threads) {
  rt::ModelLoadOptions O;
  O.EnableMemoryOptimization = MemOpt;
  O.ThreadCount = Threads;
  return rt::loadModel(reinterpret_cast<const uint8_t *>(Bytes.data()), Bytes.size(), O);
}

std::vector<std::string> opTypeList(const rt::Model &M) {
  std::vector<std::string> Types;
  for (const rt::OpInfo &Op : M.getOperations())
    Types.push_back(Op.Type);
  return Types;
}

std::vector<float> wave(size_t N, float Scale, float Phase, float Freq, float Offset) {
  std::vector<float> V(N);
  for (size_t I = 0; I < N; ++I)
    V[I] = Scale * std::sin(static_cast<float>(I) * Freq + Phase) + Offset;
  return V;
}

} // namespace optimium_test

namespace {
// Every unit test runs with the runtime initialized, as an application would.
class RuntimeEnvironment : public ::testing::Environment {
public:
  void SetUp() override { rt::initialize(); }
  void TearDown() override { rt::finalize(); }
};
const ::testing::Environment *const RuntimeEnv = ::testing::AddGlobalTestEnvironment(new RuntimeEnvironment);
} // namespace
