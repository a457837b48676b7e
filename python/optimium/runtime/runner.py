"""High-level runner over optimium.runtime (the Torq ``VMFBInferenceRunner`` API, on our runtime).

    from optimium.runtime.runner import InferenceRunner
    runner = InferenceRunner("models/digits/model.onnx", device_uri="native")
    outputs = runner.infer([np.zeros((1, 1, 8, 8), np.float32)])
    print(f"Inference took {runner.infer_time_ms:.2f} ms")
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, List, Mapping, Optional, Sequence, Union

import numpy as np

from . import _core
from . import DeviceID, ElementType, PlatformKind, Tensor, get_device_property, get_local_info, load_model, tensor
from ._random_inputs import random_array

__all__ = [
    "DeviceArray",
    "InferenceRunner",
    "TensorInfo",
    "random_inputs_from_info",
    "run_module",
    "parse_runtime_flags",
]

_DEVICE_ALIASES = {"local-task": "native", "local-sync": "native", "cpu": "native", "llvm-cpu": "native",
                   "torq": "npu", "synaptics": "npu"}
# Driver names (optimium-run --device) of the platforms whose name differs: the accelerator driver.
_DRIVER_PLATFORMS = {"npu": PlatformKind.SYNAPTICS}
# Hardware types of the npu driver (optimium-run --hw_type; docs/devices.md).
_HW_TYPES = {"sim": "the simulated NPU, liboptimium-runtime-sim.so",
             "astra_machina": "the Synaptics Astra Machina SoC NPU, not built in this runtime"}


def _driver_name(platform) -> str:
    for name, p in _DRIVER_PLATFORMS.items():
        if p == platform:
            return name
    return platform.name.lower()


@dataclass
class TensorInfo:
    """dtype and shape of a model input or output (symbolic dimensions are strings)."""

    dtype: Any
    shape: List[Union[int, str]] = field(default_factory=list)
    #: The runtime's element type name ("F32", "BF16", ...) when known (bfloat16 has a uint16 dtype).
    element_type: Optional[str] = field(default=None, compare=False)

    def is_valid(self) -> bool:
        """True if every dimension is an integer (no dynamic dimensions)."""
        return all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) for d in self.shape)


class DeviceArray:
    """A buffer owned by the runtime: in the device's own memory for a device output of a driver
    that has it (the simulated NPU, ``hw_type="sim"``), host memory otherwise.

    Passing it to ``InferenceRunner.infer`` hands the runtime tensor over without a host copy
    (a device output feeds a model on the same device without any copy).
    """

    __slots__ = ("_tensor",)

    def __init__(self, t: Tensor):
        if not isinstance(t, Tensor):
            raise TypeError(f"DeviceArray wraps an optimium.runtime.Tensor, not {type(t).__name__}")
        self._tensor = t

    @property
    def tensor(self) -> Tensor:
        """The underlying runtime tensor."""
        return self._tensor

    @property
    def shape(self) -> tuple:
        return tuple(self._tensor.shape.dims)

    @property
    def dtype(self) -> np.dtype:
        return self._tensor.type.to_dtype()

    @property
    def is_on_device(self) -> bool:
        """Whether the data is in a device's own memory (not host memory)."""
        return self._tensor.is_device

    def to_host(self) -> np.ndarray:
        """Copies the data to a new numpy array (from the device when it is there)."""
        return self._tensor.to_numpy()

    def __array__(self, dtype=None, copy=None):
        arr = self.to_host()
        return arr if dtype is None else arr.astype(dtype, copy=False)

    def __repr__(self) -> str:
        return f"DeviceArray(shape={self.shape}, dtype={self.dtype})"


