// The op schema registry (filled by static registrars in each op's file), arity checking around
// every schema's inference function, and numpy broadcasting over symbolic shapes.
#include "ir/OpSchema.h"

#include "ir/HalfPromotion.h"
#include "core/PendingFactories.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <vector>
#include <utility>

#include "Optimium/Runtime/Exceptions.h"

namespace optimium {
namespace runtime {
namespace detail {

namespace {

struct SchemaRegistry {
  std::mutex Lock;
  std::map<std::pair<std::string, std::string>, std::unique_ptr<OpSchema>> Schemas;
  /// Registered but not built yet, by op name.
  PendingFactories<OpSchemaFactory> Pending;
};

// Function-local static: registrars run from other translation units' static initializers, in an
// order we do not control.
SchemaRegistry &registry() {
  static SchemaRegistry R;
  return R;
}

std::string domainName(const std::string &Domain) { return Domain.empty() ? "ai.onnx" : Domain; }

void addLocked(SchemaRegistry &R, OpSchema Schema) {
  auto Key = std::make_pair(Schema.Domain, Schema.OpType);
  // First registration wins; pointers handed out by findOpSchema stay valid.
  if (!R.Schemas.count(Key))
    R.Schemas.emplace(std::move(Key), std::make_unique<OpSchema>(std::move(Schema)));
}

/// Builds the pending schemas registered as OpType (every pending one when OpType is null).
void buildPendingLocked(SchemaRegistry &R, const std::string *OpType) {
  R.Pending.build(OpType, [&R](OpSchema S) { addLocked(R, std::move(S)); });
}

} // namespace

void registerOpSchema(OpSchema Schema) {
  SchemaRegistry &R = registry();
  std::lock_guard<std::mutex> G(R.Lock);
  addLocked(R, std::move(Schema));
}

void registerOpSchemaFactory(const char *OpType, OpSchemaFactory Make) {
  SchemaRegistry &R = registry();
  std::lock_guard<std::mutex> G(R.Lock);
  R.Pending.add(OpType, Make);
}

const OpSchema *findOpSchema(const std::string &Domain, const std::string &OpType) {
  SchemaRegistry &R = registry();
  std::lock_guard<std::mutex> G(R.Lock);
  // "ai.onnx" and "" are the same domain.
  const auto Key = std::make_pair(Domain == "ai.onnx" ? std::string() : Domain, OpType);
  auto It = R.Schemas.find(Key);
  if (It == R.Schemas.end()) {
    // Registrations are named by OpType, also those of other domains (com.microsoft QLinearAdd).
    buildPendingLocked(R, &OpType);
    It = R.Schemas.find(Key);
  }
  if (It == R.Schemas.end() && !R.Pending.empty()) {
    // Not under its own name: build everything once (a registration named differently from its
    // OpType, or another domain) before saying the op is unknown.
    buildPendingLocked(R, nullptr);
    It = R.Schemas.find(Key);
  }
  return It == R.Schemas.end() ? nullptr : It->second.get();
}

std::vector<const OpSchema *> allOpSchemas() {
  SchemaRegistry &R = registry();
  std::lock_guard<std::mutex> G(R.Lock);
  buildPendingLocked(R, nullptr);
  std::vector<const OpSchema *> Out;
  for (const auto &KV : R.Schemas)
    Out.push_back(KV.second.get());
  return Out;
}

Expr ShapeContext::newSymbol() {
  static std::atomic<uint64_t> Counter{0};
  return Expr("unk__" + std::to_string(Counter.fetch_add(1)));
}

Status inferNode(ShapeContext &Ctx) {
  const Node &N = Ctx.N;
  const OpSchema *S = findOpSchema(N.Domain, N.OpType);
  if (!S)
    return makeError(ErrorCode::Model, "unsupported op '", N.OpType, "' (domain '", domainName(N.Domain),
                     "') at node '", N.Name, "'");
  if (N.OpsetVersion > S->MaxOpsetVersion)
    return Ctx.error(ErrorCode::Model, "opset ", N.OpsetVersion, " is newer than the supported opset ",
                     S->MaxOpsetVersion, " of ", N.OpType);

  const int NumIn = static_cast<int>(N.Inputs.size());
  if (NumIn < S->MinInputs || (S->MaxInputs >= 0 && NumIn > S->MaxInputs)) {
    if (S->MaxInputs < 0)
      return Ctx.error(ErrorCode::Model, "expected at least ", S->MinInputs, " inputs, got ", NumIn);
    if (S->MinInputs == S->MaxInputs)
      return Ctx.error(ErrorCode::Model, "expected ", S->MinInputs, " inputs, got ", NumIn);
    return Ctx.error(ErrorCode::Model, "expected ", S->MinInputs, " to ", S->MaxInputs, " inputs, got ", NumIn);
  }
  const int NumOut = static_cast<int>(N.Outputs.size());
  if (NumOut < S->MinOutputs || (S->MaxOutputs >= 0 && NumOut > S->MaxOutputs)) {
    if (S->MinOutputs == S->MaxOutputs)
      return Ctx.error(ErrorCode::Model, "expected ", S->MinOutputs, " outputs, got ", NumOut);
    return Ctx.error(ErrorCode::Model, "expected ", S->MinOutputs, " to ", S->MaxOutputs, " outputs, got ", NumOut);
  }
  if (Ctx.Inputs.size() < N.Inputs.size())
    Ctx.Inputs.resize(N.Inputs.size());
  for (int I = 0; I < S->MinInputs && I < NumIn; ++I)
    if (N.Inputs[I] < 0 || !Ctx.Inputs[I].Present)
      return Ctx.error(ErrorCode::Model, "required input ", I, " is missing");
  Ctx.Outputs.resize(N.Outputs.size());
  for (size_t I = 0; I < N.Outputs.size(); ++I)
    Ctx.Outputs[I].Present = N.Outputs[I] >= 0;
  if (!S->TakesContainers)
    for (size_t I = 0; I < Ctx.Inputs.size(); ++I)
      if (Ctx.Inputs[I].Present && isContainerKind(Ctx.Inputs[I].Kind))
        return Ctx.error(ErrorCode::Type, "input ", I, " is a ", toString(Ctx.Inputs[I].Kind), " value; ", N.OpType,
                         " takes tensors");

  if (!S->Infer)
    return Status::ok();
  // Expr (the public symbolic dimension type, implemented in core) reports a division by zero in a
  // bad model by throwing ShapeError, its documented contract; this is the one place the graph
  // layer turns that into a Status, and nothing else is caught.
  try {
    Status Result = S->Infer(Ctx);
    if (Result.isOk() || Result.code() != ErrorCode::Type || !hasHalfValues(Ctx.Inputs))
      return Result;
    for (const ValueInfo &In : Ctx.Inputs)
      if (In.Present && isContainerKind(In.Kind))
        return Result; // a sequence/optional type error is not a half-precision fallback case
    // A float32-only op given float16/bfloat16: infer as float32, produce the half type
    // (the native backend converts at the op boundary; see ir/HalfPromotion.h).
    ShapeContext Promoted(N);
    Promoted.Inputs = promoteHalfToFloat(Ctx.Inputs);
    Promoted.Outputs = Ctx.Outputs;
    if (!S->Infer(Promoted).isOk())
      return Result;
    const ElementType Half = halfTypeOf(Ctx.Inputs);
    for (size_t I = 0; I < Ctx.Outputs.size(); ++I) {
      Ctx.Outputs[I] = Promoted.Outputs[I];
      Ctx.Outputs[I].Const = nullptr; // not folded: the value would be float32
      if (Ctx.Outputs[I].Type == ElementType::F32)
        Ctx.Outputs[I].Type = Half;
    }
    return Status::ok();
  } catch (const ShapeError &E) {
    return Ctx.error(ErrorCode::Shape, E.what());
  }
}

Result<TensorShape> broadcastShapes(const TensorShape &A, const TensorShape &B) {
  const size_t Rank = std::max(A.getRank(), B.getRank());
  std::vector<Expr> Out(Rank);
  for (size_t I = 0; I < Rank; ++I) {
    // Align from the right; missing leading dims act as 1.
    const Expr DA = I + A.getRank() >= Rank ? A[I + A.getRank() - Rank] : Expr(1);
    const Expr DB = I + B.getRank() >= Rank ? B[I + B.getRank() - Rank] : Expr(1);
    if (DA == DB) {
      Out[I] = DA;
    } else if (DA.isConst() && DA.value() == 1) {
      Out[I] = DB;
    } else if (DB.isConst() && DB.value() == 1) {
      Out[I] = DA;
    } else if (DA.isConst() && DB.isConst()) {
      return makeError(ErrorCode::Shape, "cannot broadcast shapes ", A.toString(), " and ", B.toString(),
                       " (dimension ", DA.value(), " vs ", DB.value(), ")");
    } else if (DA.isConst()) {
      Out[I] = DA; // a symbol meeting c > 1 must be c (or 1)
    } else if (DB.isConst()) {
      Out[I] = DB;
    } else {
      // Two different symbols: valid inputs make them equal or one of them 1, so max is exact.
      Out[I] = max(DA, DB);
    }
  }
  return TensorShape(std::move(Out));
}

} // namespace detail
} // namespace runtime
} // namespace optimium
