// Opsets 1..6 of the default domain. Most ops kept their meaning (the dropped 'consumed_inputs'
// attribute is ignored); the differences that matter are listed here.
#include "import/onnx/LegacyOpsets.h"

#include <set>

namespace optimium {
namespace runtime {
namespace detail {
namespace {

template <typename... Args> Status legacyError(const Node &N, const Args &...Parts) {
  return makeError(ErrorCode::Model, N.describe(), " at opset ", N.OpsetVersion, ": ", Parts...,
                   " (supported from opset ", kFirstUnchangedOpset, " on)");
}

} // namespace

Status upgradeLegacyNode(Node &N) {
  if (!N.Domain.empty() || N.OpsetVersion <= 0 || N.OpsetVersion >= kFirstUnchangedOpset)
    return Status::ok();
  const std::string &Op = N.OpType;
  // Legacy broadcasting (opset < 7): 'broadcast' = 1 aligns B with A's trailing dims unless
  // 'axis' says otherwise; the trailing case is numpy broadcasting, an explicit axis is not.
  static const std::set<std::string> LegacyBroadcast = {"Add", "Sub",   "Mul",     "Div",  "Pow", "And",
                                                        "Or",  "Xor",   "Equal",   "Less", "Greater"};
  if (LegacyBroadcast.count(Op) && N.hasAttr("axis"))
    return legacyError(N, "legacy broadcasting with attribute 'axis' is not supported");
  // Concat's 'axis' defaulted to 1 before opset 4.
  if (Op == "Concat" && N.OpsetVersion < 4 && !N.hasAttr("axis")) {
    AttrValue A;
    A.K = AttrValue::Kind::Int;
    A.I = 1;
    N.Attrs["axis"] = A;
  }
  if (Op == "Reshape" && N.hasAttr("shape"))
    return legacyError(N, "Reshape with the target shape as attribute 'shape' is not supported");
  if (Op == "Cast" && N.hasAttr("to") && N.Attrs.at("to").K == AttrValue::Kind::String)
    return legacyError(N, "Cast with a type name in attribute 'to' ('", N.Attrs.at("to").S, "') is not supported");
  if (Op == "Pad" && N.hasAttr("paddings"))
    return legacyError(N, "Pad with attribute 'paddings' is not supported");
  if (Op == "Split" && N.Inputs.size() > 1)
    return legacyError(N, "Split with the split sizes as a second input is not supported");
  if (Op == "Tile")
    return legacyError(N, "Tile with 'tiles' and 'axis' inputs is not supported");
  if (Op == "Upsample")
    return legacyError(N, "the experimental Upsample is not supported");
  return Status::ok();
}

} // namespace detail
} // namespace runtime
} // namespace optimium
