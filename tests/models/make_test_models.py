#!/usr/bin/python3
"""Generate the small ONNX test models used by the runtime's tests.

Run:  /usr/bin/python3 tests/models/make_test_models.py

Each model gets its own folder next to this script containing `model.onnx` and,
where it has reference data, `input_<i>.npy` (i = position in graph.input) and
`output_<i>.npy` (i = position in graph.output).

Graphs are built with onnx.helper (opset 13). Expected outputs are computed by a
small numpy reference interpreter in this file (NOT by onnxruntime) and are
cross-checked against torch when torch is importable. Fully deterministic.
"""
import copy
import os
import shutil

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OPSET = 13
IR_VERSION = 8
ALL_OPS = {"Conv", "Gemm", "MatMul", "Add", "Mul", "Relu", "MaxPool", "AveragePool",
           "GlobalAveragePool", "Flatten", "Reshape", "Softmax", "Transpose", "Concat"}


# --------------------------------------------------------------------------
# numpy reference implementations
# --------------------------------------------------------------------------
def _attrs(node):
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def _pads2d(a, nd=2):
    pads = list(a.get("pads", [0] * (2 * nd)))
    return pads[:nd], pads[nd:]


def np_conv(x, w, b=None, strides=(1, 1), pads=(0, 0, 0, 0), dilations=(1, 1), group=1):
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    assert c == cg * group and m % group == 0
    xp = np.zeros((n, c, h + pads[0] + pads[2], wd + pads[1] + pads[3]), dtype=np.float64)
    xp[:, :, pads[0]:pads[0] + h, pads[1]:pads[1] + wd] = x
    ekh, ekw = (kh - 1) * dilations[0] + 1, (kw - 1) * dilations[1] + 1
    oh = (xp.shape[2] - ekh) // strides[0] + 1
    ow = (xp.shape[3] - ekw) // strides[1] + 1
    y = np.zeros((n, m, oh, ow), dtype=np.float64)
    mg = m // group
    for g in range(group):
        xs = xp[:, g * cg:(g + 1) * cg]
        ws = w[g * mg:(g + 1) * mg].astype(np.float64)
        for i in range(oh):
            for j in range(ow):
                r0, c0 = i * strides[0], j * strides[1]
                patch = xs[:, :, r0:r0 + ekh:dilations[0], c0:c0 + ekw:dilations[1]]
                y[:, g * mg:(g + 1) * mg, i, j] = np.einsum("nckl,mckl->nm", patch, ws)
    if b is not None:
        y += b.reshape(1, -1, 1, 1)
    return y.astype(np.float32)


def np_pool(x, kernel, strides, pads, mode, count_include_pad=0):
    n, c, h, w = x.shape
    fill = -np.inf if mode == "max" else 0.0
    xp = np.full((n, c, h + pads[0] + pads[2], w + pads[1] + pads[3]), fill, dtype=np.float64)
    xp[:, :, pads[0]:pads[0] + h, pads[1]:pads[1] + w] = x
    valid = np.zeros(xp.shape[2:], dtype=np.float64)
    valid[pads[0]:pads[0] + h, pads[1]:pads[1] + w] = 1.0
    oh = (xp.shape[2] - kernel[0]) // strides[0] + 1
    ow = (xp.shape[3] - kernel[1]) // strides[1] + 1
    y = np.zeros((n, c, oh, ow), dtype=np.float64)
    for i in range(oh):
        for j in range(ow):
            sl = (slice(i * strides[0], i * strides[0] + kernel[0]),
                  slice(j * strides[1], j * strides[1] + kernel[1]))
            win = xp[:, :, sl[0], sl[1]]
            if mode == "max":
                y[:, :, i, j] = win.max(axis=(2, 3))
            else:
                cnt = kernel[0] * kernel[1] if count_include_pad else valid[sl].sum()
                y[:, :, i, j] = win.sum(axis=(2, 3)) / cnt
    return y.astype(np.float32)


def np_softmax(x, axis):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return (e / e.sum(axis=axis, keepdims=True)).astype(np.float32)


