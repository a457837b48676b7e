// Attention fusion (passes/FuseAttention): multi-head attention exported op by op (BERT's
// Reshape / Transpose / MatMul / Div / Add / Softmax chain) runs as one Attention node with the
// outputs of the unfused graph (EnableMemoryOptimization off runs every node), over random shapes
// including odd sizes, cross-attention, masks of every broadcast, and rows whose keys are all
// masked; and the chain stays unfused wherever Attention would compute something else.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <random>
#include <string>

#include "Optimium/Runtime.h"
#include "OnnxBuilder.h"
#include "TestUtil.h"

namespace rt = optimium::runtime;
using namespace optimium_test;

namespace {

enum class ScaleKind { Div, Mul, MulLeft, None };
enum class MaskKind { None, KeyPadding, PerQuery, Full, Batch2, KeysBroadcast };

struct Spec {
  int64_t B = 2, S = 7, T = 7, H = 3, D = 5, Dv = 5;
  bool Cross = false; ///< k and v from a second input m [B, T, E] (T may differ from S)
  ScaleKind Scale = ScaleKind::Div;
  float ScaleValue = 2.2360679f;
  MaskKind Mask = MaskKind::KeyPadding;
  bool MaskFirst = false; ///< Add(mask, scores)
  bool TwoStepK = false;  ///< K as Transpose [0, 2, 1, 3] then [0, 1, 3, 2]
  // Variants the pass must leave alone:
  bool ScoresAreOutput = false;
  int64_t SoftmaxAxis = -1;
  bool MaskBeforeScale = false;
  bool NoOutputTranspose = false;
  int Opset = 17;
};

std::vector<float> randomValues(size_t N, std::mt19937 &G, float Scale) {
  std::uniform_real_distribution<float> U(-Scale, Scale);
  std::vector<float> V(N);
  for (float &X : V)
    X = U(G);
  return V;
}

std::vector<int64_t> maskDims(const Spec &P) {
  switch (P.Mask) {
  case MaskKind::KeyPadding: return {P.B, 1, 1, P.T};
  case MaskKind::PerQuery: return {P.S, P.T};
  case MaskKind::Full: return {P.B, P.H, P.S, P.T};
  case MaskKind::Batch2: return {2, 1, 1, P.T}; // broadcasts batch-1 scores to batch 2
  case MaskKind::KeysBroadcast: return {P.B, 1, 1, 1};
  default: return {};
  }
}

std::string attentionModel(const Spec &P, std::mt19937 &G) {
  OnnxBuilder M(P.Opset);
  const int64_t E = P.H * P.D, Ev = P.H * P.Dv;
  const auto F = onnx::TensorProto_DataType_FLOAT;
  M.input("x", F, {P.B, P.S, E});
  if (P.Cross)
    M.input("m", F, {P.B, P.T, E});
  const std::string Src = P.Cross ? "m" : "x";
  M.initializer("wq", {E, E}, randomValues(static_cast<size_t>(E * E), G, 0.5f));
  M.initializer("bq", {E}, randomValues(static_cast<size_t>(E), G, 0.2f));
  M.initializer("wk", {E, E}, randomValues(static_cast<size_t>(E * E), G, 0.5f));
  M.initializer("wv", {E, Ev}, randomValues(static_cast<size_t>(E * Ev), G, 0.5f));
  M.initializer("bv", {Ev}, randomValues(static_cast<size_t>(Ev), G, 0.2f));
  M.initializerI64("shape_q", {4}, {P.B, P.S, P.H, P.D});
  M.initializerI64("shape_k", {4}, {P.B, P.T, P.H, P.D});
  M.initializerI64("shape_v", {4}, {P.B, P.T, P.H, P.Dv});
  M.node("MatMul", {"x", "wq"}, {"q0"});
  M.node("Add", {"bq", "q0"}, {"q"}); // bias first, as torch exports it
  M.node("MatMul", {Src, "wk"}, {"k"});
  M.node("MatMul", {Src, "wv"}, {"v0"});
  M.node("Add", {"v0", "bv"}, {"v"});
  M.node("Reshape", {"q", "shape_q"}, {"q4"});
  OnnxBuilder::attrInts(M.node("Transpose", {"q4"}, {"qh"}), "perm", {0, 2, 1, 3});
  M.node("Reshape", {"k", "shape_k"}, {"k4"});
  if (P.TwoStepK) {
    OnnxBuilder::attrInts(M.node("Transpose", {"k4"}, {"kh"}), "perm", {0, 2, 1, 3});
    OnnxBuilder::attrInts(M.node("Transpose", {"kh"}, {"kt"}), "perm", {0, 1, 3, 2});
  } else {
    OnnxBuilder::attrInts(M.node("Transpose", {"k4"}, {"kt"}), "perm", {0, 2, 3, 1});
  }
  M.node("Reshape", {"v", "shape_v"}, {"v4"});
  OnnxBuilder::attrInts(M.node("Transpose", {"v4"}, {"vh"}), "perm", {0, 2, 1, 3});
  M.node("MatMul", {"qh", "kt"}, {"scores"});
  std::string Cur = "scores";
  const auto scale = [&]() {
    if (P.Scale == ScaleKind::None)
      return;
    M.initializer("c", {}, {P.ScaleValue});
    if (P.Scale == ScaleKind::Div)
      M.node("Div", {Cur, "c"}, {"scaled"});
    else if (P.Scale == ScaleKind::Mul)
      M.node("Mul", {Cur, "c"}, {"scaled"});
    else
      M.node("Mul", {"c", Cur}, {"scaled"});
    Cur = "scaled";
  };
  const auto mask = [&]() {
    if (P.Mask == MaskKind::None)
      return;
    M.input("mask", F, maskDims(P));
    M.node("Add", P.MaskFirst ? std::vector<std::string>{"mask", Cur} : std::vector<std::string>{Cur, "mask"},
           {"masked"});
    Cur = "masked";
  };
  if (P.MaskBeforeScale) {
    mask();
    scale();
  } else {
    scale();
    mask();
  }
  auto *Sm = M.node("Softmax", {Cur}, {"probs"});
  if (P.SoftmaxAxis != -1 || P.Opset < 13)
    OnnxBuilder::attrInt(Sm, "axis", P.SoftmaxAxis == -1 ? 3 : P.SoftmaxAxis);
  M.node("MatMul", {"probs", "vh"}, {"o"});
  const int64_t OutB = P.Mask == MaskKind::Batch2 ? 2 : P.B;
  M.initializerI64("shape_y", {3}, {OutB, P.S, Ev});
  if (P.NoOutputTranspose) {
    M.node("Reshape", {"o", "shape_y"}, {"y"});
  } else {
    OnnxBuilder::attrInts(M.node("Transpose", {"o"}, {"ot"}), "perm", {0, 2, 1, 3});
    M.node("Reshape", {"ot", "shape_y"}, {"y"});
  }
  M.output("y", F);
  if (P.ScoresAreOutput)
    M.output(Cur, F);
  return M.bytes();
}

struct Run {
  std::vector<std::string> Types;
  std::vector<float> Y;
};

Run runModel(const std::string &Bytes, bool MemOpt, const std::vector<std::pair<std::string, std::vector<float>>> &In,
             int Threads) {
  rt::Model M = loadModelBytes(Bytes, MemOpt, Threads);
  Run Out;
  Out.Types = opTypeList(M);
  rt::InferRequest R = M.createRequest();
  std::vector<rt::Tensor> Inputs;
  for (rt::StringRef Name : M.getInputNames()) {
    const rt::TensorInfo &Info = M.getTensorInfo(Name);
    rt::Tensor T = rt::tensor(Info.Type, Info.Shape);
    for (const auto &KV : In)
      if (KV.first == std::string(Name))
        std::copy(KV.second.begin(), KV.second.end(), static_cast<float *>(T.data()));
    Inputs.push_back(T);
  }
  R.infer(rt::make_array(Inputs));
  R.wait();
  rt::Tensor Y = R.getOutput("y");
  const float *P = static_cast<const float *>(Y.data());
  Out.Y.assign(P, P + Y.getShape().getElementCount().value());
  return Out;
}

size_t countOf(const std::vector<std::string> &Types, const std::string &T) {
  return static_cast<size_t>(std::count(Types.begin(), Types.end(), T));
}

/// Runs P fused and unfused on the same random inputs (mask: 0, -10000 and -inf entries; with
/// AllMasked, every key of batch 0 is -inf) and compares; returns the fused run's op types.
std::vector<std::string> check(const Spec &P, uint32_t Seed, bool AllMasked = false, int Threads = 2,
                               float MaskedValue = -INFINITY) {
  std::mt19937 G(Seed);
  const std::string Bytes = attentionModel(P, G);
  const int64_t E = P.H * P.D;
  std::vector<std::pair<std::string, std::vector<float>>> In;
  In.push_back({"x", randomValues(static_cast<size_t>(P.B * P.S * E), G, 1.0f)});
  if (P.Cross)
    In.push_back({"m", randomValues(static_cast<size_t>(P.B * P.T * E), G, 1.0f)});
  if (P.Mask != MaskKind::None) {
    size_t N = 1;
    for (int64_t D : maskDims(P))
      N *= static_cast<size_t>(D);
    std::vector<float> Mask(N);
    std::uniform_int_distribution<int> Pick(0, 6);
    for (float &V : Mask) {
      const int K = Pick(G);
      V = K == 0 ? -10000.0f : K == 1 ? -INFINITY : K == 2 ? 0.5f : K == 3 ? -FLT_MAX : 0.0f;
    }
    // At least one open key per row (unless AllMasked), so rows are finite in both graphs.
    for (size_t I = 0; I < N; I += static_cast<size_t>(maskDims(P).back()))
      Mask[I] = 0.0f;
    if (AllMasked)
      for (size_t I = 0; I < N / static_cast<size_t>(maskDims(P)[0]); ++I)
        Mask[I] = MaskedValue;
    In.push_back({"mask", Mask});
  }
  const Run Fused = runModel(Bytes, true, In, Threads), Plain = runModel(Bytes, false, In, Threads);
  EXPECT_EQ(countOf(Plain.Types, "Attention"), 0u);
  EXPECT_EQ(Fused.Y.size(), Plain.Y.size());
  size_t NaNs = 0;
  for (size_t I = 0; I < std::min(Fused.Y.size(), Plain.Y.size()); ++I) {
    if (std::isnan(Plain.Y[I])) {
      ++NaNs;
      EXPECT_TRUE(std::isnan(Fused.Y[I])) << I;
      continue;
    }
    EXPECT_NEAR(Fused.Y[I], Plain.Y[I], 2e-5 * (1.0 + std::fabs(Plain.Y[I]))) << I;
  }
  EXPECT_EQ(NaNs > 0, AllMasked && std::isinf(MaskedValue));
  return Fused.Types;
}

} // namespace

