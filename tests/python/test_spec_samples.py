"""The spec's Python samples (optimium-runtime-4.4.txt sections 2-7, 12 and 13; torq-runtime.txt's runner
and profiling examples), adapted only in model paths / tensor names."""
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import DIGITS, TEST_MODELS

MODEL = str(DIGITS / "model.onnx")


def _conv2d(x, w, b, pads):
    """Float64 NCHW convolution, stride 1, dilation 1, group 1 (the digits model's Convs)."""
    n, c, h, wd = x.shape
    k, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    oh, ow = xp.shape[2] - kh + 1, xp.shape[3] - kw + 1
    out = np.zeros((n, k, oh, ow))
    for i in range(kh):
        for j in range(kw):
            out += np.einsum("nchw,kc->nkhw", xp[:, :, i:i + oh, j:j + ow], w[:, :, i, j])
    return out + b.reshape(1, k, 1, 1)


def _digits_reference(rt, x):
    """The digits model in numpy (float64), with the weights read back through the runtime:
    Conv-Relu-Conv-Relu-MaxPool 2x2-Flatten-Gemm-Relu-Gemm-Softmax. Also returns the first Conv's output."""
    model = rt.load_model(MODEL, memory_optimization=False)
    request = model.create_request()
    assert [op.type for op in model.operations] == ["Conv", "Relu", "Conv", "Relu", "MaxPool", "Flatten", "Gemm",
                                                    "Relu", "Gemm", "Softmax"]
    weight = lambda name: request.get_tensor(name).to_numpy().astype(np.float64)
    h = x.astype(np.float64)
    conv0 = None
    for op in model.operations:
        if op.type == "Conv":
            h = _conv2d(h, weight(op.inputs[1]), weight(op.inputs[2]), op.get_attribute("pads"))
            conv0 = h if conv0 is None else conv0
        elif op.type == "Relu":
            h = np.maximum(h, 0)
        elif op.type == "MaxPool":
            n, c, hh, ww = h.shape
            h = h.reshape(n, c, hh // 2, 2, ww // 2, 2).max(axis=(3, 5))
        elif op.type == "Flatten":
            h = h.reshape(h.shape[0], -1)
        elif op.type == "Gemm":
            h = h @ weight(op.inputs[1]).T + weight(op.inputs[2])
        elif op.type == "Softmax":
            e = np.exp(h - h.max(axis=1, keepdims=True))
            h = e / e.sum(axis=1, keepdims=True)
    return h, conv0


def test_section2_import_and_logging(rt, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    try:
        rt.logging.set_loglevel(rt.logging.LogLevel.DEBUG)
        rt.logging.enable_console_log()
        rt.logging.enable_file_log("output.log")
        rt.load_model(MODEL)
        assert (tmp_path / "output.log").stat().st_size > 0
    finally:
        rt.logging.clear_log_writers()
        rt.logging.set_loglevel(rt.logging.LogLevel.WARNING)


def test_section2_defer_init():
    code = ('import os\nos.environ["OPTIMIUM_RT_DEFER_INIT"] = "TRUE"\n\nimport optimium.runtime as rt\n'
            'rt.initialize()  # must be called before using any runtime component\nprint(rt.is_initialized())\n')
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "True", out.stderr


def test_section2_version(rt, capsys):
    version = rt.get_version()
    print(f"Optimium Runtime v{version.major}.{version.minor}.{version.patch}{version.tag}")
    print(f"Commit: {version.commit_id}")
    print(f"Build:  {version.build_info}")
    print(rt.__version__)
    out = capsys.readouterr().out
    assert "Optimium Runtime v4.4.0" in out
    assert (version.major, version.minor, version.patch) == (4, 4, 0) and isinstance(version.tag, str)
    assert rt.__version__ == "4.4.0"
    assert isinstance(version.commit_id, str) and version.commit_id and f"Commit: {version.commit_id}" in out
    assert isinstance(version.build_info, str) and version.build_info


def test_section2_devices(rt, capsys):
    local = rt.get_local_info()
    found = any(dev.platform == rt.PlatformKind.NATIVE for dev in local.devices)
    if not found:
        print("cannot find needed device")
    assert found and capsys.readouterr().out == ""
    native = [dev for dev in local.devices if dev.platform == rt.PlatformKind.NATIVE]
    assert len(native) == 1 and str(native[0]).startswith("Native:")


def test_section3_load(rt, digits_input, digits_output):
    model = rt.load_model(str(DIGITS))
    assert model.name == "digits"  # a folder model is named after the folder
    model = rt.load_model(
        str(DIGITS),
        devices=None,
        strict=False,
        memory_optimization=True,
        disable_denormals=True,
        intermediate_save_path=None,
        passphrase=None,
        threads=4,
        cores=[0, 1, 2, 3][: os.cpu_count()],
        scheduler_type=rt.SchedulerType.AUTO,
        spin_iterations=1000,
        spin_yield_iterations=0,
        enable_work_stealing=True,
        resizable_capacities={},
    )
    assert model.name == "digits" and model.input_names == ["image"] and model.output_names == ["probabilities"]
    # The options take effect without changing the results: the bundled digits give their outputs.
    request = model.create_request()
    request.infer([digits_input])
    assert request.wait() is False
    np.testing.assert_allclose(request.get_output(0).to_numpy(), digits_output, rtol=1e-4, atol=1e-6)


def test_section4_model_information(rt, digits, capsys):
    model = digits
    print(f"model name: {model.name}")
    print("input tensors")
    for name in model.input_names:
        print(model.get_tensor(name))
    print("output tensors")
    for name in model.output_names:
        print(model.get_tensor(name))
    first_input = model.get_input_tensor(0)
    first_output = model.get_output_tensor(0)
    for info in model.tensors:
        print(info)
    for op in model.operations:
        print(f"op: {op.name} on device: {op.device}")
    print(f"dynamic: {model.is_dynamic}")

    info = model.get_tensor("image")  # the spec's "input_0"
    print(f"name:      {info.name}")
    print(f"shape:     {info.shape}")
    print(f"alignment: {info.alignment}")
    print(f"type:      {info.type}")
    print(f"padding:   {info.padding}")
    print(f"bytes:     {info.size}")
    print(f"opt out:   {info.opt_out}")
    print(f"constant:  {info.constant}")
    print(f"resizable: {info.resizable}")
    if info.scheme:
        if info.scheme.per_channel:
            print(f"per-channel on axis: {info.scheme.axis}")
            for i in range(len(info.scheme)):
                p = info.scheme[i]
                print(f"  channel {i}: scale={p.scale}, zero_point={p.zero_point}")
        else:
            p = info.scheme.get_param()
            print(f"per-tensor: scale={p.scale}, zero_point={p.zero_point}")

    if model.has_attribute("model_type"):
        print(model.get_attribute("model_type"))
    for key in model.attribute_keys:
        print(key, "=", model.get_attribute(key))
    out = capsys.readouterr().out
    assert "model name: model" in out and "shape:     1x1x8x8" in out and "op: " in out
    assert first_input.name == "image" and first_output.name == "probabilities"
    assert model.name == "model" and model.input_names == ["image"] and model.output_names == ["probabilities"]
    assert info.shape == (1, 1, 8, 8) and info.type == rt.float32 and info.size == 8 * 8 * 4
    assert not info.constant and not info.resizable and info.scheme is None and info.padding == 0
    assert info.alignment > 0 and info.alignment % 4 == 0
    assert first_output.shape == (1, 10) and first_output.type == rt.float32
    names = [t.name for t in model.tensors]
    assert "image" in names and "probabilities" in names
    assert model.operations and all(op.device.platform == rt.PlatformKind.NATIVE for op in model.operations)
    assert model.operations[-1].type == "Softmax" and model.operations[-1].outputs == ["probabilities"]
    assert model.is_dynamic is False and "dynamic: False" in out
    assert not model.has_attribute("model_type") and list(model.attribute_keys) == []


def test_section4_dynamic_shapes(rt):
    model = rt.load_model(str(TEST_MODELS / "dynamic_batch"))
    output_shape = model.infer_shape("y", {"x": rt.TensorShape(1, 16)})
    assert output_shape == (1, 10)
    output_shape = model.infer_shape("y", [rt.TensorShape(3, 16)])
    assert output_shape == (3, 10)


def test_section5_6_inputs(rt, digits):
    request = digits.create_request()
    f32_tensor = rt.tensor(shape=(32, 32), dtype=rt.ElementType.F32)
    f32_tensor = rt.tensor(shape=(32, 32), dtype=rt.float32)
    i16_tensor = rt.tensor(123, shape=(8,), dtype=rt.int16)
    tensor_from_list = rt.tensor([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    arr = np.random.random((32, 32)).astype(np.float16)
    tensor_from_np = rt.tensor(arr)
    tensor_zero_copy = rt.tensor(arr, copy=False)
    np_dtype = rt.ElementType.F32.to_dtype()
    elem_type = rt.ElementType.from_dtype(np.dtype(np.float32))
    assert np_dtype == np.float32 and elem_type == rt.float32
    assert i16_tensor.type == rt.int16 and tensor_from_list.type == rt.float32
    assert tensor_from_np.type == tensor_zero_copy.type == rt.float16 and f32_tensor.shape == (32, 32)

    # Values: a fill value, a nested list, a copy vs. a view of a numpy array.
    assert np.array_equal(i16_tensor.to_numpy(), np.full((8,), 123, np.int16)) and i16_tensor.shape == (8,)
    assert np.array_equal(tensor_from_list.to_numpy(), np.arange(1, 10, dtype=np.float32).reshape(3, 3))
    assert np.array_equal(tensor_from_np.to_numpy(), arr) and np.array_equal(tensor_zero_copy.to_numpy(), arr)
    before = arr[0, 0]
    arr[0, 0] = 5.0
    assert tensor_zero_copy.to_numpy()[0, 0] == 5.0  # copy=False shares the array's memory
    assert tensor_from_np.to_numpy()[0, 0] == before  # the default copies

    tensor = rt.tensor(shape=(32, 32), dtype=rt.float32)
    snapshot = tensor.to_numpy()
    tensor.fill(0.0)
    print(tensor.shape, tensor.type)
    assert np.array_equal(tensor.to_numpy(), np.zeros((32, 32), np.float32))
    arr = np.zeros((1, 1, 8, 8), dtype=np.float32)  # the spec's (32, 32), shaped for our model
    arr[0, 0] = 1.0
    tensor = rt.tensor(arr, copy=False)
    request.infer([arr])
    assert request.wait() is False  # False: finished (not timed out)
    assert snapshot.shape == (32, 32)
    expected, _ = _digits_reference(rt, arr)
    np.testing.assert_allclose(request.get_output("probabilities").to_numpy(), expected, rtol=1e-4, atol=1e-6)
    request.infer([tensor])  # the zero-copy rt.Tensor view of the same array gives the same result
    request.wait()
    np.testing.assert_allclose(request.get_output(0).to_numpy(), expected, rtol=1e-4, atol=1e-6)

    values = rt.tensor(np.arange(20, dtype=np.float32) / 3)
    try:
        rt.config.set_print_threshold(10)
        rt.config.set_print_precision(4)
        assert rt.config.get_print_threshold() == 10 and rt.config.get_print_precision() == 4
        text = str(values)
        assert "0.3333," in text and "0.33333" not in text  # 4 decimals
        # 10 elements per dimension: the first 5 (up to 4/3) and the last 5 (from 15/3) of 20
        assert "1.3333, ..., 5.0000" in text and "1.6667" not in text
        rt.config.set_print_threshold(-1)
        assert "..." not in str(values) and "1.6667" in str(values)
    finally:
        rt.config.set_print_threshold(8)
        rt.config.set_print_precision(6)
    assert rt.config.get_print_threshold() == 8 and rt.config.get_print_precision() == 6
    assert "0.333333," in str(values)


def test_section7_running(rt):
    model = rt.load_model(str(TEST_MODELS / "two_inputs"))
    request = model.create_request()
    # by index
    inputs = []
    for name in model.input_names:
        info = model.get_tensor(name)
        inputs.append(rt.tensor(shape=info.shape, dtype=info.type))
    for t in inputs:
        t.fill(2.0)  # the spec's inputs are uninitialized; fill them so the output is known
    request.infer(inputs)
    assert request.wait() is False
    out0 = request.get_output(0)
    out_named = request.get_output("sum_times_a")  # the spec's "output_0"
    print(out0.to_numpy(), out_named)
    assert model.output_names[0] == "sum_times_a" and out0.shape == (2, 3) and out0.type == rt.float32
    np.testing.assert_array_equal(out0.to_numpy(), np.full((2, 3), (2 + 2) * 2, np.float32))
    np.testing.assert_array_equal(out_named.to_numpy(), out0.to_numpy())
    # by name
    inputs = {}
    for name in model.input_names:
        info = model.get_tensor(name)
        inputs[name] = rt.tensor(shape=info.shape, dtype=info.type)
    inputs["a"].fill(3.0)
    inputs["b"].fill(-1.0)
    request.infer(inputs)
    assert request.wait() is False
    np.testing.assert_array_equal(request.get_output(0).to_numpy(), np.full((2, 3), (3 - 1) * 3, np.float32))
    # numpy arrays work directly
    inputs = [np.random.random((2, 3)).astype(np.float32), np.random.random((2, 3)).astype(np.float32)]
    request.infer(inputs)
    request.wait()
    result = request.get_output(0).to_numpy()
    np.testing.assert_allclose(result, (inputs[0] + inputs[1]) * inputs[0], rtol=1e-6)
    expected = result.copy()
    # wait with timeout: False when the run finished first (a 2x3 model well within 500 ms)
    request.infer(inputs)
    assert request.wait() is False
    request.infer(inputs)
    finished_late = request.wait(500000)
    if finished_late:
        print("inference not finished after 500ms")
    else:
        print("inference finished within 500ms")
    print(f"current state of request: {request.status}")
    assert finished_late is False and request.status == rt.InferStatus.READY
    np.testing.assert_array_equal(request.get_output(0).to_numpy(), expected)

    calls = []

    def on_complete(status, error):
        calls.append((status, error))
        if status == rt.InferStatus.FAULT:
            print(f"Inference error: {error}")

    request.set_callback(on_complete)
    request.infer(inputs)
    request.wait()
    # The callback ran once, before wait() returned, with the run's status and no error.
    assert calls == [(rt.InferStatus.READY, None)]
    # Cancellation is cooperative: a run that already finished stays READY; one stopped between
    # operations fails in wait() and the request is FAULT, the callback seeing the same error.
    calls.clear()
    request.infer(inputs)
    request.cancel()
    try:
        assert request.wait() is False
        assert request.status == rt.InferStatus.READY and calls == [(rt.InferStatus.READY, None)]
        np.testing.assert_array_equal(request.get_output(0).to_numpy(), expected)
    except rt.RuntimeException as e:
        assert request.status == rt.InferStatus.FAULT and "cancel" in str(e).lower()
        assert len(calls) == 1 and calls[0][0] == rt.InferStatus.FAULT
        assert isinstance(calls[0][1], rt.RuntimeException)


def test_section7_intermediate(rt, digits_input):
    model = rt.load_model(MODEL, memory_optimization=False)
    request = model.create_request()
    request.infer([digits_input])
    request.wait()
    name = model.operations[0].outputs[0]  # the spec's "intermediate_tensor_name"
    intermediate = request.get_tensor(name)
    print(intermediate.to_numpy())
    # The first Conv's output, before its Relu (memory optimization off: nothing fused or reused).
    assert model.operations[0].type == "Conv" and model.operations[1].type == "Relu"
    assert intermediate.shape == (1, 16, 8, 8) and intermediate.type == rt.float32
    _, conv0 = _digits_reference(rt, digits_input)
    assert (conv0 < 0).any()  # a Relu-ed tensor would have no negatives
    np.testing.assert_allclose(intermediate.to_numpy(), conv0, rtol=1e-4, atol=1e-5)


def test_section12_errors(rt, tmp_path):
    # A nonexistent path is an OSError (FileNotFoundError) in this runtime: it escapes the sample.
    with pytest.raises(FileNotFoundError):
        try:
            model = rt.load_model("nonexistent/path")
        except rt.ContainerError as e:
            print(f"Container error: {e}")
        except rt.ModelError as e:
            print(f"Model error: {e}")
    bad = tmp_path / "broken.onnx"
    bad.write_bytes(b"\x08\x07garbage")
    caught = None
    try:
        model = rt.load_model(str(bad))
    except rt.ContainerError as e:
        caught = e
    except rt.ModelError as e:
        caught = e
    # Bytes that are no ONNX protobuf are a ContainerError (an invalid model would be a ModelError).
    assert type(caught) is rt.ContainerError and isinstance(caught, rt.RuntimeException)
    assert str(caught)


_XNNPACK_EXTENSION = os.environ.get("OPTIMIUM_XNNPACK_EXTENSION",
                                    str(DIGITS.parents[1] / "build" / "liboptimium-runtime-xnnpack.so"))

# Section 13 in a fresh interpreter: a loaded extension stays registered for the process, and the
# wheel does not carry the XNNPACK extension, so nothing auto-loads it there.
_SECTION13 = r"""
import os, sys
import numpy as np
import optimium.runtime as rt

path, digits = sys.argv[1], sys.argv[2]
xnn = lambda: [d for d in rt.get_local_info().devices if d.platform == rt.PlatformKind.XNNPACK]
assert not xnn(), "XNNPack registered before the explicit load"

# An extension that fails to register: the XNNPACK extension refuses while disabled.
os.environ["OPTIMIUM_RT_XNNPACK_DISABLE"] = "1"
try:
    rt.load_extension(path)
    raise AssertionError("a disabled extension registered")
except rt.ExtensionError as e:
    assert "failed to register" in str(e), e
del os.environ["OPTIMIUM_RT_XNNPACK_DISABLE"]

# --- the spec sample (the path of the built extension) ---
rt.load_extension(path)

[device] = xnn()
print("loaded", device, device.capability)
for bad, expected, part in [(path, rt.ExtensionError, "already loaded"),
                            ("path/to/liboptimium-runtime-hexagon.so", ValueError, "is not a file"),
                            (digits, ValueError, "is not a file"),
                            (os.path.join(digits, "model.onnx"), rt.ExtensionError, "cannot load extension")]:
    try:
        rt.load_extension(bad)
        raise AssertionError(f"load_extension({bad!r}) did not raise")
    except expected as e:
        assert type(e) is expected and part in str(e), (bad, type(e), e)
        print("ok", expected.__name__, e)

cpu = [d for d in rt.get_local_info().devices if d.platform == rt.PlatformKind.NATIVE][0]
on_xnn = rt.load_model(os.path.join(digits, "model.onnx"), devices=[device, cpu])
placement = {op.type: op.device for op in on_xnn.operations}
for op in on_xnn.operations:
    print(op.name, op.type, op.device)
assert all(placement[t] == device for t in ("Conv", "MaxPool", "Gemm", "Softmax")), placement
assert placement["Flatten"] == cpu, placement
on_cpu = rt.load_model(os.path.join(digits, "model.onnx"), devices=[cpu])
x = np.load(os.path.join(digits, "test_images.npy"))[:8]
def run(model, img):
    request = model.create_request()
    request.infer([img[None]])
    request.wait()
    return request.get_output(0).to_numpy()
for img in x:
    a, b = run(on_xnn, img), run(on_cpu, img)
    assert np.abs(a - b).max() <= 1e-5 and a.argmax() == b.argmax(), (a, b)
print("XNNPack matches the native CPU on", len(x), "digits")
"""


def test_section13_loading_extensions():
    """rt.load_extension against the XNNPACK extension of the build tree (built where Debian's
    libxnnpack-dev is installed): the explicit load, ExtensionError (already loaded, fails to
    register, not a library), ValueError (not a file), then the digits model on XNNPack."""
    if not os.path.isfile(_XNNPACK_EXTENSION):
        pytest.skip(f"{_XNNPACK_EXTENSION} is not built (libxnnpack-dev missing)")
    env = {k: v for k, v in os.environ.items() if k not in ("OPTIMIUM_RT_EXTENSION_PATH", "OPTIMIUM_RT_XNNPACK_DISABLE")}
    out = subprocess.run([sys.executable, "-c", _SECTION13, _XNNPACK_EXTENSION, str(DIGITS)], capture_output=True,
                         text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "XNNPack matches the native CPU" in out.stdout


# -- torq-runtime.txt ---------------------------------------------------------------------
def test_torq_quick_start_and_custom_inputs():
    from optimium.runtime.runner import InferenceRunner

    runner = InferenceRunner(MODEL, device_uri="native")
    input_data = np.random.rand(1, 1, 8, 8).astype(np.float32)  # the spec's int8 224x224 image
    outputs = runner.infer([input_data])
    print(f"Inference took {runner.infer_time_ms:.2f} ms")
    assert outputs[0].shape == (1, 10) and runner.infer_time_ms > 0
    input_data = np.load(DIGITS / "sample_input.npy")
    outputs = runner.infer([input_data])
    np.testing.assert_allclose(outputs[0], np.load(DIGITS / "sample_output.npy"), rtol=1e-4, atol=1e-6)


def test_torq_inspect_io(capsys):
    from optimium.runtime.runner import InferenceRunner

    runner = InferenceRunner(MODEL, device_uri="native")
    if runner.inputs_info:
        for i, info in enumerate(runner.inputs_info):
            print(f"Input {i}: dtype={info.dtype}, shape={info.shape}")
    if runner.outputs_info:
        for i, info in enumerate(runner.outputs_info):
            print(f"Output {i}: dtype={info.dtype}, shape={info.shape}")
    out = capsys.readouterr().out
    assert "Input 0: dtype=float32, shape=[1, 1, 8, 8]" in out
    assert "Output 0: dtype=float32, shape=[1, 10]" in out


def test_torq_profile_latency():
    from optimium.runtime.profiling import profile_inference_time

    avg_ms = profile_inference_time(MODEL, n_iters=10, do_warmup=True, device="native")
    print(f"Average inference time: {avg_ms:.2f} ms")
    assert isinstance(avg_ms, float) and 0 < avg_ms < 1000  # the digits CNN takes well under 1 ms


def test_torq_profile_resources(capsys):
    from optimium.runtime.profiling import profile_resources

    stats = profile_resources(MODEL, n_iters=10, do_warmup=True, device="native")
    print(f"Average inference time: {stats.avg_inference_time_ms:.2f} ms")
    print(f"Average DRAM footprint: {stats.avg_dram_footprint_bytes / 1024 / 1024:.1f} MB")
    print(f"Peak DRAM footprint: {stats.peak_dram_footprint_bytes / 1024 / 1024:.1f} MB")
    print(f"Average memory usage: {stats.avg_anon_mem_bytes / 1024 / 1024:.1f} MB")
    print(f"Peak memory usage: {stats.peak_anon_mem_bytes / 1024 / 1024:.1f} MB")
    print(f"Average CPU usage: {stats.avg_cpu_percent:.1f}%")
    if stats.avg_npu_load_percent is not None:
        print(f"Average NPU usage: {stats.avg_npu_load_percent:.1f}%")
    print(stats.summary())
    out = capsys.readouterr().out
    assert "Avg inference time:" in out and "Peak DRAM footprint:" in out
    assert stats.peak_dram_footprint_bytes >= stats.avg_dram_footprint_bytes > 0


def test_torq_zero_copy_device_outputs():
    from optimium.runtime.runner import InferenceRunner

    # The spec's KV-cache loop, on the two_inputs model: output fed back as input `a`.
    runner = InferenceRunner(str(TEST_MODELS / "two_inputs"), device_uri="native", device_outputs=True)
    kv_cache = runner.allocate_device_array(np.ones((2, 3), dtype=np.float32))
    input_data = np.full((2, 3), 1.0, dtype=np.float32)
    results = runner.infer([kv_cache, input_data])
    new_kv = results[0]
    kv_cache = new_kv
    results = runner.infer([kv_cache, input_data])
    logits_np = results[0].to_host()
    np.testing.assert_allclose(logits_np, np.full((2, 3), (2 + 1) * 2, np.float32))
