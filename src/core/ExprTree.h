// The parts of a symbolic Expr and building one from parts, for code that stores shapes outside
// the process (the compiled model folder). The tree itself stays private to core/Shape.cpp.
#pragma once

#include <cstdint>
#include <string>

#include "Optimium/Runtime/Shape.h"

namespace optimium {
namespace runtime {
namespace detail {

/// What an Expr node is; the numbering is stored in compiled model folders: append only.
enum class ExprOp : uint8_t { Const = 0, Symbol = 1, Add = 2, Sub = 3, Mul = 4, Div = 5, Mod = 6, Min = 7, Max = 8 };
constexpr uint8_t kExprOpCount = 9;

struct ExprParts {
  ExprOp Op = ExprOp::Const;
  int64_t Value = 0; ///< Const
  std::string Name;  ///< Symbol
  Expr L, R;         ///< binary ops
};

ExprParts exprParts(const Expr &E);
/// The binary node Op(L, R) exactly as given (no folding or canonical rewrites, so a stored tree
/// comes back as it was). Op must be a binary op.
Expr makeBinaryExpr(ExprOp Op, const Expr &L, const Expr &R);

} // namespace detail
} // namespace runtime
} // namespace optimium