TEST(FuseAttention, BertStyleAttentionBecomesOneNode) {
  rt::AutoInit Init;
  Spec P;
  const auto Types = check(P, 1);
  EXPECT_EQ(countOf(Types, "Attention"), 1u);
  // The projections (Q and V, both with biases, merged into one MatMul; K without one) and the
  // Attention node: nothing else is left.
  EXPECT_EQ(Types.size(), 3u);
  EXPECT_EQ(countOf(Types, "Transpose") + countOf(Types, "Softmax") + countOf(Types, "Reshape"), 0u);
}

TEST(FuseAttention, RandomShapesScalesAndMasks) {
  rt::AutoInit Init;
  std::mt19937 G(7);
  std::uniform_int_distribution<int> Len(1, 40), Heads(1, 4), Head(1, 19), Kind(0, 3), Mask(0, 3);
  for (int Case = 0; Case < 24; ++Case) {
    Spec P;
    P.B = 1 + Case % 2;
    P.S = Len(G);
    P.Cross = Case % 3 == 0;
    P.T = P.Cross ? Len(G) : P.S;
    P.H = Heads(G);
    P.D = Head(G);
    P.Dv = Case % 4 == 0 ? Head(G) : P.D;
    P.Scale = static_cast<ScaleKind>(Kind(G));
    P.ScaleValue = P.Scale == ScaleKind::Div ? std::sqrt(static_cast<float>(P.D)) : 1.0f / std::sqrt(static_cast<float>(P.D));
    P.Mask = static_cast<MaskKind>(Mask(G));
    P.MaskFirst = Case % 2 == 1;
    P.TwoStepK = Case % 5 == 2;
    const int Threads = 1 + Case % 3;
    SCOPED_TRACE("case " + std::to_string(Case) + ": B " + std::to_string(P.B) + " S " + std::to_string(P.S) + " T " +
                 std::to_string(P.T) + " H " + std::to_string(P.H) + " D " + std::to_string(P.D) + " Dv " +
                 std::to_string(P.Dv) + " threads " + std::to_string(Threads));
    EXPECT_EQ(countOf(check(P, 100 + Case, false, Threads), "Attention"), 1u);
  }
}

