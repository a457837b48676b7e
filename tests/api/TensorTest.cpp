// Tensor creation, access, copies, save/load, release, string tensors, float16/bfloat16 and the
// internal Buffer / makeTensorView.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>
#include <unistd.h>
#include <vector>

#include "Optimium/Runtime.h"
#include "core/TensorImpl.h"

namespace rt = optimium::runtime;

namespace {

std::string tempPath(const std::string &Name) {
  const char *Dir = std::getenv("TMPDIR");
  return std::string(Dir && *Dir ? Dir : "/tmp") + "/optimium_tensor_test_" + std::to_string(getpid()) + "_" + Name;
}

template <typename E, typename F> std::string messageOf(F &&Fn) {
  try {
    Fn();
  } catch (const E &Ex) {
    return Ex.what();
  }
  ADD_FAILURE() << "expected exception was not thrown";
  return "";
}

uint32_t floatBits(float F) {
  uint32_t X;
  std::memcpy(&X, &F, 4);
  return X;
}
float bitsFloat(uint32_t X) {
  float F;
  std::memcpy(&F, &X, 4);
  return F;
}

} // namespace

TEST(TensorTest, CreatesOwnedAlignedPaddedTensor) {
  rt::Tensor T = rt::tensor(rt::ElementType::F32, {2, 3});
  ASSERT_TRUE(static_cast<bool>(T));
  EXPECT_EQ(T.getType(), rt::ElementType::F32);
  EXPECT_EQ(T.getShape().getRank(), 2u);
  EXPECT_EQ(T.getShape()[0].value(), 2);
  EXPECT_EQ(T.getShape()[1].value(), 3);
  EXPECT_EQ(T.getElementCount(), 6u);
  EXPECT_EQ(T.getTensorSize(), 24u);
  EXPECT_TRUE(T.hasPadding());
  EXPECT_FALSE(T.isUserBuffer());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(T.data()) % rt::kTensorAlignment, 0u);
  // The padding is readable (and zeroed) memory right after the data.
  const unsigned char *Tail = static_cast<const unsigned char *>(T.data()) + T.getTensorSize();
  for (size_t I = 0; I < rt::kTensorPaddingBytes; ++I)
    EXPECT_EQ(Tail[I], 0u);
}

TEST(TensorTest, CreatesTensorWithoutPadding) {
  rt::Tensor T = rt::tensor(rt::ElementType::I16, {8}, false);
  EXPECT_FALSE(T.hasPadding());
  EXPECT_EQ(T.getTensorSize(), 16u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(T.data()) % rt::kTensorAlignment, 0u);
}

TEST(TensorTest, ScalarAndZeroElementTensors) {
  rt::Tensor S = rt::tensor(rt::ElementType::F64, rt::TensorShape());
  EXPECT_EQ(S.getElementCount(), 1u);
  EXPECT_EQ(S.getTensorSize(), 8u);
  rt::Tensor Z = rt::tensor(rt::ElementType::F32, {0, 3});
  EXPECT_EQ(Z.getElementCount(), 0u);
  EXPECT_EQ(Z.getTensorSize(), 0u);
  EXPECT_TRUE(static_cast<bool>(Z));
  EXPECT_NE(Z.data(), nullptr);
}

TEST(TensorTest, TypedTensorFillAndIndex) {
  rt::TypedTensor<float> T = rt::tensor<float>({4, 4});
  T.fill(2.5f);
  for (float V : T)
    EXPECT_EQ(V, 2.5f);
  T[5] = -1.0f;
  EXPECT_EQ(T.data()[5], -1.0f);
  EXPECT_EQ(static_cast<const float *>(rt::Tensor(T).data())[5], -1.0f);
  EXPECT_EQ(T.end() - T.begin(), 16);
}

TEST(TensorTest, TypedTensorChecksElementType) {
  rt::Tensor T = rt::tensor(rt::ElementType::F32, {2});
  const std::string M = messageOf<rt::TypeError>([&] { rt::TypedTensor<int64_t> X(T); });
  EXPECT_EQ(M, "tensor has element type f32, not i64");
  EXPECT_NO_THROW(rt::TypedTensor<float> Y(T));
}

