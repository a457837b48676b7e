"""optimium.runtime.runner / .profiling beyond the spec samples."""
import os
import shutil
import threading
import time

import numpy as np
import pytest

from conftest import DIGITS, ROOT, TEST_MODELS
from optimium.runtime.profiling import ProfileStats, ResourceSampler, profile_inference_time, profile_resources
from optimium.runtime.runner import (DeviceArray, InferenceRunner, TensorInfo, parse_runtime_flags,
                                     random_inputs_from_info, run_module)

MODEL = str(DIGITS / "model.onnx")


def test_runner_properties_and_load_methods(rt):
    x = np.load(DIGITS / "sample_input.npy")
    ref = np.load(DIGITS / "sample_output.npy")
    for method in ("preload", "mmap"):
        r = InferenceRunner(MODEL, load_method=method, n_threads=1)
        assert r.model_path.name == "model.onnx" and r.function_names == ["main"]
        assert r.device.platform == rt.PlatformKind.NATIVE
        np.testing.assert_allclose(r.infer([x])[0], ref, rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(r.infer({"image": x})[0], ref, rtol=1e-4, atol=1e-6)
    lazy = InferenceRunner(str(DIGITS), load_model_to_mem=False, device_uri="local-task")
    assert lazy._model is None
    assert lazy.inputs_info == [TensorInfo(np.dtype(np.float32), [1, 1, 8, 8])]
    np.testing.assert_allclose(lazy.infer([x])[0], ref, rtol=1e-4, atol=1e-6)


def test_runner_errors():
    with pytest.raises(FileNotFoundError):
        InferenceRunner("nonexistent.onnx")
    with pytest.raises(ValueError, match="unknown device"):
        InferenceRunner(MODEL, device_uri="tpu")
    with pytest.raises(ValueError, match="function"):
        InferenceRunner(MODEL, function="decode")
    with pytest.raises(ValueError, match="load_method"):
        InferenceRunner(MODEL, load_method="lazy")
    with pytest.raises(ValueError, match="hw_type='fpga': unknown hardware type of device npu; known: sim"):
        InferenceRunner(MODEL, runtime_flags=["--hw_type=fpga"])
    if not os.path.exists("/dev/dma_heap/system"):
        with pytest.raises(ValueError, match="dmabuf: /dev/dma_heap/system does not exist"):
            InferenceRunner(MODEL, runtime_flags=["--device_allocator=dmabuf"])
    with pytest.raises(ValueError, match="unknown runtime flag"):
        InferenceRunner(MODEL, runtime_flags=["--bogus=1"])


def test_runtime_flags(rt):
    assert parse_runtime_flags(["--threads=3", "--device=native", "--device_allocator=cpu"]) == {
        "threads": 3, "device": "native", "device_allocator": "cpu"}
    assert parse_runtime_flags(["--scheduler=pipeline"])["scheduler"] == rt.SchedulerType.PIPELINE
    with pytest.raises(ValueError):
        parse_runtime_flags(["--threads=x"])
    with pytest.raises(ValueError):
        parse_runtime_flags(["threads=2"])
    r = InferenceRunner(MODEL, runtime_flags=["--threads=2", "--device=native", "--device_allocator=auto"])
    assert r.infer([np.zeros((1, 1, 8, 8), np.float32)])[0].shape == (1, 10)


def test_tensor_info_and_random_inputs():
    assert TensorInfo(np.float32, [1, 2]).is_valid()
    assert not TensorInfo(np.float32, ["batch", 2]).is_valid()
    arrs = random_inputs_from_info([TensorInfo(np.dtype(np.float32), [2, 3]), TensorInfo(np.dtype(np.int64), [4]),
                                    TensorInfo(np.dtype(np.bool_), [1])], seed=0)
    assert [a.dtype for a in arrs] == [np.float32, np.int64, np.bool_] and arrs[0].shape == (2, 3)
    # The shared rule (tests/python/test_random_inputs.py): symbolic dims 1, integers and bools 0.
    assert random_inputs_from_info([TensorInfo(np.float32, ["batch", 16])])[0].shape == (1, 16)
    assert not arrs[1].any() and not arrs[2].any()
    with pytest.raises(ValueError):
        random_inputs_from_info([TensorInfo(None, [1])])
    r = InferenceRunner(str(TEST_MODELS / "dynamic_batch"))
    assert r.inputs_info[0].shape == ["batch", 16] and not r.inputs_info[0].is_valid()


def test_device_arrays():
    r = InferenceRunner(MODEL, device_outputs=True)
    x = np.load(DIGITS / "sample_input.npy")
    d = r.allocate_device_array(x)
    assert isinstance(d, DeviceArray) and d.shape == (1, 1, 8, 8) and d.dtype == np.float32
    np.testing.assert_array_equal(d.to_host(), x)
    outs = r.infer([d])
    assert isinstance(outs[0], DeviceArray)
    first = outs[0].to_host()
    r.infer([np.zeros_like(x)])  # a later run does not change an earlier output
    np.testing.assert_array_equal(outs[0].to_host(), first)
    np.testing.assert_allclose(np.asarray(outs[0]), np.load(DIGITS / "sample_output.npy"), rtol=1e-4, atol=1e-6)


def _optimium_run():
    cand = ROOT / "build" / "optimium-run"
    return str(cand) if cand.exists() else shutil.which("optimium-run")


@pytest.mark.skipif(_optimium_run() is None, reason="optimium-run is not built")
def test_run_module(tmp_path):
    out = tmp_path / "out.npy"
    ms = run_module(MODEL, [f"@{DIGITS / 'sample_input.npy'}"], [f"@{out}"], device="native", n_threads=1,
                    binary=_optimium_run())
    assert ms > 0
    np.testing.assert_allclose(np.load(out), np.load(DIGITS / "sample_output.npy"), rtol=1e-4, atol=1e-6)
    with pytest.raises(RuntimeError, match="optimium-run failed"):
        run_module(MODEL, ["1x2xf32=1"], [], binary=_optimium_run())
    with pytest.raises(FileNotFoundError):
        run_module(MODEL, [], [], binary=tmp_path / "nope")


def test_resource_sampler_with_counter(tmp_path):
    counter = tmp_path / "inference_time"
    counter.write_text("1000\n")
    s = ResourceSampler(os.getpid(), interval=0.005, npu_inference_time_path=counter)
    with s:
        buf = np.ones(4 << 20, np.uint8)  # 4 MiB of anonymous memory
        end = time.perf_counter() + 0.1
        while time.perf_counter() < end:
            pass
        counter.write_text("51000\n")  # 50 ms of accelerator time
    assert s.peak_rss >= s.avg_rss > 0 and s.peak_anon_rss >= s.avg_anon_rss > 0
    assert 0 < s.avg_cpu_percent <= 100.0 + 1e-6
    assert s.npu_inference_time_us == 50000
    assert 10.0 < s.avg_npu_load_percent <= 60.0
    del buf
    none = ResourceSampler(os.getpid(), npu_inference_time_path=None).start().stop()
    assert none.npu_inference_time_us is None and none.avg_npu_load_percent is None


def test_resource_sampler_outlived_by_its_process():
    """A sampled child that exits (and is reaped) before stop(): the samples taken so far stand."""
    import subprocess
    import sys
    p = subprocess.Popen([sys.executable, "-c", "import time\nend = time.time() + 0.2\nwhile time.time() < end: pass"])
    with ResourceSampler(p.pid, interval=0.005, npu_inference_time_path=None) as s:
        p.wait()
    assert s.peak_rss > 0
    assert s.avg_cpu_percent > 0


def test_profile_resources_with_runner_and_summary(capsys):
    runner = InferenceRunner(MODEL)
    stats = profile_resources(runner, [np.load(DIGITS / "sample_input.npy")], n_iters=20,
                              npu_inference_time_path=None)
    text = stats.summary()
    print(text)
    assert isinstance(stats, ProfileStats) and stats.avg_inference_time_ms > 0
    assert text.splitlines()[0].startswith("Avg inference time:") and text.splitlines()[0].endswith(" ms")
    assert "Avg NPU usage" not in text
    with_npu = ProfileStats(1.0, 2 << 20, 3 << 20, 1 << 20, 1 << 20, 50.0, 100, 82.4)
    assert with_npu.summary().splitlines()[-1] == "  Avg NPU usage:       82.4%"
    assert "  Avg DRAM footprint:  2.0 MB  (includes mmap'd model file)" in with_npu.summary()
    assert profile_inference_time(runner, n_iters=3, device_io=True) > 0


def test_device_allocator_dmabuf_errors_and_auto_fallback(rt, tmp_path, monkeypatch):
    """--device_allocator as optimium-run has it: dmabuf needs a working DMA-BUF heap and says why
    one cannot be used (missing, not openable, not a heap); auto falls back to host memory; cpu is
    host memory. Where /dev/dma_heap/system works, device arrays live in it and infer reads them."""
    from optimium.runtime import runner as runner_mod
    x = np.load(DIGITS / "sample_input.npy")
    not_a_heap = tmp_path / "regular_file"
    not_a_heap.write_bytes(b"\0" * 64)
    cases = [(tmp_path / "missing", "does not exist"), (tmp_path, "cannot open"), (not_a_heap, "is it a DMA-BUF heap")]
    for path, message in cases:
        monkeypatch.setattr(runner_mod, "_DMA_HEAP_PATH", str(path))
        with pytest.raises(ValueError, match=message):
            InferenceRunner(MODEL, runtime_flags=["--device_allocator=dmabuf"])
        for flag in ("auto", "cpu"):
            r = InferenceRunner(MODEL, runtime_flags=[f"--device_allocator={flag}"])
            assert r.device_allocator == "cpu"
            np.testing.assert_array_equal(r.allocate_device_array(x).to_host(), x)
    monkeypatch.setattr(runner_mod, "_DMA_HEAP_PATH", "/dev/dma_heap/system")
    try:
        r = InferenceRunner(MODEL, runtime_flags=["--device_allocator=dmabuf"])
    except ValueError as e:
        pytest.skip(f"no usable DMA-BUF system heap on this host: {e}")
    assert r.device_allocator == "dmabuf"
    want = InferenceRunner(MODEL, runtime_flags=["--device_allocator=cpu"]).infer([x])[0]
    np.testing.assert_array_equal(r.infer([r.allocate_device_array(x)])[0], want)
