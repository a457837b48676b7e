"""Latency and resource profiling (the Torq ``profile_vmfb_*`` helpers, on our runtime).

    from optimium.runtime.profiling import profile_resources
    stats = profile_resources("models/digits/model.onnx", n_iters=10)
    print(stats.summary())

Process statistics come from ``/proc/<pid>/smaps_rollup`` (falling back to ``/proc/<pid>/status``)
and ``/proc/<pid>/stat`` (Linux only). Accelerator load is reported when a cumulative
inference-time counter file (microseconds) exists: the one the runner's device reports (the
simulated NPU's, ``hw_type="sim"``) unless a path is given, else ``$OPTIMIUM_RT_NPU_INFERENCE_TIME_PATH``
if set, else the Torq sysfs path; otherwise those fields are ``None``.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from typing import Iterable, Optional, Union

import numpy as np

from .runner import InferenceRunner, random_inputs_from_info

__all__ = [
    "DEFAULT_NPU_INFERENCE_TIME_PATH",
    "ProfileStats",
    "ResourceSampler",
    "profile_inference_time",
    "profile_resources",
]

DEFAULT_NPU_INFERENCE_TIME_PATH = os.environ.get(
    "OPTIMIUM_RT_NPU_INFERENCE_TIME_PATH", "/sys/class/misc/torq/statistics/torq_inference_time"
)

_MB = 1024.0 * 1024.0


def _read_memory(pid: int):
    """(rss_bytes, anon_bytes) of a process."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            rss = anon = None
            for line in f:
                if line.startswith("Rss:"):
                    rss = int(line.split()[1]) * 1024
                elif line.startswith("Anonymous:"):
                    anon = int(line.split()[1]) * 1024
            if rss is not None and anon is not None:
                return rss, anon
    except OSError:
        pass
    rss = anon = 0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) * 1024
            elif line.startswith("RssAnon:"):
                anon = int(line.split()[1]) * 1024
    return rss, anon


