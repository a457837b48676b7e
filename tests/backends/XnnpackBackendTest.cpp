// The XNNPACK extension (src/backends/xnnpack, liboptimium-runtime-xnnpack.so) loaded across the
// C ABI: every op it claims against the native backend on the same inputs, real models through
// it, placement (Devices, Strict, nodes with fused attributes it does not know), its device and
// capability, its pool bridge, and its error paths. Each test runs in a child process: a loaded
// extension stays registered for the process.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cmath>
#include <functional>
#include <sstream>

#include "OnnxBuilder.h"
#include "Optimium/Runtime.h"
#include "TestUtil.h"

namespace rt = optimium::runtime;
using namespace optimium_test;

#ifdef OPTIMIUM_XNNPACK_BACKEND

namespace {

const rt::DeviceID Xnn = rt::DeviceID::from(rt::PlatformKind::XNNPack, rt::DeviceKind::x64);
const rt::DeviceID Cpu = rt::DeviceID::from(rt::PlatformKind::Native, rt::DeviceKind::x64);
constexpr int F32 = onnx::TensorProto_DataType_FLOAT;

#define CHECK_OR_RETURN(Cond, Msg)                                                                 \
  do {                                                                                             \
    if (!(Cond)) {                                                                                 \
      std::ostringstream OS;                                                                       \
      OS << __LINE__ << ": " << Msg;                                                               \
      return OS.str();                                                                             \
    }                                                                                              \
  } while (0)

/// Runs Body in a child process (the extension stays loaded in it); "" = passed.
void isolated(const std::function<std::string()> &Body) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        std::string Error;
        try {
          Error = Body();
        } catch (const std::exception &E) {
          Error = E.what();
        }
        if (!Error.empty())
          std::fprintf(stderr, "FAILED: %s\n", Error.c_str());
        std::exit(Error.empty() ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

rt::Model load(const std::string &Bytes, std::vector<rt::DeviceID> Devices, bool Strict, int Threads = 1) {
  rt::ModelLoadOptions O;
  O.Devices = std::move(Devices);
  O.Strict = Strict;
  O.ThreadCount = Threads;
  return rt::loadModel(reinterpret_cast<const uint8_t *>(Bytes.data()), Bytes.size(), O);
}

rt::Tensor run(rt::Model &M, const std::vector<rt::Tensor> &Inputs) {
  rt::InferRequest R = M.createRequest();
  R.infer(rt::make_array(Inputs));
  R.wait();
  return R.getOutput(0);
}

rt::Tensor input(const std::vector<int64_t> &Dims, float Phase, float Scale = 2.0f, float Offset = 0.0f) {
  size_t N = 1;
  for (int64_t D : Dims)
    N *= static_cast<size_t>(D);
  rt::TypedTensor<float> T = rt::tensor<float>(rt::TensorShape::fromDims(Dims));
  const std::vector<float> V = wave(N, Scale, Phase);
  for (size_t I = 0; I < N; ++I)
    T.data()[I] = V[I] + Offset;
  return T;
}

double maxAbs(const rt::Tensor &T) {
  const float *P = static_cast<const float *>(T.data());
  double M = 0;
  for (size_t I = 0; I < T.getElementCount(); ++I)
    M = std::max(M, std::fabs(static_cast<double>(P[I])));
  return M;
}

/// The tolerance of every op check: XNNPACK and the native kernels sum in different orders and
/// use different exp/sigmoid approximations, so 1e-4 relative to the output's magnitude.
constexpr double kRelTol = 1e-4;

/// Loads Bytes on XNNPack alone (Strict: every node must be placed there) and on the native CPU,
/// runs both on Inputs at 1 and 2 threads and compares.
std::string sameAsNative(const std::string &Label, const std::string &Bytes, const std::vector<rt::Tensor> &Inputs) {
  for (int Threads : {1, 2}) {
    rt::Model X = load(Bytes, {Xnn}, /*Strict=*/true, Threads);
    for (const rt::OpInfo &Op : X.getOperations())
      CHECK_OR_RETURN(Op.Device == Xnn, Label << ": " << Op.Type << " placed on " << Op.Device.toString());
    rt::Model N = load(Bytes, {Cpu}, true, Threads);
    const rt::Tensor A = run(X, Inputs), B = run(N, Inputs);
    CHECK_OR_RETURN(A.getShape() == B.getShape(), Label << ": shape " << A.getShape().toString() << " vs "
                                                        << B.getShape().toString());
    const double Diff = maxAbsDiff(A, B), Bound = kRelTol * std::max(1.0, maxAbs(B));
    CHECK_OR_RETURN(Diff <= Bound, Label << " (" << Threads << " threads): differs from native by " << Diff
                                         << " (tolerance " << Bound << ")");
  }
  return "";
}

/// One-node graph: Op(x [, initializers]) -> y; Attrs applied to the node.
struct OneOp {
  OnnxBuilder B;
  onnx::NodeProto *N = nullptr;
  OneOp(const std::string &Op, const std::vector<int64_t> &XDims, const std::vector<std::string> &Extra = {},
        int Opset = 13)
      : B(Opset) {
    B.input("x", F32, XDims);
    std::vector<std::string> Ins{"x"};
    Ins.insert(Ins.end(), Extra.begin(), Extra.end());
    N = B.node(Op, Ins, {"y"}, "op");
    B.output("y", F32);
  }
};

void convWeights(OnnxBuilder &B, int64_t M, int64_t CPerGroup, int64_t K, bool Bias) {
  B.initializer("w", {M, CPerGroup, K, K}, wave(static_cast<size_t>(M * CPerGroup * K * K), 0.5f, 0.3f));
  if (Bias)
    B.initializer("b", {M}, wave(static_cast<size_t>(M), 0.2f, 1.1f));
}

std::string convolutions() {
  struct ConvCase {
    const char *Label;
    int64_t C, M, K, Group, Stride, Pad, Dilation;
    bool Bias;
    const char *AutoPad;
  } Cases[] = {{"conv3x3 pad1", 8, 16, 3, 1, 1, 1, 1, true, nullptr},
               {"conv3x3 stride2 no bias", 8, 12, 3, 1, 2, 1, 1, false, nullptr},
               {"conv1x1", 16, 24, 1, 1, 1, 0, 1, true, nullptr},
               {"depthwise3x3", 16, 16, 3, 16, 1, 1, 1, true, nullptr},
               {"depthwise5x5 stride2", 8, 8, 5, 8, 2, 2, 1, true, nullptr},
               {"grouped g=2", 8, 8, 3, 2, 1, 1, 1, true, nullptr},
               {"dilated", 4, 8, 3, 1, 1, 2, 2, true, nullptr},
               {"same_upper stride2", 3, 8, 3, 1, 2, 0, 1, true, "SAME_UPPER"},
               {"valid 7x7", 3, 8, 7, 1, 2, 0, 1, true, "VALID"}};
  for (const ConvCase &C : Cases) {
    OneOp G("Conv", {1, C.C, 13, 11}, C.Bias ? std::vector<std::string>{"w", "b"} : std::vector<std::string>{"w"});
    convWeights(G.B, C.M, C.C / C.Group, C.K, C.Bias);
    OnnxBuilder::attrInt(G.N, "group", C.Group);
    OnnxBuilder::attrInts(G.N, "strides", {C.Stride, C.Stride});
    OnnxBuilder::attrInts(G.N, "dilations", {C.Dilation, C.Dilation});
    if (C.AutoPad) {
      auto *A = G.N->add_attribute();
      A->set_name("auto_pad");
      A->set_type(onnx::AttributeProto_AttributeType_STRING);
      A->set_s(C.AutoPad);
    } else {
      OnnxBuilder::attrInts(G.N, "pads", {C.Pad, C.Pad, C.Pad, C.Pad});
    }
    const std::string E = sameAsNative(C.Label, G.B.bytes(), {input({1, C.C, 13, 11}, 0.1f)});
    if (!E.empty())
      return E;
  }
  return "";
}

/// Conv -> Relu and Conv -> Add(residual) -> Relu: the passes fuse them into one Conv carrying
/// optimium.act_min/max and optimium.residual, which the extension runs (clamp, then an add).
std::string fusedConvolutions() {
  OnnxBuilder B;
  B.input("x", F32, {1, 8, 10, 10});
  convWeights(B, 8, 8, 3, true);
  auto *C1 = B.node("Conv", {"x", "w", "b"}, {"c1"}, "conv1");
  OnnxBuilder::attrInts(C1, "pads", {1, 1, 1, 1});
  B.node("Relu", {"c1"}, {"r1"}, "relu1");
  auto *C2 = B.node("Conv", {"r1", "w", "b"}, {"c2"}, "conv2");
  OnnxBuilder::attrInts(C2, "pads", {1, 1, 1, 1});
  B.node("Add", {"c2", "x"}, {"s"}, "residual");
  B.node("Relu", {"s"}, {"y"}, "relu2");
  B.output("y", F32);
  rt::Model X = load(B.bytes(), {Xnn}, true);
  CHECK_OR_RETURN(X.getOperations().size() == 2, "expected both Conv chains fused, got " << X.getOperations().size()
                                                                                          << " ops");
  return sameAsNative("fused conv+relu, conv+residual+relu", B.bytes(), {input({1, 8, 10, 10}, 0.4f)});
}

std::string products() {
  {
    OneOp G("Gemm", {6, 20}, {"w", "c"});
    G.B.initializer("w", {12, 20}, wave(240, 0.3f, 0.2f));
    G.B.initializer("c", {12}, wave(12, 0.5f, 0.9f));
    OnnxBuilder::attrInt(G.N, "transB", 1);
    auto *A = G.N->add_attribute();
    A->set_name("alpha");
    A->set_type(onnx::AttributeProto_AttributeType_FLOAT);
    A->set_f(0.5f);
    auto *Be = G.N->add_attribute();
    Be->set_name("beta");
    Be->set_type(onnx::AttributeProto_AttributeType_FLOAT);
    Be->set_f(2.0f);
    const std::string E = sameAsNative("Gemm transB alpha beta", G.B.bytes(), {input({6, 20}, 0.7f)});
    if (!E.empty())
      return E;
  }
  {
    OneOp G("Gemm", {3, 9}, {"w"});
    G.B.initializer("w", {9, 5}, wave(45, 0.3f, 0.2f));
    const std::string E = sameAsNative("Gemm no bias", G.B.bytes(), {input({3, 9}, 0.7f)});
    if (!E.empty())
      return E;
  }
  {
    OneOp G("MatMul", {2, 3, 8}, {"w"});
    G.B.initializer("w", {8, 5}, wave(40, 0.3f, 0.2f));
    const std::string E = sameAsNative("MatMul 3-D x 2-D", G.B.bytes(), {input({2, 3, 8}, 0.7f)});
    if (!E.empty())
      return E;
  }
  // MatMul + Add(bias): FuseMatMulBias gives one MatMul with optimium.fused_bias.
  OnnxBuilder B;
  B.input("x", F32, {4, 16});
  B.initializer("w", {16, 8}, wave(128, 0.3f, 0.2f));
  B.initializer("b", {8}, wave(8, 0.3f, 0.5f));
  B.node("MatMul", {"x", "w"}, {"m"}, "mm");
  B.node("Add", {"m", "b"}, {"y"}, "bias");
  B.output("y", F32);
  return sameAsNative("MatMul + bias", B.bytes(), {input({4, 16}, 0.2f)});
}

std::string pools() {
  struct PoolCase {
    const char *Label, *Op;
    int64_t K, Stride, Pad;
    bool Ceil;
  } Cases[] = {{"maxpool3x3 s2 p1", "MaxPool", 3, 2, 1, false},
               {"maxpool2x2 ceil", "MaxPool", 2, 2, 0, true},
               {"maxpool3x3 s2 ceil", "MaxPool", 3, 2, 0, true},
               {"avgpool2x2 s2", "AveragePool", 2, 2, 0, false},
               {"avgpool3x3 p1 exclude pad", "AveragePool", 3, 1, 1, false}};
  for (const PoolCase &C : Cases) {
    OneOp G(C.Op, {2, 6, 11, 9});
    OnnxBuilder::attrInts(G.N, "kernel_shape", {C.K, C.K});
    OnnxBuilder::attrInts(G.N, "strides", {C.Stride, C.Stride});
    OnnxBuilder::attrInts(G.N, "pads", {C.Pad, C.Pad, C.Pad, C.Pad});
    if (C.Ceil)
      OnnxBuilder::attrInt(G.N, "ceil_mode", 1);
    const std::string E = sameAsNative(C.Label, G.B.bytes(), {input({2, 6, 11, 9}, 0.5f)});
    if (!E.empty())
      return E;
  }
  OneOp G("GlobalAveragePool", {2, 6, 7, 5});
  return sameAsNative("GlobalAveragePool", G.B.bytes(), {input({2, 6, 7, 5}, 0.5f)});
}

std::string elementwise() {
  for (const char *Op : {"Add", "Sub", "Mul", "Div", "Max", "Min"}) {
    {
      OnnxBuilder B;
      B.input("a", F32, {2, 4, 5, 6});
      B.input("b", F32, {4, 1, 6});
      B.node(Op, {"a", "b"}, {"y"}, "op");
      B.output("y", F32);
      const std::string E = sameAsNative(std::string(Op) + " broadcast", B.bytes(),
                                         {input({2, 4, 5, 6}, 0.1f), input({4, 1, 6}, 0.2f, 1.0f, 2.5f)});
      if (!E.empty())
        return E;
    }
    OneOp G(Op, {3, 7}, {"c"});
    G.B.initializer("c", {3, 7}, wave(21, 1.0f, 0.8f));
    const std::string E = sameAsNative(std::string(Op) + " with a constant", G.B.bytes(), {input({3, 7}, 0.3f)});
    if (!E.empty())
      return E;
  }
  struct UnaryCase {
    const char *Op;
    int Opset;
    float Offset;
  } Unary[] = {{"Relu", 13, 0}, {"Sigmoid", 13, 0}, {"HardSwish", 14, 0}, {"Abs", 13, 0}, {"Neg", 13, 0},
               {"Floor", 13, 0}, {"Ceil", 13, 0},   {"Sqrt", 13, 3.0f},   {"Round", 13, 0}, {"LeakyRelu", 13, 0},
               {"Elu", 13, 0}};
  for (const UnaryCase &U : Unary) {
    OneOp G(U.Op, {2, 3, 37}, {}, U.Opset);
    const std::string E = sameAsNative(U.Op, G.B.bytes(), {input({2, 3, 37}, 0.6f, 2.5f, U.Offset)});
    if (!E.empty())
      return E;
  }
  {
    OneOp G("Clip", {4, 33}, {"lo", "hi"});
    G.B.initializer("lo", {}, {-0.5f});
    G.B.initializer("hi", {}, {1.25f});
    const std::string E = sameAsNative("Clip", G.B.bytes(), {input({4, 33}, 0.6f)});
    if (!E.empty())
      return E;
  }
  OneOp G("Softmax", {3, 5, 19});
  return sameAsNative("Softmax", G.B.bytes(), {input({3, 5, 19}, 0.6f, 4.0f)});
}

} // namespace

TEST(XnnpackBackend, ConvolutionsMatchNative) {
  isolated([] {
    rt::loadExtension(OPTIMIUM_XNNPACK_BACKEND);
    return convolutions();
  });
}

TEST(XnnpackBackend, FusedConvolutionsMatchNative) {
  isolated([] {
    rt::loadExtension(OPTIMIUM_XNNPACK_BACKEND);
    return fusedConvolutions();
  });
}

TEST(XnnpackBackend, GemmAndMatMulMatchNative) {
  isolated([] {
    rt::loadExtension(OPTIMIUM_XNNPACK_BACKEND);
    return products();
  });
}

TEST(XnnpackBackend, PoolsMatchNative) {
  isolated([] {
    rt::loadExtension(OPTIMIUM_XNNPACK_BACKEND);
    return pools();
  });
}

TEST(XnnpackBackend, ElementwiseAndSoftmaxMatchNative) {
  isolated([] {
    rt::loadExtension(OPTIMIUM_XNNPACK_BACKEND);
    return elementwise();
  });
}

TEST(XnnpackBackend, ModelsMatchNativeAndTheirReferences) {
  isolated([]() -> std::string {
    rt::loadExtension(OPTIMIUM_XNNPACK_BACKEND);
    // The bundled MNIST model (digits) and the test CNN: XNNPack first, the native CPU for the rest.
    for (const char *Dir : {"models/digits", "tests/models/cnn"}) {
      for (int Threads : {1, 2}) {
        rt::ModelLoadOptions O;
        O.Devices = {Xnn};
        O.ThreadCount = Threads;
        rt::Model X = rt::loadModel(dataPath(Dir), O);
        int OnXnn = 0;
        for (const rt::OpInfo &Op : X.getOperations())
          OnXnn += Op.Device == Xnn;
        CHECK_OR_RETURN(OnXnn >= 2, Dir << ": only " << OnXnn << " ops on XNNPack");
        O.Devices = {Cpu};
        rt::Model N = rt::loadModel(dataPath(Dir), O);
        const std::string Ref = std::string(Dir) == "tests/models/cnn" ? "tests/models/cnn/output_0.npy"
                                                                        : "models/digits/sample_output.npy";
        const rt::Tensor In = readNpy(dataPath(std::string(Dir) == "tests/models/cnn" ? "tests/models/cnn/input_0.npy"
                                                                                     : "models/digits/sample_input.npy"));
        const rt::Tensor A = run(X, {In}), B = run(N, {In});
        const double Diff = maxAbsDiff(A, B);
        CHECK_OR_RETURN(Diff <= kRelTol * std::max(1.0, maxAbs(B)), Dir << ": differs from native by " << Diff);
        const double RefDiff = maxAbsDiff(A, readNpy(dataPath(Ref)));
        CHECK_OR_RETURN(RefDiff <= 1e-4 * std::max(1.0, maxAbs(B)), Dir << ": differs from its reference by " << RefDiff);
      }
    }
    return "";
  });
}

TEST(XnnpackBackend, PlacementDevicesStrictAndDefaults) {
  isolated([]() -> std::string {
    rt::loadExtension(OPTIMIUM_XNNPACK_BACKEND);
    // Listed, with the CPU's capability as XNNPACK sees it.
    bool Listed = false;
    for (const rt::DeviceID &D : rt::getLocalInfo().Devices)
      Listed |= D == Xnn;
    CHECK_OR_RETURN(Listed, "XNNPack is not in getLocalInfo()");
    CHECK_OR_RETURN(Xnn.getCapability().getKind() == rt::CapabilityKind::X86, Xnn.getCapability().toString());
    CHECK_OR_RETURN(static_cast<const rt::X86Capability &>(Xnn.getCapability()).SSE2, Xnn.getCapability().toString());
    // Devices empty: the native CPU runs everything (XNNPack only when asked for).
    rt::Model Default = rt::loadModel(dataPath("tests/models/cnn"));
    for (const rt::OpInfo &Op : Default.getOperations())
      CHECK_OR_RETURN(Op.Device.getPlatform() == rt::PlatformKind::Native,
                      Op.Type << " placed on " << Op.Device.toString() << " without Devices");
    // Strict on XNNPack alone: the ops it lacks (the mlp's Reshape-free graph has none; the cnn's
    // Flatten/Reshape) cannot be placed, and the error names one.
    rt::ModelLoadOptions O;
    O.Devices = {Xnn};
    O.Strict = true;
    try {
      rt::loadModel(dataPath("tests/models/cnn"), O);
      return "strict placement of the cnn on XNNPack alone should fail";
    } catch (const rt::ModelError &E) {
      const std::string M = E.what();
      CHECK_OR_RETURN(M.find("no device supports it") != std::string::npos && M.find("XNNPack") != std::string::npos, M);
    }
    // A Conv carrying a fused activation XNNPACK has no clamp for (Conv -> Sigmoid: optimium.act =
    // sigmoid) stays on the native CPU; Strict on XNNPack fails naming it.
    OnnxBuilder B;
    B.input("x", F32, {1, 4, 6, 6});
    convWeights(B, 4, 4, 3, true);
    OnnxBuilder::attrInts(B.node("Conv", {"x", "w", "b"}, {"c"}, "conv"), "pads", {1, 1, 1, 1});
    B.node("Sigmoid", {"c"}, {"y"}, "act");
    B.output("y", F32);
    rt::Model Mixed = load(B.bytes(), {Xnn}, false);
    const std::vector<rt::OpInfo> Ops = Mixed.getOperations();
    if (Ops.size() == 1) { // fused: the Conv carries the sigmoid
      CHECK_OR_RETURN(Ops[0].Device.getPlatform() == rt::PlatformKind::Native,
                      "a Conv with a fused sigmoid was placed on " << Ops[0].Device.toString());
      try {
        load(B.bytes(), {Xnn}, true);
        return "strict XNNPack placement of a Conv with a fused sigmoid should fail";
      } catch (const rt::ModelError &E) {
        CHECK_OR_RETURN(std::string(E.what()).find("Conv") != std::string::npos, E.what());
      }
    } else {
      for (const rt::OpInfo &Op : Ops)
        CHECK_OR_RETURN(Op.Device == Xnn, Op.Type << " placed on " << Op.Device.toString());
    }
    // The mixed placement computes what the native CPU alone does.
    rt::Model N = load(B.bytes(), {Cpu}, true);
    const rt::Tensor In = input({1, 4, 6, 6}, 0.2f);
    const double Diff = maxAbsDiff(run(Mixed, {In}), run(N, {In}));
    CHECK_OR_RETURN(Diff <= 1e-5, "mixed placement differs by " << Diff);
    return "";
  });
}

TEST(XnnpackBackend, SplitsItsLoopsOverTheRuntimePool) {
  isolated([]() -> std::string {
    rt::loadExtension(OPTIMIUM_XNNPACK_BACKEND);
    auto Splits = reinterpret_cast<unsigned long (*)()>(
        dlsym(dlopen(OPTIMIUM_XNNPACK_BACKEND, RTLD_NOW | RTLD_NOLOAD), "optimium_xnnpack_backend_pool_splits"));
    CHECK_OR_RETURN(Splits, "cannot find optimium_xnnpack_backend_pool_splits");
    OneOp G("Conv", {1, 16, 32, 32}, {"w", "b"});
    convWeights(G.B, 32, 16, 3, true);
    OnnxBuilder::attrInts(G.N, "pads", {1, 1, 1, 1});
    const rt::Tensor In = input({1, 16, 32, 32}, 0.1f);
    rt::Model One = load(G.B.bytes(), {Xnn}, true, 1);
    const unsigned long Before = Splits();
    const rt::Tensor A = run(One, {In});
    CHECK_OR_RETURN(Splits() == Before, "a 1-thread model split XNNPACK's loops");
    rt::Model Two = load(G.B.bytes(), {Xnn}, true, 2);
    const rt::Tensor B = run(Two, {In});
    CHECK_OR_RETURN(Splits() > Before, "XNNPACK's loops never reached the runtime's pool at 2 threads");
    CHECK_OR_RETURN(maxAbsDiff(A, B) == 0.0, "1 and 2 threads differ by " << maxAbsDiff(A, B));
    return "";
  });
}

TEST(XnnpackBackend, SecondLoadDisabledAndFinalize) {
  isolated([]() -> std::string {
    // Disabled (the path an XNNPACK that cannot initialize on this CPU takes): a clear refusal.
    ::setenv("OPTIMIUM_RT_XNNPACK_DISABLE", "1", 1);
    try {
      rt::loadExtension(OPTIMIUM_XNNPACK_BACKEND);
      return "a disabled XNNPACK extension registered";
    } catch (const rt::ExtensionError &E) {
      CHECK_OR_RETURN(std::string(E.what()).find("failed to register") != std::string::npos, E.what());
    }
    ::unsetenv("OPTIMIUM_RT_XNNPACK_DISABLE");
    for (const rt::DeviceID &D : rt::getLocalInfo().Devices)
      CHECK_OR_RETURN(D.getPlatform() != rt::PlatformKind::XNNPack, "a refused XNNPack device is listed");
    rt::loadExtension(OPTIMIUM_XNNPACK_BACKEND);
    try {
      rt::loadExtension(OPTIMIUM_XNNPACK_BACKEND);
      return "a second XNNPack extension registered";
    } catch (const rt::ExtensionError &E) {
      CHECK_OR_RETURN(std::string(E.what()).find("already loaded") != std::string::npos, E.what());
    }
    // finalize() destroys the kernels and unloads the extension; initialize() + load again works.
    {
      OneOp G("Relu", {4, 8});
      rt::Model M = load(G.B.bytes(), {Xnn}, true);
      run(M, {input({4, 8}, 0.1f)});
    }
    rt::finalize();
    rt::initialize();
    rt::loadExtension(OPTIMIUM_XNNPACK_BACKEND);
    OneOp G("Relu", {4, 8});
    rt::Model M = load(G.B.bytes(), {Xnn}, true);
    const rt::Tensor Y = run(M, {input({4, 8}, 0.1f)});
    CHECK_OR_RETURN(Y.getElementCount() == 32, "unexpected output after finalize/initialize");
    return "";
  });
}

#else

TEST(XnnpackBackend, NotBuilt) { GTEST_SKIP() << "libxnnpack-dev is not installed: the XNNPACK extension is not built"; }

#endif