TEST(TensorTest, UserBufferIsNotOwned) {
  // malloc'd so that a wrongful free by the tensor shows up as a double free below.
  float *Buf = static_cast<float *>(std::malloc(6 * sizeof(float) + rt::kTensorPaddingBytes));
  ASSERT_NE(Buf, nullptr);
  {
    rt::TypedTensor<float> T = rt::tensor<float>({2, 3}, Buf);
    EXPECT_TRUE(T.isUserBuffer());
    EXPECT_TRUE(T.hasPadding());
    EXPECT_EQ(T.data(), Buf);
    T.fill(7.0f);
    rt::Tensor Copy = T; // a second handle: still no ownership
    EXPECT_EQ(Copy.data(), Buf);
  }
  // The tensor is gone; the buffer is still ours and still holds what was written through it.
  for (int I = 0; I < 6; ++I)
    EXPECT_EQ(Buf[I], 7.0f);
  Buf[0] = 1.0f;
  std::free(Buf);
}

TEST(TensorTest, UserBufferWithoutPaddingAndUntypedOverload) {
  std::vector<int32_t> Data = {1, 2, 3, 4};
  rt::Tensor T = rt::tensor(rt::ElementType::I32, {4}, Data.data(), false);
  EXPECT_FALSE(T.hasPadding());
  EXPECT_TRUE(T.isUserBuffer());
  EXPECT_EQ(static_cast<const int32_t *>(T.data())[3], 4);
}

TEST(TensorTest, RejectsInvalidCreation) {
  EXPECT_THROW(rt::tensor(rt::ElementType::F32, {rt::Expr("batch"), 3}), rt::InvalidArgumentError);
  EXPECT_THROW(rt::tensor(rt::ElementType::Undefined, {3}), rt::InvalidArgumentError);
  EXPECT_THROW(rt::tensor(rt::ElementType::F32, {-1, 3}), rt::InvalidArgumentError);
  const std::string M =
      messageOf<rt::InvalidArgumentError>([] { rt::tensor(rt::ElementType::F32, {2, 3}, nullptr); });
  EXPECT_NE(M.find("null"), std::string::npos) << M;
  EXPECT_NE(M.find("24"), std::string::npos) << M;
  EXPECT_THROW(rt::tensor(rt::ElementType::F32, {rt::Expr("n")}, nullptr), rt::InvalidArgumentError);
  // A zero-sized tensor over a null buffer is fine.
  rt::Tensor Z = rt::tensor(rt::ElementType::F32, {0}, nullptr);
  EXPECT_EQ(Z.getElementCount(), 0u);
}

#if defined(__SANITIZE_ADDRESS__)
#define OPTIMIUM_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OPTIMIUM_TEST_ASAN 1
#endif
#endif

TEST(TensorTest, AllocationFailureIsOutOfResource) {
  // Element count overflowing size_t.
  const int64_t Big = std::numeric_limits<int64_t>::max() / 2;
  EXPECT_THROW(rt::tensor(rt::ElementType::F64, {Big, Big}), rt::OutOfResourceError);
#if defined(OPTIMIUM_TEST_ASAN)
  GTEST_SKIP() << "AddressSanitizer aborts on huge allocations instead of failing them";
#else
  // 2^50 bytes cannot be allocated in a 47-bit user address space.
  const int64_t Huge = int64_t(1) << 50;
  const std::string M = messageOf<rt::OutOfResourceError>([&] { rt::tensor(rt::ElementType::U8, {Huge}); });
  EXPECT_NE(M.find(std::to_string(Huge)), std::string::npos) << M;
#endif
}

TEST(TensorTest, CopyToAndClone) {
  rt::TypedTensor<float> A = rt::tensor<float>({2, 3});
  for (size_t I = 0; I < 6; ++I)
    A[I] = static_cast<float>(I);
  rt::TypedTensor<float> B = rt::tensor<float>({2, 3});
  A.copyTo(B);
  for (size_t I = 0; I < 6; ++I)
    EXPECT_EQ(B[I], static_cast<float>(I));
  EXPECT_NE(A.data(), B.data());

  rt::Tensor C = A.clone();
  EXPECT_NE(C.data(), A.data());
  EXPECT_EQ(C.getType(), rt::ElementType::F32);
  EXPECT_EQ(C.getShape(), A.getShape());
  EXPECT_FALSE(C.isUserBuffer());
  A[0] = 100.0f;
  EXPECT_EQ(static_cast<const float *>(C.data())[0], 0.0f); // deep copy
}

