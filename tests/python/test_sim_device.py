"""The simulated NPU (liboptimium-runtime-sim.so, bundled beside the extension module and auto-loaded)
from Python: hw_type="sim", its counter read by profile_resources, device-resident outputs
(DeviceArray in the device's memory) and the copies they save, counted with the profiler; device
arrays the runner allocates in the sim's memory (allocate_device_array) and their errors."""
import os
import subprocess
import sys

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


def _copies(rt, sim, req, inputs):
    """(copies into the sim, copies out of it) of one profiled run."""
    req.profile(inputs, repeat=1, warmup=0)
    ins = outs = 0
    for e in req.get_profile_events():
        if e.kind == rt.ProfileEventKind.COPY_BEGIN:
            ins += e.dest_device == sim and e.source_device != sim
            outs += e.source_device == sim and e.dest_device != sim
    return ins, outs


def test_allocate_device_array_lives_in_the_sims_memory(rt, tmp_path):
    sim = _sim(rt)
    model = _square_layer(tmp_path, 5)
    x = np.random.default_rng(6).uniform(-1, 1, (1, 64)).astype(np.float32)
    runner = InferenceRunner(model, hw_type="sim")  # preload: MatMul packs W, so W is never copied
    native = InferenceRunner(model)
    arr = runner.allocate_device_array(x)
    assert isinstance(arr, DeviceArray) and arr.is_on_device
    assert arr.tensor.device == sim and arr.shape == (1, 64) and arr.dtype == np.float32
    assert np.array_equal(arr.to_host(), x)  # one copy in, exact
    expected = native.infer([x])[0]
    assert np.array_equal(runner.infer([arr])[0], expected)
    # Copies per run, with the profiler: the device array goes in without a copy, a host array with one.
    # (A new request copies the constant W in once on its first run, as in the test above.)
    req = runner.model.create_request()
    assert [_copies(rt, sim, req, [arr.tensor]) for _ in range(3)] == [(1, 1), (0, 1), (0, 1)]
    host_req = runner.model.create_request()
    assert [_copies(rt, sim, host_req, [rt.tensor(x)]) for _ in range(3)] == [(2, 1), (1, 1), (1, 1)]
    req.device_outputs = True
    assert _copies(rt, sim, req, [arr.tensor]) == (0, 0)
    assert np.array_equal(req.get_output(0).to_host().to_numpy(), expected)
    assert np.array_equal(arr.to_host(), x)  # the device only read it
    # Fed to a runner on the CPU it is read through the host.
    assert np.array_equal(native.infer([arr])[0], expected)
    # A native runner's allocate_device_array stays host memory (a copy of the array).
    host = native.allocate_device_array(x)
    assert not host.is_on_device and np.array_equal(host.to_host(), x)
    x[0, 0] += 1.0
    assert host.to_host()[0, 0] != x[0, 0] and arr.to_host()[0, 0] != x[0, 0]


def test_allocate_device_array_bad_input(rt, tmp_path):
    sim = _sim(rt)
    runner = InferenceRunner(_square_layer(tmp_path, 7), hw_type="sim")
    x = np.ones((1, 64), np.float32)
    # A device this runtime does not have: a clear DeviceError listing the ones it has.
    cuda = rt.DeviceID(rt.PlatformKind.CUDA, rt.DeviceKind.NVIDIA)
    with pytest.raises(rt.DeviceError, match=r"CUDA:NVIDIA:0@0 is not a device of this runtime \(loaded: .*Synaptics"):
        rt.tensor(x).to_device(cuda)
    # The wrong shape or type for the model: refused by infer() as any input would be.
    with pytest.raises(rt.ShapeError):
        runner.infer([runner.allocate_device_array(np.ones((1, 32), np.float32))])
    with pytest.raises(TypeError):
        runner.infer([runner.allocate_device_array(np.ones((1, 64), np.float64))])
    # Released: its device memory is freed; using it is a ValueError.
    arr = runner.allocate_device_array(x)
    arr.release()
    with pytest.raises(ValueError, match="empty or released"):
        runner.infer([arr])
    with pytest.raises(ValueError, match="empty or released"):
        arr.to_host()


_AFTER_FINALIZE = r"""
import sys
import numpy as np
import optimium.runtime as rt
from optimium.runtime.runner import InferenceRunner

runner = InferenceRunner(sys.argv[1], hw_type="sim")
x = np.arange(64, dtype=np.float32).reshape(1, 64)
arr = runner.allocate_device_array(x)
rt.finalize()
try:
    runner.allocate_device_array(x)
    raise AssertionError("allocate_device_array worked after finalize()")
except rt.InvalidStateError as e:
    assert "not initialized" in str(e), e
try:
    runner.infer([arr])
    raise AssertionError("infer worked after finalize()")
except rt.InvalidStateError as e:
    print("infer:", e)
# A device array held across finalize() stays readable (its buffer holds the driver).
assert np.array_equal(arr.to_host(), x)
arr.release()
print("ok")
"""


