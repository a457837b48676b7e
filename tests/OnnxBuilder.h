// Builds small ONNX models in tests (error paths, slow chains, odd opsets) with the protobuf
// schema, so each test states the exact graph it needs.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

namespace optimium_test {

class OnnxBuilder {
public:
  explicit OnnxBuilder(int Opset = 13) {
    M.set_ir_version(8);
    auto *O = M.add_opset_import();
    O->set_domain("");
    O->set_version(Opset);
    M.mutable_graph()->set_name("test_graph");
  }
  void input(const std::string &Name, int ElemType, const std::vector<int64_t> &Dims,
             const std::vector<std::string> &Symbols = {}) {
    setValueInfo(M.mutable_graph()->add_input(), Name, ElemType, Dims, Symbols);
  }
  void output(const std::string &Name, int ElemType = 0, const std::vector<int64_t> &Dims = {}, bool WithShape = false) {
    auto *VI = M.mutable_graph()->add_output();
    VI->set_name(Name);
    if (ElemType) {
      auto *TT = VI->mutable_type()->mutable_tensor_type();
      TT->set_elem_type(ElemType);
      if (WithShape) {
        auto *S = TT->mutable_shape();
        for (int64_t D : Dims)
          S->add_dim()->set_dim_value(D);
      }
    }
  }
  onnx::ModelProto &model() { return M; }
  void initializer(const std::string &Name, const std::vector<int64_t> &Dims, const std::vector<float> &Values) {
    auto *T = M.mutable_graph()->add_initializer();
    T->set_name(Name);
    T->set_data_type(onnx::TensorProto_DataType_FLOAT);
    for (int64_t D : Dims)
      T->add_dims(D);
    T->set_raw_data(std::string(reinterpret_cast<const char *>(Values.data()), Values.size() * sizeof(float)));
  }
  void initializerI64(const std::string &Name, const std::vector<int64_t> &Dims, const std::vector<int64_t> &Values) {
    auto *T = M.mutable_graph()->add_initializer();
    T->set_name(Name);
    T->set_data_type(onnx::TensorProto_DataType_INT64);
    for (int64_t D : Dims)
      T->add_dims(D);
    for (int64_t V : Values)
      T->add_int64_data(V);
  }
  /// An initializer of any fixed-size element type from its little-endian bytes (int8, int32, ...).
  template <typename T>
  void initializerRaw(const std::string &Name, int ElemType, const std::vector<int64_t> &Dims, const std::vector<T> &Values) {
    auto *Tp = M.mutable_graph()->add_initializer();
    Tp->set_name(Name);
    Tp->set_data_type(ElemType);
    for (int64_t D : Dims)
      Tp->add_dims(D);
    Tp->set_raw_data(std::string(reinterpret_cast<const char *>(Values.data()), Values.size() * sizeof(T)));
  }
  onnx::NodeProto *node(const std::string &Op, const std::vector<std::string> &Inputs,
                        const std::vector<std::string> &Outputs, const std::string &Name = "") {
    auto *N = M.mutable_graph()->add_node();
    N->set_op_type(Op);
    N->set_name(Name.empty() ? Op + "_" + std::to_string(M.graph().node_size()) : Name);
    for (const auto &I : Inputs)
      N->add_input(I);
    for (const auto &O : Outputs)
      N->add_output(O);
    return N;
  }
  static void attrInt(onnx::NodeProto *N, const std::string &Name, int64_t V) {
    auto *A = N->add_attribute();
    A->set_name(Name);
    A->set_type(onnx::AttributeProto_AttributeType_INT);
    A->set_i(V);
  }
  static void attrInts(onnx::NodeProto *N, const std::string &Name, const std::vector<int64_t> &V) {
    auto *A = N->add_attribute();
    A->set_name(Name);
    A->set_type(onnx::AttributeProto_AttributeType_INTS);
    for (int64_t X : V)
      A->add_ints(X);
  }
  /// A graph attribute (control flow): build the subgraph with another OnnxBuilder and pass
  /// its M.graph().
  static void attrGraph(onnx::NodeProto *N, const std::string &Name, const onnx::GraphProto &G) {
    auto *A = N->add_attribute();
    A->set_name(Name);
    A->set_type(onnx::AttributeProto_AttributeType_GRAPH);
    *A->mutable_g() = G;
  }
  /// A tensor attribute holding int64 values (Constant's `value`).
  static void attrTensorI64(onnx::NodeProto *N, const std::string &Name, const std::vector<int64_t> &Dims,
                            const std::vector<int64_t> &Values) {
    auto *A = N->add_attribute();
    A->set_name(Name);
    A->set_type(onnx::AttributeProto_AttributeType_TENSOR);
    auto *T = A->mutable_t();
    T->set_data_type(onnx::TensorProto_DataType_INT64);
    for (int64_t D : Dims)
      T->add_dims(D);
    for (int64_t V : Values)
      T->add_int64_data(V);
  }
  /// A graph input with only an element type (subgraph inputs may leave the shape open).
  void untypedShapeInput(const std::string &Name, int ElemType) {
    auto *VI = M.mutable_graph()->add_input();
    VI->set_name(Name);
    VI->mutable_type()->mutable_tensor_type()->set_elem_type(ElemType);
  }
  void metadata(const std::string &Key, const std::string &Value) {
    auto *P = M.add_metadata_props();
    P->set_key(Key);
    P->set_value(Value);
  }
  std::string bytes() const { return M.SerializeAsString(); }
  onnx::ModelProto M;

private:
  static void setValueInfo(onnx::ValueInfoProto *VI, const std::string &Name, int ElemType,
                           const std::vector<int64_t> &Dims, const std::vector<std::string> &Symbols) {
    VI->set_name(Name);
    auto *TT = VI->mutable_type()->mutable_tensor_type();
    TT->set_elem_type(ElemType);
    auto *S = TT->mutable_shape();
    for (size_t I = 0; I < Dims.size(); ++I) {
      auto *D = S->add_dim();
      if (I < Symbols.size() && !Symbols[I].empty())
        D->set_dim_param(Symbols[I]);
      else
        D->set_dim_value(Dims[I]);
    }
  }
};

/// A chain of N MatMuls of Size x Size (slow enough to observe a running request).
inline std::string slowChainModel(int N, int Size) {
  OnnxBuilder B;
  B.input("x", onnx::TensorProto_DataType_FLOAT, {Size, Size});
  std::vector<float> W(static_cast<size_t>(Size) * Size, 0.0f);
  for (int I = 0; I < Size; ++I)
    W[static_cast<size_t>(I) * Size + I] = 1.0f; // identity keeps values bounded
  B.initializer("w", {Size, Size}, W);
  std::string Prev = "x";
  for (int I = 0; I < N; ++I) {
    const std::string Out = I + 1 == N ? "y" : "t" + std::to_string(I);
    B.node("MatMul", {Prev, "w"}, {Out}, "matmul_" + std::to_string(I));
    Prev = Out;
  }
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  return B.bytes();
}

} // namespace optimium_test
