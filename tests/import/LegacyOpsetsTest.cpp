// Opsets 1..6: nodes that keep their meaning pass, Concat gets its old default axis, and the
// changed semantics are ModelErrors naming node, op and opset.
#include <gtest/gtest.h>

#include "import/onnx/LegacyOpsets.h"

using namespace optimium::runtime::detail;

namespace {

Node legacyNode(const std::string &Op, int Opset, std::map<std::string, AttrValue> Attrs = {}, int Inputs = 1) {
  Node N;
  N.Name = "n1";
  N.OpType = Op;
  N.OpsetVersion = Opset;
  N.Attrs = std::move(Attrs);
  for (int I = 0; I < Inputs; ++I)
    N.Inputs.push_back(I);
  return N;
}

AttrValue intAttr(int64_t V) {
  AttrValue A;
  A.K = AttrValue::Kind::Int;
  A.I = V;
  return A;
}

void expectLegacyError(Node N, const std::string &Part) {
  const Status S = upgradeLegacyNode(N);
  EXPECT_EQ(S.code(), ErrorCode::Model) << S.message();
  for (const std::string &P : {std::string("node 'n1' (") + N.OpType + ")", "opset " + std::to_string(N.OpsetVersion), Part})
    EXPECT_NE(S.message().find(P), std::string::npos) << "missing '" << P << "' in: " << S.message();
}

TEST(LegacyOpsets, UnchangedOpsPass) {
  Node Not = legacyNode("Not", 1);
  EXPECT_TRUE(upgradeLegacyNode(Not).isOk());
  Node Add = legacyNode("Add", 6, {{"broadcast", intAttr(1)}}, 2); // trailing alignment = numpy
  EXPECT_TRUE(upgradeLegacyNode(Add).isOk());
  Node Later = legacyNode("Tile", 7, {}, 2);
  EXPECT_TRUE(upgradeLegacyNode(Later).isOk());
}

TEST(LegacyOpsets, ConcatGetsDefaultAxis) {
  Node C = legacyNode("Concat", 3, {}, 2);
  ASSERT_TRUE(upgradeLegacyNode(C).isOk());
  ASSERT_TRUE(C.hasAttr("axis"));
  EXPECT_EQ(C.Attrs.at("axis").I, 1);
}

TEST(LegacyOpsets, ChangedSemanticsAreRejected) {
  expectLegacyError(legacyNode("Mul", 6, {{"broadcast", intAttr(1)}, {"axis", intAttr(0)}}, 2), "'axis'");
  AttrValue Shape;
  Shape.K = AttrValue::Kind::Ints;
  Shape.Ints = {2, 3};
  expectLegacyError(legacyNode("Reshape", 4, {{"shape", Shape}}), "'shape'");
  expectLegacyError(legacyNode("Tile", 5, {}, 3), "'tiles'");
  expectLegacyError(legacyNode("Split", 1, {}, 2), "second input");
  AttrValue To;
  To.K = AttrValue::Kind::String;
  To.S = "FLOAT";
  expectLegacyError(legacyNode("Cast", 5, {{"to", To}}), "'FLOAT'");
}

} // namespace
