"""Bindings of the spec's Python sections 2-7 and 12: one test per feature, plus bad input."""
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

from conftest import DIGITS, ROOT, TEST_MODELS


# -- 2. import, logging, version ------------------------------------------------------------
def test_initialized_at_import(rt):
    assert rt.is_initialized()


def test_deferred_init_subprocess():
    code = (
        "import os; os.environ['OPTIMIUM_RT_DEFER_INIT']='TRUE'\n"
        "import optimium.runtime as rt\n"
        "assert not rt.is_initialized()\n"
        "try:\n"
        "    rt.load_model(%r)\n"
        "except rt.RuntimeException as e:\n"
        "    print('not-initialized:', type(e).__name__)\n"
        "rt.initialize()\n"
        "assert rt.is_initialized()\n"
        "print(rt.load_model(%r).name)\n" % (str(DIGITS / "model.onnx"), str(DIGITS / "model.onnx"))
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ))
    assert out.returncode == 0, out.stderr
    assert "not-initialized: InvalidStateError" in out.stdout
    assert out.stdout.strip().endswith("model")


def test_logging(rt, tmp_path):
    L = rt.logging
    assert {x.name for x in L.LogLevel} == {"DEBUG", "VERBOSE", "INFO", "WARNING", "ERROR"}
    old = L.get_loglevel()
    try:
        L.set_loglevel(L.LogLevel.DEBUG)
        assert L.get_loglevel() == L.LogLevel.DEBUG
        log = tmp_path / "output.log"
        L.enable_file_log(str(log))
        rt.load_model(str(DIGITS / "model.onnx"))
        L.clear_log_writers()
        assert log.exists() and log.stat().st_size > 0
    finally:
        L.clear_log_writers()
        L.set_loglevel(old)
    with pytest.raises(OSError):
        L.enable_file_log(str(tmp_path / "no" / "such" / "dir" / "x.log"))


def test_version(rt):
    v = rt.get_version()
    assert (v.major, v.minor, v.patch) == (4, 4, 0)
    assert isinstance(v.tag, str) and isinstance(v.commit_id, str) and v.build_info
    assert rt.__version__ == f"{v.major}.{v.minor}.{v.patch}{v.tag}"
    assert rt.__version__ in str(v)


def test_local_info(rt):
    local = rt.get_local_info()
    assert local.id == 0 and local.name
    assert local.os == rt.OSKind.LINUX
    assert isinstance(local.architecture, rt.DeviceKind)
    assert any(d.platform == rt.PlatformKind.NATIVE for d in local.devices)
    d = local.devices[0]
    assert d.index == 0 and d.host_id == 0 and d.host_info.name == local.name
    assert isinstance(d.capability, rt.Capability)
    if local.architecture == rt.DeviceKind.X64:
        assert isinstance(d.capability, rt.X86Capability) and d.capability.SSE2
    for name in ("ANY_CPU", "INTEL_GPU", "ANY_GPU", "ANY_NPU", "GOOGLE_TPU", "SYNAP_NPU"):
        assert hasattr(rt.DeviceKind, name)
    for name in ("NATIVE", "XNNPACK", "CUDA", "VULKAN", "OPENCL", "SNPE", "QNN", "SYNAPTICS", "HEXAGON"):
        assert hasattr(rt.PlatformKind, name)
    assert rt.DeviceID(d.platform, d.device_kind) == d
    assert len({d, rt.DeviceID(d.platform, d.device_kind)}) == 1


