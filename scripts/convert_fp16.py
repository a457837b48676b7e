"""Converts an ONNX float32 model to float16: every float initializer, Constant and float-typed
value becomes float16; Cast-to-float becomes Cast-to-float16. With --keep-io-types (default) the
graph's float inputs/outputs stay float32 with Cast nodes at the boundary, so callers feed the same
arrays. Usage: convert_fp16.py IN.onnx OUT.onnx"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

FLOAT, HALF = TensorProto.FLOAT, TensorProto.FLOAT16


def to_half(t):
    return numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float16), t.name)


def convert(model, keep_io_types=True):
    g = model.graph
    for i, t in enumerate(g.initializer):
        if t.data_type == FLOAT:
            g.initializer[i].CopyFrom(to_half(t))
    for n in g.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.TENSOR and a.t.data_type == FLOAT:
                a.t.CopyFrom(to_half(a.t))
            if n.op_type == "Cast" and a.name == "to" and a.i == FLOAT:
                a.i = HALF
    for vi in g.value_info:
        if vi.type.tensor_type.elem_type == FLOAT:
            vi.type.tensor_type.elem_type = HALF
    if keep_io_types:
        boundary = []
        for inp in g.input:
            if inp.type.tensor_type.elem_type == FLOAT:
                half = inp.name + "_fp16"
                for n in g.node:
                    for k, x in enumerate(n.input):
                        if x == inp.name:
                            n.input[k] = half
                boundary.append(helper.make_node("Cast", [inp.name], [half], to=HALF, name=half + "_cast"))
        for out in g.output:
            if out.type.tensor_type.elem_type == FLOAT:
                half = out.name + "_fp16"
                for n in g.node:
                    for k, x in enumerate(n.output):
                        if x == out.name:
                            n.output[k] = half
                g.node.append(helper.make_node("Cast", [half], [out.name], to=FLOAT, name=out.name + "_cast"))
        for k, n in enumerate(boundary):
            g.node.insert(k, n)
    else:
        for v in list(g.input) + list(g.output):
            if v.type.tensor_type.elem_type == FLOAT:
                v.type.tensor_type.elem_type = HALF
    return model


if __name__ == "__main__":
    m = convert(onnx.load(sys.argv[1]))
    onnx.checker.check_model(m)
    onnx.save(m, sys.argv[2])