def np_run(node, ins):
    a = _attrs(node)
    op = node.op_type
    if op == "Conv":
        x, w = ins[0], ins[1]
        b = ins[2] if len(ins) > 2 else None
        return np_conv(x, w, b, a.get("strides", [1, 1]), a.get("pads", [0] * 4),
                       a.get("dilations", [1, 1]), a.get("group", 1))
    if op == "MaxPool":
        return np_pool(ins[0], a["kernel_shape"], a.get("strides", [1, 1]),
                       a.get("pads", [0] * 4), "max")
    if op == "AveragePool":
        return np_pool(ins[0], a["kernel_shape"], a.get("strides", [1, 1]),
                       a.get("pads", [0] * 4), "avg", a.get("count_include_pad", 0))
    if op == "GlobalAveragePool":
        return ins[0].astype(np.float64).mean(axis=(2, 3), keepdims=True).astype(np.float32)
    if op == "Relu":
        return np.maximum(ins[0], 0).astype(ins[0].dtype)
    if op == "Add":
        return (ins[0] + ins[1]).astype(np.result_type(ins[0], ins[1]))
    if op == "Mul":
        return (ins[0] * ins[1]).astype(np.result_type(ins[0], ins[1]))
    if op == "MatMul":
        return (ins[0].astype(np.float64) @ ins[1].astype(np.float64)).astype(np.float32)
    if op == "Gemm":
        A, B = ins[0].astype(np.float64), ins[1].astype(np.float64)
        if a.get("transA", 0):
            A = A.T
        if a.get("transB", 0):
            B = B.T
        y = a.get("alpha", 1.0) * (A @ B)
        if len(ins) > 2:
            y = y + a.get("beta", 1.0) * ins[2].astype(np.float64)
        return y.astype(np.float32)
    if op == "Softmax":
        return np_softmax(ins[0], a.get("axis", -1))
    if op == "Flatten":
        ax = a.get("axis", 1)
        s = ins[0].shape
        return ins[0].reshape(int(np.prod(s[:ax])), int(np.prod(s[ax:])))
    if op == "Reshape":
        shape = [int(d) for d in ins[1]]
        shape = [ins[0].shape[i] if d == 0 else d for i, d in enumerate(shape)]
        return ins[0].reshape(shape)
    if op == "Transpose":
        return np.ascontiguousarray(np.transpose(ins[0], a["perm"]))
    if op == "Concat":
        return np.concatenate(ins, axis=a["axis"])
    raise NotImplementedError(op)


def torch_run(node, ins):
    """Independent cross-check of the float ops using torch.nn.functional."""
    import torch
    import torch.nn.functional as F
    a = _attrs(node)
    op = node.op_type
    t = [torch.from_numpy(np.array(v, copy=True)) for v in ins]
    if op == "Conv":
        p = a.get("pads", [0] * 4)
        x = F.pad(t[0], (p[1], p[3], p[0], p[2]))  # (left, right, top, bottom)
        y = F.conv2d(x, t[1], t[2] if len(t) > 2 else None, stride=a.get("strides", [1, 1]),
                     dilation=a.get("dilations", [1, 1]), groups=a.get("group", 1))
    elif op == "MaxPool":
        p = a.get("pads", [0] * 4)
        assert p[:2] == p[2:]
        y = F.max_pool2d(t[0], a["kernel_shape"], a.get("strides", [1, 1]), p[:2])
    elif op == "AveragePool":
        p = a.get("pads", [0] * 4)
        assert p[:2] == p[2:]
        y = F.avg_pool2d(t[0], a["kernel_shape"], a.get("strides", [1, 1]), p[:2],
                         count_include_pad=bool(a.get("count_include_pad", 0)))
    elif op == "GlobalAveragePool":
        y = F.adaptive_avg_pool2d(t[0], 1)
    elif op == "Relu":
        y = F.relu(t[0])
    elif op == "Add":
        y = t[0] + t[1]
    elif op == "Mul":
        y = t[0] * t[1]
    elif op == "MatMul":
        y = torch.matmul(t[0], t[1])
    elif op == "Gemm":
        A = t[0].T if a.get("transA", 0) else t[0]
        B = t[1].T if a.get("transB", 0) else t[1]
        y = torch.addmm(t[2].expand(A.shape[0], B.shape[1]), A, B,
                        beta=a.get("beta", 1.0), alpha=a.get("alpha", 1.0))
    elif op == "Softmax":
        y = torch.softmax(t[0], dim=a.get("axis", -1))
    elif op == "Flatten":
        ax = a.get("axis", 1)
        y = t[0].reshape(int(np.prod(t[0].shape[:ax])), -1)
    elif op == "Reshape":
        y = t[0].reshape([t[0].shape[i] if int(d) == 0 else int(d) for i, d in enumerate(ins[1])])
    elif op == "Transpose":
        y = t[0].permute(a["perm"])
    elif op == "Concat":
        y = torch.cat(t, dim=a["axis"])
    else:
        raise NotImplementedError(op)
    return y.contiguous().numpy()


def interpret(model, feeds, runner=np_run):
    env = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    env.update(feeds)
    for node in model.graph.node:
        outs = runner(node, [env[n] for n in node.input if n])
        env[node.output[0]] = outs
    return [env[o.name] for o in model.graph.output]