# -- 3. load_model --------------------------------------------------------------------------
def test_load_model_options(rt, digits_input, digits_output):
    local = rt.get_local_info()
    m = rt.load_model(str(DIGITS), devices=[local.devices[0]], strict=False, memory_optimization=False,
                      disable_denormals=False, intermediate_save_path=None, passphrase=None, threads=2,
                      cores=None, scheduler_type=rt.SchedulerType.SEQUENTIAL, spin_iterations=0,
                      spin_yield_iterations=0, enable_work_stealing=False, resizable_capacities={})
    r = m.create_request()
    r.infer([digits_input])
    r.wait()
    np.testing.assert_allclose(r.get_output(0).to_numpy(), digits_output, rtol=1e-4, atol=1e-6)
    # from bytes, and every scheduler
    data = (DIGITS / "model.onnx").read_bytes()
    for s in rt.SchedulerType:
        m2 = rt.load_model(data, scheduler_type=s, threads=1)
        r2 = m2.create_request()
        r2.infer([digits_input])
        r2.wait()
        np.testing.assert_allclose(r2.get_output(0).to_numpy(), digits_output, rtol=1e-4, atol=1e-6)


def test_request_run_is_infer_plus_wait(rt, digits_input, digits_output):
    """request.run(): the synchronous call, under every scheduler, by list and by name; infer()'s
    input errors."""
    data = (DIGITS / "model.onnx").read_bytes()
    for s in rt.SchedulerType:
        m = rt.load_model(data, scheduler_type=s, threads=2)
        r = m.create_request()
        assert r.run([digits_input]) is None
        assert r.status == rt.InferStatus.READY
        np.testing.assert_allclose(r.get_output(0).to_numpy(), digits_output, rtol=1e-4, atol=1e-6)
        r.run({str(m.input_names[0]): np.zeros_like(digits_input)})
        r.run({str(m.input_names[0]): digits_input})
        np.testing.assert_allclose(r.get_output(0).to_numpy(), digits_output, rtol=1e-4, atol=1e-6)
    with pytest.raises(ValueError, match=r"takes 1 input\(s\), got 0"):
        r.run([])
    with pytest.raises(ValueError, match="no input named 'no_such_input'"):
        r.run({"no_such_input": digits_input})


