"""Makes the encoder/decoder pair of the model-group sample (spec section 11):

  group_encoder: x f32[1,4] -> memory f32[1,8] = tanh(x @ W1)
  group_head:    memory f32[1,8] -> logits f32[1,5] = memory @ W2 (one output: the Python sample)
  group_decoder: memory f32[1,8], past f32[1,n] (Preserved + Resizable, base [1,0], updated from
                 present) -> logits f32[1,5] = memory @ W2 + sum(past), present = concat(past, mean(memory))

The decoder's cache grows by one column per run inside the member's request, so a test can see
that the request is reused. Run with any Python that has onnx and numpy (the repository's .venv):
    .venv/bin/python tests/models/make_group_models.py
"""
import json
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(11)
W1 = rng.standard_normal((4, 8)).astype(np.float32) * 0.5
W2 = rng.standard_normal((8, 5)).astype(np.float32) * 0.5


def save(name, graph, manifest=None):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    onnx.checker.check_model(model, full_check=True)
    out = os.path.join(HERE, name)
    os.makedirs(out, exist_ok=True)
    onnx.save(model, os.path.join(out, "model.onnx"))
    if manifest:
        with open(os.path.join(out, "optimium.json"), "w") as f:
            json.dump(manifest, f, indent=2)
            f.write("\n")


save("group_encoder", helper.make_graph(
    [helper.make_node("MatMul", ["x", "W1"], ["h"], name="proj"),
     helper.make_node("Tanh", ["h"], ["memory"], name="act")],
    "group_encoder",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
    [helper.make_tensor_value_info("memory", TensorProto.FLOAT, [1, 8])],
    [numpy_helper.from_array(W1, "W1")]))

save("group_decoder", helper.make_graph(
    [helper.make_node("MatMul", ["memory", "W2"], ["proj"], name="proj"),
     helper.make_node("ReduceSum", ["past"], ["past_sum"], name="past_sum", keepdims=1),
     helper.make_node("Add", ["proj", "past_sum"], ["logits"], name="logits"),
     helper.make_node("ReduceMean", ["memory"], ["step"], name="step", axes=[1], keepdims=1),
     helper.make_node("Concat", ["past", "step"], ["present"], name="append", axis=1)],
    "group_decoder",
    [helper.make_tensor_value_info("memory", TensorProto.FLOAT, [1, 8]),
     helper.make_tensor_value_info("past", TensorProto.FLOAT, [1, "n"])],
    [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 5]),
     helper.make_tensor_value_info("present", TensorProto.FLOAT, [1, "n_plus_1"])],
    [numpy_helper.from_array(W2, "W2")]),
    {"optimium_manifest": 1,
     "tensors": {"past": {"preserved": True, "resizable": True, "update_from": "present", "base_shape": [1, 0]}}})

# The Python sample unpacks one output (`logits, = decoder.run(...)`): a cache-less decoder head,
# logits = memory @ W2.
save("group_head", helper.make_graph(
    [helper.make_node("MatMul", ["memory", "W2"], ["logits"], name="proj")],
    "group_head",
    [helper.make_tensor_value_info("memory", TensorProto.FLOAT, [1, 8])],
    [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 5])],
    [numpy_helper.from_array(W2, "W2")]))

# The references the sample checks: one encoder run on x = [1, 2, 3, 4] / 4, then steps of the
# decoder, each adding mean(memory) to the cache.
x = (np.arange(1, 5, dtype=np.float32) / 4).reshape(1, 4)
memory = np.tanh(x @ W1)
np.save(os.path.join(HERE, "group_encoder", "input_0.npy"), x)
np.save(os.path.join(HERE, "group_encoder", "output_0.npy"), memory.astype(np.float32))
np.save(os.path.join(HERE, "group_decoder", "w2.npy"), W2)
# Raw little-endian float32 copies for the C++ sample (which reads them with std::ifstream), and the
# decoder's first logits (empty cache) as a reference.
x.astype(np.float32).tofile(os.path.join(HERE, "group_encoder", "input_0.bin"))
memory.astype(np.float32).tofile(os.path.join(HERE, "group_encoder", "output_0.bin"))
(memory @ W2).astype(np.float32).tofile(os.path.join(HERE, "group_decoder", "logits_0.bin"))