# --------------------------------------------------------------------------
# model builders
# --------------------------------------------------------------------------
def make_model(graph):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                          producer_name="make_test_models.py")
    m.ir_version = IR_VERSION
    return m


def init(name, arr):
    return numpy_helper.from_array(np.ascontiguousarray(arr), name)


def rnd(rng, *shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def build_mlp(batch=2):
    rng = np.random.default_rng(1)
    w1, b1 = rnd(rng, 16, 32, scale=0.25), rnd(rng, 32, scale=0.1)
    w2, b2 = rnd(rng, 10, 32, scale=0.25), rnd(rng, 10, scale=0.1)
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h0"], name="matmul"),
        helper.make_node("Add", ["h0", "b1"], ["h1"], name="add_bias"),
        helper.make_node("Relu", ["h1"], ["h2"], name="relu"),
        helper.make_node("Gemm", ["h2", "w2", "b2"], ["logits"], name="gemm",
                         transB=1, alpha=0.5, beta=1.0),
        helper.make_node("Softmax", ["logits"], ["y"], name="softmax", axis=-1),
    ]
    g = helper.make_graph(
        nodes, "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, 10])],
        [init("w1", w1), init("b1", b1), init("w2", w2), init("b2", b2)])
    return make_model(g)


def build_cnn():
    rng = np.random.default_rng(2)
    c1w, c1b = rnd(rng, 8, 3, 3, 3, scale=0.3), rnd(rng, 8, scale=0.1)
    c2w, c2b = rnd(rng, 8, 4, 3, 3, scale=0.3), rnd(rng, 8, scale=0.1)
    scale = rnd(rng, 80, scale=1.0)
    gw, gb = rnd(rng, 80, 10, scale=0.2), rnd(rng, 10, scale=0.1)
    shape = np.array([1, -1], dtype=np.int64)
    nodes = [
        # 1x3x16x16 -> 1x8x16x16
        helper.make_node("Conv", ["x", "conv1_w", "conv1_b"], ["c1"], name="conv1",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        # -> 1x8x8x8
        helper.make_node("MaxPool", ["r1"], ["p1"], name="maxpool",
                         kernel_shape=[2, 2], strides=[2, 2]),
        # grouped, strided, asymmetric pad: (8+0+1-3)/2+1 = 4 -> 1x8x4x4
        helper.make_node("Conv", ["p1", "conv2_w", "conv2_b"], ["c2"], name="conv2",
                         kernel_shape=[3, 3], strides=[2, 2], pads=[0, 0, 1, 1],
                         dilations=[1, 1], group=2),
        # (4+2-2)/2+1 = 3 -> 1x8x3x3, edge windows partly padding
        helper.make_node("AveragePool", ["c2"], ["a1"], name="avgpool",
                         kernel_shape=[2, 2], strides=[2, 2], pads=[1, 1, 1, 1],
                         count_include_pad=0),
        # branch 1: 1x8x1x1 -> 1x8
        helper.make_node("GlobalAveragePool", ["a1"], ["gap"], name="gap"),
        helper.make_node("Flatten", ["gap"], ["gap_flat"], name="flatten", axis=1),
        # branch 2: 1x3x3x8 -> 1x72
        helper.make_node("Transpose", ["a1"], ["nhwc"], name="to_nhwc", perm=[0, 2, 3, 1]),
        helper.make_node("Reshape", ["nhwc", "reshape_shape"], ["nhwc_flat"], name="reshape"),
        # -> 1x80
        helper.make_node("Concat", ["gap_flat", "nhwc_flat"], ["cat"], name="concat", axis=1),
        helper.make_node("Mul", ["cat", "mul_scale"], ["scaled"], name="mul"),
        # -> 1x10
        helper.make_node("Gemm", ["scaled", "fc_w", "fc_b"], ["y"], name="fc"),
    ]
    g = helper.make_graph(
        nodes, "cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
        [init("conv1_w", c1w), init("conv1_b", c1b), init("conv2_w", c2w),
         init("conv2_b", c2b), init("reshape_shape", shape), init("mul_scale", scale),
         init("fc_w", gw), init("fc_b", gb)])
    return make_model(g)


def build_dynamic_batch():
    m = build_mlp()
    for vi in (m.graph.input[0], m.graph.output[0]):
        d = vi.type.tensor_type.shape.dim[0]
        d.Clear()
        d.dim_param = "batch"
    m.graph.name = "mlp_dynamic_batch"
    return m


def build_unsupported_op():
    # An op of a vendor domain no runtime implements: stays "unsupported" as op coverage grows.
    nodes = [helper.make_node("FancyUnimplementedOp", ["x"], ["y"], name="my_unsupported_node",
                              domain="com.example")]
    g = helper.make_graph(
        nodes, "unsupported_op",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])])
    m = make_model(g)
    m.opset_import.append(helper.make_opsetid("com.example", 1))
    return m