def test_load_model_errors(rt, tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        rt.load_model(str(tmp_path / "nonexistent"))
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model at all")
    with pytest.raises(rt.RuntimeException):
        rt.load_model(str(bad))
    with pytest.raises(ValueError):
        rt.load_model(str(DIGITS / "model.onnx"), threads=-1)
    with pytest.raises(rt.RuntimeException):
        rt.load_model(str(TEST_MODELS / "unsupported_op"))


# -- 4. model information -------------------------------------------------------------------
def test_model_info(rt, digits):
    assert digits.name == "model"
    assert digits.input_names == ["image"] and digits.output_names == ["probabilities"]
    info = digits.get_tensor("image")
    assert info.name == "image" and info.type == rt.ElementType.F32 and info.type == rt.float32
    assert info.shape == (1, 1, 8, 8) and info.shape.rank == 4 and info.size == 256
    assert info.alignment > 0 and info.padding >= 0 and info.scheme is None
    assert isinstance(info.opt_out, bool) and not info.constant and not info.resizable
    assert "image" in str(info)
    assert digits.get_input_tensor(0).name == "image"
    assert digits.get_output_tensor(0).name == "probabilities"
    assert digits.get_output_tensor(0).shape == [1, 10]
    names = [t.name for t in digits.tensors]
    assert "image" in names and "probabilities" in names
    ops = digits.operations
    assert ops and all(op.name and op.type and isinstance(op.device, rt.DeviceID) for op in ops)
    assert "Conv" in {op.type for op in ops}
    assert digits.is_dynamic is False
    with pytest.raises(ValueError):
        digits.get_tensor("nope")
    with pytest.raises(ValueError):
        digits.get_input_tensor(5)


def test_model_attributes(rt, digits):
    keys = digits.attribute_keys
    assert isinstance(keys, list)
    for k in keys:
        assert digits.has_attribute(k)
        digits.get_attribute(k)  # native Python value
    assert digits.get_attribute("no_such_attribute") is None
    assert not digits.has_attribute("no_such_attribute")
    conv = next(op for op in digits.operations if op.type == "Conv")
    for k in conv.attribute_keys:
        v = conv.get_attribute(k)
        assert isinstance(v, (int, float, bool, str, list, dict))


def test_dynamic_model_infer_shape(rt):
    m = rt.load_model(str(TEST_MODELS / "dynamic_batch"))
    assert m.is_dynamic
    shape = m.get_tensor("x").shape
    assert shape.dynamic and isinstance(shape[0], rt.Expr) and shape[0].is_symbol() and shape[0].symbol == "batch"
    assert m.infer_shape("y", {"x": rt.TensorShape(5, 16)}) == (5, 10)
    assert m.infer_shape("y", [rt.TensorShape(7, 16)]) == [7, 10]
    r = m.create_request()
    x = np.random.rand(4, 16).astype(np.float32)
    r.infer({"x": x})
    r.wait()
    assert r.get_output("y").to_numpy().shape == (4, 10)
    x3 = np.load(TEST_MODELS / "dynamic_batch" / "input_0.npy")
    r.infer([x3])
    r.wait()
    np.testing.assert_allclose(r.get_output(0).to_numpy(), np.load(TEST_MODELS / "dynamic_batch" / "output_0.npy"),
                               rtol=1e-4, atol=1e-5)


def test_shape_and_expr(rt):
    s = rt.TensorShape(2, 3, 4)
    assert s.rank == 3 and len(s) == 3 and s.size == 24 and not s.dynamic
    assert s.strides == [12, 4, 1] and s.get_stride(0) == 12
    assert s[0] == 2 and s[-1] == 4 and list(s) == [2, 3, 4]
    assert s.is_compatible(rt.TensorShape(2, 3, 4)) and s == (2, 3, 4)
    assert rt.TensorShape([2, 3]) == rt.TensorShape(2, 3)
    d = rt.TensorShape("batch", 16)
    assert d.dynamic and d.is_compatible(rt.TensorShape(3, 16))
    e = rt.Expr("n")
    assert e.is_symbol() and not e.is_const() and e.symbol == "n"
    c = rt.Expr(42)
    assert c.is_const() and c.value == 42 and int(c) == 42
    assert (c + 1).value == 43 and (c - 2).value == 40 and (c * 2).value == 84
    assert (c / 5).value == 8 and (c % 5).value == 2 and c.min(7).value == 7 and c.max(100).value == 100
    expr = (e + 1) * 2
    assert not expr.is_const() and "n" in str(expr)
    assert expr.resolve({"n": 3}).value == 8
    with pytest.raises(TypeError):
        rt.TensorShape(1.5)
    with pytest.raises(IndexError):
        s[3]


# -- 5/6. requests and tensors --------------------------------------------------------------
def test_tensor_creation_modes(rt):
    t = rt.tensor(shape=(32, 32), dtype=rt.ElementType.F32)
    assert t.shape == (32, 32) and t.type == rt.float32
    t = rt.tensor(shape=(32, 32), dtype=rt.float32)
    assert t.type == rt.ElementType.F32
    t = rt.tensor(123, shape=(8,), dtype=rt.int16)
    assert t.type == rt.int16 and t.to_numpy().tolist() == [123] * 8 and t.to_numpy().dtype == np.int16
    t = rt.tensor([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    assert t.type == rt.float32 and t.to_numpy().tolist() == [[1, 2, 3], [4, 5, 6], [7, 8, 9]]
    arr = np.random.random((32, 32)).astype(np.float16)
    t = rt.tensor(arr)
    assert t.type == rt.float16 and not t.is_user_buffer
    np.testing.assert_array_equal(t.to_numpy(), arr)
    arr[0, 0] = 5  # copy: not visible
    assert t.to_numpy()[0, 0] != 5
    z = rt.tensor(arr, copy=False)
    assert z.is_user_buffer
    arr[1, 1] = 7
    assert z.to_numpy()[1, 1] == 7  # shares memory
    t = rt.tensor(0.0, shape=(3, 4), dtype=rt.float32)
    assert (t.to_numpy() == 0).all()
    t = rt.tensor([1, 2], dtype=rt.int64)
    assert t.to_numpy().dtype == np.int64


def test_zero_copy_keeps_array_alive(rt):
    import gc

    arr = np.arange(1 << 16, dtype=np.float32)
    t = rt.tensor(arr, copy=False)
    del arr
    gc.collect()
    assert t.to_numpy()[-1] == (1 << 16) - 1


def test_all_dtype_aliases_roundtrip(rt):
    aliases = {"bool_": np.bool_, "int8": np.int8, "uint8": np.uint8, "int16": np.int16, "uint16": np.uint16,
               "int32": np.int32, "uint32": np.uint32, "int64": np.int64, "uint64": np.uint64,
               "float16": np.float16, "float32": np.float32, "float64": np.float64}
    for name, np_t in aliases.items():
        et = getattr(rt, name)
        assert isinstance(et, rt.ElementType)
        assert et.to_dtype() == np.dtype(np_t)
        assert rt.ElementType.from_dtype(np.dtype(np_t)) == et
        a = (np.arange(6) % 2).astype(np_t).reshape(2, 3)
        t = rt.tensor(a)
        assert t.type == et
        np.testing.assert_array_equal(t.to_numpy(), a)
        t.fill(1)
        assert (t.to_numpy() == 1).all()
    assert rt.bfloat16 == rt.ElementType.BF16
    bf = rt.tensor([1.0, -2.5], dtype=rt.bfloat16)
    assert bf.type == rt.bfloat16
    bits = bf.to_numpy()
    assert bits.dtype.itemsize == 2
    as_f32 = (bits.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    assert as_f32.tolist() == [1.0, -2.5]


def test_low_precision_types_exchange_uint8_storage(rt):
    # float8 / float4 / int4 / int2: one stored byte per element, seen by numpy as uint8.
    codes = np.array([0x38, 0x7E, 0xFF], dtype=np.uint8)  # e4m3fn: 1.0, 448, NaN
    t = rt.tensor(codes, dtype=rt.ElementType.F8E4M3FN)
    assert t.type == rt.ElementType.F8E4M3FN
    out = t.to_numpy()
    assert out.dtype == np.uint8
    assert out.tolist() == codes.tolist()
    i4 = rt.tensor(np.array([0xF8, 7], dtype=np.uint8), dtype=rt.ElementType.I4)  # -8 (sign-extended), 7
    assert i4.to_numpy().tolist() == [0xF8, 7]
    for name in ("F8E4M3FNUZ", "F8E5M2", "F8E5M2FNUZ", "F8E8M0", "F4E2M1", "I4", "U4", "I2", "U2"):
        et = getattr(rt.ElementType, name)
        assert et in rt.LOW_PRECISION_TYPES
        with pytest.raises(TypeError, match="uint8"):
            et.to_dtype()
    with pytest.raises(TypeError, match="uint8 storage"):
        rt.tensor(np.zeros(3, np.float32), dtype=rt.ElementType.I4)


def test_from_dtype_trap(rt):
    with pytest.raises(TypeError, match=r"np\.dtype\(numpy\.float32\)"):
        rt.ElementType.from_dtype(np.float32)
    with pytest.raises(TypeError, match="numpy dtype"):
        rt.ElementType.from_dtype("float32")
    with pytest.raises(TypeError, match="complex64"):
        rt.ElementType.from_dtype(np.dtype(np.complex64))
    with pytest.raises(TypeError):
        rt.ElementType.UNDEFINED.to_dtype()


def test_tensor_methods(rt):
    t = rt.tensor(shape=(32, 32), dtype=rt.float32)
    snap = t.to_numpy()
    t.fill(0.0)
    assert (t.to_numpy() == 0).all()
    snap[:] = 3  # a copy
    assert (t.to_numpy() == 0).all()
    assert t.shape == (32, 32) and t.type == rt.float32
    rt.config.set_print_threshold(10)
    rt.config.set_print_precision(4)
    assert rt.config.get_print_threshold() == 10 and rt.config.get_print_precision() == 4
    s = str(rt.tensor([[1.123456789]]))
    assert "1.1235" in s
    rt.config.set_print_threshold(8)
    rt.config.set_print_precision(6)
    assert np.asarray(t).shape == (32, 32)


def test_non_contiguous_copy_false(rt):
    arr = np.zeros((8, 8), dtype=np.float32)[:, ::2]
    with pytest.raises(ValueError, match="C-contiguous"):
        rt.tensor(arr, copy=False)
    t = rt.tensor(arr)  # copy works
    assert t.shape == (8, 4)


# -- 7. running -----------------------------------------------------------------------------
def test_infer_by_index_name_numpy(rt, digits, digits_input, digits_output):
    r = digits.create_request()
    assert r.status == rt.InferStatus.READY
    inputs = []
    for name in digits.input_names:
        info = digits.get_tensor(name)
        inputs.append(rt.tensor(shape=info.shape, dtype=info.type))
    inputs[0] = rt.tensor(digits_input)
    r.infer(inputs)
    assert r.wait() is False
    out0 = r.get_output(0).to_numpy()
    out_named = r.get_output("probabilities").to_numpy()
    np.testing.assert_allclose(out0, digits_output, rtol=1e-4, atol=1e-6)
    np.testing.assert_array_equal(out0, out_named)
    r.infer({"image": rt.tensor(digits_input)})
    r.wait()
    np.testing.assert_array_equal(r.get_output(0).to_numpy(), out0)
    r.infer([digits_input])
    r.wait(500000)
    np.testing.assert_array_equal(r.get_output(0).to_numpy(), out0)
    r.infer((np.ascontiguousarray(digits_input),))
    r.wait()
    np.testing.assert_array_equal(r.get_tensor("probabilities").to_numpy(), out0)
    assert r.status == rt.InferStatus.READY


def test_accuracy_on_test_set(rt):
    m = rt.load_model(str(DIGITS / "model_batch.onnx"))
    r = m.create_request()
    images = np.load(DIGITS / "test_images.npy")
    labels = np.load(DIGITS / "test_labels.npy")
    r.infer([images])
    r.wait()
    probs = r.get_output(0).to_numpy()
    np.testing.assert_allclose(probs, np.load(DIGITS / "test_probabilities.npy"), rtol=1e-3, atol=1e-5)
    assert (probs.argmax(1) == labels).mean() > 0.97


def test_non_contiguous_numpy_input_is_copied(rt, digits, digits_input, digits_output):
    big = np.zeros((1, 1, 8, 16), np.float32)
    big[..., ::2] = digits_input
    view = big[..., ::2]
    assert not view.flags.c_contiguous
    r = digits.create_request()
    r.infer([view])
    r.wait()
    np.testing.assert_allclose(r.get_output(0).to_numpy(), digits_output, rtol=1e-4, atol=1e-6)


def test_two_inputs_by_name(rt):
    m = rt.load_model(str(TEST_MODELS / "two_inputs"))
    a = np.load(TEST_MODELS / "two_inputs" / "input_0.npy")
    b = np.load(TEST_MODELS / "two_inputs" / "input_1.npy")
    r = m.create_request()
    r.infer({"b": b, "a": a})
    r.wait()
    np.testing.assert_allclose(r.get_output(0).to_numpy(), (a + b) * a, rtol=1e-6)
    with pytest.raises(ValueError, match=r"missing 'b'"):
        r.infer([a])
    with pytest.raises(ValueError, match="missing"):
        r.infer({"a": a})


def test_int64_model(rt):
    m = rt.load_model(str(TEST_MODELS / "int64_input"))
    x = np.load(TEST_MODELS / "int64_input" / "input_0.npy")
    r = m.create_request()
    r.infer([x])
    r.wait()
    np.testing.assert_array_equal(r.get_output(0).to_numpy(), np.load(TEST_MODELS / "int64_input" / "output_0.npy"))


def test_bad_inputs(rt, digits, digits_input):
    r = digits.create_request()
    with pytest.raises(TypeError, match=r"input 0 \('image'\) has dtype float64, the model expects float32"):
        r.infer([digits_input.astype(np.float64)])
    with pytest.raises(TypeError, match=r"'image'.*int32.*float32"):
        r.infer({"image": digits_input.astype(np.int32)})
    with pytest.raises(rt.ShapeError, match=r"'image'.*1x1x8x9.*1x1x8x8"):
        r.infer([np.zeros((1, 1, 8, 9), np.float32)])
    with pytest.raises(rt.ShapeError, match="image"):
        r.infer([np.zeros((64,), np.float32)])
    with pytest.raises(TypeError, match="image"):
        r.infer([rt.tensor(shape=(1, 1, 8, 8), dtype=rt.int32)])
    with pytest.raises(ValueError, match=r"no input named 'img'.*inputs: image"):
        r.infer({"img": digits_input})
    with pytest.raises(ValueError, match=r"takes 1 input\(s\), got 0"):
        r.infer([])
    with pytest.raises(ValueError, match="got more"):
        r.infer([digits_input, digits_input])
    with pytest.raises(TypeError, match="list"):
        r.infer(digits_input)
    with pytest.raises(TypeError, match="image"):
        r.infer(["hello"])
    # the request is still usable
    r.infer([digits_input])
    r.wait()
    with pytest.raises(ValueError, match="out of range"):
        r.get_output(3)
    with pytest.raises(ValueError, match="no output named"):
        r.get_output("nope")
    with pytest.raises(ValueError):
        r.get_tensor("nope")
    with pytest.raises(ValueError):
        r.wait(-1)


def test_outputs_before_run(rt, digits):
    r = digits.create_request()
    with pytest.raises(rt.InvalidOperationError, match="no inference"):
        r.get_output(0)


def test_wait_timeout_and_status(rt, digits_input):
    m = rt.load_model(str(DIGITS / "model_batch.onnx"), threads=1)
    r = m.create_request()
    big = np.repeat(digits_input, 3000, axis=0)
    r.infer([big])
    timed_out = r.wait(1)
    assert isinstance(timed_out, bool)
    if timed_out:
        assert r.status in (rt.InferStatus.RUNNING, rt.InferStatus.READY)
    assert r.wait() is False
    assert r.status == rt.InferStatus.READY


def test_callback(rt, digits, digits_input):
    r = digits.create_request()
    seen = []
    done = threading.Event()

    def on_complete(status, error):
        seen.append((status, error, threading.current_thread() is threading.main_thread()))
        done.set()

    r.set_callback(on_complete)
    r.infer([digits_input])
    r.wait()
    assert done.wait(5)
    assert seen[0][0] == rt.InferStatus.READY and seen[0][1] is None
    # replacing and clearing
    calls = []
    r.set_callback(lambda s, e: calls.append(s))
    r.infer([digits_input])
    r.wait()
    assert calls == [rt.InferStatus.READY] and len(seen) == 1
    r.set_callback(None)
    r.infer([digits_input])
    r.wait()
    assert calls == [rt.InferStatus.READY]
    with pytest.raises(TypeError):
        r.set_callback(42)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_callback_exception_does_not_crash(rt, digits, digits_input):
    r = digits.create_request()
    r.set_callback(lambda s, e: 1 / 0)
    r.infer([digits_input])
    r.wait()
    assert r.status == rt.InferStatus.READY


def test_cancel(rt, digits_input):
    m = rt.load_model(str(DIGITS / "model_batch.onnx"), threads=1)
    r = m.create_request()
    errors = []
    r.set_callback(lambda s, e: errors.append((s, e)))
    r.infer([np.repeat(digits_input, 2000, axis=0)])
    r.cancel()
    try:
        r.wait()
        assert r.status == rt.InferStatus.READY  # finished before the flag was seen
    except rt.RuntimeException as e:
        assert r.status == rt.InferStatus.FAULT
        assert errors and errors[0][0] == rt.InferStatus.FAULT and isinstance(errors[0][1], rt.RuntimeException)
        assert "cancel" in str(e).lower()
    # a new run after a cancellation works
    r.infer([np.repeat(digits_input, 2, axis=0)])
    r.wait()
    assert r.status == rt.InferStatus.READY


def test_intermediate_tensor(rt, digits_input):
    m = rt.load_model(str(DIGITS / "model.onnx"), memory_optimization=False)
    r = m.create_request()
    r.infer([digits_input])
    r.wait()
    for info in m.tensors:
        if not info.constant and info.name not in ("image", "probabilities"):
            assert r.get_tensor(info.name).to_numpy().size > 0
            break
    else:
        pytest.fail("no intermediate tensor")


# -- 12. exceptions ---------------------------------------------------------------------------
def test_exception_hierarchy(rt):
    names = ["InvalidStateError", "InvalidOperationError", "ShapeError", "ExtensionError", "DeviceError",
             "ModelError", "RequestError", "InferError", "OutOfResourceError", "ContainerError", "RemoteError"]
    assert issubclass(rt.RuntimeException, RuntimeError)
    for n in names:
        cls = getattr(rt, n)
        assert issubclass(cls, rt.RuntimeException), n
        assert cls.__module__ == "optimium.runtime"
    with pytest.raises(ValueError, match="not a file"):
        rt.load_extension("/nonexistent/liboptimium-runtime-nothing.so")


def test_extension_error(rt, tmp_path):
    bogus = tmp_path / "liboptimium-runtime-bogus.so"
    bogus.write_bytes(b"not an ELF file")
    with pytest.raises(rt.ExtensionError):
        rt.load_extension(str(bogus))


def _with_metadata(model_bytes, props):
    """Appends metadata_props entries (ModelProto field 14) to serialized model bytes: protobuf
    merges concatenated messages, so repeated fields append."""
    def varint(n):
        out = bytearray()
        while True:
            b = n & 0x7F
            n >>= 7
            out.append(b | (0x80 if n else 0))
            if not n:
                return bytes(out)

    def field(num, data):
        return varint((num << 3) | 2) + varint(len(data)) + data

    extra = b"".join(field(14, field(1, k.encode()) + field(2, v.encode())) for k, v in props)
    return model_bytes + extra


def test_typed_model_attributes(rt):
    data = (DIGITS / "model.onnx").read_bytes()
    m = rt.load_model(_with_metadata(data, [
        ("author", "team"), ("optimium.attr.layers", "6"), ("optimium.attr.scale", "0.5"),
        ("optimium.attr.causal", "true"), ("optimium.attr.cfg", '{"heads": 8, "names": ["k", "v"]}')]))
    assert m.get_attribute("author") == "team"
    assert m.get_attribute("layers") == 6
    assert m.get_attribute("scale") == 0.5
    assert m.get_attribute("causal") is True
    assert m.get_attribute("cfg") == {"heads": 8, "names": ["k", "v"]}
    assert not m.has_attribute("optimium.attr.layers")
    with pytest.raises(rt.ModelError, match="optimium.attr.bad"):
        rt.load_model(_with_metadata(data, [("optimium.attr.bad", "[1, 2")]))


def test_indexed_intermediate_save(rt, digits_input, tmp_path):
    m = rt.load_model(str(DIGITS / "model.onnx"), intermediate_save_path=str(tmp_path),
                      indexed_intermediate_save=True)
    r = m.create_request()
    for _ in range(2):
        r.infer([digits_input])
        r.wait()
    names = sorted(p.name for p in tmp_path.iterdir())
    assert any(n.startswith("0_") for n in names) and any(n.startswith("1_") for n in names), names
    out = [n for n in names if n.startswith("1_") and n.endswith("probabilities.npy")]
    assert out, names
    np.testing.assert_allclose(np.load(tmp_path / out[0]), r.get_output("probabilities").to_numpy())