TEST(FuseAttention, LongerSequencesFillWholeTiles) {
  rt::AutoInit Init;
  Spec P;
  P.B = 1, P.S = P.T = 128, P.H = 4, P.D = P.Dv = 64, P.ScaleValue = 8.0f;
  for (int Threads : {1, 2, 3})
    EXPECT_EQ(countOf(check(P, 3, false, Threads), "Attention"), 1u);
  P.B = 2, P.S = P.T = 77, P.H = 2, P.D = P.Dv = 32, P.Mask = MaskKind::Full;
  EXPECT_EQ(countOf(check(P, 4), "Attention"), 1u);
}

TEST(FuseAttention, RowsWithEveryKeyMaskedStayNaN) {
  rt::AutoInit Init;
  // Softmax over a row of -inf is NaN in the unfused graph: the fused node keeps that (the ONNX
  // Attention op itself would give zeros), on the blocked path and the one-query path.
  for (int64_t S : {9, 1}) {
    Spec P;
    P.S = P.T = S;
    if (S == 1)
      P.Cross = true, P.T = 6;
    EXPECT_EQ(countOf(check(P, 11, true), "Attention"), 1u) << S;
  }
}

TEST(FuseAttention, RowsWithEveryKeyAtFloatMinAreUniform) {
  rt::AutoInit Init;
  // HF-style masks add finfo(float32).min: a row with every key masked is a uniform average of
  // V in the unfused graph (all scores equal), and in the fused node.
  Spec P;
  EXPECT_EQ(countOf(check(P, 12, true, 2, -FLT_MAX), "Attention"), 1u);
}

