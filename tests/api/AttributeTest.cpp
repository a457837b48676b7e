// Attribute factories, typed views (isa/cast), kind errors, range checks and printing.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "Optimium/Runtime/Attribute.h"
#include "Optimium/Runtime/Exceptions.h"

namespace rt = optimium::runtime;
using rt::Attribute;
using rt::AttributeKind;

TEST(AttributeTest, EmptyAttribute) {
  Attribute A;
  EXPECT_FALSE(static_cast<bool>(A));
  EXPECT_EQ(A.getKind(), AttributeKind::None);
  EXPECT_FALSE(A.isa<rt::I32Attr>());
  EXPECT_THROW(A.cast<rt::I32Attr>(), rt::TypeError);
  EXPECT_EQ(A.toString(), "none");
}

TEST(AttributeTest, IntegerKinds) {
  Attribute A = Attribute::getInt(AttributeKind::I32, -5);
  ASSERT_TRUE(static_cast<bool>(A));
  EXPECT_EQ(A.getKind(), AttributeKind::I32);
  EXPECT_TRUE(A.isa<rt::I32Attr>());
  EXPECT_FALSE(A.isa<rt::I64Attr>());
  EXPECT_EQ(A.cast<rt::I32Attr>().value(), -5);
  EXPECT_EQ(Attribute::getInt(AttributeKind::I64, INT64_MIN).cast<rt::I64Attr>().value(), INT64_MIN);
  EXPECT_EQ(Attribute::getInt(AttributeKind::I8, -128).cast<rt::I8Attr>().value(), -128);
  EXPECT_EQ(Attribute::getUInt(AttributeKind::U64, UINT64_MAX).cast<rt::U64Attr>().value(), UINT64_MAX);
  EXPECT_EQ(Attribute::getUInt(AttributeKind::U8, 255).cast<rt::U8Attr>().value(), 255);
  EXPECT_EQ(Attribute::getUInt(AttributeKind::U16, 65535).cast<rt::U16Attr>().value(), 65535);
}

TEST(AttributeTest, FactoriesRejectWrongKindsAndRanges) {
  EXPECT_THROW(Attribute::getInt(AttributeKind::F32, 1), rt::InvalidArgumentError);
  EXPECT_THROW(Attribute::getInt(AttributeKind::U8, 1), rt::InvalidArgumentError);
  EXPECT_THROW(Attribute::getUInt(AttributeKind::I8, 1), rt::InvalidArgumentError);
  EXPECT_THROW(Attribute::getFloat(AttributeKind::I32, 1.0), rt::InvalidArgumentError);
  EXPECT_THROW(Attribute::getQuantized(AttributeKind::I8, 1, 1.0f, 0), rt::InvalidArgumentError);
  EXPECT_THROW(Attribute::getInt(AttributeKind::I8, 128), rt::InvalidArgumentError);
  EXPECT_THROW(Attribute::getInt(AttributeKind::I16, -32769), rt::InvalidArgumentError);
  EXPECT_THROW(Attribute::getUInt(AttributeKind::U8, 256), rt::InvalidArgumentError);
  EXPECT_THROW(Attribute::getQuantized(AttributeKind::QS8, 200, 1.0f, 0), rt::InvalidArgumentError);
}

TEST(AttributeTest, CastToWrongKindNamesBothKinds) {
  Attribute A = Attribute::getInt(AttributeKind::I64, 3);
  try {
    A.cast<rt::StringAttr>();
    FAIL() << "no TypeError";
  } catch (const rt::TypeError &E) {
    const std::string M = E.what();
    EXPECT_NE(M.find("i64"), std::string::npos) << M;
    EXPECT_NE(M.find("StringAttr"), std::string::npos) << M;
  }
}

TEST(AttributeTest, FloatKinds) {
  EXPECT_EQ(Attribute::getFloat(AttributeKind::F32, 0.25).cast<rt::F32Attr>().value(), 0.25f);
  EXPECT_EQ(Attribute::getFloat(AttributeKind::F64, 0.1).cast<rt::F64Attr>().value(), 0.1);
  EXPECT_EQ(Attribute::getFloat(AttributeKind::TF32, 2.0).cast<rt::TF32Attr>().value(), 2.0f);
  EXPECT_EQ(static_cast<float>(Attribute::getFloat(AttributeKind::F16, 1.5).cast<rt::F16Attr>().value()), 1.5f);
  EXPECT_EQ(static_cast<float>(Attribute::getFloat(AttributeKind::BF16, -3.0).cast<rt::BF16Attr>().value()), -3.0f);
  // F16 stores what a half can hold: 0.1 becomes the nearest half.
  Attribute H = Attribute::getFloat(AttributeKind::F16, 0.1);
  EXPECT_EQ(H.cast<rt::F16Attr>().value().Bits, rt::float16(0.1f).Bits);
}