def build_two_inputs():
    nodes = [helper.make_node("Add", ["a", "b"], ["s"], name="add"),
             helper.make_node("Mul", ["s", "a"], ["sum_times_a"], name="mul")]
    g = helper.make_graph(
        nodes, "two_inputs",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("sum_times_a", TensorProto.FLOAT, [2, 3])])
    return make_model(g)


def build_int64_input():
    # one addend exceeds int32 range so a silently-int32 implementation fails
    k = np.array([1, -2, 3, 1 << 40], dtype=np.int64)
    nodes = [helper.make_node("Add", ["ids", "offset"], ["out"], name="add_int64")]
    g = helper.make_graph(
        nodes, "int64_input",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, [4])],
        [helper.make_tensor_value_info("out", TensorProto.INT64, [4])],
        [init("offset", k)])
    return make_model(g)


# --------------------------------------------------------------------------
def check(model_or_path):
    try:
        onnx.checker.check_model(model_or_path, full_check=True)
    except TypeError:  # very old onnx: no full_check for paths
        onnx.checker.check_model(model_or_path)


def write_case(name, model, inputs, external=False, cross_check=True):
    d = os.path.join(HERE, name)
    if os.path.isdir(d):
        shutil.rmtree(d)
    os.makedirs(d)
    path = os.path.join(d, "model.onnx")
    check(model)
    if external:
        m = copy.deepcopy(model)
        onnx.save_model(m, path, save_as_external_data=True, all_tensors_to_one_file=True,
                        location="weights.bin", size_threshold=0)
        check(path)  # checker resolves external data relative to the path
        assert os.path.exists(os.path.join(d, "weights.bin"))
        raw = onnx.load(path, load_external_data=False)
        assert all(t.data_location == TensorProto.EXTERNAL and not t.raw_data
                   for t in raw.graph.initializer)
        reloaded = onnx.load(path)  # pulls weights.bin back in
        assert [numpy_helper.to_array(t).tobytes() for t in reloaded.graph.initializer] == \
            [numpy_helper.to_array(t).tobytes() for t in model.graph.initializer]
    else:
        onnx.save_model(model, path)
        check(path)
    if inputs is None:
        return
    feeds = {}
    for i, (vi, arr) in enumerate(zip(model.graph.input, inputs)):
        feeds[vi.name] = arr
        np.save(os.path.join(d, f"input_{i}.npy"), arr)
    outs = interpret(model, feeds)
    if cross_check:
        try:
            import torch  # noqa: F401
            touts = interpret(model, feeds, torch_run)
            for o, t in zip(outs, touts):
                np.testing.assert_allclose(o, t, rtol=1e-5, atol=1e-6)
        except ImportError:
            print("  (torch not available, skipping cross-check)")
    for i, (vi, arr) in enumerate(zip(model.graph.output, outs)):
        want = [d.dim_value for d in vi.type.tensor_type.shape.dim]
        assert all(w in (0, s) for w, s in zip(want, arr.shape)) and len(want) == arr.ndim, \
            (name, want, arr.shape)
        np.save(os.path.join(d, f"output_{i}.npy"), arr)


def main():
    rng = np.random.default_rng(1234)
    mlp, cnn = build_mlp(), build_cnn()
    used = {n.op_type for m in (mlp, cnn) for n in m.graph.node}
    assert used == ALL_OPS, (sorted(used ^ ALL_OPS))

    write_case("mlp", mlp, [rnd(rng, 2, 16)])
    write_case("cnn", cnn, [rnd(rng, 1, 3, 16, 16)])
    write_case("external_data", build_mlp(), [rnd(rng, 2, 16)], external=True)
    write_case("dynamic_batch", build_dynamic_batch(), [rnd(rng, 3, 16)])
    write_case("unsupported_op", build_unsupported_op(), None)
    write_case("two_inputs", build_two_inputs(), [rnd(rng, 2, 3), rnd(rng, 2, 3)])
    write_case("int64_input", build_int64_input(),
               [np.array([5, 7, -9, 1 << 33], dtype=np.int64)], cross_check=False)
    write_resizable_cache()

    total = 0
    for root, _, files in sorted(os.walk(HERE)):
        for f in sorted(files):
            if f.endswith((".onnx", ".npy", ".bin")):
                p = os.path.join(root, f)
                total += os.path.getsize(p)
                print(f"{os.path.relpath(p, HERE):32s} {os.path.getsize(p):7d}")
    print(f"total {total} bytes")
    assert total < 200 * 1024


if __name__ == "__main__":
    main()