TEST(FuseAttention, LegacySoftmaxOverTheLastAxisFuses) {
  rt::AutoInit Init;
  Spec P;
  P.Opset = 11; // Softmax flattens from 'axis' on: with axis 3 those are the same rows
  EXPECT_EQ(countOf(check(P, 5), "Attention"), 1u);
}

TEST(FuseAttention, OtherMathStaysUnfused) {
  rt::AutoInit Init;
  const auto unfused = [](const Spec &P, uint32_t Seed) {
    const auto Types = check(P, Seed);
    EXPECT_EQ(countOf(Types, "Attention"), 0u);
    EXPECT_EQ(countOf(Types, "Softmax"), 1u);
  };
  {
    Spec P;
    P.SoftmaxAxis = 2; // over the queries
    unfused(P, 21);
  }
  {
    Spec P;
    P.MaskBeforeScale = true; // (QK^T + mask) / c scales the mask too
    unfused(P, 22);
  }
  {
    Spec P;
    P.ScoresAreOutput = true; // an intermediate read outside the chain
    unfused(P, 23);
  }
  {
    Spec P;
    P.NoOutputTranspose = true; // heads not merged back per query
    unfused(P, 24);
  }
  {
    Spec P;
    P.B = 1, P.Mask = MaskKind::Batch2; // the mask broadcasts the scores to a second batch
    unfused(P, 25);
  }
  {
    Spec P;
    P.Mask = MaskKind::KeysBroadcast; // one value for every key: Attention would pad with -inf
    unfused(P, 26);
  }
  {
    Spec P;
    P.ScaleValue = -2.0f; // Attention's scale must be positive
    unfused(P, 27);
  }
}

