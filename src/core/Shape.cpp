// Symbolic shape arithmetic: Expr trees over named symbols with eager constant folding and a few
// canonical rewrites (constants on the right, merged constant offsets/factors), and TensorShape.
#include "Optimium/Runtime/Shape.h"

#include <algorithm>
#include <sstream>

#include "Optimium/Runtime/Exceptions.h"
#include "core/ExprTree.h"

namespace optimium {
namespace runtime {

enum class ExprKind { Symbol, Add, Sub, Mul, Div, Mod, Min, Max };

/// A node of a symbolic expression. Constants never get a node: they live inline in Expr, so a
/// node's children may be constants (Expr with a null node).
struct ExprNode {
  ExprKind Kind;
  std::string Name; ///< Symbol only.
  Expr L, R;        ///< Operands (binary kinds only).
};

namespace {

Expr makeNode(ExprKind Kind, const Expr &L, const Expr &R) {
  auto N = std::make_shared<ExprNode>();
  N->Kind = Kind;
  N->L = L;
  N->R = R;
  return Expr(std::shared_ptr<const ExprNode>(std::move(N)));
}

ExprKind kindOf(const Expr &E) { return E.node()->Kind; }
bool isKind(const Expr &E, ExprKind K) { return !E.isConst() && E.node()->Kind == K; }
bool isConstValue(const Expr &E, int64_t V) { return E.isConst() && E.value() == V; }

int64_t floorDiv(int64_t A, int64_t B) {
  if (B == 0)
    throw ShapeError("division by zero in shape expression");
  int64_t Q = A / B;
  if ((A % B != 0) && ((A < 0) != (B < 0)))
    --Q;
  return Q;
}

int64_t floorMod(int64_t A, int64_t B) {
  if (B == 0)
    throw ShapeError("modulo by zero in shape expression");
  int64_t R = A % B;
  if (R != 0 && ((R < 0) != (B < 0)))
    R += B;
  return R;
}

int precedence(const Expr &E) {
  if (E.isConst())
    return E.value() < 0 ? 1 : 3; // a negative constant binds like a subtraction
  switch (kindOf(E)) {
  case ExprKind::Add:
  case ExprKind::Sub: return 1;
  case ExprKind::Mul:
  case ExprKind::Div:
  case ExprKind::Mod: return 2;
  default: return 3; // symbols and min()/max() calls are atoms
  }
}

std::string wrap(const Expr &E, bool Paren) { return Paren ? "(" + E.toString() + ")" : E.toString(); }

} // namespace

Expr::Expr(const char *Symbol) : Expr(std::string(Symbol)) {}

Expr::Expr(const std::string &Symbol) : Value(0) {
  auto N = std::make_shared<ExprNode>();
  N->Kind = ExprKind::Symbol;
  N->Name = Symbol;
  Node = std::move(N);
}

Expr::Expr(std::shared_ptr<const ExprNode> N) : Value(0), Node(std::move(N)) {}

bool Expr::isSymbol() const { return Node && Node->Kind == ExprKind::Symbol; }

int64_t Expr::value() const {
  if (Node)
    throw ShapeError("shape expression '" + toString() + "' is not a constant");
  return Value;
}

std::string Expr::symbol() const {
  if (!isSymbol())
    throw ShapeError("shape expression '" + toString() + "' is not a symbol");
  return Node->Name;
}

std::vector<std::string> Expr::symbols() const {
  std::vector<std::string> Out;
  std::vector<const ExprNode *> Stack;
  if (Node)
    Stack.push_back(Node.get());
  while (!Stack.empty()) {
    const ExprNode *N = Stack.back();
    Stack.pop_back();
    if (N->Kind == ExprKind::Symbol) {
      if (std::find(Out.begin(), Out.end(), N->Name) == Out.end())
        Out.push_back(N->Name);
      continue;
    }
    // Push right first so symbols come out left to right.
    if (N->R.node())
      Stack.push_back(N->R.node().get());
    if (N->L.node())
      Stack.push_back(N->L.node().get());
  }
  return Out;
}

Expr Expr::resolve(const std::map<std::string, int64_t> &Variables) const {
  if (!Node)
    return *this;
  if (Node->Kind == ExprKind::Symbol) {
    auto It = Variables.find(Node->Name);
    return It == Variables.end() ? *this : Expr(static_cast<long long>(It->second));
  }
  // Rebuild through the operators so the result is folded again.
  const Expr L = Node->L.resolve(Variables), R = Node->R.resolve(Variables);
  switch (Node->Kind) {
  case ExprKind::Add: return L + R;
  case ExprKind::Sub: return L - R;
  case ExprKind::Mul: return L * R;
  case ExprKind::Div: return L / R;
  case ExprKind::Mod: return L % R;
  case ExprKind::Min: return min(L, R);
  case ExprKind::Max: return max(L, R);
  case ExprKind::Symbol: break;
  }
  return *this;
}

std::string Expr::toString() const {
  if (!Node)
    return std::to_string(Value);
  const ExprNode &N = *Node;
  switch (N.Kind) {
  case ExprKind::Symbol: return N.Name;
  case ExprKind::Min: return "min(" + N.L.toString() + ", " + N.R.toString() + ")";
  case ExprKind::Max: return "max(" + N.L.toString() + ", " + N.R.toString() + ")";
  case ExprKind::Add:
    // x + (-3) prints as x-3.
    if (N.R.isConst() && N.R.value() < 0)
      return wrap(N.L, false) + "-" + std::to_string(-N.R.value());
    return wrap(N.L, false) + "+" + wrap(N.R, precedence(N.R) < 1);
  case ExprKind::Sub: return wrap(N.L, false) + "-" + wrap(N.R, precedence(N.R) <= 1);
  case ExprKind::Mul: return wrap(N.L, precedence(N.L) < 2) + "*" + wrap(N.R, precedence(N.R) < 2);
  case ExprKind::Div: return wrap(N.L, precedence(N.L) < 2) + "/" + wrap(N.R, precedence(N.R) <= 2);
  case ExprKind::Mod: return wrap(N.L, precedence(N.L) < 2) + "%" + wrap(N.R, precedence(N.R) <= 2);
  }
  return "?";
}

// Canonical forms kept by the operators: a constant operand of + and * is on the right, x - c is
// stored as x + (-c), and chains like (x + 1) + 2 or (x * 2) * 3 are merged. That is enough for
// shape inference to cancel factors again (batch*12 / 12 -> batch).
namespace {
// Folding constant dims of a hostile model (a 15 x INT64_MAX product) must not overflow (undefined
// behaviour): results saturate at the int64 limits, which no later size check accepts.
int64_t satAdd(int64_t A, int64_t B) {
  int64_t R;
  if (__builtin_add_overflow(A, B, &R))
    return B > 0 ? INT64_MAX : INT64_MIN;
  return R;
}
int64_t satSub(int64_t A, int64_t B) {
  int64_t R;
  if (__builtin_sub_overflow(A, B, &R))
    return B < 0 ? INT64_MAX : INT64_MIN;
  return R;
}
int64_t satMul(int64_t A, int64_t B) {
  int64_t R;
  if (__builtin_mul_overflow(A, B, &R))
    return (A < 0) != (B < 0) ? INT64_MIN : INT64_MAX;
  return R;
}
} // namespace

Expr operator+(const Expr &A, const Expr &B) {
  if (A.isConst() && B.isConst())
    return Expr(static_cast<long long>(satAdd(A.value(), B.value())));
  if (A.isConst())
    return B + A;
  if (isConstValue(B, 0))
    return A;
  if (B.isConst() && isKind(A, ExprKind::Add) && A.node()->R.isConst())
    return A.node()->L + Expr(static_cast<long long>(satAdd(A.node()->R.value(), B.value())));
  return makeNode(ExprKind::Add, A, B);
}

Expr operator-(const Expr &A, const Expr &B) {
  if (A.isConst() && B.isConst())
    return Expr(static_cast<long long>(satSub(A.value(), B.value())));
  if (B.isConst())
    return A + Expr(static_cast<long long>(satMul(B.value(), -1)));
  if (A == B)
    return Expr(0);
  // (x + c) - x -> c
  if (isKind(A, ExprKind::Add) && A.node()->L == B)
    return A.node()->R;
  return makeNode(ExprKind::Sub, A, B);
}

Expr operator*(const Expr &A, const Expr &B) {
  if (A.isConst() && B.isConst())
    return Expr(static_cast<long long>(satMul(A.value(), B.value())));
  if (A.isConst())
    return B * A;
  if (isConstValue(B, 0))
    return Expr(0);
  if (isConstValue(B, 1))
    return A;
  if (B.isConst() && isKind(A, ExprKind::Mul) && A.node()->R.isConst())
    return A.node()->L * Expr(static_cast<long long>(satMul(A.node()->R.value(), B.value())));
  // x * (y * c) -> (x * y) * c keeps the constant factor outermost.
  if (isKind(B, ExprKind::Mul) && B.node()->R.isConst())
    return (A * B.node()->L) * B.node()->R;
  if (isKind(A, ExprKind::Mul) && A.node()->R.isConst())
    return (A.node()->L * B) * A.node()->R;
  return makeNode(ExprKind::Mul, A, B);
}

Expr operator/(const Expr &A, const Expr &B) {
  if (A.isConst() && B.isConst())
    return Expr(static_cast<long long>(floorDiv(A.value(), B.value())));
  if (isConstValue(B, 0))
    throw ShapeError("division by zero in shape expression '" + A.toString() + "/0'");
  if (isConstValue(B, 1) || isConstValue(A, 0))
    return A;
  if (A == B)
    return Expr(1);
  if (isKind(A, ExprKind::Mul)) {
    const Expr &L = A.node()->L, &R = A.node()->R;
    // (x * c1) / c2 with c2 | c1 -> x * (c1 / c2)
    if (B.isConst() && R.isConst() && R.value() % B.value() == 0)
      return L * Expr(static_cast<long long>(R.value() / B.value()));
    // (x * y) / y -> x, (x * y) / x -> y
    if (R == B)
      return L;
    if (L == B)
      return R;
    // (x * y * c1) / (y * c2) with c2 | c1: cancel the symbolic factor, then the constant.
    if (isKind(B, ExprKind::Mul) && R.isConst() && B.node()->R.isConst() &&
        R.value() % B.node()->R.value() == 0) {
      const Expr Reduced = L / B.node()->L;
      if (!isKind(Reduced, ExprKind::Div))
        return Reduced * Expr(static_cast<long long>(R.value() / B.node()->R.value()));
    }
  }
  return makeNode(ExprKind::Div, A, B);
}

Expr operator%(const Expr &A, const Expr &B) {
  if (A.isConst() && B.isConst())
    return Expr(static_cast<long long>(floorMod(A.value(), B.value())));
  if (isConstValue(B, 0))
    throw ShapeError("modulo by zero in shape expression '" + A.toString() + "%0'");
  if (isConstValue(B, 1) || isConstValue(A, 0) || A == B)
    return Expr(0);
  if (isKind(A, ExprKind::Mul) && B.isConst() && A.node()->R.isConst() && A.node()->R.value() % B.value() == 0)
    return Expr(0);
  return makeNode(ExprKind::Mod, A, B);
}

Expr min(const Expr &A, const Expr &B) {
  if (A.isConst() && B.isConst())
    return Expr(static_cast<long long>(std::min(A.value(), B.value())));
  if (A == B)
    return A;
  return makeNode(ExprKind::Min, A, B);
}

Expr max(const Expr &A, const Expr &B) {
  if (A.isConst() && B.isConst())
    return Expr(static_cast<long long>(std::max(A.value(), B.value())));
  if (A == B)
    return A;
  return makeNode(ExprKind::Max, A, B);
}

bool operator==(const Expr &A, const Expr &B) {
  if (A.isConst() || B.isConst())
    return A.isConst() && B.isConst() && A.value() == B.value();
  if (A.node() == B.node())
    return true;
  const ExprNode &X = *A.node(), &Y = *B.node();
  if (X.Kind != Y.Kind)
    return false;
  if (X.Kind == ExprKind::Symbol)
    return X.Name == Y.Name;
  return X.L == Y.L && X.R == Y.R;
}

// --- TensorShape -------------------------------------------------------------------------------

TensorShape TensorShape::fromDims(const std::vector<int64_t> &Dims) {
  std::vector<Expr> E;
  E.reserve(Dims.size());
  for (int64_t D : Dims)
    E.emplace_back(static_cast<long long>(D));
  return TensorShape(std::move(E));
}

Expr TensorShape::getElementCount() const {
  Expr N(1);
  for (const Expr &D : Dims)
    N = N * D;
  return N;
}

Expr TensorShape::getStride(size_t I) const {
  Expr S(1);
  for (size_t J = I + 1; J < Dims.size(); ++J)
    S = S * Dims[J];
  return S;
}

std::vector<Expr> TensorShape::getStrides() const {
  std::vector<Expr> S(Dims.size(), Expr(1));
  for (size_t I = Dims.size(); I-- > 1;)
    S[I - 1] = S[I] * Dims[I];
  return S;
}

bool TensorShape::isDynamic() const {
  for (const Expr &D : Dims)
    if (!D.isConst())
      return true;
  return false;
}

bool TensorShape::isCompatible(const TensorShape &Other) const {
  if (getRank() != Other.getRank())
    return false;
  for (size_t I = 0; I < Dims.size(); ++I)
    if (Dims[I].isConst() && Other.Dims[I].isConst() && Dims[I].value() != Other.Dims[I].value())
      return false;
  return true;
}

TensorShape TensorShape::resolve(const std::map<std::string, int64_t> &Variables) const {
  std::vector<Expr> Out;
  Out.reserve(Dims.size());
  for (const Expr &D : Dims)
    Out.push_back(D.resolve(Variables));
  return TensorShape(std::move(Out));
}

std::vector<int64_t> TensorShape::getDims() const {
  std::vector<int64_t> Out;
  Out.reserve(Dims.size());
  for (const Expr &D : Dims) {
    if (!D.isConst())
      throw ShapeError("shape " + toString() + " has a symbolic dimension '" + D.toString() + "'");
    Out.push_back(D.value());
  }
  return Out;
}

std::string TensorShape::toString() const {
  if (Dims.empty())
    return "scalar";
  std::string S;
  for (size_t I = 0; I < Dims.size(); ++I) {
    if (I)
      S += 'x';
    // Compound expressions get parentheses so the 'x' separators stay unambiguous.
    const bool Atom = Dims[I].isConst() || Dims[I].isSymbol();
    S += Atom ? Dims[I].toString() : "(" + Dims[I].toString() + ")";
  }
  return S;
}

namespace detail {

ExprParts exprParts(const Expr &E) {
  ExprParts P;
  if (E.isConst()) {
    P.Op = ExprOp::Const;
    P.Value = E.value();
    return P;
  }
  const ExprNode &N = *E.node();
  switch (N.Kind) {
  case ExprKind::Symbol: P.Op = ExprOp::Symbol; P.Name = N.Name; return P;
  case ExprKind::Add: P.Op = ExprOp::Add; break;
  case ExprKind::Sub: P.Op = ExprOp::Sub; break;
  case ExprKind::Mul: P.Op = ExprOp::Mul; break;
  case ExprKind::Div: P.Op = ExprOp::Div; break;
  case ExprKind::Mod: P.Op = ExprOp::Mod; break;
  case ExprKind::Min: P.Op = ExprOp::Min; break;
  case ExprKind::Max: P.Op = ExprOp::Max; break;
  }
  P.L = N.L;
  P.R = N.R;
  return P;
}

Expr makeBinaryExpr(ExprOp Op, const Expr &L, const Expr &R) {
  ExprKind K = ExprKind::Add;
  switch (Op) {
  case ExprOp::Add: K = ExprKind::Add; break;
  case ExprOp::Sub: K = ExprKind::Sub; break;
  case ExprOp::Mul: K = ExprKind::Mul; break;
  case ExprOp::Div: K = ExprKind::Div; break;
  case ExprOp::Mod: K = ExprKind::Mod; break;
  case ExprOp::Min: K = ExprKind::Min; break;
  case ExprOp::Max: K = ExprKind::Max; break;
  case ExprOp::Const:
  case ExprOp::Symbol: throw ShapeError("makeBinaryExpr: not a binary operator");
  }
  return makeNode(K, L, R);
}

} // namespace detail

} // namespace runtime
} // namespace optimium
