// Big float32 initializers whose only readers are Gather (the data) and MatMul (B) are not copied
// at load when their bytes in the file are unaligned: Gather copies rows straight from the mapped
// file and MatMul packs from it. Results match for every alignment of the data in the file, the
// initializer still reads back by name, and a 16 MiB embedding table adds far less than 16 MiB of
// anonymous memory. Unaligned Conv weights are copied by the loader when their kernel is created,
// reusing dropped copies' blocks; results are the same for every placement in the file.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "Optimium/Runtime.h"
#include "OnnxBuilder.h"

namespace rt = optimium::runtime;
using namespace optimium_test;

namespace {

long statusKiB(const char *Key) {
  std::ifstream F("/proc/self/status");
  std::string Line;
  const std::string K = std::string(Key) + ":";
  while (std::getline(F, Line))
    if (Line.rfind(K, 0) == 0)
      return std::stol(Line.substr(K.size()));
  return -1;
}

float tableAt(int64_t R, int64_t C) { return std::sin(0.001f * static_cast<float>(R) + 0.37f * static_cast<float>(C)); }
float weightAt(int64_t K, int64_t N) { return 0.05f * std::cos(0.11f * static_cast<float>(K) - 0.07f * static_cast<float>(N)); }

constexpr int64_t Dim = 64, Out = 300;

/// ids [1, 5] -> Gather(table [Rows, 64]) -> MatMul(w [64, 300]) -> y [1, 5, 300]. Pad (a uint8
/// initializer of PadBytes bytes, unused) shifts where the float data lands in the file.
std::string model(int64_t Rows, int PadBytes) {
  OnnxBuilder B(17);
  B.input("ids", onnx::TensorProto_DataType_INT64, {1, 5});
  auto *Pad = B.model().mutable_graph()->add_initializer();
  Pad->set_name("pad");
  Pad->set_data_type(onnx::TensorProto_DataType_UINT8);
  Pad->add_dims(PadBytes);
  Pad->set_raw_data(std::string(static_cast<size_t>(PadBytes), '\x07'));
  std::vector<float> T(static_cast<size_t>(Rows * Dim)), W(static_cast<size_t>(Dim * Out));
  for (int64_t R = 0; R < Rows; ++R)
    for (int64_t C = 0; C < Dim; ++C)
      T[static_cast<size_t>(R * Dim + C)] = tableAt(R, C);
  for (int64_t K = 0; K < Dim; ++K)
    for (int64_t N = 0; N < Out; ++N)
      W[static_cast<size_t>(K * Out + N)] = weightAt(K, N);
  B.initializer("table", {Rows, Dim}, T);
  B.initializer("w", {Dim, Out}, W);
  B.node("Gather", {"table", "ids"}, {"emb"}, "embed");
  B.node("MatMul", {"emb", "w"}, {"y"}, "proj");
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  return B.bytes();
}

std::string writeModel(const std::string &Bytes, const std::string &Name) {
  const std::string Path = ::testing::TempDir() + "/" + Name;
  std::ofstream F(Path, std::ios::binary);
  F.write(Bytes.data(), static_cast<std::streamsize>(Bytes.size()));
  return Path;
}

void checkRun(rt::Model &M, int64_t Rows, const std::string &What, bool ReadBack = true) {
  const std::vector<int64_t> Ids = {0, Rows - 1, 7, Rows / 2, 7};
  rt::InferRequest R = M.createRequest();
  rt::TypedTensor<int64_t> X = rt::tensor<int64_t>({1, 5});
  std::copy(Ids.begin(), Ids.end(), static_cast<int64_t *>(X.data()));
  std::vector<rt::Tensor> In{X};
  R.infer(rt::make_array(In));
  R.wait();
  const float *Y = static_cast<const float *>(R.getOutput("y").data());
  for (size_t I = 0; I < Ids.size(); ++I)
    for (int64_t N = 0; N < Out; N += 37) {
      double Want = 0;
      for (int64_t K = 0; K < Dim; ++K)
        Want += static_cast<double>(tableAt(Ids[I], K)) * weightAt(K, N);
      ASSERT_NEAR(Y[I * Out + N], Want, 1e-4) << What << " row " << I << " col " << N;
    }
  if (!ReadBack)
    return;
  // The initializer reads back by name, from the file.
  rt::Tensor T = R.getTensor("table");
  const float *TD = static_cast<const float *>(T.data());
  EXPECT_EQ(TD[7 * Dim + 3], tableAt(7, 3)) << What;
  EXPECT_EQ(TD[(Rows - 1) * Dim + 63], tableAt(Rows - 1, 63)) << What;
}

} // namespace

