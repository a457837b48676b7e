// operator<< of the public types: tensors (threshold, precision, element kinds, layout), shapes
// with symbols, TensorInfo, QuantScheme, enums, devices, attributes; and the print settings.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <string>

#include "Optimium/Runtime/Utils/StreamHelper.h"

namespace rt = optimium::runtime;

namespace {

template <typename T> std::string str(const T &V) {
  std::ostringstream OS;
  OS << V;
  return OS.str();
}

class StreamHelperTest : public ::testing::Test {
protected:
  void SetUp() override {
    Threshold = rt::config::getPrintThreshold();
    Precision = rt::config::getPrintPrecision();
  }
  void TearDown() override {
    rt::config::setPrintThreshold(Threshold);
    rt::config::setPrintPrecision(Precision);
  }
  int Threshold = 8, Precision = 6;
};

rt::TypedTensor<int32_t> iota(const rt::TensorShape &Shape) {
  rt::TypedTensor<int32_t> T = rt::tensor<int32_t>(Shape);
  for (size_t I = 0; I < T.getElementCount(); ++I)
    T[I] = static_cast<int32_t>(I);
  return T;
}

} // namespace

TEST_F(StreamHelperTest, PrintSettings) {
  EXPECT_EQ(Threshold, 8); // defaults (every test restores them)
  EXPECT_EQ(Precision, 6);
  rt::config::setPrintThreshold(-3);
  EXPECT_EQ(rt::config::getPrintThreshold(), -3);
  rt::config::setPrintPrecision(0);
  EXPECT_EQ(rt::config::getPrintPrecision(), 0);
  rt::config::setPrintPrecision(15);
  EXPECT_EQ(rt::config::getPrintPrecision(), 15);
  EXPECT_THROW(rt::config::setPrintPrecision(16), rt::InvalidArgumentError);
  EXPECT_THROW(rt::config::setPrintPrecision(-1), rt::InvalidArgumentError);
  EXPECT_EQ(rt::config::getPrintPrecision(), 15);
}

TEST_F(StreamHelperTest, Shapes) {
  EXPECT_EQ(str(rt::TensorShape({1, 3, 224, 224})), "1x3x224x224");
  EXPECT_EQ(str(rt::TensorShape({rt::Expr("batch"), 3, rt::Expr("seq")})), "batchx3xseq");
  EXPECT_EQ(str(rt::TensorShape()), "scalar");
  EXPECT_EQ(str(rt::Expr(42)), "42");
  EXPECT_EQ(str(rt::Expr("n")), "n");
  EXPECT_EQ(str(rt::ElementType::F32), "f32");
  EXPECT_EQ(str(rt::ElementType::BF16), "bf16");
}

TEST_F(StreamHelperTest, IntegerTensor) {
  EXPECT_EQ(str(rt::Tensor(iota({1, 4}))), "Tensor(1x4xi32) [[0, 1, 2, 3]]");
  const std::string Pad(std::string("Tensor(2x3xi32) ").size() + 1, ' ');
  EXPECT_EQ(str(rt::Tensor(iota({2, 3}))), "Tensor(2x3xi32) [[0, 1, 2],\n" + Pad + "[3, 4, 5]]");
}

TEST_F(StreamHelperTest, ThresholdElidesEachDimension) {
  rt::config::setPrintThreshold(4);
  EXPECT_EQ(str(rt::Tensor(iota({10}))), "Tensor(10xi32) [0, 1, ..., 8, 9]");
  rt::config::setPrintThreshold(3);
  EXPECT_EQ(str(rt::Tensor(iota({10}))), "Tensor(10xi32) [0, 1, ..., 9]");
  rt::config::setPrintThreshold(10);
  EXPECT_EQ(str(rt::Tensor(iota({10}))), "Tensor(10xi32) [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]");
  rt::config::setPrintThreshold(-1);
  EXPECT_EQ(str(rt::Tensor(iota({12}))), "Tensor(12xi32) [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]");
  rt::config::setPrintThreshold(0);
  EXPECT_EQ(str(rt::Tensor(iota({3}))), "Tensor(3xi32) [...]");
  // Outer dimensions elide whole rows.
  rt::config::setPrintThreshold(2);
  const std::string Pad(std::string("Tensor(5x5xi32) ").size() + 1, ' ');
  EXPECT_EQ(str(rt::Tensor(iota({5, 5}))),
            "Tensor(5x5xi32) [[0, ..., 4],\n" + Pad + "...,\n" + Pad + "[20, ..., 24]]");
}

