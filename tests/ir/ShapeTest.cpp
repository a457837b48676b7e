// Tests of symbolic dimensions (Expr) and TensorShape.
#include <limits>
#include <gtest/gtest.h>

#include "Optimium/Runtime/Exceptions.h"
#include "Optimium/Runtime/Shape.h"

using namespace optimium::runtime;

TEST(Expr, ConstantsFold) {
  EXPECT_EQ((Expr(3) + Expr(4)).value(), 7);
  EXPECT_EQ((Expr(3) - Expr(5)).value(), -2);
  EXPECT_EQ((Expr(6) * Expr(7)).value(), 42);
  EXPECT_EQ(min(Expr(3), Expr(9)).value(), 3);
  EXPECT_EQ(max(Expr(3), Expr(9)).value(), 9);
  EXPECT_TRUE((Expr(2) * Expr(2)).isConst());
}

/// Folding the constant dims of a hostile model saturates instead of overflowing (found by the
/// loader fuzzer under UBSan: 15 * INT64_MAX).
TEST(Expr, ConstantFoldingSaturates) {
  const int64_t Max = std::numeric_limits<int64_t>::max(), Min = std::numeric_limits<int64_t>::min();
  EXPECT_EQ((Expr(15) * Expr(Max)).value(), Max);
  EXPECT_EQ((Expr(-15) * Expr(Max)).value(), Min);
  EXPECT_EQ((Expr(Max) + Expr(1)).value(), Max);
  EXPECT_EQ((Expr(Min) - Expr(1)).value(), Min);
  EXPECT_EQ((Expr(0) - Expr(Min)).value(), Max);
  EXPECT_EQ((Expr(6) * Expr(7)).value(), 42);
  // (n * c1) * c2 folds c1 * c2 too.
  const Expr N("n");
  EXPECT_EQ(((N * Expr(Max)) * Expr(4)).toString(), (N * Expr(Max)).toString());
}

TEST(Expr, FloorDivisionAndModulo) {
  EXPECT_EQ((Expr(7) / Expr(2)).value(), 3);
  EXPECT_EQ((Expr(-7) / Expr(2)).value(), -4);
  EXPECT_EQ((Expr(7) / Expr(-2)).value(), -4);
  EXPECT_EQ((Expr(-7) / Expr(-2)).value(), 3);
  EXPECT_EQ((Expr(7) % Expr(3)).value(), 1);
  EXPECT_EQ((Expr(-7) % Expr(3)).value(), 2);
  EXPECT_EQ((Expr(7) % Expr(-3)).value(), -2);
  EXPECT_THROW(Expr(1) / Expr(0), ShapeError);
  EXPECT_THROW(Expr("n") % Expr(0), ShapeError);
}

TEST(Expr, SymbolsAndErrors) {
  const Expr N("batch");
  EXPECT_FALSE(N.isConst());
  EXPECT_TRUE(N.isSymbol());
  EXPECT_EQ(N.symbol(), "batch");
  EXPECT_THROW(N.value(), ShapeError);
  EXPECT_THROW((N + 1).symbol(), ShapeError);
  EXPECT_THROW(Expr(3).symbol(), ShapeError);
  EXPECT_EQ((N * Expr("seq") + N).symbols(), (std::vector<std::string>{"batch", "seq"}));
  EXPECT_TRUE(Expr(5).symbols().empty());
}

TEST(Expr, TrivialSimplifications) {
  const Expr X("x");
  EXPECT_EQ(X + 0, X);
  EXPECT_EQ(0 + X, X);
  EXPECT_EQ(X - 0, X);
  EXPECT_EQ(X * 1, X);
  EXPECT_EQ(1 * X, X);
  EXPECT_EQ((X * 0).value(), 0);
  EXPECT_EQ((0 * X).value(), 0);
  EXPECT_EQ(X / 1, X);
  EXPECT_EQ((X - X).value(), 0);
  EXPECT_EQ((X / X).value(), 1);
  EXPECT_EQ((X % 1).value(), 0);
  EXPECT_EQ(min(X, X), X);
  // Constant chains merge, and factors cancel again.
  EXPECT_EQ((X + 1) + 2, X + 3);
  EXPECT_EQ((X + 3) - 3, X);
  EXPECT_EQ((X * 2) * 3, X * 6);
  EXPECT_EQ((X * 12) / 4, X * 3);
  EXPECT_EQ((X * 12) / 12, X);
  EXPECT_EQ(((X * Expr("y")) * 6) / (Expr("y") * 3), X * 2);
  EXPECT_EQ(((X * 4) % 2).value(), 0);
}

