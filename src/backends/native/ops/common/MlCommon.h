// Shared by the ai.onnx.ml ops (scikit-learn models exported by skl2onnx / onnxmltools): attribute
// readers with errors naming node and attribute, the post transforms (NONE, SOFTMAX, LOGISTIC,
// SOFTMAX_ZERO, PROBIT) as ONNX Runtime computes them (float math), and input rows read as double.
#pragma once

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "backends/native/ops/common/OpUtil.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

constexpr const char *kMlDomain = "ai.onnx.ml";

/// A ModelError "node 'n' (Op): attribute 'a' <parts>".
template <typename... Args> Status attrError(const Node &N, const char *Attr, const Args &...Parts) {
  return makeError(ErrorCode::Model, N.describe(), ": attribute '", Attr, "' ", Parts...);
}

/// A strings attribute (empty when absent).
Result<std::vector<std::string>> mlStrings(const Node &N, const char *Attr);
/// A floats attribute, or (Attr + "_as_tensor") a tensor attribute of doubles or floats; both set
/// is an error. AsTensor reports whether the tensor form was used.
Result<std::vector<double>> mlFloatsOrTensor(const Node &N, const std::string &Attr, bool *AsTensor = nullptr);
/// A tensor attribute's values (any numeric type) as double; empty when absent.
Result<std::vector<double>> mlTensorValues(const Node &N, const char *Attr);

enum class PostTransform { None, Softmax, Logistic, SoftmaxZero, Probit };
/// The post_transform string attribute (default NONE).
Result<PostTransform> mlPostTransform(const Node &N);

float mlLogistic(float V);
float mlProbit(float V);
/// Applies T to N scores in place (N >= 2: every transform; N == 1: PROBIT only, as ORT does).
void mlTransformScores(PostTransform T, float *S, size_t N);

/// Row R of a 1-D ([C]: one row) or 2-D ([N, C]) input of a float or integer type, as double.
struct MlRows {
  int64_t Rows = 0, Cols = 0;
  /// Row R into Out (Cols values).
  void row(const TensorView &X, int64_t R, double *Out) const;
};
Result<MlRows> mlRows(const char *Kernel, const TensorView &X);

/// Calls Fn(T()) with T the C++ type of Type when it is float, double, int64 or int32; false otherwise.
template <typename F> bool mlVisitNumeric(ElementType Type, F &&Fn) {
  switch (Type) {
  case ElementType::F32: Fn(float()); return true;
  case ElementType::F64: Fn(double()); return true;
  case ElementType::I64: Fn(int64_t()); return true;
  case ElementType::I32: Fn(int32_t()); return true;
  default: return false;
  }
}

/// The input types most ai.onnx.ml ops take.
inline Status requireMlNumeric(const ShapeContext &Ctx, size_t I) {
  return requireInputType(Ctx, I, {ElementType::F32, ElementType::F64, ElementType::I64, ElementType::I32});
}

/// A schema of domain ai.onnx.ml with one input and one output.
inline OpSchema mlSchema(const char *OpType, ShapeFn Infer) {
  OpSchema S;
  S.Domain = kMlDomain;
  S.OpType = OpType;
  S.MinInputs = S.MaxInputs = 1;
  S.Infer = std::move(Infer);
  return S;
}

/// [N, C] / [C] input shape of an ai.onnx.ml op as (N, C) expressions; ShapeError otherwise.
Status mlInputShape(const ShapeContext &Ctx, Expr &N, Expr &C);

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
