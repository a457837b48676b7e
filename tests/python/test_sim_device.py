"""The simulated NPU (liboptimium-runtime-sim.so, bundled beside the extension module and auto-loaded)
from Python: hw_type="sim", its counter read by profile_resources, device-resident outputs
(DeviceArray in the device's memory) and the copies they save, counted with the profiler."""
import os

import numpy as np
import pytest

from conftest import DIGITS
from optimium.runtime.profiling import profile_resources
from optimium.runtime.runner import DeviceArray, InferenceRunner

MODEL = str(DIGITS / "model.onnx")


def _sim(rt):
    sims = [d for d in rt.get_local_info().devices if rt.get_device_property(d, "hw_type") == "sim"]
    assert sims, "the wheel's simulated NPU was not auto-loaded"
    return sims[0]


def _counter(path):
    with open(path) as f:
        return int(f.read())


def _square_layer(tmp_path, seed, n=64):
    """y = Relu(x @ W), [1, n] -> [1, n]: an output that can feed the next run."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    w = np.random.default_rng(seed).uniform(-1, 1, (n, n)).astype(np.float32)
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["h"]), helper.make_node("Relu", ["h"], ["y"])], "square",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, n])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, n])], [numpy_helper.from_array(w, "W")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    path = tmp_path / f"square_{seed}.onnx"
    onnx.save(m, str(path))
    return str(path)


def test_hw_type_sim_runs_the_digits_on_the_npu_bit_for_bit(rt):
    sim = _sim(rt)
    assert sim.platform == rt.PlatformKind.SYNAPTICS
    assert rt.get_device_property(sim, "memory").endswith("-byte arena")
    runner = InferenceRunner(MODEL, hw_type="sim")
    assert runner.device == sim
    assert all(op.device == sim for op in runner.model.operations)
    native = InferenceRunner(MODEL)
    path = runner.npu_inference_time_path
    assert path and os.path.exists(path) and native.npu_inference_time_path is None
    images = np.load(DIGITS / "test_images.npy")[:20]
    before = _counter(path)
    for img in images:
        x = img[None]
        assert np.array_equal(runner.infer([x])[0], native.infer([x])[0])
    assert _counter(path) > before
    # The same through the flags optimium-run takes.
    flagged = InferenceRunner(MODEL, runtime_flags=["--device=npu", "--hw_type=sim"])
    assert flagged.device == sim


def test_profile_resources_reads_the_sims_counter(rt):
    _sim(rt)
    runner = InferenceRunner(MODEL, hw_type="sim")
    path = runner.npu_inference_time_path
    before = _counter(path)
    stats = profile_resources(runner, n_iters=5, do_warmup=False)
    grown = _counter(path) - before
    assert grown > 0
    assert stats.npu_inference_time_us == grown
    assert stats.avg_npu_load_percent is not None and stats.avg_npu_load_percent >= 0
    assert "Avg NPU usage" in stats.summary()


def test_device_outputs_stay_on_the_sim_and_feed_the_next_run(rt, tmp_path):
    _sim(rt)
    model = _square_layer(tmp_path, 1)
    x = np.random.default_rng(2).uniform(-1, 1, (1, 64)).astype(np.float32)
    dev = InferenceRunner(model, hw_type="sim", device_outputs=True)
    native = InferenceRunner(model)
    y = dev.infer([x])[0]
    assert isinstance(y, DeviceArray) and y.is_on_device
    expected = native.infer([x])[0]
    for _ in range(3):
        assert np.array_equal(y.to_host(), expected)
        nxt = dev.infer([y])[0]  # fed back from the device's memory
        assert np.array_equal(y.to_host(), expected)  # a handed-out output is never overwritten
        y, expected = nxt, native.infer([expected])[0]
    # Host outputs of a native runner with device_outputs stay host DeviceArrays.
    host = InferenceRunner(model, device_outputs=True).infer([x])[0]
    assert not host.is_on_device and np.array_equal(host.to_host(), native.infer([x])[0])


def test_copies_per_run_with_and_without_device_outputs(rt, tmp_path):
    sim = _sim(rt)
    model = rt.load_model(_square_layer(tmp_path, 3), devices=[sim], strict=True)
    x = rt.tensor(np.random.default_rng(4).uniform(-1, 1, (1, 64)).astype(np.float32))

    def copies(req, inputs):
        req.profile(inputs, repeat=1, warmup=0)
        ins = outs = 0
        for e in req.get_profile_events():
            if e.kind != rt.ProfileEventKind.COPY_BEGIN:
                continue
            ins += e.dest_device == sim and e.source_device != sim
            outs += e.source_device == sim and e.dest_device != sim
        return ins, outs

    # Loaded from a file, MatMul reads its constant W in place at run time (not packed): W goes to
    # the device once per request and stays valid there.
    host = model.create_request()
    assert [copies(host, [x]) for _ in range(3)] == [(2, 1), (1, 1), (1, 1)]  # x in, y out, every run
    dev = model.create_request()
    dev.device_outputs = True
    assert copies(dev, [x]) == (2, 0)  # x (and W, once) in from the host, y stays
    y = dev.get_output(0)
    assert y.is_device and y.device == sim
    for _ in range(3):
        assert copies(dev, [y]) == (0, 0)  # fed back on the device: no copy at all
        y = dev.get_output(0)


def test_hw_type_errors(rt):
    with pytest.raises(ValueError, match="hw_type='fpga': unknown hardware type of device npu; known: sim"):
        InferenceRunner(MODEL, hw_type="fpga")
    with pytest.raises(ValueError, match="device 'xnnpack'|no such device"):
        InferenceRunner(MODEL, device_uri="xnnpack", hw_type="sim")
    with pytest.raises(ValueError, match="astra_machina.*not loaded|this runtime does not build it"):
        InferenceRunner(MODEL, hw_type="astra_machina")
