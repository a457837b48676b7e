// Shape/type inference of one node for the op tests: builds the node, runs its schema, and
// checks an error's code and the parts its message must name.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "ir/OpSchema.h"

namespace optimium_test {

using optimium::runtime::ElementType;
using optimium::runtime::TensorShape;
using optimium::runtime::detail::AttrValue;
using optimium::runtime::detail::ValueInfo;

inline ValueInfo valueInfo(TensorShape S, ElementType T = ElementType::F32) {
  ValueInfo V;
  V.Present = true;
  V.Type = T;
  V.Shape = std::move(S);
  return V;
}
/// An omitted optional input.
inline ValueInfo absent() { return ValueInfo(); }

// Attribute values: attrInt, attrFloat, attrInts, attrString (ir/Graph.h).
using optimium::runtime::detail::attrFloat;
using optimium::runtime::detail::attrInt;
using optimium::runtime::detail::attrInts;
using optimium::runtime::detail::attrString;

struct NodeInference {
  optimium::runtime::detail::Node N;
  optimium::runtime::detail::Status S;
  std::vector<ValueInfo> Outputs;
};

/// Infers node "n1" of Op at Opset with the given inputs (absent() for omitted ones).
inline NodeInference inferOp(const std::string &Op, std::vector<ValueInfo> Inputs,
                             std::map<std::string, AttrValue> Attrs = {}, int NumOutputs = 1, int Opset = 23) {
  NodeInference R;
  R.N.Name = "n1";
  R.N.OpType = Op;
  R.N.OpsetVersion = Opset;
  R.N.Attrs = std::move(Attrs);
  for (size_t I = 0; I < Inputs.size(); ++I)
    R.N.Inputs.push_back(Inputs[I].Present ? static_cast<int>(I) : -1);
  for (int I = 0; I < NumOutputs; ++I)
    R.N.Outputs.push_back(100 + I);
  optimium::runtime::detail::ShapeContext Ctx(R.N);
  Ctx.Inputs = std::move(Inputs);
  R.S = optimium::runtime::detail::inferNode(Ctx);
  R.Outputs = Ctx.Outputs;
  return R;
}

/// The error code matches and the message names the node, the op and every part.
inline void expectInferError(const NodeInference &R, optimium::runtime::detail::ErrorCode Code,
                             std::vector<std::string> Parts) {
  EXPECT_EQ(R.S.code(), Code) << R.S.message();
  Parts.push_back("node 'n1' (" + R.N.OpType + ")");
  for (const std::string &P : Parts)
    EXPECT_NE(R.S.message().find(P), std::string::npos) << "missing '" << P << "' in: " << R.S.message();
}

} // namespace optimium_test