TEST(AttributeTest, BoolStringQuantized) {
  Attribute B = Attribute::getBool(true);
  EXPECT_TRUE(B.cast<rt::BoolAttr>().value());
  EXPECT_FALSE(Attribute::getBool(false).cast<rt::BoolAttr>().value());
  Attribute S = Attribute::getString("decoder");
  EXPECT_EQ(S.cast<rt::StringAttr>().value(), "decoder");
  Attribute Q = Attribute::getQuantized(AttributeKind::QS8, -3, 0.5f, 1);
  rt::QS8Attr QA = Q.cast<rt::QS8Attr>();
  EXPECT_EQ(QA.value(), -3);
  EXPECT_EQ(QA.scale(), 0.5f);
  EXPECT_EQ(QA.zeroPoint(), 1);
  EXPECT_FLOAT_EQ(QA.dequantize(), -2.0f);
  EXPECT_FALSE(Q.isa<rt::QS16Attr>());
}

TEST(AttributeTest, ListAndMap) {
  Attribute L = Attribute::getList({Attribute::getInt(AttributeKind::I64, 1), Attribute::getInt(AttributeKind::I64, 2)});
  rt::ListAttr LA = L.cast<rt::ListAttr>();
  EXPECT_EQ(LA.size(), 2u);
  EXPECT_EQ(LA[1].cast<rt::I64Attr>().value(), 2);
  int64_t Sum = 0;
  for (const Attribute &E : LA)
    Sum += E.cast<rt::I64Attr>().value();
  EXPECT_EQ(Sum, 3);
  EXPECT_THROW(LA[2], std::out_of_range);

  Attribute M = Attribute::getMap({{"a", Attribute::getInt(AttributeKind::I32, 1)}, {"b", Attribute::getString("x")}});
  rt::MapAttr MA = M.cast<rt::MapAttr>();
  EXPECT_EQ(MA.size(), 2u);
  EXPECT_TRUE(MA.contains("a"));
  EXPECT_FALSE(MA.contains("z"));
  EXPECT_EQ(MA.get("b").cast<rt::StringAttr>().value(), "x");
  EXPECT_FALSE(static_cast<bool>(MA.get("z")));
}

TEST(AttributeTest, CopiesShareStorage) {
  Attribute A = Attribute::getString("shared");
  Attribute B = A;
  EXPECT_EQ(&A.cast<rt::StringAttr>().value(), &B.cast<rt::StringAttr>().value());
}

TEST(AttributeTest, ToString) {
  EXPECT_EQ(Attribute::getInt(AttributeKind::I32, 5).toString(), "i32 5");
  EXPECT_EQ(Attribute::getInt(AttributeKind::I64, -7).toString(), "i64 -7");
  EXPECT_EQ(Attribute::getUInt(AttributeKind::U8, 200).toString(), "u8 200");
  EXPECT_EQ(Attribute::getFloat(AttributeKind::F32, 0.1).toString(), "f32 0.1");
  EXPECT_EQ(Attribute::getFloat(AttributeKind::F64, 2.0).toString(), "f64 2.0");
  EXPECT_EQ(Attribute::getFloat(AttributeKind::F32, std::nan("")).toString(), "f32 nan");
  EXPECT_EQ(Attribute::getBool(true).toString(), "true");
  EXPECT_EQ(Attribute::getString("text").toString(), "\"text\"");
  EXPECT_EQ(Attribute::getString("a\"b").toString(), "\"a\\\"b\"");
  EXPECT_EQ(Attribute::getList({Attribute::getInt(AttributeKind::I64, 1), Attribute::getInt(AttributeKind::I64, 2)})
                .toString(),
            "[1, 2]");
  EXPECT_EQ(Attribute::getList({}).toString(), "[]");
  EXPECT_EQ(Attribute::getMap({{"a", Attribute::getInt(AttributeKind::I32, 1)}}).toString(), "{a: 1}");
  EXPECT_EQ(Attribute::getMap({{"k", Attribute::getList({Attribute::getString("s")})}}).toString(), "{k: [\"s\"]}");
  EXPECT_EQ(Attribute::getQuantized(AttributeKind::QS8, 3, 0.5f, 0).toString(), "qs8 3 (scale 0.5, zero_point 0)");
}

TEST(AttributeTest, KindNames) {
  EXPECT_STREQ(rt::toString(AttributeKind::None), "none");
  EXPECT_STREQ(rt::toString(AttributeKind::I8), "i8");
  EXPECT_STREQ(rt::toString(AttributeKind::BF16), "bf16");
  EXPECT_STREQ(rt::toString(AttributeKind::TF32), "tf32");
  EXPECT_STREQ(rt::toString(AttributeKind::QS32), "qs32");
  EXPECT_STREQ(rt::toString(AttributeKind::Bool), "bool");
  EXPECT_STREQ(rt::toString(AttributeKind::String), "string");
  EXPECT_STREQ(rt::toString(AttributeKind::List), "list");
  EXPECT_STREQ(rt::toString(AttributeKind::Map), "map");
}