def parse_runtime_flags(flags: Optional[Iterable[str]]) -> dict:
    """Parses ``--flag=value`` strings (the ``optimium-run`` flags that configure the runtime).

    Known: ``--threads=N``, ``--device=NAME``, ``--hw_type=NAME``, ``--device_allocator=auto|cpu|dmabuf``,
    ``--function=NAME``, ``--scheduler=auto|exclusive|sequential|pipeline``, ``--spin_iterations=N``,
    ``--memory_optimization=true|false``. Anything else raises ValueError.
    """
    out: dict = {}
    if flags is None:
        return out
    if isinstance(flags, str):
        flags = [flags]
    for flag in flags:
        if not isinstance(flag, str) or not flag.startswith("--") or "=" not in flag:
            raise ValueError(f"runtime flag {flag!r}: expected --name=value")
        name, value = flag[2:].split("=", 1)
        if name == "threads":
            try:
                out["threads"] = int(value)
            except ValueError:
                raise ValueError(f"--threads={value}: expected an integer") from None
            if out["threads"] < 0:
                raise ValueError(f"--threads={value}: must be >= 0")
        elif name == "spin_iterations":
            out["spin_iterations"] = int(value)
        elif name in ("device", "hw_type", "function"):
            out[name] = value
        elif name == "device_allocator":
            if value not in ("auto", "cpu", "dmabuf"):
                raise ValueError(f"--device_allocator={value}: expected auto, cpu or dmabuf")
            out[name] = value
        elif name == "scheduler":
            try:
                out["scheduler"] = _core.SchedulerType[value.upper()]
            except KeyError:
                raise ValueError(f"--scheduler={value}: expected auto, exclusive, sequential or pipeline") from None
        elif name == "memory_optimization":
            if value.lower() not in ("true", "false", "1", "0"):
                raise ValueError(f"--memory_optimization={value}: expected true or false")
            out[name] = value.lower() in ("true", "1")
        else:
            raise ValueError(f"unknown runtime flag --{name} (known: --threads, --device, --hw_type, "
                             "--device_allocator, --function, --scheduler, --spin_iterations, --memory_optimization)")
    return out


def _known_hw_types() -> str:
    return ", ".join(f"{k} ({v})" for k, v in _HW_TYPES.items())


def _resolve_device(name: str, hw_type: Optional[str], allocator: str) -> List[DeviceID]:
    """--device / --hw_type semantics of optimium-run: a driver present on this host, and of the npu
    driver the backend of that hardware type (hw_type with the native default selects npu)."""
    lname = _DEVICE_ALIASES.get(name.lower(), name.lower())
    if hw_type and lname == "native" and name.lower() == "native":
        lname = "npu"  # hardware types are the npu driver's backends (as optimium-run --hw_type alone)
    devices = list(get_local_info().devices)
    available = sorted({_driver_name(d.platform) for d in devices})
    platform = _DRIVER_PLATFORMS.get(lname)
    if platform is None:
        try:
            platform = PlatformKind[lname.upper()]
        except KeyError:
            raise ValueError(f"device {name!r}: unknown device; available devices: {', '.join(available) or 'none'} "
                             "(local-task and local-sync are aliases of native, torq of npu)") from None
    picked = [d for d in devices if d.platform == platform]
    if hw_type:
        if platform != PlatformKind.SYNAPTICS:
            raise ValueError(f"hw_type={hw_type!r}: device {lname!r} has no selectable hardware backends "
                             f"(hardware types belong to device npu: {_known_hw_types()})")
        if hw_type not in _HW_TYPES:
            raise ValueError(f"hw_type={hw_type!r}: unknown hardware type of device npu; known: {_known_hw_types()}")
        picked = [d for d in picked if get_device_property(d, "hw_type") == hw_type]
        if not picked:
            where = ("liboptimium-runtime-sim.so is neither beside the runtime nor in a folder of "
                     "OPTIMIUM_RT_EXTENSION_PATH" if hw_type == "sim" else "this runtime does not build it")
            raise ValueError(f"hw_type={hw_type!r}: no npu backend of that type is loaded ({where}); "
                             f"available devices: {', '.join(available)}")
    if not picked:
        raise ValueError(f"device {name!r}: no such device on this host; available devices: {', '.join(available)}")
    return picked