TEST(TensorTest, CopyToMismatchErrorsNameBothSides) {
  rt::Tensor A = rt::tensor(rt::ElementType::F32, {2, 3});
  const std::string TypeMsg =
      messageOf<rt::TypeError>([&] { A.copyTo(rt::tensor(rt::ElementType::I32, {2, 3})); });
  EXPECT_NE(TypeMsg.find("f32"), std::string::npos) << TypeMsg;
  EXPECT_NE(TypeMsg.find("i32"), std::string::npos) << TypeMsg;
  const std::string ShapeMsg =
      messageOf<rt::ShapeError>([&] { A.copyTo(rt::tensor(rt::ElementType::F32, {3, 2})); });
  EXPECT_NE(ShapeMsg.find("2x3"), std::string::npos) << ShapeMsg;
  EXPECT_NE(ShapeMsg.find("3x2"), std::string::npos) << ShapeMsg;
  // Same element count, different rank is still a shape mismatch.
  EXPECT_THROW(A.copyTo(rt::tensor(rt::ElementType::F32, {6})), rt::ShapeError);
  EXPECT_THROW(A.copyTo(rt::Tensor()), rt::InvalidArgumentError);
}

TEST(TensorTest, SaveLoadRoundTrip) {
  const std::string Path = tempPath("roundtrip.bin");
  rt::TypedTensor<int32_t> A = rt::tensor<int32_t>({3, 5});
  for (size_t I = 0; I < 15; ++I)
    A[I] = static_cast<int32_t>(I * 7 - 20);
  A.save(Path);
  std::ifstream F(Path, std::ios::binary | std::ios::ate);
  EXPECT_EQ(static_cast<size_t>(F.tellg()), A.getTensorSize());
  F.close();

  rt::TypedTensor<int32_t> B = rt::tensor<int32_t>({3, 5});
  B.fill(0);
  B.load(Path);
  for (size_t I = 0; I < 15; ++I)
    EXPECT_EQ(B[I], A[I]);
  std::remove(Path.c_str());
}

TEST(TensorTest, LoadChecksFileSize) {
  const std::string Path = tempPath("wrongsize.bin");
  rt::tensor(rt::ElementType::F32, {4}).save(Path); // 16 bytes
  rt::Tensor T = rt::tensor(rt::ElementType::F32, {2, 3}); // 24 bytes
  const std::string M = messageOf<rt::InvalidArgumentError>([&] { T.load(Path); });
  EXPECT_NE(M.find("24"), std::string::npos) << M;
  EXPECT_NE(M.find("16"), std::string::npos) << M;
  EXPECT_NE(M.find(Path), std::string::npos) << M;
  std::remove(Path.c_str());
}

TEST(TensorTest, SaveLoadIOErrorsNamePath) {
  const std::string Missing = tempPath("does_not_exist.bin");
  rt::Tensor T = rt::tensor(rt::ElementType::F32, {2});
  const std::string LoadMsg = messageOf<rt::IOError>([&] { T.load(Missing); });
  EXPECT_NE(LoadMsg.find(Missing), std::string::npos) << LoadMsg;
  const std::string BadDir = tempPath("no_such_dir") + "/x.bin";
  const std::string SaveMsg = messageOf<rt::IOError>([&] { T.save(BadDir); });
  EXPECT_NE(SaveMsg.find(BadDir), std::string::npos) << SaveMsg;
}

TEST(TensorTest, ReleaseAndEmptyTensorsThrowInvalidState) {
  rt::Tensor T = rt::tensor(rt::ElementType::F32, {4});
  rt::Tensor Other = T;
  T.release();
  EXPECT_FALSE(static_cast<bool>(T));
  EXPECT_THROW(T.data(), rt::InvalidStateError);
  EXPECT_THROW(T.getType(), rt::InvalidStateError);
  EXPECT_THROW(T.getShape(), rt::InvalidStateError);
  EXPECT_THROW(T.getTensorSize(), rt::InvalidStateError);
  EXPECT_THROW(T.clone(), rt::InvalidStateError);
  EXPECT_THROW(T.save(tempPath("released.bin")), rt::InvalidStateError);
  EXPECT_NO_THROW(T.release()); // releasing twice is harmless
  // Only this handle dropped its reference.
  EXPECT_TRUE(static_cast<bool>(Other));
  EXPECT_EQ(Other.getElementCount(), 4u);

  rt::Tensor Empty;
  EXPECT_FALSE(static_cast<bool>(Empty));
  EXPECT_THROW(Empty.getElementCount(), rt::InvalidStateError);
  EXPECT_THROW(Empty.hasPadding(), rt::InvalidStateError);
  EXPECT_THROW(Empty.isUserBuffer(), rt::InvalidStateError);
  EXPECT_THROW(Empty.copyTo(Other), rt::InvalidStateError);
  EXPECT_THROW(Empty.load(tempPath("x")), rt::InvalidStateError);
  EXPECT_THROW(rt::TypedTensor<float> X(Empty), rt::InvalidStateError);
}

