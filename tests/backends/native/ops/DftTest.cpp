// DFT values against a long-double direct DFT: FFT lengths (forward in double, inverse in float)
// and direct-sum lengths (primes), complex and real input, inverse, onesided (rfft) and irfft,
// dft_length padding and truncation, and signal axes first, middle and last.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "OnnxBuilder.h"
#include "Optimium/Runtime.h"

namespace rt = optimium::runtime;
using namespace optimium_test;

namespace {

struct DftCase {
  std::vector<int64_t> Dims; ///< of x, last dim 1 (real) or 2 (complex)
  int64_t Axis = -2;
  int64_t Length = -1; ///< dft_length; -1: omitted
  bool Inverse = false, Onesided = false;
};

std::string describe(const DftCase &C) {
  std::string S = "x";
  for (int64_t D : C.Dims)
    S += " " + std::to_string(D);
  return S + " axis " + std::to_string(C.Axis) + " length " + std::to_string(C.Length) + (C.Inverse ? " inverse" : "") +
         (C.Onesided ? " onesided" : "");
}

std::vector<float> inputValues(const DftCase &C) {
  size_t Count = 1;
  for (int64_t D : C.Dims)
    Count *= static_cast<size_t>(D);
  std::vector<float> X(Count);
  for (size_t I = 0; I < Count; ++I)
    X[I] = static_cast<float>(static_cast<int>((I * 7919 + 13) % 211) - 105) / 37.0f;
  return X;
}

std::vector<float> runDft(const DftCase &C, const std::vector<float> &X) {
  OnnxBuilder B(20);
  B.input("x", onnx::TensorProto_DataType_FLOAT, C.Dims);
  std::vector<std::string> Inputs = {"x", "", "axis"};
  if (C.Length >= 0) {
    B.initializerI64("len", {}, {C.Length});
    Inputs[1] = "len";
  }
  B.initializerI64("axis", {}, {C.Axis});
  auto *N = B.node("DFT", Inputs, {"y"});
  OnnxBuilder::attrInt(N, "inverse", C.Inverse ? 1 : 0);
  OnnxBuilder::attrInt(N, "onesided", C.Onesided ? 1 : 0);
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  const std::string Bytes = B.bytes();
  rt::Model M = rt::loadModel(reinterpret_cast<const uint8_t *>(Bytes.data()), Bytes.size());
  std::vector<rt::Tensor> In = {rt::tensor(rt::ElementType::F32, M.getTensorInfo("x").Shape)};
  std::memcpy(In[0].data(), X.data(), X.size() * sizeof(float));
  rt::InferRequest R = M.createRequest();
  R.infer(rt::make_array(In));
  R.wait();
  const rt::Tensor Y = R.getOutput("y");
  const float *P = static_cast<const float *>(Y.data());
  return std::vector<float>(P, P + Y.getElementCount());
}

/// ONNX DFT semantics, each line summed directly in long double.
std::vector<long double> referenceDft(const DftCase &C, const std::vector<float> &X) {
  const size_t R = C.Dims.size(), Ax = static_cast<size_t>(C.Axis < 0 ? C.Axis + static_cast<int64_t>(R) : C.Axis);
  const int64_t L = C.Dims[Ax], Ch = C.Dims[R - 1];
  const int64_t N = C.Length >= 0 ? C.Length : (C.Inverse && C.Onesided ? 2 * (L - 1) : L);
  const int64_t OutCount = !C.Inverse && C.Onesided ? N / 2 + 1 : N, OutCh = C.Inverse && C.Onesided ? 1 : 2;
  int64_t Outer = 1, Inner = 1;
  for (size_t I = 0; I < Ax; ++I)
    Outer *= C.Dims[I];
  for (size_t I = Ax + 1; I + 1 < R; ++I)
    Inner *= C.Dims[I];
  const long double Pi = 3.141592653589793238462643383279502884L, Sign = C.Inverse ? 1 : -1;
  std::vector<long double> Y(static_cast<size_t>(Outer * OutCount * Inner * OutCh));
  for (int64_t O = 0; O < Outer; ++O)
    for (int64_t I = 0; I < Inner; ++I) {
      const auto at = [&](int64_t K, int64_t Part) -> long double {
        return Part < Ch ? X[static_cast<size_t>(((O * L + K) * Inner + I) * Ch + Part)] : 0.0L;
      };
      std::vector<long double> Re(static_cast<size_t>(N)), Im(static_cast<size_t>(N));
      for (int64_t K = 0; K < N; ++K) {
        if (C.Inverse && C.Onesided) { // Hermitian: bins 0 and N/2 real
          const int64_t From = K <= N / 2 ? K : N - K;
          Re[static_cast<size_t>(K)] = From < L ? at(From, 0) : 0;
          const long double Imag = From < L && From != 0 && 2 * From != N ? at(From, 1) : 0;
          Im[static_cast<size_t>(K)] = K <= N / 2 ? Imag : -Imag;
        } else {
          Re[static_cast<size_t>(K)] = K < L ? at(K, 0) : 0;
          Im[static_cast<size_t>(K)] = K < L ? at(K, 1) : 0;
        }
      }
      for (int64_t K = 0; K < OutCount; ++K) {
        long double SRe = 0, SIm = 0;
        for (int64_t T = 0; T < N; ++T) {
          const long double A = 2 * Pi * static_cast<long double>((K * T) % N) / static_cast<long double>(N);
          const long double Co = std::cos(A), Si = Sign * std::sin(A);
          SRe += Re[static_cast<size_t>(T)] * Co - Im[static_cast<size_t>(T)] * Si;
          SIm += Re[static_cast<size_t>(T)] * Si + Im[static_cast<size_t>(T)] * Co;
        }
        const long double Scale = C.Inverse ? 1.0L / static_cast<long double>(N) : 1.0L;
        long double *P = &Y[static_cast<size_t>(((O * OutCount + K) * Inner + I) * OutCh)];
        P[0] = SRe * Scale;
        if (OutCh == 2)
          P[1] = SIm * Scale;
      }
    }
  return Y;
}

void expectMatchesReference(const DftCase &C) {
  SCOPED_TRACE(describe(C));
  const std::vector<float> X = inputValues(C);
  const std::vector<float> Y = runDft(C, X);
  const std::vector<long double> Ref = referenceDft(C, X);
  ASSERT_EQ(Y.size(), Ref.size());
  long double Norm = 0;
  for (long double V : Ref)
    Norm = std::max(Norm, std::fabs(V));
  for (size_t I = 0; I < Y.size(); ++I)
    ASSERT_NEAR(Y[I], static_cast<double>(Ref[I]), static_cast<double>(2e-6L * Norm) + 1e-7) << "element " << I;
}

TEST(DftModel, FftLengthsMatchDirectSum) {
  expectMatchesReference({{2, 10, 3, 1}, 1});
  expectMatchesReference({{3, 12, 2}});
  expectMatchesReference({{3, 12, 2}, -2, -1, true});
  expectMatchesReference({{1, 77, 2}, 1});
  expectMatchesReference({{1, 77, 2}, 1, -1, true});
  expectMatchesReference({{2, 64, 2}, 1, -1, true});
  expectMatchesReference({{2, 3, 20, 1}, 2});
  expectMatchesReference({{6, 4, 2}, 0, -1, true}); // the signal axis is the first one
}

TEST(DftModel, PrimeLengthsMatchDirectSum) {
  expectMatchesReference({{2, 13, 3, 2}, 1});
  expectMatchesReference({{3, 17, 2}, -2, -1, true});
  expectMatchesReference({{2, 13, 1}, 1, -1, false, true});
}

TEST(DftModel, LengthPadsOrTruncates) {
  expectMatchesReference({{4, 5, 2}, 1, 8});
  expectMatchesReference({{4, 5, 2}, 1, 3, true});
  expectMatchesReference({{2, 6, 1}, -2, 9, false, true});
  expectMatchesReference({{2, 6, 1}, -2, 13, false, true});
}

TEST(DftModel, OnesidedAndIrfft) {
  expectMatchesReference({{2, 16, 1}, 1, -1, false, true});
  expectMatchesReference({{2, 9, 1}, 1, -1, false, true});
  expectMatchesReference({{2, 6, 2}, 1, -1, true, true});  // irfft, N = 10
  expectMatchesReference({{2, 7, 2}, 1, -1, true, true});  // N = 12
  expectMatchesReference({{2, 7, 2}, 1, 13, true, true}); // odd N, direct sum
}

// A real signal's bins 0 and N/2 are real: the one-sided output says so exactly, as a real FFT would.
TEST(DftModel, RealInputOnesidedDcAndNyquistAreExactlyReal) {
  for (const int64_t N : {16, 10, 26}) {
    const DftCase C{{3, N, 1}, 1, -1, false, true};
    const std::vector<float> Y = runDft(C, inputValues(C));
    const int64_t Bins = N / 2 + 1;
    for (int64_t B = 0; B < 3; ++B) {
      EXPECT_EQ(Y[static_cast<size_t>((B * Bins) * 2 + 1)], 0.0f) << N;
      EXPECT_EQ(Y[static_cast<size_t>((B * Bins + N / 2) * 2 + 1)], 0.0f) << N;
    }
  }
}

} // namespace