def _read_cpu_seconds(pid: int) -> float:
    """utime + stime of a process, in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        data = f.read()
    # The command name (field 2) may contain spaces; fields after the closing parenthesis are fixed.
    fields = data[data.rindex(")") + 2:].split()
    utime, stime = int(fields[11]), int(fields[12])
    return (utime + stime) / os.sysconf("SC_CLK_TCK")


def _read_counter(path: Optional[Union[str, os.PathLike]]) -> Optional[int]:
    if path is None:
        return None
    try:
        with open(path) as f:
            return int(f.read().strip().split()[0])
    except (OSError, ValueError, IndexError):
        return None


class ResourceSampler:
    """Samples a process's DRAM footprint and CPU time in a background thread.

    Use ``start()``/``stop()`` or ``with ResourceSampler(os.getpid()) as s: ...``; the properties
    are valid after ``stop()``. ``avg_cpu_percent`` is the process's CPU time over the wall time,
    normalized to all cores of the machine (100% = every core busy).
    """

    def __init__(self, pid: int, interval: float = 0.01,
                 npu_inference_time_path: Optional[Union[str, os.PathLike]] = DEFAULT_NPU_INFERENCE_TIME_PATH):
        if interval <= 0:
            raise ValueError("interval must be > 0 seconds")
        self.pid = int(pid)
        self.interval = float(interval)
        self.npu_inference_time_path = npu_inference_time_path
        self._rss: list = []
        self._anon: list = []
        self._stop_event = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._t0 = self._t1 = 0.0
        self._cpu0 = self._cpu1 = self._cpu_last = 0.0
        self._npu0: Optional[int] = None
        self._npu1: Optional[int] = None

    def _sample(self) -> None:
        try:
            rss, anon = _read_memory(self.pid)
            self._cpu_last = _read_cpu_seconds(self.pid)
        except OSError:
            return  # the process has exited (or is a zombie): keep what was sampled
        self._rss.append(rss)
        self._anon.append(anon)

    def _run(self) -> None:
        while not self._stop_event.wait(self.interval):
            self._sample()

    def start(self) -> "ResourceSampler":
        if self._thread is not None:
            raise RuntimeError("ResourceSampler already started")
        self._rss.clear()
        self._anon.clear()
        self._stop_event.clear()
        self._npu0 = _read_counter(self.npu_inference_time_path)
        self._cpu0 = self._cpu_last = _read_cpu_seconds(self.pid)
        self._t0 = time.perf_counter()
        self._sample()
        self._thread = threading.Thread(target=self._run, name="optimium-resource-sampler", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> "ResourceSampler":
        if self._thread is None:
            raise RuntimeError("ResourceSampler was not started")
        self._stop_event.set()
        self._thread.join()
        self._thread = None
        self._sample()
        self._t1 = time.perf_counter()
        try:
            self._cpu1 = _read_cpu_seconds(self.pid)
        except OSError:  # exited (and reaped) before stop(): its CPU time up to the last sample
            self._cpu1 = self._cpu_last
        self._npu1 = _read_counter(self.npu_inference_time_path)
        return self

    def __enter__(self) -> "ResourceSampler":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- results -----------------------------------------------------------------------------
    @property
    def elapsed_s(self) -> float:
        return max(self._t1 - self._t0, 1e-9)

    @property
    def avg_rss(self) -> int:
        return int(np.mean(self._rss)) if self._rss else 0

    @property
    def peak_rss(self) -> int:
        return int(max(self._rss)) if self._rss else 0

    @property
    def avg_anon_rss(self) -> int:
        return int(np.mean(self._anon)) if self._anon else 0

    @property
    def peak_anon_rss(self) -> int:
        return int(max(self._anon)) if self._anon else 0

    @property
    def avg_cpu_percent(self) -> float:
        cores = os.cpu_count() or 1
        return 100.0 * (self._cpu1 - self._cpu0) / self.elapsed_s / cores

    @property
    def npu_inference_time_us(self) -> Optional[int]:
        if self._npu0 is None or self._npu1 is None:
            return None
        return max(self._npu1 - self._npu0, 0)

    @property
    def avg_npu_load_percent(self) -> Optional[float]:
        t = self.npu_inference_time_us
        if t is None:
            return None
        return 100.0 * t / (self.elapsed_s * 1e6)


@dataclass
class ProfileStats:
    """Result of :func:`profile_resources`. Resource figures are process-wide."""

    avg_inference_time_ms: float
    avg_dram_footprint_bytes: int
    peak_dram_footprint_bytes: int
    avg_anon_mem_bytes: int
    peak_anon_mem_bytes: int
    avg_cpu_percent: float
    npu_inference_time_us: Optional[int] = None
    avg_npu_load_percent: Optional[float] = None

    def summary(self) -> str:
        lines = [
            f"Avg inference time:  {self.avg_inference_time_ms:.3f} ms",
            "",
            "Process-wide resource usage (includes Python overhead):",
            f"  Avg DRAM footprint:  {self.avg_dram_footprint_bytes / _MB:.1f} MB  (includes mmap'd model file)",
            f"  Peak DRAM footprint: {self.peak_dram_footprint_bytes / _MB:.1f} MB",
            f"  Avg memory usage:    {self.avg_anon_mem_bytes / _MB:.1f} MB  (heap/stack only, excludes model file)",
            f"  Peak memory usage:   {self.peak_anon_mem_bytes / _MB:.1f} MB",
            f"  Avg CPU usage:       {self.avg_cpu_percent:.1f}%",
        ]
        if self.avg_npu_load_percent is not None:
            lines.append(f"  Avg NPU usage:       {self.avg_npu_load_percent:.1f}%")
        return "\n".join(lines)


def _prepare(model_path, inputs, function, device, n_threads, load_method, load_model_to_mem, runtime_flags,
             device_io):
    if isinstance(model_path, InferenceRunner):
        runner = model_path
        if device_io and not runner._device_outputs:
            runner._device_outputs = True
    else:
        runner = InferenceRunner(model_path, function=function, device_uri=device, n_threads=n_threads,
                                 load_method=load_method, load_model_to_mem=load_model_to_mem,
                                 runtime_flags=runtime_flags, device_outputs=device_io)
    if inputs is None:
        inputs = random_inputs_from_info(runner.inputs_info)
    else:
        inputs = list(inputs)
    if device_io:
        inputs = [runner.allocate_device_array(a) if isinstance(a, np.ndarray) else a for a in inputs]
    return runner, inputs


def profile_inference_time(
    model_path,
    inputs: Optional[Iterable[np.ndarray]] = None,
    *,
    n_iters: int = 5,
    do_warmup: bool = True,
    function: str = "main",
    device: str = "native",
    n_threads: Optional[int] = None,
    load_method: str = "preload",
    load_model_to_mem: bool = True,
    runtime_flags: Optional[Iterable[str]] = None,
    device_io: bool = False,
) -> float:
    """Average wall-clock inference time in ms over ``n_iters`` runs (random inputs when None)."""
    if n_iters < 1:
        raise ValueError("n_iters must be >= 1")
    runner, feed = _prepare(model_path, inputs, function, device, n_threads, load_method, load_model_to_mem,
                            runtime_flags, device_io)
    if do_warmup:
        runner.infer(feed)
    total = 0.0
    for _ in range(n_iters):
        runner.infer(feed)
        total += runner.infer_time_ms
    return total / n_iters


def profile_resources(
    model_path,
    inputs: Optional[Iterable[np.ndarray]] = None,
    *,
    n_iters: int = 5,
    do_warmup: bool = True,
    function: str = "main",
    device: str = "native",
    n_threads: Optional[int] = None,
    load_method: str = "preload",
    load_model_to_mem: bool = True,
    runtime_flags: Optional[Iterable[str]] = None,
    device_io: bool = False,
    interval: float = 0.01,
    npu_inference_time_path: Optional[Union[str, os.PathLike]] = DEFAULT_NPU_INFERENCE_TIME_PATH,
) -> ProfileStats:
    """Like :func:`profile_inference_time`, plus DRAM/CPU (and accelerator) statistics."""
    if n_iters < 1:
        raise ValueError("n_iters must be >= 1")
    runner, feed = _prepare(model_path, inputs, function, device, n_threads, load_method, load_model_to_mem,
                            runtime_flags, device_io)
    if do_warmup:
        runner.infer(feed)
    if npu_inference_time_path == DEFAULT_NPU_INFERENCE_TIME_PATH and runner.npu_inference_time_path:
        # The counter the runner's device reports (the simulated NPU's) over the default sysfs one.
        npu_inference_time_path = runner.npu_inference_time_path
    sampler = ResourceSampler(os.getpid(), interval=interval, npu_inference_time_path=npu_inference_time_path)
    total = 0.0
    with sampler:
        for _ in range(n_iters):
            runner.infer(feed)
            total += runner.infer_time_ms
    return ProfileStats(
        avg_inference_time_ms=total / n_iters,
        avg_dram_footprint_bytes=sampler.avg_rss,
        peak_dram_footprint_bytes=sampler.peak_rss,
        avg_anon_mem_bytes=sampler.avg_anon_rss,
        peak_anon_mem_bytes=sampler.peak_anon_rss,
        avg_cpu_percent=sampler.avg_cpu_percent,
        npu_inference_time_us=sampler.npu_inference_time_us,
        avg_npu_load_percent=sampler.avg_npu_load_percent,
    )