# --device_allocator=dmabuf: input buffers from the DMA-BUF system heap, as optimium-run does
# (src/tools/DeviceAllocator.cpp). The path is a module attribute so tests can point it elsewhere.
_DMA_HEAP_PATH = "/dev/dma_heap/system"
_DMA_HEAP_IOCTL_ALLOC = 0xC0184800  # _IOWR('H', 0, struct dma_heap_allocation_data), 24 bytes


class _DmaHeap:
    """An open DMA-BUF heap: ``array(a)`` copies ``a`` into a buffer of the heap, mapped into this
    process (the numpy view keeps the mapping alive; the runtime reads it in place)."""

    def __init__(self, fd: int, path: str):
        self.fd, self.path = fd, path

    @classmethod
    def open(cls, path: str, required: bool) -> Optional["_DmaHeap"]:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
        except OSError as e:
            if not required:
                return None  # auto: host memory
            if isinstance(e, FileNotFoundError):
                raise ValueError(f"device_allocator=dmabuf: {path} does not exist (this kernel offers no DMA-BUF "
                                 "system heap, CONFIG_DMABUF_HEAPS_SYSTEM); use auto or cpu") from None
            raise ValueError(f"device_allocator=dmabuf: cannot open {path}: {e.strerror}") from None
        heap = cls(fd, path)
        try:  # a node that opens but does not allocate fails here, not while preparing inputs
            heap._allocate(1)
        except ValueError:
            os.close(fd)
            if required:
                raise
            return None
        return heap

    def _allocate(self, nbytes: int):
        import fcntl, mmap, struct
        req = bytearray(struct.pack("=QIIQ", max(1, nbytes), 0, os.O_RDWR | os.O_CLOEXEC, 0))
        try:
            fcntl.ioctl(self.fd, _DMA_HEAP_IOCTL_ALLOC, req, True)
        except OSError as e:
            raise ValueError(f"device_allocator=dmabuf: {self.path} cannot give {nbytes} bytes "
                             f"(DMA_HEAP_IOCTL_ALLOC: {e.strerror}); is it a DMA-BUF heap?") from None
        buf_fd = struct.unpack_from("=QI", req)[1]
        try:
            return mmap.mmap(buf_fd, max(1, nbytes), mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        finally:
            os.close(buf_fd)  # the mapping keeps the buffer

    def array(self, a: np.ndarray) -> np.ndarray:
        a = np.ascontiguousarray(a)
        view = np.frombuffer(self._allocate(a.nbytes), dtype=a.dtype, count=a.size).reshape(a.shape)
        view[...] = a
        return view

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def _open_allocator(flag: str) -> Optional[_DmaHeap]:
    """None for host memory (cpu, or auto without a usable heap); the heap for dmabuf or auto."""
    if flag == "cpu":
        return None
    return _DmaHeap.open(_DMA_HEAP_PATH, required=(flag == "dmabuf"))


def _info_of(t) -> TensorInfo:
    shape: List[Union[int, str]] = []
    for d in t.shape:
        shape.append(int(d) if isinstance(d, int) else str(d))
    try:
        dtype = t.type.to_dtype()
    except TypeError:
        dtype = None
    return TensorInfo(dtype=dtype, shape=shape, element_type=t.type.name)


class InferenceRunner:
    """Loads a model and runs it: ``infer(inputs) -> list[np.ndarray]`` (or ``DeviceArray``)."""

    def __init__(
        self,
        model_path: Union[str, os.PathLike],
        *,
        function: str = "main",
        device_uri: str = "native",
        n_threads: Optional[int] = None,
        load_method: str = "preload",
        load_model_to_mem: bool = True,
        runtime_flags: Optional[Iterable[str]] = None,
        device_outputs: bool = False,
        hw_type: Optional[str] = None,
    ):
        flags = parse_runtime_flags(runtime_flags)
        if load_method not in ("preload", "mmap"):
            raise ValueError(f"load_method={load_method!r}: expected 'preload' or 'mmap'")
        self._model_path = Path(model_path)
        if not self._model_path.exists():
            raise FileNotFoundError(f"model path '{model_path}' does not exist")
        self._function = flags.get("function", function)
        self._device_name = flags.get("device", device_uri)
        self._allocator_flag = flags.get("device_allocator", "auto")
        self._devices = _resolve_device(self._device_name, flags.get("hw_type", hw_type), self._allocator_flag)
        self._heap = _open_allocator(self._allocator_flag)
        self._threads = flags.get("threads", n_threads if n_threads is not None else 0)
        if self._threads is None or self._threads < 0:
            raise ValueError(f"n_threads={n_threads!r}: expected None or an integer >= 0")
        self._load_method = load_method
        self._device_outputs = bool(device_outputs)
        self._load_kwargs = {
            "devices": self._devices,
            "threads": self._threads,
        }
        if "scheduler" in flags:
            self._load_kwargs["scheduler_type"] = flags["scheduler"]
        if "spin_iterations" in flags:
            self._load_kwargs["spin_iterations"] = flags["spin_iterations"]
        if "memory_optimization" in flags:
            self._load_kwargs["memory_optimization"] = flags["memory_optimization"]
        self._model = None
        self._request = None
        self.infer_time_ms: float = 0.0
        if self._function not in self.function_names:
            raise ValueError(f"function {self._function!r} not found; the model exports {self.function_names}")
        if load_model_to_mem:
            self._load()

    # -- loading -----------------------------------------------------------------------------
    def _load(self) -> None:
        if self._model is not None:
            return
        path = self._model_path
        if self._load_method == "preload" and path.is_file():
            # "preload": read the file into memory and load from the bytes (no mapping stays open).
            self._model = load_model(path.read_bytes(), **self._load_kwargs)
        else:
            # "mmap" (and folders, whose external weights are resolved next to model.onnx).
            self._model = load_model(str(path), **self._load_kwargs)
        self._request = self._model.create_request()

    # -- properties --------------------------------------------------------------------------
    @property
    def model_path(self) -> Path:
        return self._model_path

    @property
    def device(self) -> DeviceID:
        """The runtime device the model runs on (an ``optimium.runtime.DeviceID``)."""
        return self._devices[0]

    @property
    def npu_inference_time_path(self) -> Optional[str]:
        """The inference-time counter file (microseconds) the device's driver reports (the simulated
        NPU's), or None; ``profiling.profile_resources`` reads it."""
        path = get_device_property(self._devices[0], "inference_time_path")
        return path or None

    @property
    def function_names(self) -> List[str]:
        """Exported function names (our models export ``main`` only)."""
        return ["main"]

    @property
    def model(self):
        """The underlying ``optimium.runtime.Model`` (loads it if load_model_to_mem=False)."""
        self._load()
        return self._model

    @property
    def inputs_info(self) -> Optional[List[TensorInfo]]:
        m = self.model
        return [_info_of(m.get_input_tensor(i)) for i in range(len(m.input_names))]

    @property
    def outputs_info(self) -> Optional[List[TensorInfo]]:
        m = self.model
        return [_info_of(m.get_output_tensor(i)) for i in range(len(m.output_names))]

    # -- running -----------------------------------------------------------------------------
    @property
    def device_allocator(self) -> str:
        """Where input buffers come from: ``"dmabuf"`` (the DMA-BUF system heap) or ``"cpu"``."""
        return "dmabuf" if self._heap is not None else "cpu"

    def allocate_device_array(self, array) -> DeviceArray:
        """Copies a host array into a buffer usable as an input without further copies: one of the
        DMA-BUF heap with device_allocator dmabuf (or auto where the heap works), else runtime memory."""
        if self._heap is not None:
            return DeviceArray(tensor(self._heap.array(np.asarray(array)), copy=False))
        return DeviceArray(tensor(np.ascontiguousarray(array), copy=True))

    @staticmethod
    def _unwrap(value):
        if isinstance(value, DeviceArray):
            return value.tensor
        if isinstance(value, (Tensor, np.ndarray)):
            return value
        return np.asarray(value)

    def infer(self, inputs: Union[Sequence[Any], Mapping[str, Any]]) -> list:
        """Runs one inference; returns numpy arrays, or DeviceArrays when device_outputs=True."""
        self._load()
        if isinstance(inputs, Mapping):
            feed: Any = {k: self._unwrap(v) for k, v in inputs.items()}
        elif isinstance(inputs, (np.ndarray, DeviceArray, Tensor)):
            feed = [self._unwrap(inputs)]
        else:
            feed = [self._unwrap(v) for v in inputs]
        req = self._request
        req.device_outputs = self._device_outputs
        start = time.perf_counter()
        req.infer(feed)
        req.wait()
        n = len(self._model.output_names)
        if self._device_outputs:
            # An output in the device's memory owns its buffer (the next run writes a fresh one):
            # no copy. One in host memory shares the request's buffers, reused by the next run, so
            # it is a copy (clone) the caller owns. Either is safe to feed back in.
            outs = []
            for i in range(n):
                t = req.get_output(i)
                outs.append(DeviceArray(t if t.is_device else t.clone()))
        else:
            outs = [req.get_output(i).to_numpy() for i in range(n)]
        self.infer_time_ms = (time.perf_counter() - start) * 1e3
        return outs

    def __repr__(self) -> str:
        return f"InferenceRunner({str(self._model_path)!r}, device_uri={self._device_name!r})"


def random_inputs_from_info(inputs_info: Iterable[TensorInfo], seed: Optional[int] = None) -> List[np.ndarray]:
    """Random arrays matching the metadata, by the rule optimium-benchmark and profile() share
    (see _random_inputs): floats uniform in [-1, 1), integers and booleans 0, symbolic dims 1."""
    rng = np.random.default_rng(seed)
    return [random_array(info.dtype, info.shape, rng, info.element_type) for info in inputs_info]


def _find_binary(binary: Optional[Union[str, os.PathLike]]) -> str:
    if binary is not None:
        if not Path(binary).exists():
            raise FileNotFoundError(f"optimium-run binary '{binary}' does not exist")
        return str(binary)
    env = os.environ.get("OPTIMIUM_RUN")
    if env and Path(env).exists():
        return env
    found = shutil.which("optimium-run")
    if found:
        return found
    # The build tree: <repo>/build/optimium-run, from a source checkout or the current directory.
    here = Path(__file__).resolve()
    for root in [Path.cwd(), *here.parents]:
        cand = root / "build" / "optimium-run"
        if cand.is_file() and os.access(cand, os.X_OK):
            return str(cand)
    raise FileNotFoundError("cannot find the optimium-run binary: pass binary=, put it on PATH, "
                            "set OPTIMIUM_RUN, or build it (cmake --build build)")


def run_module(
    model_path: Union[str, os.PathLike],
    inputs: Iterable[str],
    outputs: Iterable[str],
    device: str = "native",
    n_threads: Optional[int] = None,
    binary: Optional[Union[str, os.PathLike]] = None,
) -> float:
    """Runs the model with the ``optimium-run`` CLI and returns the wall-clock time in ms.

    ``inputs``/``outputs`` are ``--input``/``--output`` specs (e.g. ``"@in.npy"``, ``"1x8xf32=0.5"``,
    ``"@out.npy"``). ``n_threads`` defaults to ``os.cpu_count()``.
    """
    exe = _find_binary(binary)
    cmd = [exe, f"--module={os.fspath(model_path)}", f"--device={device}",
           f"--threads={n_threads if n_threads is not None else (os.cpu_count() or 1)}"]
    cmd += [f"--input={spec}" for spec in inputs]
    cmd += [f"--output={spec}" for spec in outputs]
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    elapsed = (time.perf_counter() - start) * 1e3
    if proc.returncode != 0:
        raise RuntimeError(f"optimium-run failed (exit {proc.returncode}): {' '.join(cmd)}\n{proc.stderr.strip()}")
    return elapsed