TEST(TensorTest, StringTensors) {
  rt::TypedTensor<std::string> S = rt::tensor<std::string>({3});
  EXPECT_EQ(S.getTensorSize(), 3 * sizeof(std::string));
  for (const std::string &E : S)
    EXPECT_TRUE(E.empty());
  S[0] = "alpha";
  S[1] = std::string(100, 'x'); // heap-allocated: must be destroyed with the tensor
  S[2] = "gamma";
  rt::TypedTensor<std::string> D = rt::tensor<std::string>({3});
  S.copyTo(D);
  EXPECT_EQ(D[0], "alpha");
  EXPECT_EQ(D[1], std::string(100, 'x'));
  rt::TypedTensor<std::string> C(S.clone());
  S[2] = "changed";
  EXPECT_EQ(C[2], "gamma");
  C.fill("same");
  EXPECT_EQ(C[0], "same");
  EXPECT_EQ(C[2], "same");
  EXPECT_THROW(S.save(tempPath("strings.bin")), rt::TypeError);

  // A user array of strings is viewed, not destroyed.
  std::string User[2] = {"u0", "u1"};
  {
    rt::TypedTensor<std::string> U = rt::tensor<std::string>({2}, User, false);
    U[1] = "written";
  }
  EXPECT_EQ(User[1], "written");
  EXPECT_EQ(User[0], "u0");
}

TEST(TensorTest, Float16ConversionRoundTripsEveryValue) {
  for (uint32_t B = 0; B < 0x10000; ++B) {
    const rt::float16 H = rt::float16::fromBits(static_cast<uint16_t>(B));
    const float F = H;
    const bool IsNaN = (B & 0x7c00) == 0x7c00 && (B & 0x3ff) != 0;
    if (IsNaN) {
      EXPECT_TRUE(std::isnan(F)) << B;
      EXPECT_TRUE(std::isnan(static_cast<float>(rt::float16(F)))) << B;
    } else {
      EXPECT_EQ(rt::float16(F).Bits, B) << "bits 0x" << std::hex << B;
    }
  }
}

TEST(TensorTest, Float16SpecialValuesAndRounding) {
  EXPECT_EQ(rt::float16(1.0f).Bits, 0x3c00);
  EXPECT_EQ(rt::float16(-2.0f).Bits, 0xc000);
  EXPECT_EQ(rt::float16(-0.0f).Bits, 0x8000);
  EXPECT_EQ(rt::float16(65504.0f).Bits, 0x7bff); // largest finite
  EXPECT_EQ(rt::float16(65519.0f).Bits, 0x7bff); // rounds down
  EXPECT_EQ(rt::float16(65520.0f).Bits, 0x7c00); // tie -> even -> infinity
  EXPECT_EQ(rt::float16(1e10f).Bits, 0x7c00);
  EXPECT_EQ(rt::float16(std::numeric_limits<float>::infinity()).Bits, 0x7c00);
  EXPECT_EQ(rt::float16(-std::numeric_limits<float>::infinity()).Bits, 0xfc00);
  EXPECT_TRUE(std::isnan(static_cast<float>(rt::float16(std::nanf("")))));
  EXPECT_TRUE(std::isinf(static_cast<float>(rt::float16::fromBits(0x7c00))));
  // Subnormals: 2^-24 is the smallest; 2^-25 is a tie that rounds to even (zero); 3*2^-25 to 2.
  EXPECT_EQ(rt::float16(std::ldexp(1.0f, -24)).Bits, 0x0001);
  EXPECT_EQ(rt::float16(std::ldexp(1.0f, -25)).Bits, 0x0000);
  EXPECT_EQ(rt::float16(std::ldexp(3.0f, -25)).Bits, 0x0002);
  EXPECT_EQ(rt::float16(std::ldexp(1.0f, -14)).Bits, 0x0400); // smallest normal
  EXPECT_EQ(static_cast<float>(rt::float16::fromBits(0x03ff)), std::ldexp(1023.0f, -24));
  // Normal ties: 1 + 2^-11 lies halfway between 0x3c00 and 0x3c01 -> even 0x3c00;
  // 1 + 3*2^-11 lies halfway between 0x3c01 and 0x3c02 -> even 0x3c02.
  EXPECT_EQ(rt::float16(1.0f + std::ldexp(1.0f, -11)).Bits, 0x3c00);
  EXPECT_EQ(rt::float16(1.0f + std::ldexp(3.0f, -11)).Bits, 0x3c02);
  EXPECT_EQ(rt::float16(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)).Bits, 0x3c01); // above the tie
}