TEST(InPlaceInitializers, GatherAndMatMulReadUnalignedFileBytes) {
  rt::AutoInit Init;
  for (int Pad = 1; Pad <= 4; ++Pad) {
    const std::string Bytes = model(2048, Pad);
    const std::string Path = writeModel(Bytes, "inplace_" + std::to_string(Pad) + ".onnx");
    rt::Model FromFile = rt::loadModel(Path);
    checkRun(FromFile, 2048, "file, pad " + std::to_string(Pad));
    rt::Model FromMemory = rt::loadModel(reinterpret_cast<const uint8_t *>(Bytes.data()), Bytes.size());
    checkRun(FromMemory, 2048, "memory, pad " + std::to_string(Pad));
  }
}

TEST(InPlaceInitializers, AnEmbeddingTableIsNotCopiedIntoAnonymousMemory) {
  rt::AutoInit Init;
  const int64_t Rows = 65536; // 16 MiB of float32
  // One pad byte leaves the table's bytes unaligned (aligned ones are read in place anyway).
  const std::string Path = writeModel(model(Rows, 1), "inplace_big.onnx");
  const long Before = statusKiB("RssAnon");
  rt::Model M = rt::loadModel(Path);
  checkRun(M, Rows, "big table", /*ReadBack=*/false);
  const long After = statusKiB("RssAnon");
  ASSERT_GT(Before, 0);
  EXPECT_LT(After - Before, 8 * 1024) << "anonymous memory grew by " << (After - Before)
                                      << " KiB for a 16 MiB table that should stay in the file";
}

TEST(InPlaceInitializers, AWeightPackedFromTheFileNeverHasAllItsPagesResident) {
  rt::AutoInit Init;
  // x [1, 2048] -> MatMul(w [2048, 4096]: 32 MiB, unaligned in the file) -> y. The packed copy is
  // 32 MiB; the file's pages leave the resident set block by block while packing, so the peak
  // grows by about one copy (plus a K block of rows), not two.
  const int64_t K = 2048, N = 4096;
  OnnxBuilder B(17);
  B.input("x", onnx::TensorProto_DataType_FLOAT, {1, K});
  auto *Pad = B.model().mutable_graph()->add_initializer();
  Pad->set_name("pad");
  Pad->set_data_type(onnx::TensorProto_DataType_UINT8);
  Pad->add_dims(1);
  Pad->set_raw_data(std::string(1, '\x07'));
  std::vector<float> W(static_cast<size_t>(K * N));
  for (size_t I = 0; I < W.size(); ++I)
    W[I] = static_cast<float>(static_cast<int64_t>(I % 7) - 3) * 0.01f;
  B.initializer("w", {K, N}, W);
  B.node("MatMul", {"x", "w"}, {"y"}, "proj");
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  const std::string Path = writeModel(B.bytes(), "inplace_packed.onnx");
  W.clear();
  W.shrink_to_fit();
  {
    std::ofstream Reset("/proc/self/clear_refs");
    Reset << "5"; // resets VmHWM to the current resident size
    if (!Reset.good())
      GTEST_SKIP() << "cannot reset the peak resident size (/proc/self/clear_refs)";
  }
  const long Before = statusKiB("VmHWM");
  rt::Model M = rt::loadModel(Path);
  const long Peak = statusKiB("VmHWM");
  const long CopyKiB = static_cast<long>(K * N * 4 / 1024);
  EXPECT_LT(Peak - Before, CopyKiB + CopyKiB / 3)
      << "loading a " << CopyKiB << " KiB weight raised the peak by " << (Peak - Before) << " KiB";
  // And it computes: y[j] = sum_k x[k] * w[k, j] with x = 1.
  rt::InferRequest R = M.createRequest();
  rt::TypedTensor<float> X = rt::tensor<float>({1, K});
  X.fill(1.0f);
  std::vector<rt::Tensor> In{X};
  R.infer(rt::make_array(In));
  R.wait();
  const float *Y = static_cast<const float *>(R.getOutput("y").data());
  for (int64_t J = 0; J < N; J += 511) {
    double Want = 0;
    for (int64_t Kk = 0; Kk < K; ++Kk)
      Want += static_cast<double>(static_cast<int64_t>((Kk * N + J) % 7) - 3) * 0.01;
    EXPECT_NEAR(Y[J], Want, 1e-3) << J;
  }
}