TEST(Expr, StructuralEquality) {
  EXPECT_EQ(Expr("a") + Expr("b"), Expr("a") + Expr("b"));
  EXPECT_NE(Expr("a") + Expr("b"), Expr("a") * Expr("b"));
  EXPECT_NE(Expr("a"), Expr("b"));
  EXPECT_NE(Expr("a"), Expr(1));
  EXPECT_EQ(Expr(4), Expr(2) * 2);
}

TEST(Expr, ToString) {
  const Expr B("batch");
  EXPECT_EQ((B * 2 + 1).toString(), "batch*2+1");
  EXPECT_EQ((B - 3).toString(), "batch-3");
  EXPECT_EQ(((B + 1) * 2).toString(), "(batch+1)*2");
  EXPECT_EQ(((B + 1) / 2).toString(), "(batch+1)/2");
  EXPECT_EQ((B - (Expr("a") - Expr("c"))).toString(), "batch-(a-c)");
  EXPECT_EQ((B / (Expr("a") * Expr("c"))).toString(), "batch/(a*c)");
  EXPECT_EQ(max(B, Expr("n")).toString(), "max(batch, n)");
  EXPECT_EQ(Expr(-5).toString(), "-5");
}

TEST(Expr, Resolve) {
  const Expr E = (Expr("n") + 2) / Expr(2) * Expr("m");
  EXPECT_EQ(E.resolve({{"n", 6}, {"m", 3}}).value(), 12);
  const Expr Partial = E.resolve({{"n", 6}});
  EXPECT_FALSE(Partial.isConst());
  EXPECT_EQ(Partial, Expr("m") * 4);
  EXPECT_EQ(Expr(5).resolve({{"n", 1}}).value(), 5);
  EXPECT_EQ(min(Expr("n"), Expr(4)).resolve({{"n", 9}}).value(), 4);
}

TEST(TensorShape, Basics) {
  const TensorShape S = TensorShape::fromDims({1, 3, 224, 224});
  EXPECT_EQ(S.getRank(), 4u);
  EXPECT_EQ(S.getElementCount().value(), 3 * 224 * 224);
  EXPECT_EQ(S.getStride(0).value(), 3 * 224 * 224);
  EXPECT_EQ(S.getStride(3).value(), 1);
  std::vector<int64_t> Strides;
  for (const Expr &E : S.getStrides())
    Strides.push_back(E.value());
  EXPECT_EQ(Strides, (std::vector<int64_t>{150528, 50176, 224, 1}));
  EXPECT_FALSE(S.isDynamic());
  EXPECT_EQ(S.getDims(), (std::vector<int64_t>{1, 3, 224, 224}));
  EXPECT_EQ(S.toString(), "1x3x224x224");
  EXPECT_EQ(TensorShape().getElementCount().value(), 1);
  EXPECT_EQ(TensorShape().toString(), "scalar");
}

TEST(TensorShape, Symbolic) {
  const TensorShape S{Expr("batch"), 3, Expr("batch") * 2 + 1};
  EXPECT_TRUE(S.isDynamic());
  EXPECT_EQ(S.toString(), "batchx3x(batch*2+1)");
  EXPECT_THROW(S.getDims(), ShapeError);
  EXPECT_EQ(S.getStride(0), S[2] * 3);
  const TensorShape R = S.resolve({{"batch", 4}});
  EXPECT_EQ(R.getDims(), (std::vector<int64_t>{4, 3, 9}));
  EXPECT_EQ((TensorShape{Expr("batch"), 12}.getElementCount() / 12), Expr("batch"));
}

TEST(TensorShape, Compatibility) {
  const TensorShape A{Expr("n"), 3}, B{5, 3}, C{5, 4}, D{5};
  EXPECT_TRUE(A.isCompatible(B));
  EXPECT_FALSE(B.isCompatible(C));
  EXPECT_FALSE(B.isCompatible(D));
  EXPECT_TRUE(A == (TensorShape{Expr("n"), 3}));
  EXPECT_TRUE(A != B);
}
