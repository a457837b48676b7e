"""Stores the weights of an ONNX float32 model's MatMul and Gemm layers as bfloat16: each 2-D
float initializer read as a MatMul's B (or a Gemm's B) becomes a bfloat16 initializer (rounded to
nearest even) followed by Cast(to=FLOAT), so every other op, the graph's inputs and outputs, and
the arithmetic stay float32 (ONNX semantics: the product of the weights' float values). The file
and the weights' memory traffic halve; our runtime multiplies the bf16 constants directly
(passes/Bf16Weights). Usage: convert_bf16_weights.py IN.onnx OUT.onnx"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def to_bf16_bits(a):
    bits = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return rounded.astype(np.uint16)


def convert(model):
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    weights = set()
    for n in g.node:
        if n.op_type in ("MatMul", "Gemm") and len(n.input) > 1:
            t = inits.get(n.input[1])
            if t is not None and t.data_type == TensorProto.FLOAT and len(t.dims) == 2:
                weights.add(t.name)
    casts = []
    for name in sorted(weights):
        t = inits[name]
        bits = to_bf16_bits(numpy_helper.to_array(t))
        b = TensorProto()
        b.name = name + "_bf16"
        b.data_type = TensorProto.BFLOAT16
        b.dims.extend(t.dims)
        b.raw_data = bits.tobytes()
        g.initializer.remove(t)
        g.initializer.append(b)
        casts.append(helper.make_node("Cast", [b.name], [name], name=name + "_cast", to=TensorProto.FLOAT))
    # The Casts first: they produce the old initializer names, read by nodes later in the order.
    nodes = casts + list(g.node)
    del g.node[:]
    g.node.extend(nodes)
    return len(weights)


def main():
    model = onnx.load(sys.argv[1])
    n = convert(model)
    onnx.save(model, sys.argv[2])
    print(f"{sys.argv[2]}: {n} weight matrices stored as bfloat16")


if __name__ == "__main__":
    main()