// ---- A decoder step with a KV cache (GPT-2 style export) ----
namespace {

struct DecoderSpec {
  int64_t B = 1, S = 1, P = 9, H = 4, D = 16;
  bool CacheReadElsewhere = false; ///< present_key also feeds a ReduceSum output: stays unfused
  bool SymbolicCache = false;      ///< past inputs declared [b, h, past, d] (as a resizable cache)
};

/// x [B, S, E], past_key / past_value [B, H, P, D] -> y [B, S, E], present_key / present_value
/// [B, H, P + S, D]: the new rows appended by Concat, K^T by a Transpose of the cache, scale by Mul.
std::string decoderModel(const DecoderSpec &P, std::mt19937 &G) {
  OnnxBuilder M(17);
  const int64_t E = P.H * P.D;
  const auto F = onnx::TensorProto_DataType_FLOAT;
  M.input("x", F, {P.B, P.S, E});
  const std::vector<std::string> Sym =
      P.SymbolicCache ? std::vector<std::string>{"b", "h", "past", "d"} : std::vector<std::string>{};
  M.input("past_key", F, {P.B, P.H, P.P, P.D}, Sym);
  M.input("past_value", F, {P.B, P.H, P.P, P.D}, Sym);
  for (const char *W : {"wq", "wk", "wv"})
    M.initializer(W, {E, E}, randomValues(static_cast<size_t>(E * E), G, 0.5f));
  M.initializerI64("heads", {4}, {P.B, P.S, P.H, P.D});
  M.initializerI64("merged", {3}, {P.B, P.S, E});
  M.initializer("c", {}, {1.0f / std::sqrt(static_cast<float>(P.D))});
  for (const char *X : {"q", "k", "v"}) {
    const std::string N(X);
    M.node("MatMul", {"x", "w" + N}, {N});
    M.node("Reshape", {N, "heads"}, {N + "4"});
    OnnxBuilder::attrInts(M.node("Transpose", {N + "4"}, {N + "h"}), "perm", {0, 2, 1, 3});
  }
  OnnxBuilder::attrInt(M.node("Concat", {"past_key", "kh"}, {"present_key"}), "axis", 2);
  OnnxBuilder::attrInt(M.node("Concat", {"past_value", "vh"}, {"present_value"}), "axis", -2);
  OnnxBuilder::attrInts(M.node("Transpose", {"present_key"}, {"kt"}), "perm", {0, 1, 3, 2});
  M.node("MatMul", {"qh", "kt"}, {"scores"});
  M.node("Mul", {"scores", "c"}, {"scaled"});
  OnnxBuilder::attrInt(M.node("Softmax", {"scaled"}, {"probs"}), "axis", -1);
  M.node("MatMul", {"probs", "present_value"}, {"o"});
  OnnxBuilder::attrInts(M.node("Transpose", {"o"}, {"ot"}), "perm", {0, 2, 1, 3});
  M.node("Reshape", {"ot", "merged"}, {"y"});
  M.output("y", F);
  M.output("present_key", F);
  M.output("present_value", F);
  if (P.CacheReadElsewhere) {
    M.node("ReduceSum", {"present_key"}, {"key_sum"});
    M.output("key_sum", F);
  }
  return M.bytes();
}

/// Runs the decoder fused (and unfused: EnableMemoryOptimization off) and compares y and both
/// present outputs; returns the fused run's op types.
std::vector<std::string> checkDecoder(const DecoderSpec &P, uint32_t Seed, int Threads) {
  std::mt19937 G(Seed);
  const std::string Bytes = decoderModel(P, G);
  const size_t E = static_cast<size_t>(P.H * P.D);
  const std::vector<float> X = randomValues(static_cast<size_t>(P.B * P.S) * E, G, 1.0f);
  const std::vector<float> PK = randomValues(static_cast<size_t>(P.B * P.H * P.P * P.D), G, 1.0f);
  const std::vector<float> PV = randomValues(PK.size(), G, 1.0f);
  std::vector<std::string> Types;
  std::vector<std::vector<float>> Outs[2];
  for (int Fuse = 0; Fuse < 2; ++Fuse) {
    rt::Model M = loadModelBytes(Bytes, Fuse == 1, Threads);
    if (Fuse)
      Types = opTypeList(M);
    rt::InferRequest R = M.createRequest();
    std::vector<rt::Tensor> In;
    for (const std::vector<float> *Src : {&X, &PK, &PV}) {
      const rt::TensorInfo &Info = M.getInputTensorInfo(In.size());
      rt::Tensor T = rt::tensor(Info.Type, Info.Shape);
      std::copy(Src->begin(), Src->end(), static_cast<float *>(T.data()));
      In.push_back(T);
    }
    // Twice: the second run reuses the request's buffers.
    for (int Run = 0; Run < 2; ++Run) {
      R.infer(rt::make_array(In));
      R.wait();
    }
    for (const char *Name : {"y", "present_key", "present_value"}) {
      rt::Tensor T = R.getOutput(Name);
      const float *D = static_cast<const float *>(T.data());
      Outs[Fuse].emplace_back(D, D + T.getShape().getElementCount().value());
    }
  }
  for (size_t K = 0; K < 3; ++K) {
    EXPECT_EQ(Outs[0][K].size(), Outs[1][K].size()) << K;
    for (size_t I = 0; I < std::min(Outs[0][K].size(), Outs[1][K].size()); ++I)
      EXPECT_NEAR(Outs[1][K][I], Outs[0][K][I], 2e-5 * (1.0 + std::fabs(Outs[0][K][I]))) << K << " " << I;
  }
  // The cache of every head holds its past rows first, unchanged.
  const size_t Total = static_cast<size_t>((P.P + P.S) * P.D), Past = static_cast<size_t>(P.P * P.D);
  for (size_t Head = 0; P.P > 0 && Head < static_cast<size_t>(P.B * P.H); ++Head)
    EXPECT_EQ(Outs[1][1][Head * Total + Past - 1], PK[Head * Past + Past - 1]) << "head " << Head;
  return Types;
}

} // namespace