TEST_F(StreamHelperTest, Rank3Layout) {
  const std::string P1(std::string("Tensor(2x1x2xi32) ").size() + 1, ' ');
  EXPECT_EQ(str(rt::Tensor(iota({2, 1, 2}))), "Tensor(2x1x2xi32) [[[0, 1]],\n\n" + P1 + "[[2, 3]]]");
}

TEST_F(StreamHelperTest, FloatsUseThePrecision) {
  rt::TypedTensor<float> T = rt::tensor<float>({3});
  T[0] = 1.5f;
  T[1] = -0.25f;
  T[2] = 2.0f;
  EXPECT_EQ(str(rt::Tensor(T)), "Tensor(3xf32) [1.500000, -0.250000, 2.000000]");
  rt::config::setPrintPrecision(2);
  EXPECT_EQ(str(rt::Tensor(T)), "Tensor(3xf32) [1.50, -0.25, 2.00]");
  rt::config::setPrintPrecision(0);
  EXPECT_EQ(str(rt::Tensor(T)), "Tensor(3xf32) [2, -0, 2]");
  rt::config::setPrintPrecision(3);
  T[0] = std::numeric_limits<float>::infinity();
  T[1] = -std::numeric_limits<float>::infinity();
  T[2] = std::nanf("");
  EXPECT_EQ(str(rt::Tensor(T)), "Tensor(3xf32) [inf, -inf, nan]");
  rt::TypedTensor<double> D = rt::tensor<double>({2});
  D[0] = 1e20;
  D[1] = 1e-7;
  EXPECT_EQ(str(rt::Tensor(D)), "Tensor(2xf64) [1.000e+20, 1.000e-07]");
}

TEST_F(StreamHelperTest, HalfBoolStringAndScalar) {
  rt::config::setPrintPrecision(2);
  rt::TypedTensor<rt::float16> H = rt::tensor<rt::float16>({2});
  H[0] = rt::float16(0.5f);
  H[1] = rt::float16(-3.0f);
  EXPECT_EQ(str(rt::Tensor(H)), "Tensor(2xf16) [0.50, -3.00]");
  rt::TypedTensor<rt::bfloat16> B = rt::tensor<rt::bfloat16>({1});
  B[0] = rt::bfloat16(1.25f);
  EXPECT_EQ(str(rt::Tensor(B)), "Tensor(1xbf16) [1.25]");
  rt::TypedTensor<bool> Bo = rt::tensor<bool>({2});
  Bo[0] = true;
  Bo[1] = false;
  EXPECT_EQ(str(rt::Tensor(Bo)), "Tensor(2xbool) [true, false]");
  rt::TypedTensor<std::string> S = rt::tensor<std::string>({2});
  S[0] = "hi";
  S[1] = "a\"b";
  EXPECT_EQ(str(rt::Tensor(S)), "Tensor(2xstring) [\"hi\", \"a\\\"b\"]");
  rt::TypedTensor<float> Scalar = rt::tensor<float>(rt::TensorShape());
  Scalar[0] = 3.5f;
  EXPECT_EQ(str(rt::Tensor(Scalar)), "Tensor(f32) 3.50");
  rt::TypedTensor<int8_t> I8 = rt::tensor<int8_t>({2});
  I8[0] = -5;
  I8[1] = 65; // printed as a number, not 'A'
  EXPECT_EQ(str(rt::Tensor(I8)), "Tensor(2xi8) [-5, 65]");
}

TEST_F(StreamHelperTest, EmptyAndZeroSizedTensors) {
  EXPECT_EQ(str(rt::Tensor()), "Tensor(empty)");
  EXPECT_EQ(str(rt::tensor(rt::ElementType::F32, {0})), "Tensor(0xf32) []");
  rt::Tensor T = rt::tensor(rt::ElementType::F32, {2});
  T.release();
  EXPECT_EQ(str(T), "Tensor(empty)");
}

TEST_F(StreamHelperTest, StreamFlagsAreUntouched) {
  std::ostringstream OS;
  OS.precision(2);
  OS << rt::Tensor(iota({2})) << ' ' << 3.14159;
  EXPECT_EQ(OS.str(), "Tensor(2xi32) [0, 1] 3.1");
}