TEST(InPlaceInitializers, ConvWeightsCopiedWhenTheirKernelsAreCreated) {
  rt::AutoInit Init;
  // x [1, 256, 4, 4] -> four 3x3 Convs (weights 2.25, 2.25, 4.5 and 1.1 MiB) -> y: weights the
  // loader copies aligned just before packing, reusing one block for the same-size pair and taking
  // a bigger one after. Every placement of the weights in the file (one of them aligned: read in
  // place) gives the same outputs, and a weight still reads back by name from the file.
  const std::vector<std::array<int64_t, 2>> Convs = {{256, 256}, {256, 256}, {512, 256}, {64, 512}};
  const auto weight = [](size_t L, size_t I) { return 0.02f * std::cos(0.37f * static_cast<float>(I) + static_cast<float>(L)); };
  std::vector<float> First;
  for (int PadBytes = 1; PadBytes <= 4; ++PadBytes) {
    OnnxBuilder B(17);
    B.input("x", onnx::TensorProto_DataType_FLOAT, {1, 256, 4, 4});
    auto *Pad = B.model().mutable_graph()->add_initializer();
    Pad->set_name("pad");
    Pad->set_data_type(onnx::TensorProto_DataType_UINT8);
    Pad->add_dims(PadBytes);
    Pad->set_raw_data(std::string(static_cast<size_t>(PadBytes), '\x07'));
    std::string Cur = "x";
    for (size_t L = 0; L < Convs.size(); ++L) {
      const std::string W = "w" + std::to_string(L), Y = L + 1 == Convs.size() ? "y" : "h" + std::to_string(L);
      std::vector<float> V(static_cast<size_t>(Convs[L][0] * Convs[L][1] * 9));
      for (size_t I = 0; I < V.size(); ++I)
        V[I] = weight(L, I);
      B.initializer(W, {Convs[L][0], Convs[L][1], 3, 3}, V);
      OnnxBuilder::attrInts(B.node("Conv", {Cur, W}, {Y}, "conv" + std::to_string(L)), "pads", {1, 1, 1, 1});
      Cur = Y;
    }
    B.output("y", onnx::TensorProto_DataType_FLOAT);
    const std::string Path = writeModel(B.bytes(), "inplace_conv_" + std::to_string(PadBytes) + ".onnx");
    rt::Model M = rt::loadModel(Path);
    rt::InferRequest R = M.createRequest();
    rt::TypedTensor<float> X = rt::tensor<float>({1, 256, 4, 4});
    for (size_t I = 0; I < 256 * 16; ++I)
      static_cast<float *>(X.data())[I] = std::sin(0.1f * static_cast<float>(I));
    std::vector<rt::Tensor> In{X};
    R.infer(rt::make_array(In));
    R.wait();
    rt::Tensor Y = R.getOutput("y");
    const float *P = static_cast<const float *>(Y.data());
    const std::vector<float> Out(P, P + 64 * 16);
    if (First.empty())
      First = Out;
    for (size_t I = 0; I < Out.size(); ++I)
      ASSERT_NEAR(Out[I], First[I], 1e-5 * (1.0 + std::fabs(First[I]))) << "pad " << PadBytes << " element " << I;
    rt::Tensor W2 = R.getTensor("w2");
    const float *WD = static_cast<const float *>(W2.data());
    EXPECT_EQ(WD[12345], weight(2, 12345)) << "pad " << PadBytes;
    EXPECT_EQ(WD[512 * 256 * 9 - 1], weight(2, 512 * 256 * 9 - 1)) << "pad " << PadBytes;
  }
  double Norm = 0;
  for (float V : First)
    Norm += std::fabs(V);
  EXPECT_GT(Norm, 0.0);
}