def test_allocate_device_array_after_finalize(tmp_path):
    model = _square_layer(tmp_path, 8)
    out = subprocess.run([sys.executable, "-c", _AFTER_FINALIZE, model], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stdout + out.stderr


def _resizable_folder(tmp_path):
    """x: resizable [1, n] (base [1, 8]) -> Relu on the CPU (symbolic dims); z [1, 64] -> Relu(z W)
    on the sim."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    w = np.random.default_rng(31).uniform(-1, 1, (64, 64)).astype(np.float32)
    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y1"]), helper.make_node("MatMul", ["z", "W"], ["h"]),
         helper.make_node("Relu", ["h"], ["y2"])], "resizable",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 64])],
        [helper.make_tensor_value_info("y1", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("y2", TensorProto.FLOAT, [1, 64])], [numpy_helper.from_array(w, "W")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    folder = tmp_path / "resizable"
    folder.mkdir()
    onnx.save(m, str(folder / "model.onnx"))
    (folder / "optimium.json").write_text(
        '{"optimium_manifest": 1, "tensors": {"x": {"resizable": true, "base_shape": [1, 8]}}}')
    return folder


def test_a_device_array_feeds_a_resizable_input(rt, tmp_path):
    sim = _sim(rt)
    folder = _resizable_folder(tmp_path)
    rng = np.random.default_rng(32)
    x = rng.uniform(-1, 1, (1, 8)).astype(np.float32)
    z = rng.uniform(-1, 1, (1, 64)).astype(np.float32)
    runner = InferenceRunner(folder, hw_type="sim")
    native = InferenceRunner(folder)
    expected = native.infer([x, z])
    got = runner.infer([runner.allocate_device_array(x), runner.allocate_device_array(z)])
    assert all(np.array_equal(a, b) for a, b in zip(got, expected))
    # The copies, with the profiler: x goes to the host once for the CPU's Relu (a copy out of the
    # sim), z is read in place; y2 comes out (W is packed into the MatMul kernel at load), run after
    # run.
    model = rt.load_model(str(folder), devices=[sim])
    req = model.create_request()
    req.set_tensor_shape("x", [1, 24])
    x24 = rng.uniform(-1, 1, (1, 24)).astype(np.float32)
    xd, zd = rt.tensor(x24).to_device(sim), rt.tensor(z).to_device(sim)
    assert [_copies(rt, sim, req, [xd, zd]) for _ in range(2)] == [(0, 2), (0, 2)]
    assert np.array_equal(req.get_output(0).to_numpy(), np.maximum(x24, 0))
    assert np.array_equal(req.get_output(1).to_numpy(), expected[1])
    # The shape checks of a host array: a device array of another shape is refused naming x.
    with pytest.raises(rt.ShapeError, match="'x'.*setTensorShape"):
        req.infer([rt.tensor(x).to_device(sim), zd])
        req.wait()


def test_sim_memory_holds_one_planned_allocation_per_request(rt, tmp_path):
    sim = _sim(rt)
    model = rt.load_model(_square_layer(tmp_path, 33, n=1024), devices=[sim], strict=True)
    def in_use():
        # Earlier tests' requests and device arrays may still be going (garbage, a pool task's last
        # reference): read once two reads 50 ms apart agree (at most 5 s).
        import gc
        import time
        gc.collect()
        last = int(rt.get_device_property(sim, "arena_bytes_in_use"))
        for _ in range(100):
            time.sleep(0.05)
            now = int(rt.get_device_property(sim, "arena_bytes_in_use"))
            if now == last:
                break
            last = now
        return last

    before = in_use()
    req = model.create_request()
    x = rt.tensor(np.random.default_rng(34).uniform(-1, 1, (1, 1024)).astype(np.float32))
    req.infer([x])
    req.wait()
    used = in_use() - before
    # x, h, y (4 KiB each): x and h, h and y live at once, so the plan holds 2 x 4 KiB (+ the sim's
    # 64-byte tail), and W (4 MiB) is packed into the kernel or copied in once as its own buffer.
    assert used in (2 * 4096 + 64, 2 * 4096 + 64 + 1024 * 1024 * 4 + 64)
    assert int(rt.get_device_property(sim, "peak_bytes_in_use")) >= used
