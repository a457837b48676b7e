// Operator schemas known to the runtime: arity and shape/type inference. Each op registers its
// schema in its own file (backends/native/ops/<Op>.cpp) with OPT_REGISTER_SCHEMA.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ir/Graph.h"

namespace optimium {
namespace runtime {
namespace detail {

/// What inference knows about one input or output of a node.
struct ValueInfo {
  bool Present = false; ///< false for an omitted optional input/output
  ValueKind Kind = ValueKind::Tensor; ///< Sequence/optional: Type and Shape describe the elements.
  ElementType Type = ElementType::Undefined;
  TensorShape Shape;
  /// The value when it is known before running (initializers, folded constants).
  std::shared_ptr<ConstData> Const;
  /// Shape is a guess: the rank itself is known only while running (an If whose branches return
  /// different ranks, e.g. Squeeze in one and Identity in the other, and whatever reads it).
  /// Such values are sized at run time, never planned from Shape.
  bool RankUnknown = false;
};

struct ShapeContext {
  ShapeContext(const Node &N) : N(N) {}
  const Node &N;
  std::vector<ValueInfo> Inputs;  ///< One per N.Inputs entry.
  std::vector<ValueInfo> Outputs; ///< One per N.Outputs entry; the schema fills Type and Shape.

  bool hasInput(size_t I) const { return I < Inputs.size() && Inputs[I].Present; }
  /// Error with the node named first: "node 'conv1' (Conv): <parts>".
  template <typename... Args> Status error(ErrorCode Code, const Args &...Parts) const {
    return makeError(Code, N.describe(), ": ", Parts...);
  }
  /// A fresh symbol for a dimension that depends on data ("unk__<n>").
  Expr newSymbol();
};

using ShapeFn = std::function<Status(ShapeContext &)>;

struct OpSchema {
  std::string Domain; ///< "" = ai.onnx
  std::string OpType;
  int MinInputs = 0;
  int MaxInputs = 0; ///< -1 = variadic
  int MinOutputs = 1;
  int MaxOutputs = 1;
  /// Highest opset version of this op whose semantics the implementation follows.
  int MaxOpsetVersion = 1000;
  /// Whether inputs may be sequence/optional values (else such an input is a TypeError at load).
  bool TakesContainers = false;
  /// GEMM-class work: a kernel call does enough to be worth running beside another op (the Auto
  /// scheduler picks Pipeline when two heavy ops are independent). Set with OPT_REGISTER_HEAVY_SCHEMA.
  bool Heavy = false;
  ShapeFn Infer;
};

void registerOpSchema(OpSchema Schema);
const OpSchema *findOpSchema(const std::string &Domain, const std::string &OpType);
std::vector<const OpSchema *> allOpSchemas();

/// Runs the schema of N on Ctx (checks arity first). ModelError for an unknown op.
Status inferNode(ShapeContext &Ctx);

/// Multidirectional (numpy) broadcasting of two shapes; ShapeError naming both when impossible.
Result<TensorShape> broadcastShapes(const TensorShape &A, const TensorShape &B);

/// Makes the schema of one op; OPT_REGISTER_SCHEMA registers it under the op's name (which must be
/// the schema's OpType, default domain) and it runs on the first lookup of that op, so loading the
/// library touches no op's code (only the ops a model uses are ever built).
using OpSchemaFactory = OpSchema (*)();
void registerOpSchemaFactory(const char *OpType, OpSchemaFactory Make);

struct SchemaRegistrar {
  SchemaRegistrar(const char *OpType, OpSchemaFactory Make) { registerOpSchemaFactory(OpType, Make); }
};

#define OPT_REGISTER_SCHEMA(Id, ...)                                                               \
  static ::optimium::runtime::detail::SchemaRegistrar OPT_CONCAT(OptSchemaRegistrar_, Id)(        \
      #Id, []() -> ::optimium::runtime::detail::OpSchema { return __VA_ARGS__; })
/// The same for an op whose kernels do GEMM-class work (OpSchema::Heavy).
#define OPT_REGISTER_HEAVY_SCHEMA(Id, ...)                                                         \
  static ::optimium::runtime::detail::SchemaRegistrar OPT_CONCAT(OptSchemaRegistrar_, Id)(        \
      #Id, []() -> ::optimium::runtime::detail::OpSchema {                                         \
        ::optimium::runtime::detail::OpSchema S = __VA_ARGS__;                                     \
        S.Heavy = true;                                                                            \
        return S;                                                                                  \
      })

} // namespace detail
} // namespace runtime
} // namespace optimium