TEST_F(StreamHelperTest, TensorInfo) {
  rt::TensorInfo Info;
  Info.Name = "input_0";
  Info.Shape = rt::TensorShape({1, 3, 224, 224});
  Info.Type = rt::ElementType::F32;
  EXPECT_EQ(str(Info),
            "TensorInfo(name: input_0, shape: 1x3x224x224, type: f32, alignment: 64, padding: 0, resizable: false)");
  EXPECT_EQ(Info.toString(), str(Info));
  EXPECT_EQ(Info.getTensorSize(), 1u * 3 * 224 * 224 * 4);
  Info.Shape = rt::TensorShape({rt::Expr("batch"), 3});
  Info.Resizable = true;
  EXPECT_EQ(str(Info), "TensorInfo(name: input_0, shape: batchx3, type: f32, alignment: 64, padding: 0, resizable: true)");
  EXPECT_THROW(Info.getTensorSize(), rt::ShapeError);
  Info.Shape = rt::TensorShape({4});
  Info.Type = rt::ElementType::I8;
  Info.Scheme = std::make_shared<rt::QuantScheme>(rt::ElementType::I8, std::vector<rt::QuantParam>{{0.5f, 3}});
  EXPECT_EQ(str(Info), "TensorInfo(name: input_0, shape: 4, type: i8, alignment: 64, padding: 0, resizable: true, "
                       "scheme: QuantScheme(i8, scale: 0.5, zero_point: 3))");
}

TEST_F(StreamHelperTest, QuantScheme) {
  rt::QuantScheme PerTensor(rt::ElementType::U8, {{0.25f, 128}});
  EXPECT_EQ(str(PerTensor), "QuantScheme(u8, scale: 0.25, zero_point: 128)");
  rt::QuantScheme PerChannel(rt::ElementType::I8, {{0.5f, 0}, {0.25f, 1}}, 0);
  EXPECT_EQ(str(PerChannel), "QuantScheme(i8, axis: 0, channels: 2, scale: [0.5, 0.25], zero_point: [0, 1])");
  EXPECT_EQ(PerChannel.toString(), str(PerChannel));
}

TEST_F(StreamHelperTest, Enums) {
  EXPECT_EQ(str(rt::InferStatus::Ready), "Ready");
  EXPECT_EQ(str(rt::InferStatus::Running), "Running");
  EXPECT_EQ(str(rt::InferStatus::Fault), "Fault");
  EXPECT_EQ(str(rt::SchedulerType::Auto), "Auto");
  EXPECT_EQ(str(rt::SchedulerType::Exclusive), "Exclusive");
  EXPECT_EQ(str(rt::SchedulerType::Sequential), "Sequential");
  EXPECT_EQ(str(rt::SchedulerType::Pipeline), "Pipeline");
  EXPECT_STREQ(rt::toString(rt::SchedulerType::Pipeline), "Pipeline");
  EXPECT_STREQ(rt::toString(rt::InferStatus::Fault), "Fault");
  EXPECT_EQ(str(rt::LogLevel::Warning), "Warning");
  EXPECT_EQ(str(rt::PlatformKind::XNNPack), "XNNPack");
  EXPECT_EQ(str(rt::DeviceKind::ARM64), "ARM64");
  EXPECT_EQ(str(rt::OSKind::Android), "Android");
}

TEST_F(StreamHelperTest, DevicesAttributesOps) {
  EXPECT_EQ(str(rt::DeviceID::from(rt::PlatformKind::Native, rt::DeviceKind::x64)), "Native:x64:0@0");
  const rt::HostInfo Local = rt::getLocalInfo();
  EXPECT_EQ(str(Local), Local.toString());
  EXPECT_EQ(str(rt::Attribute::getInt(rt::AttributeKind::I32, 5)), "i32 5");
  rt::OpInfo Op;
  Op.Name = "conv0";
  Op.Type = "Conv";
  Op.Device = rt::DeviceID::from(rt::PlatformKind::Native, rt::DeviceKind::x64);
  Op.Inputs = {"x", "w"};
  Op.Outputs = {"y"};
  Op.Attributes["group"] = rt::Attribute::getInt(rt::AttributeKind::I64, 1);
  EXPECT_EQ(str(Op), "OpInfo(name: conv0, type: Conv, device: Native:x64:0@0, inputs: [x, w], outputs: [y], "
                     "attributes: {group: i64 1})");
}