TEST(FuseAttention, DecoderStepWithKvCacheBecomesOneNode) {
  rt::AutoInit Init;
  // One and two new tokens, batch 2, odd head sizes, a cache long enough for the streaming stores.
  const DecoderSpec Specs[] = {{1, 1, 9, 4, 16}, {2, 2, 5, 3, 13}, {1, 1, 1100, 4, 64}, {1, 3, 0, 2, 8}};
  uint32_t Seed = 40;
  for (const DecoderSpec &P : Specs)
    for (int Threads : {1, 2}) {
      SCOPED_TRACE("B " + std::to_string(P.B) + " S " + std::to_string(P.S) + " past " + std::to_string(P.P) + " H " +
                   std::to_string(P.H) + " D " + std::to_string(P.D) + " threads " + std::to_string(Threads));
      const auto Types = checkDecoder(P, Seed++, Threads);
      EXPECT_EQ(countOf(Types, "Attention"), 1u);
      EXPECT_EQ(countOf(Types, "Concat") + countOf(Types, "Transpose") + countOf(Types, "Softmax"), 0u);
    }
}

TEST(FuseAttention, KvCacheReadOutsideTheChainStaysUnfused) {
  rt::AutoInit Init;
  DecoderSpec P;
  P.CacheReadElsewhere = true;
  const auto Types = checkDecoder(P, 60, 2);
  EXPECT_EQ(countOf(Types, "Attention"), 0u);
  EXPECT_EQ(countOf(Types, "Concat"), 2u);
}

TEST(FuseAttention, SymbolicCacheFusesAndAWrongCacheIsAnError) {
  rt::AutoInit Init;
  DecoderSpec P;
  P.SymbolicCache = true;
  std::mt19937 G(70);
  const std::string Bytes = decoderModel(P, G);
  rt::Model M = rt::loadModel(reinterpret_cast<const uint8_t *>(Bytes.data()), Bytes.size());
  std::vector<std::string> Types;
  for (const rt::OpInfo &Op : M.getOperations())
    Types.push_back(Op.Type);
  EXPECT_EQ(countOf(Types, "Attention"), 1u);
  rt::InferRequest R = M.createRequest();
  const auto run = [&](int64_t Heads, int64_t Past) {
    std::vector<rt::Tensor> In{rt::tensor(rt::ElementType::F32, rt::TensorShape({1, 1, P.H * P.D})),
                               rt::tensor(rt::ElementType::F32, rt::TensorShape({1, Heads, Past, P.D})),
                               rt::tensor(rt::ElementType::F32, rt::TensorShape({1, Heads, Past, P.D}))};
    for (rt::Tensor &T : In)
      std::fill_n(static_cast<float *>(T.data()), T.getShape().getElementCount().value(), 0.25f);
    R.infer(rt::make_array(In));
    R.wait();
  };
  run(P.H, 3);
  EXPECT_EQ(R.getOutput("present_key").getShape(), rt::TensorShape({1, P.H, 4, P.D}));
  // Half the heads in the cache: an error naming the cache, and the request still works after it.
  try {
    run(P.H / 2, 3);
    ADD_FAILURE() << "a cache with the wrong head count ran";
  } catch (const std::exception &E) {
    const std::string What = E.what();
    EXPECT_TRUE(What.find("past") != std::string::npos || What.find("present") != std::string::npos) << What;
  }
  run(P.H, 5);
  EXPECT_EQ(R.getOutput("present_value").getShape(), rt::TensorShape({1, P.H, 6, P.D}));
  // The past rows were copied into the present cache (all 0.25).
  EXPECT_EQ(static_cast<const float *>(R.getOutput("present_value").data())[4 * P.D], 0.25f);
}