TEST(TensorTest, BFloat16ConversionRoundTripAndRounding) {
  for (uint32_t B = 0; B < 0x10000; ++B) {
    const float F = rt::bfloat16::fromBits(static_cast<uint16_t>(B));
    const bool IsNaN = (B & 0x7f80) == 0x7f80 && (B & 0x7f) != 0;
    if (IsNaN)
      EXPECT_TRUE(std::isnan(static_cast<float>(rt::bfloat16(F)))) << B;
    else
      EXPECT_EQ(rt::bfloat16(F).Bits, B) << "bits 0x" << std::hex << B;
  }
  EXPECT_EQ(rt::bfloat16(1.0f).Bits, 0x3f80);
  EXPECT_EQ(rt::bfloat16(bitsFloat(0x3f808000u)).Bits, 0x3f80); // tie -> even
  EXPECT_EQ(rt::bfloat16(bitsFloat(0x3f818000u)).Bits, 0x3f82); // tie -> even
  EXPECT_EQ(rt::bfloat16(bitsFloat(0x3f808001u)).Bits, 0x3f81); // above the tie
  EXPECT_EQ(rt::bfloat16(std::numeric_limits<float>::infinity()).Bits, 0x7f80);
  EXPECT_EQ(rt::bfloat16(bitsFloat(0x7f7fffffu)).Bits, 0x7f80); // FLT_MAX rounds to infinity
  EXPECT_EQ(rt::bfloat16(bitsFloat(0x000116c2u)).Bits, 0x0001); // float subnormal
  EXPECT_EQ(floatBits(rt::bfloat16::fromBits(0x0001)), 0x00010000u);
  EXPECT_TRUE(std::isnan(static_cast<float>(rt::bfloat16(std::nanf("")))));
  EXPECT_TRUE(std::isnan(static_cast<float>(rt::bfloat16(bitsFloat(0x7f800001u))))); // NaN stays NaN
}

TEST(TensorTest, Float16AndBFloat16Tensors) {
  rt::TypedTensor<rt::float16> H = rt::tensor<rt::float16>({4});
  H.fill(rt::float16(0.5f));
  EXPECT_EQ(static_cast<float>(H[3]), 0.5f);
  EXPECT_EQ(H.getTensorSize(), 8u);
  rt::TypedTensor<rt::bfloat16> B = rt::tensor<rt::bfloat16>({2});
  B.fill(rt::bfloat16(3.0f));
  EXPECT_EQ(static_cast<float>(B[1]), 3.0f);
}

TEST(TensorTest, BufferWrapNeverFrees) {
  void *P = std::malloc(32);
  ASSERT_NE(P, nullptr);
  {
    auto B = rt::detail::Buffer::wrap(P, 32);
    EXPECT_FALSE(B->Owned);
    EXPECT_EQ(B->Data, P);
  }
  std::free(P); // a double free would abort here if wrap() had freed it
}

TEST(TensorTest, TensorViewsShareTheBuffer) {
  std::shared_ptr<rt::detail::Buffer> Arena = rt::detail::Buffer::allocate(256);
  ASSERT_TRUE(Arena);
  EXPECT_TRUE(Arena->Owned);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(Arena->Data) % rt::kTensorAlignment, 0u);
  rt::Tensor V = rt::detail::makeTensorView(rt::ElementType::F32, {2, 4}, Arena, 64);
  EXPECT_EQ(V.data(), static_cast<char *>(Arena->Data) + 64);
  EXPECT_EQ(V.getElementCount(), 8u);
  EXPECT_EQ(V.getShape()[1].value(), 4);
  EXPECT_FALSE(V.isUserBuffer());
  std::weak_ptr<rt::detail::Buffer> Weak = Arena;
  Arena.reset();
  EXPECT_FALSE(Weak.expired()); // the view keeps the arena alive
  rt::TypedTensor<float>(V).fill(1.0f);
  V.release();
  EXPECT_TRUE(Weak.expired());
}
