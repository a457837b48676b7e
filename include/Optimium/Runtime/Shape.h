// Symbolic dimensions (Expr) and tensor shapes. A dimension is a constant or an expression over
// named symbols ("batch", "seq"); constants are stored inline so concrete shapes stay cheap.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "Optimium/Runtime/Export.h"

namespace optimium {
namespace runtime {

struct ExprNode;

class OPTIMIUM_RT_API Expr {
public:
  Expr() : Value(0) {}
  Expr(int V) : Value(V) {}
  Expr(long V) : Value(static_cast<int64_t>(V)) {}
  Expr(long long V) : Value(static_cast<int64_t>(V)) {}
  Expr(unsigned V) : Value(static_cast<int64_t>(V)) {}
  Expr(unsigned long V) : Value(static_cast<int64_t>(V)) {}
  Expr(unsigned long long V) : Value(static_cast<int64_t>(V)) {}
  /// A named symbol, e.g. Expr("batch").
  explicit Expr(const char *Symbol);
  explicit Expr(const std::string &Symbol);

  bool isConst() const { return !Node; }
  bool isSymbol() const;
  /// The constant value; throws ShapeError when the expression is not constant.
  int64_t value() const;
  /// The symbol name; throws ShapeError when the expression is not a plain symbol.
  std::string symbol() const;
  /// Every symbol the expression refers to.
  std::vector<std::string> symbols() const;
  /// Substitutes known symbols and folds constants.
  Expr resolve(const std::map<std::string, int64_t> &Variables) const;
  std::string toString() const;

  friend OPTIMIUM_RT_API Expr operator+(const Expr &A, const Expr &B);
  friend OPTIMIUM_RT_API Expr operator-(const Expr &A, const Expr &B);
  friend OPTIMIUM_RT_API Expr operator*(const Expr &A, const Expr &B);
  /// Floor division (as ONNX and Python shape arithmetic use it).
  friend OPTIMIUM_RT_API Expr operator/(const Expr &A, const Expr &B);
  friend OPTIMIUM_RT_API Expr operator%(const Expr &A, const Expr &B);
  friend OPTIMIUM_RT_API Expr min(const Expr &A, const Expr &B);
  friend OPTIMIUM_RT_API Expr max(const Expr &A, const Expr &B);
  /// Structural equality: constants by value, expressions by shape of the tree.
  friend OPTIMIUM_RT_API bool operator==(const Expr &A, const Expr &B);
  friend bool operator!=(const Expr &A, const Expr &B) { return !(A == B); }

  // Internal: the expression tree (null for constants).
  const std::shared_ptr<const ExprNode> &node() const { return Node; }
  explicit Expr(std::shared_ptr<const ExprNode> N);

private:
  int64_t Value;
  std::shared_ptr<const ExprNode> Node;
};

class OPTIMIUM_RT_API TensorShape {
public:
  using const_iterator = std::vector<Expr>::const_iterator;

  TensorShape() {}
  TensorShape(std::initializer_list<Expr> Dims) : Dims(Dims) {}
  TensorShape(std::vector<Expr> Dims) : Dims(std::move(Dims)) {}
  static TensorShape fromDims(const std::vector<int64_t> &Dims);

  size_t getRank() const { return Dims.size(); }
  /// Product of the dimensions (1 for a scalar).
  Expr getElementCount() const;
  /// Row-major stride of dimension I, in elements.
  Expr getStride(size_t I) const;
  std::vector<Expr> getStrides() const;
  bool isDynamic() const;
  /// Same rank, and every pair of dimensions that are both constant is equal.
  bool isCompatible(const TensorShape &Other) const;
  TensorShape resolve(const std::map<std::string, int64_t> &Variables) const;
  /// Constant dimensions; throws ShapeError when a dimension is symbolic.
  std::vector<int64_t> getDims() const;
  std::string toString() const;

  const Expr &operator[](size_t I) const { return Dims[I]; }
  Expr &operator[](size_t I) { return Dims[I]; }
  const_iterator begin() const { return Dims.begin(); }
  const_iterator end() const { return Dims.end(); }
  const std::vector<Expr> &dims() const { return Dims; }

  friend bool operator==(const TensorShape &A, const TensorShape &B) { return A.Dims == B.Dims; }
  friend bool operator!=(const TensorShape &A, const TensorShape &B) { return !(A == B); }

private:
  std::vector<Expr> Dims;
};

} // namespace runtime
} // namespace optimium
