"""Models loaded from bytes (load_model(bytes), InferenceRunner's default "preload") own their copy:
the caller's bytes object may be freed, and a bytearray changed, right after the call. A real-size
model matters: its weights are read in place from the bytes (MatMul B, Gather tables), and a buffer
that large is unmapped when freed, so a dangling pointer faults instead of reading stale data."""
import gc
import os
import pathlib

import numpy as np
import pytest

from conftest import ROOT

RESNET = ROOT / "build" / "exported-models" / "resnet18"


def _large_model_bytes():
    """A 16 MiB MatMul weight, a 4 MiB Gather table and a Conv: constants the importer reads in
    place from the model bytes."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(7)
    w = rng.standard_normal((2048, 2048), dtype=np.float32) * 0.02
    table = rng.standard_normal((4096, 256), dtype=np.float32)
    conv_w = rng.standard_normal((16, 3, 3, 3), dtype=np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["y"]),
        helper.make_node("Gather", ["table", "ids"], ["rows"]),
        helper.make_node("Conv", ["img", "conv_w"], ["feat"], pads=[1, 1, 1, 1]),
    ]
    graph = helper.make_graph(
        nodes, "bytes_owned",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 2048]),
         helper.make_tensor_value_info("ids", TensorProto.INT64, [5]),
         helper.make_tensor_value_info("img", TensorProto.FLOAT, [1, 3, 32, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 2048]),
         helper.make_tensor_value_info("rows", TensorProto.FLOAT, [5, 256]),
         helper.make_tensor_value_info("feat", TensorProto.FLOAT, [1, 16, 32, 32])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(table, "table"),
         numpy_helper.from_array(conv_w, "conv_w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    x = rng.standard_normal((4, 2048), dtype=np.float32)
    ids = np.array([0, 4095, 17, 17, 2048], dtype=np.int64)
    img = rng.standard_normal((1, 3, 32, 32), dtype=np.float32)
    return model.SerializeToString(), (x, ids, img), (x @ w, table[ids])


def _run(model, inputs):
    req = model.create_request()
    req.infer([np.ascontiguousarray(a) for a in inputs])
    req.wait()
    return [np.array(req.get_output(i)) for i in range(len(model.output_names))]


def test_bytes_freed_after_load(rt):
    data, inputs, (y_ref, rows_ref) = _large_model_bytes()
    model = rt.load_model(data)
    del data
    gc.collect()
    # Allocate and free large blocks so freed memory is reused or unmapped.
    junk = [bytes(8 << 20) for _ in range(4)]
    del junk
    for _ in range(2):
        y, rows, feat = _run(model, inputs)
        np.testing.assert_allclose(y, y_ref, rtol=1e-4, atol=1e-4)
        np.testing.assert_array_equal(rows, rows_ref)
        assert feat.shape == (1, 16, 32, 32)


def test_bytearray_changed_after_load(rt):
    data, inputs, (y_ref, rows_ref) = _large_model_bytes()
    buf = bytearray(data)
    model = rt.load_model(buf)
    buf[:] = bytes(len(buf))  # the caller reuses its buffer
    req = model.create_request()
    del model
    gc.collect()
    req.infer(list(inputs))
    req.wait()
    np.testing.assert_allclose(np.array(req.get_output(0)), y_ref, rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(np.array(req.get_output(1)), rows_ref)


def test_memoryview_load(rt):
    data, inputs, (y_ref, _) = _large_model_bytes()
    model = rt.load_model(memoryview(data))
    del data
    gc.collect()
    np.testing.assert_allclose(_run(model, inputs)[0], y_ref, rtol=1e-4, atol=1e-4)


@pytest.mark.skipif(not (RESNET / "model.onnx").exists(), reason=f"{RESNET}/model.onnx not exported (scripts/export-models.sh)")
def test_runner_preload_resnet18(rt):
    """The documented runner with its defaults (load_method="preload": from bytes) on ResNet-18."""
    from optimium.runtime.runner import InferenceRunner

    x = np.load(RESNET / "input_0.npy")
    expected = np.load(RESNET / "output_0.npy")
    runner = InferenceRunner(str(RESNET / "model.onnx"))
    gc.collect()
    junk = [bytes(16 << 20) for _ in range(4)]
    del junk
    for _ in range(3):
        out = runner.infer([x])
        got = np.asarray(out[0])
        assert np.max(np.abs(got - expected)) <= 1e-3 * np.max(np.abs(expected))


@pytest.mark.skipif(os.environ.get("OPTIMIUM_ASAN") != "1", reason="only in the AddressSanitizer run (scripts/asan-python.sh)")
def test_asan_run_uses_the_sanitized_module(rt):
    """The sanitizer run must test the instrumented extension, not the installed wheel."""
    import optimium.runtime._core as core

    assert "build-asan-py" in core.__file__, core.__file__
