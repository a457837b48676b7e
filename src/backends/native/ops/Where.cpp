// Where: condition ? X : Y with three-way numpy broadcasting. Pure selection, so the kernels are
// instantiated per element size rather than per type (every non-string type works).
#include <cstring>

#include "backends/native/ops/common/ElementwiseCommon.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

template <typename W> void whereRef(const BroadcastPlan<3> &P, const bool *C, const W *X, const W *Y, W *Out) {
  forEachBroadcastElement<3>(P, [&](size_t I, const std::array<int64_t, 3> &Off) {
    Out[I] = C[Off[0]] ? X[Off[1]] : Y[Off[2]];
  });
}

template <typename W>
void whereFast(const BroadcastPlan<3> &P, const Parallel &Par, const bool *C, const W *X, const W *Y, W *Out) {
  forEachBroadcastRow<3>(P, Par, 16384,
                         [&](size_t Base, const std::array<int64_t, 3> &Off, const std::array<int64_t, 3> &Inc,
                             int64_t Inner) {
                           const bool *RC = C + Off[0];
                           const W *RX = X + Off[1], *RY = Y + Off[2];
                           W *RO = Out + Base;
                           if (Inc[0] == 1 && Inc[1] == 1 && Inc[2] == 1) {
                             for (int64_t J = 0; J < Inner; ++J)
                               RO[J] = RC[J] ? RX[J] : RY[J];
                           } else if (Inc[0] == 1 && Inc[1] == 0 && Inc[2] == 1) { // masked fill
                             const W S = RX[0];
                             for (int64_t J = 0; J < Inner; ++J)
                               RO[J] = RC[J] ? S : RY[J];
                           } else if (Inc[0] == 1 && Inc[1] == 1 && Inc[2] == 0) {
                             const W S = RY[0];
                             for (int64_t J = 0; J < Inner; ++J)
                               RO[J] = RC[J] ? RX[J] : S;
                           } else if (Inc[0] == 0) { // one condition for the whole row
                             const W *Src = RC[0] ? RX : RY;
                             const int64_t SI = RC[0] ? Inc[1] : Inc[2];
                             for (int64_t J = 0; J < Inner; ++J)
                               RO[J] = Src[J * SI];
                           } else {
                             for (int64_t J = 0; J < Inner; ++J)
                               RO[J] = RC[J * Inc[0]] ? RX[J * Inc[1]] : RY[J * Inc[2]];
                           }
                         });
}

class WhereKernel : public Kernel {
public:
  WhereKernel(std::string Name, bool Fast) : Name(std::move(Name)), Fast(Fast) {}
  Status run(const KernelContext &Ctx) const override {
    const TensorView &C = Ctx.Inputs[0], &X = Ctx.Inputs[1], &Y = Ctx.Inputs[2], &O = Ctx.Outputs[0];
    BroadcastPlan<3> P;
    RETURN_IF_ERROR(makeBroadcastPlan<3>(Name.c_str(), {&C, &X, &Y}, O, P));
    const bool *PC = C.data<bool>();
    switch (getElementSize(O.Type)) {
    case 1: return dispatch<uint8_t>(P, Ctx, PC, X, Y, O);
    case 2: return dispatch<uint16_t>(P, Ctx, PC, X, Y, O);
    case 4: return dispatch<uint32_t>(P, Ctx, PC, X, Y, O);
    case 8: return dispatch<uint64_t>(P, Ctx, PC, X, Y, O);
    default: return runError(Name.c_str(), "unsupported element type ", toString(O.Type));
    }
  }

private:
  template <typename W>
  Status dispatch(const BroadcastPlan<3> &P, const KernelContext &Ctx, const bool *C, const TensorView &X,
                  const TensorView &Y, const TensorView &O) const {
    if (Fast)
      whereFast<W>(P, Ctx.Par, C, X.data<W>(), Y.data<W>(), O.data<W>());
    else
      whereRef<W>(P, C, X.data<W>(), Y.data<W>(), O.data<W>());
    return Status::ok();
  }
  std::string Name;
  bool Fast;
};

OpSchema whereSchema() {
  OpSchema S;
  S.OpType = "Where";
  S.MinInputs = S.MaxInputs = 3;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireInputTypeIn(Ctx, 0, {ElementType::Bool}, "condition"));
    RETURN_IF_ERROR(requireCopyableType(Ctx, 1));
    RETURN_IF_ERROR(requireSameType(Ctx, 1, 2));
    ASSIGN_OR_RETURN(Ctx.Outputs[0].Shape, broadcastAll(Ctx, {0, 1, 2}));
    Ctx.Outputs[0].Type = Ctx.Inputs[1].Type;
    return foldWithKernel(Ctx, [](const KernelCreateInfo &) { return makeKernel<WhereKernel>("where__fold", false); });
  };
  return S;
}

OpKernels whereKernels() {
  OpKernels K;
  K.OpType = "Where";
  K.Variants.push_back({"any_where__ref", 0, nullptr,
                        [](const KernelCreateInfo &) { return makeKernel<WhereKernel>("any_where__ref", false); }});
  K.Variants.push_back({"any_where__fast", 10, nullptr,
                        [](const KernelCreateInfo &) { return makeKernel<WhereKernel>("any_where__fast", true); }});
  K.TestCases = [] {
    const auto cond = [](std::vector<int64_t> D) {
      return valuesInput(std::move(D), {1, 0, 0, 1, 1, 0, 1}, ElementType::Bool, false);
    };
    const auto x = [](std::vector<int64_t> D, ElementType T = ElementType::F32) {
      return rangeInput(std::move(D), T, -100, 100);
    };
    return std::vector<OpTestCase>{
        testCase("same_shape", {cond({2, 3, 4}), x({2, 3, 4}), x({2, 3, 4})}),
        testCase("masked_fill", {cond({4, 8}), x({}), x({4, 8})}),
        testCase("masked_keep", {cond({4, 8}), x({4, 8}), x({})}),
        testCase("row_condition", {cond({3, 1}), x({3, 5}), x({5})}),
        testCase("three_way", {cond({2, 1, 1}), x({1, 3, 1}), x({1, 1, 4})}),
        testCase("large", {cond({128, 1031}), x({128, 1031}), x({1031})}),
        testCase("large_masked_fill", {cond({64, 2048}), x({}), x({64, 2048})}),
        testCase("i64", {cond({5}), x({5}, ElementType::I64), x({1}, ElementType::I64)}),
        testCase("i32", {cond({5}), x({5}, ElementType::I32), x({5}, ElementType::I32)}),
        testCase("u8", {cond({5}), x({5}, ElementType::U8), x({5}, ElementType::U8)}),
        testCase("bool", {cond({5}), cond({1}), valuesInput({5}, {0, 1}, ElementType::Bool, false)}),
        testCase("f64", {cond({3, 2}), x({3, 2}, ElementType::F64), x({2}, ElementType::F64)}),
        testCase("f16", {cond({3, 2}), x({3, 2}, ElementType::F16), x({2}, ElementType::F16)}),
        testCase("empty", {cond({0, 3}), x({3}), x({3})}),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(Where, whereSchema());
OPT_REGISTER_KERNELS(Where, whereKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
