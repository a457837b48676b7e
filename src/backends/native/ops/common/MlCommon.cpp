// Attribute readers, post transforms and row access of the ai.onnx.ml ops.
#include "backends/native/ops/common/MlCommon.h"

#include <algorithm>

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

Result<std::vector<std::string>> mlStrings(const Node &N, const char *Attr) {
  auto It = N.Attrs.find(Attr);
  if (It == N.Attrs.end())
    return std::vector<std::string>();
  if (It->second.K != AttrValue::Kind::Strings)
    return attrError(N, Attr, "must be a list of strings");
  return It->second.Strings;
}

Result<std::vector<double>> mlTensorValues(const Node &N, const char *Attr) {
  auto It = N.Attrs.find(Attr);
  if (It == N.Attrs.end())
    return std::vector<double>();
  if (It->second.K == AttrValue::Kind::Floats)
    return std::vector<double>(It->second.Floats.begin(), It->second.Floats.end());
  if (It->second.K != AttrValue::Kind::Tensor || !It->second.T)
    return attrError(N, Attr, "must be a tensor");
  Result<std::vector<double>> V = It->second.T->toDoubleVector();
  if (!V.isOk())
    return attrError(N, Attr, "cannot be read: ", V.status().message());
  return V;
}

Result<std::vector<double>> mlFloatsOrTensor(const Node &N, const std::string &Attr, bool *AsTensor) {
  const std::string TensorAttr = Attr + "_as_tensor";
  const bool HasList = N.hasAttr(Attr), HasTensor = N.hasAttr(TensorAttr);
  if (AsTensor)
    *AsTensor = HasTensor;
  if (HasList && HasTensor)
    return attrError(N, Attr.c_str(), "and '", TensorAttr, "' are both set; give one of them");
  if (HasTensor)
    return mlTensorValues(N, TensorAttr.c_str());
  ASSIGN_OR_RETURN(const std::vector<float> F, N.getFloats(Attr, {}));
  return std::vector<double>(F.begin(), F.end());
}

Result<PostTransform> mlPostTransform(const Node &N) {
  ASSIGN_OR_RETURN(const std::string S, N.getString("post_transform", "NONE"));
  if (S == "NONE")
    return PostTransform::None;
  if (S == "SOFTMAX")
    return PostTransform::Softmax;
  if (S == "LOGISTIC")
    return PostTransform::Logistic;
  if (S == "SOFTMAX_ZERO")
    return PostTransform::SoftmaxZero;
  if (S == "PROBIT")
    return PostTransform::Probit;
  return attrError(N, "post_transform", "is '", S, "', expected NONE, SOFTMAX, LOGISTIC, SOFTMAX_ZERO or PROBIT");
}

float mlLogistic(float V) {
  const float E = 1.0f / (1.0f + std::exp(-std::abs(V)));
  return V < 0 ? 1.0f - E : E;
}

float mlProbit(float V) {
  // sqrt(2) * erfinv(2 v - 1), erfinv by Winitzki's approximation (a = 0.147), as ORT computes it.
  float X = 2 * V - 1;
  const float Sign = X < 0 ? -1.0f : 1.0f;
  X = (1 - X) * (1 + X);
  const float L = std::log(X);
  const float A = 2 / (3.14159265358979323846f * 0.147f) + 0.5f * L;
  const float B = 1 / 0.147f * L;
  return 1.41421356237309504880f * Sign * std::sqrt(-A + std::sqrt(A * A - B));
}

void mlTransformScores(PostTransform T, float *S, size_t N) {
  if (N == 1) {
    if (T == PostTransform::Probit)
      S[0] = mlProbit(S[0]);
    return;
  }
  switch (T) {
  case PostTransform::None: break;
  case PostTransform::Probit:
    for (size_t I = 0; I < N; ++I)
      S[I] = mlProbit(S[I]);
    break;
  case PostTransform::Logistic:
    for (size_t I = 0; I < N; ++I)
      S[I] = mlLogistic(S[I]);
    break;
  case PostTransform::Softmax:
  case PostTransform::SoftmaxZero: {
    const bool Zero = T == PostTransform::SoftmaxZero;
    float Max = -std::numeric_limits<float>::max();
    for (size_t I = 0; I < N; ++I)
      Max = std::max(Max, S[I]);
    const float ExpNegMax = std::exp(-Max);
    float Sum = 0;
    for (size_t I = 0; I < N; ++I) {
      if (Zero && S[I] <= 0.0000001f && S[I] >= -0.0000001f) {
        S[I] = S[I] * ExpNegMax; // SOFTMAX_ZERO leaves (near-)zero scores out of the sum
      } else {
        S[I] = std::exp(S[I] - Max);
        Sum += S[I];
      }
    }
    for (size_t I = 0; I < N; ++I)
      S[I] = S[I] / Sum;
    break;
  }
  }
}

void MlRows::row(const TensorView &X, int64_t R, double *Out) const {
  const size_t Base = static_cast<size_t>(R * Cols);
  switch (X.Type) {
  case ElementType::F32:
    for (int64_t C = 0; C < Cols; ++C)
      Out[C] = X.data<float>()[Base + C];
    break;
  case ElementType::F64:
    for (int64_t C = 0; C < Cols; ++C)
      Out[C] = X.data<double>()[Base + C];
    break;
  case ElementType::I64:
    for (int64_t C = 0; C < Cols; ++C)
      Out[C] = static_cast<double>(X.data<int64_t>()[Base + C]);
    break;
  case ElementType::I32:
    for (int64_t C = 0; C < Cols; ++C)
      Out[C] = X.data<int32_t>()[Base + C];
    break;
  default: break;
  }
}

Result<MlRows> mlRows(const char *Kernel, const TensorView &X) {
  if (X.rank() != 1 && X.rank() != 2)
    return runError(Kernel, "input must be 1-D or 2-D, got ", joinInts(X.Dims));
  if (X.Type != ElementType::F32 && X.Type != ElementType::F64 && X.Type != ElementType::I64 &&
      X.Type != ElementType::I32)
    return runError(Kernel, "input element type ", toString(X.Type), " is not supported");
  MlRows R;
  R.Rows = X.rank() == 1 ? 1 : X.Dims[0];
  R.Cols = X.Dims.back();
  return R;
}

Status mlInputShape(const ShapeContext &Ctx, Expr &N, Expr &C) {
  const TensorShape &S = Ctx.Inputs[0].Shape;
  if (S.getRank() == 1) {
    N = Expr(1);
    C = S[0];
  } else if (S.getRank() == 2) {
    N = S[0];
    C = S[1];
  } else {
    return Ctx.error(ErrorCode::Shape, "input 0 ", S.toString(), " must be 1-D [C] or 2-D [N, C]");
  }
  return Status::ok();
}

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
